"""``tokenizers``' decoders (a chain over token strings) and post-processors, in pure Python.

Decoding turns ids into token strings, then each decoder of the chain rewrites the list
(ByteLevel maps byte-alphabet characters back to bytes, Metaspace turns ``▁`` into spaces,
WordPiece glues ``##`` pieces, ByteFallback turns ``<0xNN>`` runs into text, ...); with no
decoder the tokens are joined with spaces. Post-processors add [CLS]/[SEP] or BOS/EOS and
may trim offsets of leading and trailing spaces.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.algorithms.hf_decode import decode_chain
    >>> decode_chain(["▁Hello", "▁world"], [{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}])
    'Hello world'
"""
from __future__ import annotations

from labkit.algorithms.bytes_unicode import unicode_to_bytes
from labkit.algorithms.bert_basic import is_whitespace
from labkit.algorithms.hf_normalize import pattern_matches
from labkit.core import LabkitError

IMPLEMENTED = {"ByteLevel", "Metaspace", "WordPiece", "BPEDecoder", "Replace", "ByteFallback", "Fuse", "Strip",
               "CTC", "Sequence"}


def _byte_level(tokens: list[str]) -> list[str]:
    table = unicode_to_bytes()
    data = bytearray()
    for token in tokens:
        values = [table.get(c) for c in token]
        data.extend(token.encode("utf-8") if None in values else bytes(values))
    return [data.decode("utf-8", "replace")]


def _metaspace(tokens: list[str], node: dict) -> list[str]:
    replacement = node.get("replacement", "\u2581")
    keep_first = node.get("prepend_scheme", "always") == "never"
    out = []
    for i, token in enumerate(tokens):
        if i == 0 and not keep_first:
            out.append(token.replace(replacement, ""))
        else:
            out.append(token.replace(replacement, " "))
    return out


_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def cleanup(text: str) -> str:
    """WordPiece/CTC decoders' clean-up of spaces before punctuation and contractions.

    Example:
        >>> from labkit.algorithms.hf_decode import cleanup
        >>> cleanup("hello , world !")
        'hello, world!'
    """
    for old, new in _CLEANUP:
        text = text.replace(old, new)
    return text


def _wordpiece(tokens: list[str], node: dict) -> list[str]:
    prefix = node.get("prefix", "##")
    out = []
    for i, token in enumerate(tokens):
        if i != 0:
            token = token[len(prefix):] if token.startswith(prefix) else " " + token
        out.append(cleanup(token) if node.get("cleanup", True) else token)
    return out


def _byte_fallback(tokens: list[str]) -> list[str]:
    out: list[str] = []
    run = bytearray()

    def flush():
        if run:
            try:
                out.append(run.decode("utf-8"))
            except UnicodeDecodeError:
                out.extend(["\ufffd"] * len(run))
            run.clear()

    for token in tokens:
        value = None
        if len(token.encode("utf-8")) == 6 and token.startswith("<0x") and token.endswith(">"):
            try:
                value = int(token[3:5], 16)
            except ValueError:
                value = None
        if value is not None:
            run.append(value)
        else:
            flush()
            out.append(token)
    flush()
    return out


def _strip(tokens: list[str], node: dict) -> list[str]:
    content, start, stop = node.get("content", " "), node.get("start", 0), node.get("stop", 0)
    out = []
    for token in tokens:
        begin = 0
        for i in range(min(start, len(token))):
            if token[i] != content:
                break
            begin = i + 1
        end = len(token)
        for i in range(stop):
            index = len(token) - i - 1
            if index < 0 or token[index] != content:
                break
            end = index
        out.append(token[begin:end] if begin <= end else "")
    return out


def _replace(tokens: list[str], node: dict) -> list[str]:
    content = node.get("content", "")
    out = []
    for token in tokens:
        pieces, last = [], 0
        for start, end in pattern_matches(node["pattern"], token):
            pieces.append(token[last:start])
            pieces.append(content)
            last = end
        pieces.append(token[last:])
        out.append("".join(pieces))
    return out


def _ctc(tokens: list[str], node: dict) -> list[str]:
    """CTC: repeated tokens collapse, the pad is removed wherever it occurs inside a token, and
    only with cleanup is the word delimiter turned into a space (after the clean-up); tokens
    left empty are dropped (tokenizers' decoders/ctc.rs).

    Example:
        >>> _ctc(["<pad>", "h", "e", "e", "l", "l", "<pad>", "l", "o", "|", "x<pad>"], {"cleanup": True})
        ['h', 'e', 'l', 'l', 'o', ' ', 'x']
    """
    pad, delimiter = node.get("pad_token", "<pad>"), node.get("word_delimiter_token", "|")
    deduped = [t for i, t in enumerate(tokens) if i == 0 or t != tokens[i - 1]]
    out = []
    for token in deduped:
        token = token.replace(pad, "")  # (an empty pad or delimiter: str.replace as Rust's, between every char)
        if node.get("cleanup", True):
            token = cleanup(token).replace(delimiter, " ")
        if token:
            out.append(token)
    return out


def decode_chain(tokens: list[str], parts: list[dict] | None) -> str:
    """Token strings -> text through a flattened decoder list (None: join with spaces).

    Example:
        >>> from labkit.algorithms.hf_decode import decode_chain
        >>> decode_chain(["a", "##b"], [{"type": "WordPiece", "prefix": "##"}])
        'ab'
    """
    if parts is None:
        return " ".join(tokens)
    for node in parts:
        kind = node["type"]
        if kind == "ByteLevel":
            tokens = _byte_level(tokens)
        elif kind == "Metaspace":
            tokens = _metaspace(tokens, node)
        elif kind == "WordPiece":
            tokens = _wordpiece(tokens, node)
        elif kind == "BPEDecoder":
            suffix = node.get("suffix", "</w>")
            tokens = [t.replace(suffix, "" if i == len(tokens) - 1 else " ") for i, t in enumerate(tokens)]
        elif kind == "Replace":
            tokens = _replace(tokens, node)
        elif kind == "ByteFallback":
            tokens = _byte_fallback(tokens)
        elif kind == "Fuse":
            tokens = ["".join(tokens)]
        elif kind == "Strip":
            tokens = _strip(tokens, node)
        elif kind == "CTC":
            tokens = _ctc(tokens, node)
        else:
            raise LabkitError(f"decoder {kind} is not implemented by labkit")
    return "".join(tokens)


_GPT2_SPACE = "\u0120"


def trim_offsets(tokens: list[str], offsets: list[tuple[int, int]], add_prefix_space: bool) -> list[tuple[int, int]]:
    """ByteLevel/Roberta ``trim_offsets``: offsets lose a token's leading and trailing spaces.

    Example:
        >>> from labkit.algorithms.hf_decode import trim_offsets
        >>> trim_offsets(["Ġhi"], [(0, 3)], False)
        [(1, 3)]
    """
    out = []
    for i, (token, (start, end)) in enumerate(zip(tokens, offsets)):
        lead = 0
        while lead < len(token) and (token[lead] == _GPT2_SPACE or is_whitespace(token[lead])):
            lead += 1
        trail = 0
        while trail < len(token) and (token[len(token) - 1 - trail] == _GPT2_SPACE or is_whitespace(token[len(token) - 1 - trail])):
            trail += 1
        if lead or trail:
            if lead:
                if (i == 0 or start == 0) and add_prefix_space and lead == 1:
                    lead = 0
                start = min(start + lead, end)
            if trail and end >= trail:
                end = max(end - trail, start)
        out.append((start, end))
    return out
