"""Which tokenizer.json pipelines labkit's own engines serve exactly, and which they refuse.

A tokenizer.json is a pipeline of components (normaliser, pre-tokenizer, model,
post-processor, decoder, added tokens). labkit's engines implement some of them exactly;
:func:`labkit_refusal` recognises exactly those configurations and, for any other, returns
a sentence naming the component it does not implement, which ``engine="labkit"`` raises at
load and ``engine=None`` reports when it falls back to the ``tokenizers`` engine. A wrong
guess here would be a silent difference, so the lists are short and each entry is checked by
the conformance matrix (``tests/test_conformance_hf_matrix.py``).
:func:`check_components` refuses, for every engine, component types ``tokenizers`` does not
know and Split regexes that do not compile.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.formats.hf_components import labkit_refusal
    >>> labkit_refusal({"model": {"type": "Unigram"}, "normalizer": {"type": "NFKC"}}, family="unigram")
    'model Unigram with NFKC: labkit has no exact engine for this tokenizer.json pipeline'
"""
from __future__ import annotations

from typing import Any

import regex

from labkit.core import FormatError

# every component type tokenizers 0.23 reads from a tokenizer.json
KNOWN_TYPES = {
    "normalizer": {"BertNormalizer", "StripAccents", "NFC", "NFD", "NFKC", "NFKD", "Sequence", "Lowercase",
                   "Nmt", "Precompiled", "Replace", "Prepend", "Strip", "ByteLevel"},
    "pre_tokenizer": {"BertPreTokenizer", "ByteLevel", "Delimiter", "CharDelimiterSplit", "Metaspace", "Whitespace",
                      "Sequence", "Split", "Punctuation", "WhitespaceSplit", "Digits", "UnicodeScripts",
                      "FixedLength"},
    "decoder": {"BPEDecoder", "ByteLevel", "WordPiece", "Metaspace", "CTC", "Sequence", "Replace", "Fuse", "Strip",
                "ByteFallback"},
    "post_processor": {"RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing", "Sequence"},
}
_CHILDREN = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "decoder": "decoders",
             "post_processor": "processors"}
_MAX_DEPTH = 64  # Sequences nested deeper than this are refused (tokenizers recurses on them)


def flatten(node: Any, kind: str, source: str = "tokenizer.json") -> list[dict]:
    """A component as the flat list of its parts (Sequences unrolled, depth-first).

    Example:
        >>> from labkit.formats.hf_components import flatten
        >>> [n["type"] for n in flatten({"type": "Sequence", "normalizers": [{"type": "NFC"}]}, "normalizer")]
        ['NFC']
    """
    out: list[dict] = []
    stack = [(node, kind, 0)]
    while stack:
        item, place, depth = stack.pop()
        if item is None and place == kind:
            continue
        if not isinstance(item, dict):
            raise FormatError(f"{source}: {place} should be an object, got {type(item).__name__}")
        if depth > _MAX_DEPTH:
            raise FormatError(f"{source}: {kind} Sequences are nested more than {_MAX_DEPTH} deep")
        if item.get("type") == "Sequence" and kind in _CHILDREN:
            parts = item.get(_CHILDREN[kind])
            if not isinstance(parts, list):
                raise FormatError(f"{source}: {place}.{_CHILDREN[kind]} should be a list")
            stack.extend((part, f"{place}.{_CHILDREN[kind]}[{n}]", depth + 1)
                         for n, part in reversed(list(enumerate(parts))))
        else:
            out.append(item)
    return out


def check_components(doc: dict, source: str) -> None:
    """Refuse (FormatError) component types tokenizers does not know and Split regexes that
    do not compile: no engine may serve such a file with a guessed default.

    Example:
        >>> check_components({"pre_tokenizer": {"type": "Magic"}}, "t.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        labkit.core.FormatError: t.json: pre_tokenizer type 'Magic' is unknown (tokenizers knows BertPreTokenizer, ...)
    """
    for kind, known in KNOWN_TYPES.items():
        node = doc.get(kind)
        if node is None:
            continue
        for n, part in enumerate(flatten(node, kind, source)):
            name = part.get("type")
            if name is None and kind == "post_processor":
                continue
            if not isinstance(name, str) or name not in known:
                raise FormatError(f"{source}: {kind} type {str(name)[:40]!r} is unknown (tokenizers knows {', '.join(sorted(known))})")
            if name == "FixedLength" and kind == "pre_tokenizer":
                from labkit.algorithms.hf_pretokenize import FIXED_LENGTH_DEFAULT

                length = part.get("length", FIXED_LENGTH_DEFAULT)
                if type(length) is not int or length < 1:
                    # tokenizers reads 0 and then panics on every text ("chunk size must be non-zero")
                    raise FormatError(f"{source}: pre_tokenizer FixedLength length should be a positive int, got {_short(length)}")
            pattern = part.get("pattern")
            if name in ("Split", "Replace") and isinstance(pattern, dict) and "Regex" in pattern:
                text = pattern["Regex"]
                if not isinstance(text, str):
                    raise FormatError(f"{source}: {kind} {name} regex should be a string")
                try:
                    regex.compile(text)
                except regex.error as exc:
                    # an escape only Oniguruma knows (\z, \G): tokenizers serves it, labkit's engine refuses it
                    if not ("bad escape" in str(exc) and _oniguruma_compiles(text)):
                        raise FormatError(f"{source}: {kind} {name} regex {text[:60]!r} does not compile ({exc})") from None


def _oniguruma_compiles(text: str) -> bool:
    r"""Whether tokenizers' Oniguruma compiles this pattern (False when tokenizers is absent).

    Example:
        >>> _oniguruma_compiles(r".\z"), _oniguruma_compiles("(unclosed")
        (True, False)
    """
    try:
        from tokenizers import Regex
    except ImportError:
        return False
    try:
        Regex(text)
    except BaseException as exc:  # an Exception, or a Rust panic (a BaseException)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return False
    return True


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(part: dict) -> str:
    options = ", ".join(f"{k}={_short(v)}" for k, v in part.items() if k not in ("type", "pattern", "vocab", "merges"))
    return f"{part.get('type')}({options})" if options else str(part.get("type"))


def _types(doc: dict, kind: str) -> list[str]:
    return [p.get("type") for p in flatten(doc.get(kind), kind)]


def _byte_level_refusal(doc: dict, split_known: bool) -> str | None:
    """labkit's byte-level BPE: [NFC] -> [Split(known regex, Isolated)...] + ByteLevel -> BPE -> ByteLevel.

    Example (a Qwen2-shaped pipeline: NFC, its Split regex, ByteLevel without a regex):
        >>> from labkit.formats.hf_components import _byte_level_refusal
        >>> qwen2 = {"model": {"type": "BPE"}, "normalizer": {"type": "NFC"}, "decoder": {"type": "ByteLevel"},
        ...          "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        ...              {"type": "Split", "pattern": {"Regex": "x"}, "behavior": "Isolated", "invert": False},
        ...              {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]}}
        >>> _byte_level_refusal(qwen2, split_known=True) is None
        True
        >>> _byte_level_refusal(dict(qwen2, normalizer={"type": "NFKC"}), split_known=True)
        'normalizer NFKC before byte-level BPE'
    """
    model = doc["model"]
    for flag in ("byte_fallback", "dropout", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(flag):
            return f"model BPE {flag}={model[flag]!r} with a ByteLevel pre-tokenizer"
    normalizers = _types(doc, "normalizer")
    if normalizers and normalizers != ["NFC"]:  # NFC alone is Qwen2's (the engine's nfc option)
        return f"normalizer {' + '.join(normalizers)} before byte-level BPE"
    parts = flatten(doc.get("pre_tokenizer"), "pre_tokenizer")
    if not parts or parts[-1].get("type") != "ByteLevel":
        return f"pre_tokenizer {' + '.join(_describe(p) for p in parts) or 'none'} (labkit's byte-level BPE needs [Split...] + ByteLevel)"
    last = parts[-1]
    if last.get("add_prefix_space", True):
        return f"pre_tokenizer {_describe(last)}: add_prefix_space=True"
    splits = parts[:-1]
    for part in splits:
        pattern = part.get("pattern") if isinstance(part.get("pattern"), dict) else {}
        if part.get("type") != "Split" or part.get("behavior") != "Isolated" or part.get("invert") or "Regex" not in pattern:
            return f"pre_tokenizer {_describe(part)} before ByteLevel"
    if bool(splits) == bool(last.get("use_regex", True)):
        return f"pre_tokenizer {' + '.join(_describe(p) for p in parts)}: labkit runs either ByteLevel's own regex or Split regexes"
    if splits and not split_known:
        return f"pre_tokenizer Split regexes {[p['pattern']['Regex'][:40] for p in splits]} are not in labkit's pre-tokenizer table"
    if _types(doc, "decoder") != ["ByteLevel"]:
        return f"decoder {' + '.join(_types(doc, 'decoder')) or 'none'} (labkit's byte-level BPE decodes ByteLevel)"
    for part in flatten(doc.get("post_processor"), "post_processor"):
        if part.get("type") == "ByteLevel" and part.get("trim_offsets", True):
            return "post_processor ByteLevel(trim_offsets=True) trims offsets"
        if part.get("type") == "RobertaProcessing":
            return f"post_processor {_describe(part)}"
    return None


def _wordpiece_refusal(doc: dict) -> str | None:
    """labkit's WordPiece engine: BertNormalizer -> BertPreTokenizer -> WordPiece -> WordPiece decoder."""
    wanted = {"normalizer": ["BertNormalizer"], "pre_tokenizer": ["BertPreTokenizer"], "decoder": ["WordPiece"]}
    for kind, types in wanted.items():
        got = _types(doc, kind)
        if got != types:
            return f"{kind} {' + '.join(got) or 'none'} (labkit's WordPiece engine runs BERT's pipeline: {types[0]})"
    return None


def _added_token_refusal(doc: dict) -> str | None:
    """labkit matches added tokens on the raw text: a token tokenizers matches after the
    normaliser (normalized=true) is refused when a normaliser could change the text."""
    if doc.get("normalizer") is None:
        return None
    for entry in doc.get("added_tokens") or []:
        if isinstance(entry, dict) and entry.get("normalized"):
            return f"added token {str(entry.get('content'))[:40]!r} with normalized=true (matched after the normalizer)"
    return None


def _framing_refusal(doc: dict) -> str | None:
    """labkit's family engines frame with one BOS and/or one EOS, or [CLS] ... [SEP], and trim
    no offsets: a post-processor that does more is left to the component-by-component engine.

    Example:
        >>> single = [{"SpecialToken": {"id": "a"}}, {"SpecialToken": {"id": "b"}}, {"Sequence": {"id": "A"}}]
        >>> _framing_refusal({"post_processor": {"type": "TemplateProcessing", "single": single, "special_tokens": {}}})
        "post_processor TemplateProcessing adds 2 tokens before the text (labkit's family engines add one BOS/EOS)"
    """
    parts = flatten(doc.get("post_processor"), "post_processor")
    framing = [p for p in parts if p.get("type") in ("TemplateProcessing", "BertProcessing", "RobertaProcessing")]
    if len(framing) > 1:
        return f"post_processor {' + '.join(_describe(p) for p in framing)}: more than one framing"
    for part in parts:
        kind = part.get("type")
        if kind in ("ByteLevel", "RobertaProcessing") and part.get("trim_offsets", True):
            return f"post_processor {kind}(trim_offsets=True) trims offsets"
        if kind != "TemplateProcessing":
            continue
        pieces = part.get("single") if isinstance(part.get("single"), list) else []  # (the reader checks the shapes)
        at = next((n for n, piece in enumerate(pieces) if isinstance(piece, dict) and "Sequence" in piece), len(pieces))
        for where, count in (("before", at), ("after", len(pieces) - at - 1)):
            if count > 1:
                return f"post_processor TemplateProcessing adds {count} tokens {where} the text (labkit's family engines add one BOS/EOS)"
        table = part.get("special_tokens") if isinstance(part.get("special_tokens"), dict) else {}
        for name, entry in table.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("ids"), list) or len(entry["ids"]) != 1:
                return f"post_processor TemplateProcessing special token {str(name)[:40]!r} is not one id"
    return None


def labkit_refusal(doc: dict, *, family: str, split_known: bool = False) -> str | None:
    """Why labkit's engine for ``family`` cannot serve this tokenizer.json exactly, or None.

    Example:
        >>> from labkit.formats.hf_json import load_json_file
        >>> from labkit.paths import data_path
        >>> doc = load_json_file(data_path("hf/all-MiniLM-L6-v2/tokenizer.json"))
        >>> labkit_refusal(doc, family="wordpiece") is None
        True
        >>> labkit_refusal(dict(doc, normalizer={"type": "NFKC"}), family="wordpiece")
        "normalizer NFKC (labkit's WordPiece engine runs BERT's pipeline: BertNormalizer)"
    """
    if family == "bpe_byte":
        reason = _byte_level_refusal(doc, split_known) or _framing_refusal(doc)
    elif family == "wordpiece":
        reason = _wordpiece_refusal(doc) or _framing_refusal(doc)
    elif family in ("unigram", "spm_bpe", "wordlevel"):
        kind = doc["model"].get("type")
        pipeline = " + ".join(_describe(p) for k in ("normalizer", "pre_tokenizer") for p in flatten(doc.get(k), k)) or "no normalizer or pre-tokenizer"
        reason = f"model {kind} with {pipeline}: labkit has no exact engine for this tokenizer.json pipeline"
    else:
        reason = f"model family {family!r}"
    return reason or _added_token_refusal(doc)


_POST_TYPES = {"ByteLevel", "BertProcessing", "RobertaProcessing", "TemplateProcessing"}


# normalisers tokenizers applies with NormalizedString.transform over the original's range
_TRANSFORMING = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Strip", "StripAccents", "BertNormalizer", "Precompiled",
                 "Nmt", "ByteLevel"}


def _empty_replace_refusal(normalizers: list[dict], pretokenizers: list[dict] = ()) -> str | None:
    """A Replace that can match the empty string puts its content before the first character
    with an alignment of no width; a later normaliser that transforms the text (NFC, Strip, ...)
    or a ByteLevel pre-tokenizer (whose byte mapping is such a transform) then starts after those
    characters in tokenizers (the range of the original text) and shifts or panics: labkit does
    not reproduce that, and refuses.

    Example:
        >>> _empty_replace_refusal([{"type": "Replace", "pattern": {"Regex": "a*"}, "content": " "}, {"type": "Strip"}])
        "normalizer Replace 'a*' can match the empty string and Strip follows it"
    """
    from labkit.algorithms import hf_normalize

    for n, part in enumerate(normalizers):
        pattern = part.get("pattern")
        if part.get("type") != "Replace" or not isinstance(pattern, dict) or not part.get("content"):
            continue
        if hf_normalize.may_match_empty(pattern):
            later = [p.get("type") for p in normalizers[n + 1:] if p.get("type") in _TRANSFORMING]
            later += [f"pre_tokenizer {p['type']}" for p in pretokenizers if p.get("type") == "ByteLevel"]
            if later:
                source = pattern.get("Regex", pattern.get("String"))
                return f"normalizer Replace {_short(source)} can match the empty string and {later[0]} follows it"
    return None


def pipeline_refusal(doc: dict) -> str | None:
    """Why labkit's component-by-component engine (engines/labkit_pipeline.py) cannot serve
    this tokenizer.json exactly, or None: the first component it does not implement.

    Example:
        >>> from labkit.formats.hf_components import pipeline_refusal
        >>> pipeline_refusal({"model": {"type": "BPE", "dropout": 0.1}})  # doctest: +ELLIPSIS
        'model BPE dropout=0.1 ...'
    """
    from labkit.algorithms import hf_decode, hf_normalize, hf_pretokenize

    model = doc["model"]
    kind = model.get("type")
    if kind not in ("BPE", "WordPiece", "WordLevel", "Unigram"):
        return f"model {kind}"
    if model.get("dropout"):
        return f"model {kind} dropout={model['dropout']!r} (sampling, not a function of the text)"
    checks = (("normalizer", hf_normalize.IMPLEMENTED), ("pre_tokenizer", hf_pretokenize.IMPLEMENTED),
              ("decoder", hf_decode.IMPLEMENTED), ("post_processor", _POST_TYPES))
    reason = _empty_replace_refusal(flatten(doc.get("normalizer"), "normalizer"), flatten(doc.get("pre_tokenizer"), "pre_tokenizer"))
    if reason:
        return reason
    for kind_name, implemented in checks:
        for part in flatten(doc.get(kind_name), kind_name):
            if part.get("type") not in implemented:
                return f"{kind_name} {_describe(part)}"
            pattern = part.get("pattern")
            if part.get("type") in ("Split", "Replace") and isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
                why = hf_normalize.regex_difference(pattern["Regex"])
                if why:  # Oniguruma and `regex` would find different matches
                    return f"{kind_name} {part['type']} regex {_short(pattern['Regex'])}: {why}"
    return None
