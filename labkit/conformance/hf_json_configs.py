"""tokenizer.json configurations: small vocabularies trained with ``tokenizers`` on botchan.

Eight base vocabularies are trained once per process (BPE byte-level, BPE plain with unk,
BPE with ``##`` continuation, BPE with ``</w>`` suffix, BPE over Metaspace words with the
256 byte pieces for byte fallback, WordPiece, Unigram, WordLevel; under two seconds in
all). Each configuration then swaps in one choice of normaliser, pre-tokenizer, decoder,
post-processor, model flags and added tokens. The list is a covering set, not the cross
product: every option of every component at least once, plus the pairs that interact
(normaliser x pre-tokenizer x model, added-token flags x normalisers).
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.conformance.hf_json_configs import hf_cases
    >>> hf_cases()[0].components[0]
    ('model', 'BPE')
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

from labkit.conformance.cases import ConfigCase, register
from labkit.conformance.corpus import botchan_lines

VOCAB_SIZE = 400
SPACE = "\u2581"
QWEN2_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


# ----------------------------------------------------------------------------- component JSON


def node(kind: str, **options) -> dict:
    """A component as tokenizer.json writes it.

    Example:
        >>> node("NFKC"), node("Strip", left=True)
        ({'type': 'NFKC'}, {'type': 'Strip', 'left': True})
    """
    return {"type": kind, **options}


def seq(kind: str, *parts: dict) -> dict:
    """A Sequence of components.

    Example:
        >>> seq("normalizer", node("NFD"), node("Lowercase"))
        {'type': 'Sequence', 'normalizers': [{'type': 'NFD'}, {'type': 'Lowercase'}]}
    """
    key = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "decoder": "decoders",
           "post_processor": "processors"}[kind]
    return {"type": "Sequence", key: list(parts)}


def replace(pattern: str, content: str, regex: bool = False) -> dict:
    """A Replace normaliser/decoder.

    Example:
        >>> replace(" ", "▁")
        {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '▁'}
    """
    return node("Replace", pattern={"Regex" if regex else "String": pattern}, content=content)


def split(pattern: str, behavior: str, invert: bool = False, regex: bool = True) -> dict:
    """A Split pre-tokenizer.

    Example:
        >>> split(r"\\d+", "Isolated")
        {'type': 'Split', 'pattern': {'Regex': '\\\\d+'}, 'behavior': 'Isolated', 'invert': False}
    """
    return node("Split", pattern={"Regex" if regex else "String": pattern}, behavior=behavior, invert=invert)


def metaspace(scheme: str = "always", split_words: bool = True) -> dict:
    """A Metaspace pre-tokenizer or decoder.

    Example:
        >>> metaspace("first", False)
        {'type': 'Metaspace', 'replacement': '▁', 'prepend_scheme': 'first', 'split': False}
    """
    return node("Metaspace", replacement=SPACE, prepend_scheme=scheme, split=split_words)


def byte_level(add_prefix_space: bool = False, use_regex: bool = True, trim_offsets: bool = False) -> dict:
    """ByteLevel (pre-tokenizer, decoder or post-processor).

    Example:
        >>> byte_level(use_regex=False)
        {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False}
    """
    return node("ByteLevel", add_prefix_space=add_prefix_space, trim_offsets=trim_offsets, use_regex=use_regex)


def template(single: str, pair: str, specials: dict[str, int]) -> dict:
    """A TemplateProcessing post-processor from tokenizers' template strings.

    Example:
        >>> template("<s> $A </s>", "<s> $A </s> $B </s>", {"<s>": 1, "</s>": 2})["single"]
        [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': '</s>', 'type_id': 0}}]
    """

    def pieces(spec: str) -> list[dict]:
        out = []
        for word in spec.split():
            if word.startswith("$"):
                name, _, type_id = word[1:].partition(":")
                out.append({"Sequence": {"id": name or "A", "type_id": int(type_id or 0)}})
            else:
                name, _, type_id = word.partition(":")
                out.append({"SpecialToken": {"id": name, "type_id": int(type_id or 0)}})
        return out

    return node("TemplateProcessing", single=pieces(single), pair=pieces(pair),
                special_tokens={k: {"id": k, "ids": [v], "tokens": [k]} for k, v in specials.items()})


def added(content: str, *, special: bool = True, normalized: bool | None = None, lstrip: bool = False,
          rstrip: bool = False, single_word: bool = False) -> dict:
    """An added-token entry (its id is given when the configuration is built).

    Example:
        >>> from labkit.conformance.hf_json_configs import added
        >>> added("<|im_end|>")["special"]
        True
    """
    return {"content": content, "single_word": single_word, "lstrip": lstrip, "rstrip": rstrip,
            "normalized": (not special) if normalized is None else normalized, "special": special}


IM_END = [added("<|im_end|>")]
EVERY_FLAG = [
    added("<|im_end|>"),
    added("<mask>", lstrip=True),
    added("<R>", rstrip=True),
    added("<both>", lstrip=True, rstrip=True),
    added("wordtoken", special=False, single_word=True),
    added("Café", special=False, normalized=True),
    added("RAW", special=False, normalized=False),
    added("<sp_norm>", special=True, normalized=True),
]


# ----------------------------------------------------------------------------- base vocabularies


@lru_cache(maxsize=None)
def base_vocabulary(kind: str) -> str:
    """A trained tokenizer.json (as text) for one base kind; trained once per process.

    Example:
        >>> from labkit.conformance.hf_json_configs import base_vocabulary
        >>> import json
        >>> json.loads(base_vocabulary("wordlevel"))["model"]["type"]
        'WordLevel'
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    lines = list(botchan_lines(4000))
    options = dict(vocab_size=VOCAB_SIZE, show_progress=False)
    if kind == "byte":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), **options)
    elif kind in ("plain", "prefix", "suffix"):
        extra = {"prefix": {"continuing_subword_prefix": "##"}, "suffix": {"end_of_word_suffix": "</w>"}}.get(kind, {})
        tok = Tokenizer(models.BPE(unk_token="<unk>", **extra))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(special_tokens=["<unk>"], **extra, **options)
    elif kind == "meta":
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.BpeTrainer(special_tokens=["<unk>", "<s>", "</s>"], **options)
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], **options)
    elif kind == "unigram":
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(unk_token="<unk>", special_tokens=["<unk>", "<s>", "</s>"], **options)
        lines = lines[:1200]  # Unigram training is the slow one; 1,200 lines take about a second
    elif kind == "wordlevel":
        tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordLevelTrainer(special_tokens=["<unk>", "<s>", "</s>"], **options)
    else:
        raise ValueError(f"unknown base vocabulary {kind!r}")
    tok.train_from_iterator(lines, trainer)
    doc = json.loads(tok.to_str())
    if kind == "meta":  # byte fallback needs the 256 <0xNN> pieces in the model's vocabulary
        vocab = doc["model"]["vocab"]
        for value in range(256):
            vocab.setdefault(f"<0x{value:02X}>", len(vocab))
    for key in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        doc[key] = None
    return json.dumps(doc, ensure_ascii=False)


def build_json(base: str, *, normalizer=None, pre_tokenizer=None, decoder=None, post_processor=None,
               model: dict | None = None, added_tokens: list[dict] = (), vocabulary: str | None = None) -> str:
    """One configuration's tokenizer.json text: a base vocabulary with these components
    (``vocabulary``: a tokenizer.json text to take the model from instead of the trained base).

    Example:
        >>> doc = json.loads(build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit")))
        >>> doc["model"]["type"], doc["pre_tokenizer"], doc["normalizer"]
        ('WordLevel', {'type': 'WhitespaceSplit'}, None)
    """
    doc = json.loads(vocabulary if vocabulary is not None else base_vocabulary(base))
    doc["model"].update(model or {})
    doc.update(normalizer=normalizer, pre_tokenizer=pre_tokenizer, decoder=decoder, post_processor=post_processor)
    model_doc = doc["model"]
    if isinstance(model_doc["vocab"], dict):
        vocab = model_doc["vocab"]
        size = len(vocab)
        known = dict(vocab)
    else:
        size = len(model_doc["vocab"])
        known = {piece: i for i, (piece, _) in enumerate(model_doc["vocab"])}
    entries = list(doc.get("added_tokens") or [])
    taken = {e["content"] for e in entries}
    for item in added_tokens:
        if item["content"] in taken:
            continue
        index = known.get(item["content"])
        if index is None:
            index, size = size, size + 1
        entries.append({"id": index, **copy.deepcopy(item)})
    doc["added_tokens"] = entries
    return json.dumps(doc, ensure_ascii=False, indent=1)


class HFReference:
    """``tokenizers.Tokenizer`` called directly: the reference for a tokenizer.json.

    One convention is labkit's, not the library's: a token is named by its vocabulary
    spelling. ``tokenizers`` reports an unknown Unigram piece by its surface text, and an
    added token by the text it matched (with the spaces lstrip/rstrip absorbed, or the
    normalised text); labkit names both by their spelling, so every engine names an id the
    same way. Ids, offsets and decode are compared as the library gives them.

    Example (WordLevel knows neither word):
        >>> import tempfile
        >>> from pathlib import Path
        >>> path = Path(tempfile.mkdtemp()) / "tokenizer.json"
        >>> _ = path.write_text(build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit")), encoding="utf-8")
        >>> HFReference(path).encode("Hello world", add_special_tokens=False)[1]
        ['<unk>', '<unk>']
    """

    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(path))
        model = json.loads(self.tokenizer.to_str())["model"]  # the unk id, where the model names one
        unk_id = model.get("unk_id")
        if unk_id is None and model.get("unk_token") is not None:
            unk_id = self.tokenizer.token_to_id(model["unk_token"])
        self.unk_id = unk_id
        doc = json.loads(self.tokenizer.to_str())
        self.spelling = {e["id"]: e["content"] for e in doc.get("added_tokens") or []}
        self.special_spellings = [e["content"] for e in doc.get("added_tokens") or [] if e.get("special") and e["content"]]
        if unk_id is not None:
            self.spelling.setdefault(unk_id, self.tokenizer.id_to_token(unk_id))
        self._unparsed = None  # the copy that reads special tokens as text, made on first use

    def encode(self, text: str, add_special_tokens: bool):
        return self._answer(self.tokenizer.encode(text, add_special_tokens=add_special_tokens))

    def encode_unparsed(self, text: str, add_special_tokens: bool):
        """``encode`` with special added tokens read as plain text: tokenizers' own switch for it,
        ``encode_special_tokens`` (transformers' ``split_special_tokens``), on a second copy.
        What labkit's ``parse_special=False`` is held to.

        Example (not parsed, the special ``<s>`` is text: 'I<s>' is one word, unknown to WordLevel):
            >>> import tempfile
            >>> from pathlib import Path
            >>> path = Path(tempfile.mkdtemp()) / "tokenizer.json"
            >>> _ = path.write_text(build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit")), encoding="utf-8")
            >>> reference = HFReference(path)
            >>> reference.encode("I<s>", False)[1], reference.encode_unparsed("I<s>", False)[1]
            (['I', '<s>'], ['<unk>'])
        """
        if self._unparsed is None:
            from tokenizers import Tokenizer

            self._unparsed = Tokenizer.from_str(self.tokenizer.to_str())
            self._unparsed.encode_special_tokens = True
        return self._answer(self._unparsed.encode(text, add_special_tokens=add_special_tokens))

    def _answer(self, enc):
        ids = list(enc.ids)
        tokens = [self.spelling.get(i, t) for i, t in zip(ids, enc.tokens)]
        return ids, tokens, [tuple(o) for o in enc.offsets]

    def decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)


# ----------------------------------------------------------------------------- labels


_OPTIONS = {
    "BertNormalizer": ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase"),
    "Strip": ("strip_left", "strip_right", "content", "start", "stop"),
    "Replace": ("pattern",),
    "Prepend": ("prepend",),
    "ByteLevel": ("add_prefix_space", "use_regex", "trim_offsets"),
    "Metaspace": ("prepend_scheme", "split"),
    "Split": ("pattern", "behavior", "invert"),
    "Punctuation": ("behavior",),
    "Digits": ("individual_digits",),
    "CharDelimiterSplit": ("delimiter",),
    "WordPiece": ("cleanup",),
    "BPEDecoder": ("suffix",),
    "RobertaProcessing": ("trim_offsets", "add_prefix_space"),
}
_CHILDREN = ("normalizers", "pretokenizers", "decoders", "processors")


def _option_text(key: str, value) -> str:
    if key == "pattern" and isinstance(value, dict):
        return "Regex" if "Regex" in value else "String"
    return str(value)


def component_labels(doc: dict) -> tuple[tuple[str, str], ...]:
    """The matrix rows a tokenizer.json touches: each component's type and each of its options.

    Example:
        >>> from labkit.conformance.hf_json_configs import component_labels
        >>> component_labels({"model": {"type": "WordLevel"}})
        (('model', 'WordLevel'), ('normalizer', 'none'), ('pre_tokenizer', 'none'), ('decoder', 'none'), ('post_processor', 'none'))
    """
    labels: list[tuple[str, str]] = []
    model = doc["model"]
    labels.append(("model", model["type"]))
    for flag in ("byte_fallback", "ignore_merges", "fuse_unk"):
        if model.get(flag):
            labels.append(("model", f"{model['type']} {flag}"))
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) and model["type"] == "BPE":
            labels.append(("model", f"BPE {key}"))
    if model["type"] == "BPE":
        labels.append(("model", f"BPE unk={'yes' if model.get('unk_token') else 'no'}"))
    for kind in ("normalizer", "pre_tokenizer", "decoder", "post_processor"):
        stack = [doc.get(kind)]
        if stack[0] is None:
            labels.append((kind, "none"))
        while stack:
            item = stack.pop()
            if item is None:
                continue
            labels.append((kind, item["type"]))
            for child in _CHILDREN:
                stack.extend(reversed(item.get(child) or []))
            for key in _OPTIONS.get(item["type"], ()):
                if key in item:
                    labels.append((kind, f"{item['type']} {key}={_option_text(key, item[key])}"))
    for entry in doc.get("added_tokens") or []:
        if entry["content"] in ("<unk>", "[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>"):
            continue
        flags = [f for f in ("special", "lstrip", "rstrip", "single_word") if entry.get(f)]
        flags.append(f"normalized={entry.get('normalized')}")
        for flag in flags:
            labels.append(("added_token", flag))
    return tuple(dict.fromkeys(labels))


# ----------------------------------------------------------------------------- the configurations


def json_case(name: str, family: str, text: str, *, texts=(), extra: dict | None = None) -> ConfigCase:
    """A ConfigCase for one tokenizer.json text: its build writes the file, ``tokenizers`` is
    the reference, its added tokens are the specials.

    Example:
        >>> json_case("hf/mine", "hf", build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit"))).specials
        ('<unk>', '<s>', '</s>')
    """
    doc = json.loads(text)

    def build(folder: Path, text=text) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "tokenizer.json"
        path.write_text(text, encoding="utf-8")
        return path

    return ConfigCase(name=name, family=family, components=component_labels(doc), build=build, reference=HFReference,
                      specials=tuple(e["content"] for e in doc["added_tokens"]), texts=tuple(texts),
                      extra=extra if extra is not None else {})


def _case(name: str, base: str, *, texts=(), **parts) -> ConfigCase:
    return json_case(f"hf/{name}", "hf", build_json(base, **parts), texts=texts)


def _byte_level_cases() -> list[ConfigCase]:
    bl = byte_level()
    return [
        _case("bpe-bytelevel-gpt2", "byte", pre_tokenizer=bl, decoder=bl, post_processor=bl, added_tokens=IM_END),
        _case("bpe-bytelevel-gpt2-added-flags", "byte", pre_tokenizer=bl, decoder=bl, post_processor=bl,
              added_tokens=EVERY_FLAG),
        _case("bpe-bytelevel-prefix-space", "byte", pre_tokenizer=byte_level(add_prefix_space=True), decoder=bl,
              post_processor=byte_level(add_prefix_space=True), added_tokens=IM_END),
        _case("bpe-bytelevel-trim-offsets", "byte", pre_tokenizer=bl, decoder=bl,
              post_processor=byte_level(trim_offsets=True), added_tokens=IM_END),
        _case("bpe-bytelevel-ignore-merges", "byte", model={"ignore_merges": True}, pre_tokenizer=bl, decoder=bl,
              post_processor=bl, added_tokens=IM_END),
        _case("bpe-bytelevel-qwen2-nfc", "byte", normalizer=node("NFC"),
              pre_tokenizer=seq("pre_tokenizer", split(QWEN2_SPLIT, "Isolated"), byte_level(use_regex=False)),
              decoder=bl, post_processor=bl, added_tokens=EVERY_FLAG),
        _case("bpe-bytelevel-gpt2-split", "byte",
              pre_tokenizer=seq("pre_tokenizer", split(GPT2_SPLIT, "Isolated"), byte_level(use_regex=False)),
              decoder=bl, post_processor=bl, added_tokens=IM_END),
        _case("bpe-bytelevel-no-regex", "byte", pre_tokenizer=byte_level(use_regex=False), decoder=bl, added_tokens=IM_END),
        _case("bpe-bytelevel-digits-punct", "byte",
              pre_tokenizer=seq("pre_tokenizer", node("Digits", individual_digits=True),
                                node("Punctuation", behavior="Isolated"), byte_level()),
              decoder=bl, added_tokens=IM_END),
        _case("bpe-bytelevel-roberta", "byte", pre_tokenizer=bl, decoder=bl,
              post_processor=node("RobertaProcessing", sep=["</s>", VOCAB_SIZE + 1], cls=["<s>", VOCAB_SIZE],
                                  trim_offsets=True, add_prefix_space=False),
              added_tokens=[added("<s>"), added("</s>")]),
        _case("bpe-bytelevel-roberta-untrimmed", "byte", pre_tokenizer=byte_level(add_prefix_space=True), decoder=bl,
              post_processor=node("RobertaProcessing", sep=["</s>", VOCAB_SIZE + 1], cls=["<s>", VOCAB_SIZE],
                                  trim_offsets=False, add_prefix_space=True),
              added_tokens=[added("<s>"), added("</s>")]),
        _case("bpe-bytelevel-lowercase-nfkc", "byte", normalizer=seq("normalizer", node("NFKC"), node("Lowercase")),
              pre_tokenizer=bl, decoder=bl, added_tokens=EVERY_FLAG),
    ]


def _llama_decoder() -> dict:
    return seq("decoder", replace(SPACE, " "), node("ByteFallback"), node("Fuse"),
               node("Strip", content=" ", start=1, stop=0))


def _metaspace_bpe_cases() -> list[ConfigCase]:
    llama_framing = template("<s> $A", "<s> $A <s> $B", {"<s>": 1})
    return [
        _case("bpe-llama-normalizer-prepend", "meta", model={"byte_fallback": True, "fuse_unk": True},
              normalizer=seq("normalizer", node("Prepend", prepend=SPACE), replace(" ", SPACE)),
              decoder=_llama_decoder(), post_processor=llama_framing, added_tokens=IM_END),
        _case("bpe-metaspace-first", "meta", model={"byte_fallback": True, "fuse_unk": True},
              pre_tokenizer=metaspace("first", False), decoder=metaspace("first", False),
              post_processor=llama_framing, added_tokens=IM_END),
        _case("bpe-metaspace-always-split", "meta", pre_tokenizer=metaspace("always", True),
              decoder=metaspace("always", True), added_tokens=EVERY_FLAG),
        _case("bpe-metaspace-never", "meta", model={"byte_fallback": True}, pre_tokenizer=metaspace("never", True),
              decoder=metaspace("never", True), added_tokens=IM_END),
        _case("bpe-metaspace-nfkd-stripaccents", "meta", model={"byte_fallback": True},
              normalizer=seq("normalizer", node("NFKD"), node("StripAccents")),
              pre_tokenizer=metaspace("always", True), decoder=metaspace(), added_tokens=IM_END),
    ]


def _plain_bpe_cases() -> list[ConfigCase]:
    return [
        _case("bpe-whitespace-unk", "plain", pre_tokenizer=node("Whitespace"), added_tokens=IM_END),
        _case("bpe-whitespace-no-unk", "plain", model={"unk_token": None}, pre_tokenizer=node("Whitespace")),
        _case("bpe-whitespacesplit-nfd", "plain", normalizer=node("NFD"), pre_tokenizer=node("WhitespaceSplit")),
        _case("bpe-continuing-prefix", "prefix", pre_tokenizer=node("Whitespace"),
              decoder=node("WordPiece", prefix="##", cleanup=True), added_tokens=IM_END),
        _case("bpe-end-of-word-suffix", "suffix", pre_tokenizer=node("Whitespace"),
              decoder=node("BPEDecoder", suffix="</w>"), added_tokens=IM_END),
        _case("bpe-bert-pipeline", "plain", normalizer=node("BertNormalizer", clean_text=True, handle_chinese_chars=True,
                                                              strip_accents=None, lowercase=True),
              pre_tokenizer=node("BertPreTokenizer"), added_tokens=EVERY_FLAG),
    ]


_SPLIT_BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


def _wordlevel_cases() -> list[ConfigCase]:
    cases = [
        _case("wordlevel-whitespace", "wordlevel", pre_tokenizer=node("Whitespace"), added_tokens=EVERY_FLAG),
        _case("wordlevel-whitespacesplit-lowercase", "wordlevel", normalizer=node("Lowercase"),
              pre_tokenizer=node("WhitespaceSplit"), added_tokens=EVERY_FLAG),
        _case("wordlevel-unicode-scripts", "wordlevel",
              pre_tokenizer=seq("pre_tokenizer", node("WhitespaceSplit"), node("UnicodeScripts"))),
        _case("wordlevel-char-delimiter", "wordlevel", pre_tokenizer=node("CharDelimiterSplit", delimiter=" ")),
        _case("wordlevel-digits-grouped", "wordlevel",
              pre_tokenizer=seq("pre_tokenizer", node("WhitespaceSplit"), node("Digits", individual_digits=False))),
        _case("wordlevel-strip-replace", "wordlevel",
              normalizer=seq("normalizer", node("Strip", strip_left=True, strip_right=True),
                             replace(r"\s+", " ", regex=True), replace("''", '"')),
              pre_tokenizer=node("Whitespace"), added_tokens=IM_END),
        _case("wordlevel-strip-left-only", "wordlevel", normalizer=node("Strip", strip_left=True, strip_right=False),
              pre_tokenizer=node("WhitespaceSplit")),
        _case("wordlevel-nfkc-bert-pretok", "wordlevel", normalizer=node("NFKC"), pre_tokenizer=node("BertPreTokenizer")),
    ]
    for behavior in _SPLIT_BEHAVIORS:
        cases.append(_case(f"wordlevel-punctuation-{behavior.lower()}", "wordlevel",
                           pre_tokenizer=seq("pre_tokenizer", node("WhitespaceSplit"), node("Punctuation", behavior=behavior))))
        for invert in (False, True):
            cases.append(_case(f"wordlevel-split-regex-{behavior.lower()}-{'invert' if invert else 'plain'}", "wordlevel",
                               pre_tokenizer=split(r"\s+|[,.;!?]", behavior, invert)))
        cases.append(_case(f"wordlevel-split-string-{behavior.lower()}", "wordlevel",
                           pre_tokenizer=split(" ", behavior, regex=False)))
    return cases


def _wordpiece_cases() -> list[ConfigCase]:
    bert_framing = node("BertProcessing", sep=["[SEP]", 3], cls=["[CLS]", 2])
    cases = [
        _case("wordpiece-bert", "wordpiece", normalizer=node("BertNormalizer", clean_text=True, handle_chinese_chars=True,
                                                              strip_accents=None, lowercase=True),
              pre_tokenizer=node("BertPreTokenizer"), decoder=node("WordPiece", prefix="##", cleanup=True),
              post_processor=bert_framing),
        _case("wordpiece-template", "wordpiece", normalizer=node("BertNormalizer", clean_text=True, handle_chinese_chars=True,
                                                                  strip_accents=None, lowercase=True),
              pre_tokenizer=node("BertPreTokenizer"), decoder=node("WordPiece", prefix="##", cleanup=False),
              post_processor=template("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", {"[CLS]": 2, "[SEP]": 3}),
              added_tokens=EVERY_FLAG),
        _case("wordpiece-whitespace-nfkc", "wordpiece", normalizer=seq("normalizer", node("NFKC"), node("Lowercase")),
              pre_tokenizer=seq("pre_tokenizer", node("Whitespace"), node("Digits", individual_digits=True)),
              decoder=node("WordPiece", prefix="##", cleanup=True)),
    ]
    for option, values in (("clean_text", (False,)), ("handle_chinese_chars", (False,)),
                           ("strip_accents", (True, False)), ("lowercase", (False,))):
        for value in values:
            options = dict(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
            options[option] = value
            cases.append(_case(f"wordpiece-bert-{option}-{str(value).lower()}", "wordpiece",
                               normalizer=node("BertNormalizer", **options), pre_tokenizer=node("BertPreTokenizer"),
                               decoder=node("WordPiece", prefix="##", cleanup=True), post_processor=bert_framing))
    return cases


def _unigram_cases() -> list[ConfigCase]:
    meta = metaspace()
    return [
        _case("unigram-nfkc-metaspace", "unigram", normalizer=node("NFKC"), pre_tokenizer=meta, decoder=meta,
              added_tokens=IM_END, texts=(" x", "x <|im_end|> y")),
        _case("unigram-metaspace", "unigram", pre_tokenizer=meta, decoder=meta, added_tokens=EVERY_FLAG),
        _case("unigram-metaspace-first-nosplit", "unigram", pre_tokenizer=metaspace("first", False),
              decoder=metaspace("first", False), added_tokens=IM_END),
        _case("unigram-byte-fallback-nfc", "unigram", model={"byte_fallback": True}, normalizer=node("NFC"),
              pre_tokenizer=meta, decoder=seq("decoder", replace(SPACE, " "), node("ByteFallback"), node("Fuse"),
                                                node("Strip", content=" ", start=1, stop=0))),
        _case("unigram-precompiled-like", "unigram",
              normalizer=seq("normalizer", node("NFKC"), replace(" {2,}", " ", regex=True), node("Strip", strip_left=False, strip_right=True)),
              pre_tokenizer=meta, decoder=meta,
              post_processor=template("$A </s>", "$A </s> $B </s>", {"</s>": 2})),
        _case("unigram-whitespace-lowercase", "unigram", normalizer=node("Lowercase"), pre_tokenizer=node("Whitespace")),
    ]


def _precompiled_charsmap() -> str:
    """The botchan SentencePiece model's charsmap, base64 (what converted T5/ALBERT files hold)."""
    import base64

    from labkit.formats.spm_model import read_spm_model
    from labkit.paths import data_path

    vocab = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    return base64.b64encode(vocab.normalizer["charsmap"]).decode("ascii")


def _precompiled_cases() -> list[ConfigCase]:
    """The Precompiled normaliser (a SentencePiece charsmap, as converted T5/ALBERT/Llama files hold)."""
    meta = metaspace()
    charsmap = node("Precompiled", precompiled_charsmap=_precompiled_charsmap())
    return [
        _case("unigram-precompiled", "unigram", normalizer=seq("normalizer", charsmap, replace(" {2,}", " ", regex=True)),
              pre_tokenizer=meta, decoder=meta, added_tokens=IM_END),
        _case("bpe-llama-precompiled", "meta", model={"byte_fallback": True, "fuse_unk": True},
              normalizer=seq("normalizer", charsmap, node("Prepend", prepend=SPACE), replace(" ", SPACE)),
              decoder=_llama_decoder(), added_tokens=EVERY_FLAG),
        _case("wordpiece-precompiled-lowercase", "wordpiece", normalizer=seq("normalizer", charsmap, node("Lowercase")),
              pre_tokenizer=node("BertPreTokenizer"), decoder=node("WordPiece", prefix="##", cleanup=True)),
    ]


def _rarer_component_cases() -> list[ConfigCase]:
    """Rarer components: Nmt, the ByteLevel normaliser, FixedLength, UnicodeScripts and Split
    regexes with Oniguruma's word escapes (each refused until labkit implemented it) and the
    CTC decoder."""
    return [
        _case("wordlevel-nmt", "wordlevel", normalizer=node("Nmt"), pre_tokenizer=node("WhitespaceSplit")),
        # Oniguruma's word characters (refused until labkit spelled them for `regex`), and Tiny Aya's digit groups
        _case("wordlevel-split-oniguruma-word", "wordlevel", pre_tokenizer=split(r"\w+|[^\w\s]+", "Isolated")),
        _case("wordlevel-split-digit-groups", "wordlevel",
              pre_tokenizer=seq("pre_tokenizer", split(r"\d{1,3}(?=(?:\d{3})*\b)", "Isolated"), node("WhitespaceSplit"))),
        _case("wordlevel-fixed-length", "wordlevel", pre_tokenizer=node("FixedLength", length=3)),
        _case("bpe-bytelevel-normalizer-fixed-length", "plain", normalizer=seq("normalizer", node("Nmt"), node("ByteLevel")),
              pre_tokenizer=node("FixedLength")),
        _case("bpe-metaspace-unicode-scripts", "meta", model={"byte_fallback": True},
              pre_tokenizer=seq("pre_tokenizer", metaspace("first", True), node("UnicodeScripts")),
              decoder=metaspace("first", True)),
        _case("wordpiece-ctc-decoder", "wordpiece", normalizer=node("Lowercase"), pre_tokenizer=node("Whitespace"),
              decoder=node("CTC", pad_token="[PAD]", word_delimiter_token="|", cleanup=True)),
    ]


def _refused_cases() -> list[ConfigCase]:
    """What labkit refuses: a Split regex whose matches Python's ``regex`` would not reproduce
    (Oniguruma's ``\\h`` is a hexadecimal digit, an escape `regex` does not have). Every engine
    but hf must refuse it."""
    return [
        _case("wordlevel-split-oniguruma-hex", "wordlevel", pre_tokenizer=split(r"\h+", "Isolated")),
    ]


@register("hf")
def hf_cases() -> list[ConfigCase]:
    """Every tokenizer.json configuration of the matrix.

    Example:
        >>> from labkit.conformance.hf_json_configs import hf_cases
        >>> 60 <= len(hf_cases())  # the count grows as configurations are added
        True
    """
    return [*_byte_level_cases(), *_metaspace_bpe_cases(), *_plain_bpe_cases(), *_wordlevel_cases(),
            *_wordpiece_cases(), *_unigram_cases(), *_precompiled_cases(), *_rarer_component_cases(), *_refused_cases()]
