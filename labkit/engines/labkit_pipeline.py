"""labkit's own engine for a tokenizer.json pipeline, component by component, in pure Python.

``tokenizers`` runs a text through: added tokens cut out (those matched on the raw text
first, then the normaliser on what is left, then those matched on the normalised text),
the pre-tokenizer, the model on each pre-token, and the post-processor; decoding runs the
decoder chain over the ids' token strings. This engine does the same with
:mod:`labkit.algorithms.hf_normalize`, :mod:`~labkit.algorithms.hf_pretokenize`,
:mod:`~labkit.algorithms.hf_models` and :mod:`~labkit.algorithms.hf_decode`. It serves
only the components :mod:`labkit.formats.hf_components` lists as exact (each one checked
by the conformance matrix); the reader refuses the rest before this engine is built.
Introduced in notebook ``14_conformance_matrix``.

Example (MiniLM's tokenizer.json with an NFKC normaliser: not BERT's pipeline, so this engine):
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import labkit
    >>> from labkit.paths import data_path
    >>> doc = json.loads(data_path("hf/all-MiniLM-L6-v2/tokenizer.json").read_text(encoding="utf-8"))
    >>> path = Path(tempfile.mkdtemp()) / "tokenizer.json"
    >>> _ = path.write_text(json.dumps(dict(doc, normalizer={"type": "NFKC"})), encoding="utf-8")
    >>> tok = labkit.load(path, engine="labkit")
    >>> type(tok).__name__, tok.encode("ｔｈｅｒｅ").tokens
    ('PipelineTokenizer', ['there'])
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import regex

from labkit.algorithms.hf_decode import decode_chain, trim_offsets
from labkit.algorithms.hf_models import CharBPEModel, HFUnigramModel, WordLevelModel, WordPieceModel
from labkit.algorithms.hf_normalize import Piece, _charsmap, normalize
from labkit.algorithms.hf_pretokenize import _WORD, pre_tokenize
from labkit.algorithms.specials import trie_pattern
from labkit.core import Encoding, EngineUnavailable, FormatError, LabkitError, Tokenizer, VocabData, library_failure
from labkit.formats.hf_components import flatten
from labkit.formats.hf_json import parse_merges

_ENDS_WITH_WORD = regex.compile(rf"[{_WORD}]\Z")
_STARTS_WITH_WORD = regex.compile(rf"\A[{_WORD}]")
_SPACES_AT_END = regex.compile(r"\p{White_Space}*\Z")
_SPACES_AT_START = regex.compile(r"\A\p{White_Space}*")


@dataclass(frozen=True)
class _Added:
    id: int
    content: str
    special: bool
    normalized: bool
    lstrip: bool
    rstrip: bool
    single_word: bool


class _AddedVocabulary:
    """tokenizers' added-token matching: leftmost-longest, then single_word/lstrip/rstrip."""

    def __init__(self, entries: list[dict], normalizer: list[dict]):
        self.tokens = [_Added(e["id"], e["content"], bool(e.get("special", False)), bool(e.get("normalized", not e.get("special", False))),
                              bool(e.get("lstrip", False)), bool(e.get("rstrip", False)), bool(e.get("single_word", False)))
                       for e in entries]
        self.by_id = {t.id: t for t in self.tokens}
        # a normalized token is matched (and decoded) in its normalised spelling
        self.spelling = {t.id: (normalize(Piece.of(t.content), normalizer).text if t.normalized else t.content)
                         for t in self.tokens}
        self.special_spellings = {t.content for t in self.tokens if t.special}
        self.raw = self._table([t for t in self.tokens if not t.normalized])
        self.normalized = self._table([t for t in self.tokens if t.normalized])
        # one trie-shaped regex per table: a search jumps to the next spelling at C speed
        # (an empty spelling matches nowhere: it is left out)
        self._search = {id(table): regex.compile(trie_pattern([s for s in table if s])).search
                        for table in (self.raw, self.normalized) if any(table)}

    def clash(self) -> str | None:
        """Two normalized added tokens that normalise to the same text, which tokenizers then
        matches as either one, by its hash map's order, differently from one load to the next;
        or one that normalises to nothing, which tokenizers matches as an empty pattern.

        Example:
            >>> _AddedVocabulary([{"id": 5, "content": "A"}, {"id": 6, "content": "a"}], [{"type": "Lowercase"}]).clash()
            "added tokens 'A' and 'a' both normalize to 'a' (tokenizers matches either, at random)"
        """
        seen: dict[str, _Added] = {}
        for token in self.tokens:
            if not token.normalized:
                continue
            spelling = self.spelling[token.id]
            if not spelling:  # tokenizers then matches an empty pattern (at a piece's start), labkit nowhere
                return f"added token {token.content[:40]!r} normalizes to an empty text"
            other = seen.setdefault(spelling, token)
            if other.id != token.id:
                return (f"added tokens {other.content[:40]!r} and {token.content[:40]!r} both normalize to "
                        f"{spelling[:40]!r} (tokenizers matches either, at random)")
        return None

    def _table(self, tokens: list[_Added]) -> dict[str, _Added]:
        table: dict[str, _Added] = {}
        for token in tokens:
            table.setdefault(self.spelling[token.id], token)
        return table

    def find(self, text: str, table: dict[str, _Added], parse_special: bool) -> list[tuple[int, int, _Added | None]]:
        """Segments (start, end, token or None) of ``text``, as tokenizers' find_matches."""
        if not table or not text:
            return [(0, len(text), None)]
        search = self._search.get(id(table))
        if search is None:  # only empty spellings
            return [(0, len(text), None)]
        out: list[tuple[int, int, _Added | None]] = []
        done = 0  # end of the last emitted match
        pos = 0
        while pos < len(text):
            match = search(text, pos)  # the leftmost spelling from pos, the longest there
            if match is None:
                break
            token = table[match.group()]
            start, stop = match.start(), match.end()
            pos = stop  # the automaton moves past a match whether it is kept or not
            if token.special and not parse_special:
                continue
            if token.single_word and ((start > 0 and _ENDS_WITH_WORD.search(text[:start]))
                                      or (stop < len(text) and _STARTS_WITH_WORD.match(text[stop:]))):
                continue
            if token.lstrip:
                start = max(_SPACES_AT_END.search(text[:start]).start(), done)
            if token.rstrip:
                # the spaces are absorbed, but the search goes on from the match's end: a next
                # match may start inside them, and its piece then overlaps this one (as in tokenizers)
                stop += _SPACES_AT_START.match(text[stop:]).end()
            if done < start:
                out.append((done, start, None))
            out.append((start, stop, token))
            done = stop
        if done < len(text):
            out.append((done, len(text), None))
        return out


def _model(doc: dict, vocab: VocabData):
    model = doc["model"]
    kind = model.get("type")
    if kind == "BPE":
        mapping = dict(model["vocab"])
        return CharBPEModel(mapping, parse_merges(model.get("merges", []), vocab.name),
                            unk_token=model.get("unk_token"), prefix=model.get("continuing_subword_prefix"),
                            suffix=model.get("end_of_word_suffix"), byte_fallback=bool(model.get("byte_fallback")),
                            fuse_unk=bool(model.get("fuse_unk")), ignore_merges=bool(model.get("ignore_merges")))
    if kind == "WordPiece":
        return WordPieceModel(dict(model["vocab"]), model.get("unk_token", "[UNK]"),
                              model.get("continuing_subword_prefix", "##"), model.get("max_input_chars_per_word", 100))
    if kind == "WordLevel":
        return WordLevelModel(dict(model["vocab"]), model.get("unk_token"))
    if kind == "Unigram":
        pieces = [(p, float(s)) for p, s in model["vocab"]]
        return HFUnigramModel(pieces, model.get("unk_id"), bool(model.get("byte_fallback")))
    raise EngineUnavailable(f"{vocab.name}: model {kind} has no labkit pipeline engine")


class PipelineTokenizer(Tokenizer):
    """A tokenizer.json pipeline run by labkit's pure-Python components.

    Example:
        >>> from labkit.formats.hf_json import read_hf_json
        >>> from labkit.paths import data_path
        >>> tok = PipelineTokenizer(read_hf_json(data_path("hf/all-MiniLM-L6-v2/tokenizer.json")))
        >>> ids = tok.encode("Hello there", add_special_tokens=True).ids
        >>> tok.vocab.tokens[ids[0]], tok.decode(ids), tok.decode(ids, skip_special_tokens=True)
        ('[CLS]', '[CLS] hello there [SEP]', 'hello there')
    """

    engine = "labkit"

    def __init__(self, vocab: VocabData):
        super().__init__(vocab, backend=None)
        doc = json.loads(vocab.metadata["tokenizer_json"])
        self.normalizer = flatten(doc.get("normalizer"), "normalizer")
        for node in self.normalizer:  # a corrupt charsmap is refused at load, not at the first encode
            if node.get("type") == "Precompiled" and node.get("precompiled_charsmap"):
                _charsmap(node["precompiled_charsmap"])
        self.pre_tokenizer = flatten(doc.get("pre_tokenizer"), "pre_tokenizer")
        self.decoder = flatten(doc.get("decoder"), "decoder") if doc.get("decoder") is not None else None
        self.post = flatten(doc.get("post_processor"), "post_processor")
        self.model = _model(doc, vocab)
        self.added = _AddedVocabulary(doc.get("added_tokens") or [], self.normalizer)
        clash = self.added.clash()
        if clash:
            raise EngineUnavailable(f"{vocab.name}: {clash}")
        model_vocab = doc["model"]["vocab"]
        self.id_to_piece = ({i: p for p, i in model_vocab.items()} if isinstance(model_vocab, dict)
                            else {i: p for i, (p, _) in enumerate(model_vocab)})
        self.unk_id = self._unk_id(doc)

    def _unk_id(self, doc: dict) -> int | None:
        model = doc["model"]
        if model.get("type") == "Unigram":
            return model.get("unk_id")
        unk = model.get("unk_token")
        return model["vocab"].get(unk) if unk is not None else None

    # -- encode --------------------------------------------------------------
    def _pieces(self, text: str, parse_special: bool) -> list[tuple[Piece, _Added | None]]:
        out: list[tuple[Piece, _Added | None]] = []
        whole = Piece.of(text)
        for start, end, token in self.added.find(text, self.added.raw, parse_special):
            piece = whole.slice(start, end)
            if token is not None:
                if piece.text:  # tokenizers drops an empty piece, token or not (an lstrip clipped to nothing)
                    out.append((piece, token))
                continue
            piece = normalize(piece, self.normalizer)
            for s, e, found in self.added.find(piece.text, self.added.normalized, parse_special):
                part = piece.slice(s, e)
                if part.text:
                    out.append((part, found))
        return out

    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        ids: list[int] = []
        tokens: list[str] = []
        values: list[str] = []  # the token strings tokenizers holds (what its offset trimming reads)
        offsets: list[tuple[int, int]] = []
        tokenize = self.model.tokenize
        for piece, token in self._pieces(text, parse_special):
            if token is not None:
                ids.append(token.id)
                tokens.append(self.vocab.tokens[token.id])  # named by its spelling, as every engine names it
                values.append(piece.text)  # the matched text, with the spaces lstrip/rstrip absorbed
                offsets.append(piece.span(0, len(piece.text)))
                continue
            for word in pre_tokenize([piece], self.pre_tokenizer):
                for index, value, s, e in tokenize(word.text):
                    ids.append(index)
                    tokens.append(self.vocab.tokens[index] if index == self.unk_id else value)
                    values.append(value)
                    offsets.append(word.span(s, e))
        return self._post_process(ids, tokens, offsets, add_special_tokens, values)

    def _post_process(self, ids, tokens, offsets, add_special_tokens: bool, values=None) -> Encoding:
        values = list(tokens) if values is None else values
        for node in self.post:
            kind = node.get("type")
            if kind in ("ByteLevel", "RobertaProcessing") and node.get("trim_offsets", True):
                # trimmed by the strings tokenizers holds: an added token's matched text, an unknown Unigram piece's text
                offsets = trim_offsets(values, offsets, bool(node.get("add_prefix_space", True)))
            if not add_special_tokens:
                continue
            if kind in ("BertProcessing", "RobertaProcessing"):
                (cls, cls_id), (sep, sep_id) = node["cls"], node["sep"]
                ids, tokens, offsets = [cls_id, *ids, sep_id], [cls, *tokens, sep], [(0, 0), *offsets, (0, 0)]
                values = [cls, *values, sep]
            elif kind == "TemplateProcessing":
                values = self._template(node, ids, values, offsets)[1]
                ids, tokens, offsets = self._template(node, ids, tokens, offsets)
        return Encoding(ids=ids, tokens=tokens, offsets=offsets)

    @staticmethod
    def _template(node: dict, ids, tokens, offsets):
        out_ids, out_tokens, out_offsets = [], [], []
        for item in node.get("single", []):
            if "Sequence" in item:
                out_ids += ids
                out_tokens += tokens
                out_offsets += offsets
            else:
                name = item["SpecialToken"]["id"]
                entry = node["special_tokens"][name]
                out_ids += entry["ids"]
                out_tokens += entry["tokens"]
                out_offsets += [(0, 0)] * len(entry["ids"])
        return out_ids, out_tokens, out_offsets

    # -- decode --------------------------------------------------------------
    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        strings = []
        for index in ids:
            token = self.added.by_id.get(index)
            if token is not None:
                spelling = self.added.spelling[index]
                if skip_special_tokens and spelling in self.added.special_spellings:
                    continue
                strings.append(spelling)
                continue
            piece = self.id_to_piece.get(index)
            if piece is None:
                continue
            if skip_special_tokens and piece in self.added.special_spellings:
                continue
            strings.append(piece)
        return decode_chain(strings, self.decoder)


def _check_well_formed(vocab: VocabData) -> None:
    """Every field this engine reads has the shape tokenizers requires: let the file format's
    own parser say so (the algorithms are labkit's; checking the format is not the subject)."""
    import tokenizers

    try:
        tokenizers.Tokenizer.from_str(vocab.metadata["tokenizer_json"])
    except BaseException as exc:  # a bare Exception for a malformed file, or a Rust panic (a BaseException)
        if not library_failure(exc):
            raise
        raise FormatError(f"{vocab.name}: tokenizers cannot read this tokenizer.json ({str(exc)[:200]})") from None


def build(vocab: VocabData) -> PipelineTokenizer:
    """Build the pipeline engine for a tokenizer.json the reader found servable.

    Example:
        >>> from labkit.formats.hf_json import read_hf_json
        >>> from labkit.paths import data_path
        >>> build(read_hf_json(data_path("hf/all-MiniLM-L6-v2/tokenizer.json"))).engine
        'labkit'
    """
    if vocab.format != "hf_json" or "tokenizer_json" not in vocab.metadata:
        raise EngineUnavailable(f"{vocab.name}: labkit's pipeline engine reads tokenizer.json files only")
    _check_well_formed(vocab)
    try:
        return PipelineTokenizer(vocab)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise LabkitError(f"{vocab.name}: tokenizer.json is malformed for labkit's pipeline engine ({type(exc).__name__}: {exc})") from None
