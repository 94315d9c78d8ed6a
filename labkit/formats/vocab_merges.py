"""Read GPT-2's original pair of files, ``vocab.json`` + ``merges.txt``, into VocabData.

``vocab.json`` maps each token (in the GPT-2 byte-to-unicode spelling) to its id;
``merges.txt`` lists the merges in rank order, one ``left right`` pair per line, after an
optional ``#version`` line. This is what ``tokenizer.json`` later packed into one file.
Introduced in notebook ``02_bpe_byte_level`` and ``11_factory_formats_hub``.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from labkit.formats.vocab_merges import read_vocab_merges
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "vocab.json").write_text(json.dumps({"Ġ": 0, "t": 1, "Ġt": 2}))
    >>> _ = (folder / "merges.txt").write_text("#version: 0.2\\nĠ t\\n")
    >>> read_vocab_merges(folder / "vocab.json", folder / "merges.txt").merges
    [('Ġ', 't')]
"""
from __future__ import annotations

from pathlib import Path

from labkit.algorithms.bytes_unicode import try_gpt2_to_bytes
from labkit.core import (
    TOKEN_CONTROL,
    TOKEN_NORMAL,
    TOKEN_UNUSED,
    AddedToken,
    FormatError,
    SpecialTokens,
    VocabData,
    hole_spelling,
)
from labkit.formats.files import UTF8_BOM, read_bytes, utf8_text
from labkit.formats.hf_json import (
    check_merges,
    parse_json,
    tokens_from_ids,
    vocab_from_mapping,
)

_EOT = "<|endoftext|>"


def rust_lines(text: str) -> list[str]:
    """The lines Rust's ``BufRead::lines`` gives (what ``tokenizers`` reads both files with):
    cut at each ``\\n``; a line that ended with ``\\n`` loses one ``\\r`` before it, the last
    line (no ``\\n`` after it) keeps its ``\\r``; a final ``\\n`` starts no empty line.

    Example:
        >>> from labkit.formats.vocab_merges import rust_lines
        >>> rust_lines("a b\\r\\r\\nc d\\n\\ne f\\r")
        ['a b\\r', 'c d', '', 'e f\\r']
    """
    pieces = text.split("\n")
    lines = [piece[:-1] if piece.endswith("\r") else piece for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def parse_merges_txt(data: bytes, source: str) -> list[tuple[str, str]]:
    """``merges.txt`` lines -> [(left, right)] in rank order, read as ``tokenizers`` reads them:
    every line starting with ``#version`` is skipped (not only the first), every other line
    must be two parts around one space (a blank line is refused), and a BOM is refused
    (tokenizers reads it as part of the first merge).

    Example:
        >>> from labkit.formats.vocab_merges import parse_merges_txt
        >>> parse_merges_txt("#version: 0.2\\n\u0120 t\\r\\n#version: 0.2\\nt o".encode(), "m")
        [('\u0120', 't'), ('t', 'o')]
        >>> parse_merges_txt(b"a b\\n\\nc d\\n", "merges.txt")
        Traceback (most recent call last):
        labkit.core.FormatError: merges.txt: line 2 is blank (tokenizers refuses a merges.txt with a blank line)

    Introduced in notebook ``02_bpe_byte_level``.
    """
    if data.startswith(UTF8_BOM):
        raise FormatError(f"{source}: starts with a UTF-8 BOM, which tokenizers reads as part of the first merge "
                          "(save the file without it)")
    text = utf8_text(data, source)
    merges = []
    for line_no, line in enumerate(rust_lines(text), 1):
        if line.startswith("#version"):
            continue
        if not line:
            raise FormatError(f"{source}: line {line_no} is blank (tokenizers refuses a merges.txt with a blank line)")
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise FormatError(f"{source}: line {line_no} should be 'left right' (one space), got {line[:60]!r}")
        merges.append((parts[0], parts[1]))
    return merges


def _vocab_json_mapping(data: bytes, source: str) -> dict:
    """vocab.json parsed, refused where ``tokenizers`` (serde_json) refuses it but Python's
    json would not: a BOM, a lone surrogate escape."""
    if data.startswith(UTF8_BOM):
        raise FormatError(f"{source}: starts with a UTF-8 BOM, which tokenizers refuses in vocab.json "
                          "(save the file without it)")
    mapping = parse_json(data, source)
    if isinstance(mapping, dict):
        for token in mapping:
            if not token.isascii():
                try:
                    token.encode("utf-8")
                except UnicodeEncodeError:
                    raise FormatError(f"{source}: token {token[:40]!r} holds a lone surrogate escape, "
                                      "which tokenizers refuses") from None
    return mapping


def read_vocab_merges(vocab_path, merges_path, *, pre: str | None = None) -> VocabData:
    """Read vocab.json + merges.txt as a GPT-2 style byte-level BPE (model "bpe_byte").

    ``<|endoftext|>``, when present, is the special end-of-text token (BOS and EOS in GPT-2).
    Example:
        >>> import labkit, tempfile
        >>> from pathlib import Path
        >>> from labkit.formats.vocab_merges import read_vocab_merges
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "vocab.json").write_text('{"a": 0, "b": 1, "ab": 2}')
        25
        >>> (folder / "merges.txt").write_text("#version: 0.2\\na b\\n")
        18
        >>> read_vocab_merges(folder / "vocab.json", folder / "merges.txt").merges
        [('a', 'b')]

    Introduced in notebook ``02_bpe_byte_level``.
    """
    source = str(vocab_path)
    mapping = _vocab_json_mapping(read_bytes(vocab_path, "vocab_merges"), source)
    by_id = vocab_from_mapping(mapping, source, "vocab")
    tokens, types = tokens_from_ids(by_id, source)
    merges = parse_merges_txt(read_bytes(merges_path, "vocab_merges"), str(merges_path))
    check_merges(merges, {t: i for i, t in enumerate(tokens)}, str(merges_path))
    added = []
    specials = SpecialTokens()
    eot = mapping.get(_EOT) if isinstance(mapping, dict) else None
    if eot is not None:
        added.append(AddedToken(_EOT, eot, special=True))
        types[eot] = TOKEN_CONTROL
        specials = SpecialTokens(bos=_EOT, eos=_EOT, bos_id=eot, eos_id=eot, eos_ids=(eot,))
    # an id vocab.json skips (a hole) has no token in tokenizers: it decodes to nothing
    token_bytes = [None if t == TOKEN_CONTROL else b"" if t == TOKEN_UNUSED else try_gpt2_to_bytes(tok)
                   for tok, t in zip(tokens, types)]
    return VocabData(
        source=source,
        format="vocab_merges",
        model="bpe_byte",
        tokens=tokens,
        token_types=types,
        merges=merges,
        token_bytes=token_bytes,
        pre=pre if pre is not None else "gpt-2",
        specials=specials,
        added_tokens=added,
        metadata={"merges_file": str(merges_path)},
    )


def find_pair(path: Path) -> tuple[Path, Path]:
    """Given vocab.json, merges.txt or their folder, the (vocab.json, merges.txt) pair.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> for name in ("vocab.json", "merges.txt"):
        ...     _ = (folder / name).write_text("{}" if name.endswith(".json") else "#version: 0.2\\n")
        >>> [path.name for path in find_pair(folder / "merges.txt")]
        ['vocab.json', 'merges.txt']

    Introduced in notebook ``02_bpe_byte_level``.
    """
    folder = path if path.is_dir() else path.parent
    vocab, merges = folder / "vocab.json", folder / "merges.txt"
    if path.is_file() and path.name.endswith(".json"):
        vocab = path
    elif path.is_file():
        merges = path
    for needed in (vocab, merges):
        if not needed.is_file():
            raise FormatError(f"{path}: a vocab.json + merges.txt vocabulary needs {needed.name} beside it")
    return vocab, merges


# ----------------------------------------------------------------------------- vocab.txt

BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
# the characters with Unicode's White_Space property (Rust's char::is_whitespace); not Python's
# str.isspace(), which also counts U+001C-U+001F
RUST_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def read_vocab_txt(path, *, data: bytes | None = None) -> VocabData:
    """Read a WordPiece ``vocab.txt`` (one token per line, id = line number) as BERT uncased.

    The five BERT specials, when present, are special added tokens and [CLS] ... [SEP]
    framing is on; a ``tokenizer_config.json`` beside the file can change the flags. Lines
    are read as ``tokenizers`` reads them: each end trimmed of whitespace, a BOM kept in the
    first token, an empty line the token ``""``, a spelling on two lines given the later id
    (the earlier id is a hole: no token, dropped in decode).
    Example:
        >>> from labkit.formats.vocab_merges import read_vocab_txt
        >>> from labkit.paths import data_path
        >>> read_vocab_txt(data_path("hf/all-MiniLM-L6-v2/vocab.txt")).tokens[101]
        '[CLS]'

    Introduced in notebook ``02_bpe_byte_level``.
    """
    source = str(path)
    if data is None:
        data = read_bytes(path, "vocab.txt")
    try:
        # not utf8_text: tokenizers keeps a BOM, as part of the first token
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{source}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    # tokenizers trims each line's end as Rust's trim_end does (Unicode White_Space)
    tokens = [line.rstrip(RUST_WHITESPACE) for line in rust_lines(text)]
    if not tokens:
        raise FormatError(f"{source}: file is empty")
    # tokenizers maps each spelling to its last line: an earlier line spelled the same is a hole
    # (no token there); an empty line is the token "" (no text makes it, decode shows a space)
    index = {token: line_no for line_no, token in enumerate(tokens)}
    types = [TOKEN_NORMAL] * len(tokens)
    for line_no, token in enumerate(tokens):
        if index[token] != line_no:
            tokens[line_no], types[line_no] = hole_spelling(line_no), TOKEN_UNUSED
    for line_no, kind in enumerate(types):
        clash = index.get(tokens[line_no]) if kind == TOKEN_UNUSED else None
        if clash is not None:
            raise FormatError(f"{source}: line {clash + 1}: token {tokens[line_no]!r} is the name labkit gives "
                              f"the hole at line {line_no + 1} (a spelling repeated later); rename one of them")
    added = []
    for name in BERT_SPECIALS:
        if name in index:
            added.append(AddedToken(name, index[name], special=True))
            types[index[name]] = TOKEN_CONTROL
    added.sort(key=lambda a: a.id)

    def find(name: str) -> int | None:
        return index.get(name)

    specials = SpecialTokens(
        unk="[UNK]" if "[UNK]" in index else None, unk_id=find("[UNK]"),
        pad="[PAD]" if "[PAD]" in index else None, pad_id=find("[PAD]"),
        cls="[CLS]" if "[CLS]" in index else None, cls_id=find("[CLS]"),
        sep="[SEP]" if "[SEP]" in index else None, sep_id=find("[SEP]"),
        mask="[MASK]" if "[MASK]" in index else None, mask_id=find("[MASK]"),
        add_cls_sep="[CLS]" in index and "[SEP]" in index,
    )
    return VocabData(
        source=source, format="vocab_txt", model="wordpiece", tokens=tokens, token_types=types,
        normalizer={"lowercase": True, "strip_accents": None, "clean_text": True, "handle_chinese_chars": True},
        options={"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100},
        specials=specials, added_tokens=added,
    )
