"""The ``tokenizers`` reference engine: a ``tokenizers.Tokenizer`` built from any shipped file.

A tokenizer.json is used as it is (padding and truncation switched off). For GGUF,
SentencePiece ``.model`` and ``.tiktoken`` files the pipeline is assembled from the
reader's plain data: normaliser, pre-tokenizer, model, added tokens, post-processor and
decoder, each chosen the way llama.cpp / sentencepiece / tiktoken behave for that file.
Introduced in notebook ``00_tour``.

Example:
    >>> import labkit
    >>> labkit.load("qwen2", engine="hf").encode("Hello world").ids
    [9707, 1879]
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import threading
import time
from typing import Iterable

import regex
import tokenizers
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors

from labkit import metrics as _metrics
from labkit.algorithms.bpe_merges import merges_from_ranks, spm_merges_from_scores
from labkit.algorithms.bytes_unicode import bytes_to_unicode, decode_like_byte_level
from labkit.algorithms.charsmap import check_charsmap
from labkit.algorithms.pretokenize import get_pre_tokenizer
from labkit.algorithms.specials import longest_first_differs
from labkit.core import MODEL_BPE_BYTE, MODEL_SPM_BPE, MODEL_UNIGRAM, MODEL_WORDPIECE
from labkit.core import TOKEN_CONTROL, TOKEN_UNKNOWN, TOKEN_UNUSED, hole_ids
from labkit.core import AddedToken, Encoding, EngineUnavailable, FormatError, LabkitError, Tokenizer, VocabData
from labkit.core import library_failure  # noqa: F401  (named here too: the hf engine's errors use it)

SPIECE_UNDERLINE = "\u2581"


@contextlib.contextmanager
def library_errors(message: str, kind: type[LabkitError] = LabkitError):
    """Inside the block, an error raised by tokenizers (see :func:`library_failure`) becomes
    ``kind("<message>: <ExceptionType>: <what it said>")``; labkit's own errors pass through.

    Example:
        >>> import tokenizers
        >>> with library_errors("x.json: tokenizers cannot read it"):
        ...     tokenizers.Tokenizer.from_str("{")
        Traceback (most recent call last):
        labkit.core.LabkitError: x.json: tokenizers cannot read it: Exception: EOF while parsing an object at line 1 column 1
    """
    try:
        yield
    except LabkitError:
        raise
    except BaseException as exc:
        if not library_failure(exc):
            raise
        raise library_error(message, exc, kind) from None


def library_error(message: str, exc: BaseException, kind: type[LabkitError] = LabkitError) -> LabkitError:
    """The error :func:`library_errors` raises for ``exc``, for hot paths that catch it
    themselves (a ``with`` block and its message cost more than a short encode).

    Example:
        >>> from labkit.engines.hf import library_error
        >>> library_error("x.json: could not encode 'a'", ValueError("bad")).args[0]
        "x.json: could not encode 'a': ValueError: bad"
    """
    return kind(f"{message}: {type(exc).__name__}: {exc}")


class HFTokenizer(Tokenizer):
    """A labkit Tokenizer whose work is done by a ``tokenizers.Tokenizer`` (``.backend``).

    Example:
        >>> import labkit
        >>> labkit.load("gpt2", engine="hf").backend  # doctest: +ELLIPSIS
        Tokenizer(version="1.0", ...)

    Introduced in notebook ``00_tour``.
    """

    engine = "hf"

    def __init__(self, vocab: VocabData, *, backend: tokenizers.Tokenizer, plain_backend: tokenizers.Tokenizer | None = None):
        super().__init__(vocab, backend=backend)
        # encode_special_tokens is a flag on the backend, off except while a call that needs it on
        # holds _flag_lock; only calls whose text holds a special spelling (where the flag matters)
        # take the lock, so no call ever sees another's setting and no copy of the backend is made
        backend.encode_special_tokens = False
        self._flag_lock = threading.Lock()
        # Unigram with control pieces: a twin whose lattice cannot match them; else made on first use
        self._plain_backend = plain_backend
        self._unparsed_backend = plain_backend
        # sentencepiece never matches a .model's control pieces in text, whatever parse_special says
        self._controls_are_text = vocab.format == "spm_model"
        self._twin_lock = threading.Lock()
        # the Unigram twin differs from the backend beyond the flag: never skip it
        self._special_spelling = _special_spelling_finder(vocab) if plain_backend is None else None
        unk = vocab.specials.unk_id
        self._added_ids = frozenset(a.id for a in vocab.added_tokens if 0 <= a.id < len(vocab.tokens)
                                    and (a.lstrip or a.rstrip or a.normalized))
        self._unk_id = unk if vocab.model == MODEL_UNIGRAM and unk is not None and unk < len(vocab.tokens) else None
        # a .model's offsets are reported as sentencepiece reports them (see sentencepiece_offsets)
        self._sentencepiece_offsets = vocab.format == "spm_model"
        self._decode_failure = f"{self.name}: tokenizers could not decode"  # built once, not per call

    def _backend_for(self, parse_special: bool, text: str) -> tuple[tokenizers.Tokenizer, bool | None]:
        """``(backend, flag)``: the backend to encode ``text`` with, and ``flag`` None when
        ``encode_special_tokens`` cannot matter for it (no special token's spelling in the text),
        else the value the flag must hold while encoding (set under ``_flag_lock``). Where special
        spellings cannot be told from raw text (normalised specials) or the Unigram twin differs
        beyond the flag, parse_special=False gets a copy made once, on first need, and the shared
        backend's flag is never switched. A .model's control pieces are always text."""
        finder = self._special_spelling
        if finder is not None:
            if finder(text) is None:
                return self.backend, None
            return self.backend, not parse_special or self._controls_are_text
        if parse_special and not self._controls_are_text:
            return self.backend, None
        twin = self._unparsed_backend
        if twin is None:
            with self._twin_lock:
                if self._unparsed_backend is None:
                    copy = tokenizers.Tokenizer.from_str(self.backend.to_str())
                    copy.encode_special_tokens = True
                    self._unparsed_backend = copy
                twin = self._unparsed_backend
        return twin, None

    def _flagged(self, flag: bool, call, *args, **kwargs):
        """``call(*args, **kwargs)`` with the shared backend's encode_special_tokens at ``flag``."""
        backend = self.backend
        with self._flag_lock:
            backend.encode_special_tokens = flag
            try:
                return call(*args, **kwargs)
            finally:
                backend.encode_special_tokens = False

    def _to_encoding(self, enc, backend: tokenizers.Tokenizer) -> Encoding:
        ids = enc.ids

        def tokens() -> list[str]:
            if backend is self._plain_backend:
                spelled = [self.vocab.tokens[i] for i in ids]  # the twin spells hidden pieces as placeholders
            elif self._unk_id is not None:
                # Unigram reports an unknown piece by its surface text; labkit names it by the vocab's spelling
                spelled = [self.vocab.tokens[i] if i == self._unk_id else t for i, t in zip(ids, enc.tokens)]
            else:
                spelled = enc.tokens
            if self._added_ids:
                # an added token is named by its spelling, not by the text it matched (lstrip/rstrip
                # absorb spaces, a normalized token matches the normalised text)
                spell = self.vocab.tokens
                spelled = [spell[i] if i in self._added_ids else t for i, t in zip(ids, spelled)]
            return spelled

        if self._sentencepiece_offsets:
            return Encoding(ids, tokens, lambda: sentencepiece_offsets(enc.offsets, enc.sequence_ids))
        # tokens and offsets are converted from Rust only when read
        return Encoding(ids, tokens, lambda: enc.offsets)

    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        backend, flag = self._backend_for(parse_special, text)
        try:  # as library_errors does, with the message built only on failure (this runs per encode)
            if flag is None:
                enc = backend.encode(text, add_special_tokens=add_special_tokens)
            else:
                enc = self._flagged(flag, backend.encode, text, add_special_tokens=add_special_tokens)
        except BaseException as exc:
            if not library_failure(exc):
                raise
            raise library_error(f"{self.name}: tokenizers could not encode {text[:40]!r}", exc) from None
        return self._to_encoding(enc, backend)

    def encode_batch(self, texts: Iterable[str], *, add_special_tokens: bool = False, parse_special: bool = True) -> list[Encoding]:
        """Encode each text with the backend's ``encode_batch`` (in Rust, on its own thread pool,
        without the GIL); the same Encodings as a loop over :meth:`encode`.

        Example:
            >>> import labkit
            >>> [e.ids for e in labkit.load("qwen2", engine="hf").encode_batch(["Hello", "world"])]
            [[9707], [14615]]

        Introduced in notebook ``15_serving_metrics``.
        """
        texts = self._check_texts(texts)
        backend, flag = self._backend_for(bool(parse_special), "\0".join(texts))
        started = time.perf_counter()
        with library_errors(f"{self.name}: tokenizers could not encode a batch of {len(texts)} texts"):
            if flag is None:
                encodings = backend.encode_batch(texts, add_special_tokens=bool(add_special_tokens))
            else:
                encodings = self._flagged(flag, backend.encode_batch, texts, add_special_tokens=bool(add_special_tokens))
        out = [self._to_encoding(enc, backend) for enc in encodings]
        if _metrics.ENABLED and out:
            share = (time.perf_counter() - started) / len(out)  # each text's share of the batch
            for text, enc in zip(texts, out):
                _metrics.record_encode(self, share, len(enc.ids), len(text))
        return out

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        with library_errors(self._decode_failure):
            if self.vocab.model == MODEL_UNIGRAM and self.vocab.format != "hf_json":
                # the backend's Unigram spells hidden pieces (<unk>) as placeholders: decode the vocab's spellings
                keep = [i for i in ids if not (skip_special_tokens and self.is_special_id(i))]
                return self.backend.decoder.decode([self.vocab.tokens[i] for i in keep])
            return self.backend.decode(ids, skip_special_tokens=skip_special_tokens)


def sentencepiece_offsets(offsets: Sequence[tuple[int, int]], sequence_ids: Sequence[int | None]) -> list[tuple[int, int]]:
    """tokenizers' offsets on a .model, as sentencepiece reports them: each piece ends where the
    next one starts (the dummy-prefix ``▁`` covers nothing, a squeezed space run belongs to the
    piece that keeps its first space, a character's byte pieces are empty but the last).
    Framing tokens (sequence id None) keep their own.

    Example (tokenizers aligns the dummy ``▁`` with the ``x`` it precedes):
        >>> from labkit.engines.hf import sentencepiece_offsets
        >>> sentencepiece_offsets([(0, 1), (0, 1)], [0, 0])
        [(0, 0), (0, 1)]
    """
    out = [tuple(span) for span in offsets]
    pieces = [i for i, sequence in enumerate(sequence_ids) if sequence is not None]
    for here, after in zip(pieces, pieces[1:]):
        out[here] = (out[here][0], out[after][0])
    return out


def _special_spelling_finder(vocab: VocabData):
    """``search(text)`` finding a special added token's spelling, or None when a special is
    matched after normalisation (then its raw spelling cannot tell) or there is none to find."""
    specials = [a.content for a in vocab.added_tokens if a.special and a.content]
    if not specials or any(a.normalized for a in vocab.added_tokens if a.special):
        return None
    specials.sort(key=len, reverse=True)
    return regex.compile("|".join(regex.escape(s) for s in specials)).search


# measured by the conformance matrix (notebook 14, section 5): on every SentencePiece configuration
# trained there, tokenizers' conversion differs from sentencepiece somewhere
MODEL_FILE_REFUSAL = (
    "{name}: the hf engine does not serve SentencePiece .model files, because tokenizers' conversion "
    "differs from sentencepiece on every configuration measured: its Precompiled normaliser works per "
    "grapheme cluster, text spelled like a byte piece ('<0x41>') is read as that piece, user-defined "
    "symbols split the text before normalising, characters the normaliser deletes get other offsets, "
    "whitespace differs with remove_extra_whitespaces off, and <unk> and leading '▁' pieces decode differently; "
    "use engine='sentencepiece' or engine='labkit' (labkit.engines.hf.convert_model_file gives "
    "tokenizers' conversion by name, to compare the two libraries)"
)
CONVERTED_NOTE = "tokenizers' conversion of a .model, not exact: compare, do not serve"
GGUF_CONVERTED_NOTE = "tokenizers' reading of a llama.cpp GGUF, not exact: compare, do not serve"
# measured against llama.cpp (python -m labkit.conformance.random_gguf --family spm|wpm, and on the
# shipped files with 307 random texts and 500 random id lists): tokenizers differs on ordinary input
GGUF_LLAMA_REFUSAL = (
    "{name}: the hf engine does not serve a GGUF \"llama\" (SentencePiece-style) vocabulary, because "
    "tokenizers cannot run llama.cpp's loop: llama.cpp joins the adjacent pair whose joined token scores "
    "highest (leftmost on a tie) into any token, while tokenizers' BPE applies merges ranked from the scores "
    "(other ids on 12 of 120 random llama files with tied, zero or shuffled scores), and its ByteFallback "
    "decoder turns a whole run of <0xNN> pieces into one U+FFFD per byte when the run is not UTF-8 "
    "(llama-spm: 130 of 500 random id lists decode otherwise); engine='labkit' serves it as llama.cpp does "
    "(labkit.engines.hf.convert_model_file gives tokenizers' reading by name, to compare)"
)
GGUF_BERT_REFUSAL = (
    "{name}: the hf engine does not serve a GGUF \"bert\" (WordPiece) vocabulary, because llama.cpp "
    "normalises and splits with its own Unicode tables, has no 100-character word limit and keeps the "
    "first word's space when decoding, where tokenizers' BertNormalizer and WordPiece do otherwise "
    "(bert-bge: other ids on 55 of 307 random texts, another decode on 451 of 500 random id lists); "
    "use engine='labkit', or load the same vocabulary's tokenizer.json (bundled as 'minilm') with "
    "engine='hf' (labkit.engines.hf.convert_model_file gives tokenizers' reading by name, to compare)"
)
# measured on nmt_nfkc (botchan's charsmap under t5 GGUF keys): 194,586 of its 224,654 keys span
# more than one grapheme cluster, and tokenizers' Precompiled never matches across one
GGUF_CHARSMAP_REFUSAL = (
    "{name}: the hf engine does not serve a GGUF Unigram vocabulary with a precompiled charsmap: "
    "llama.cpp (like sentencepiece) replaces the longest charsmap key found in the text, while "
    "tokenizers' Precompiled normaliser looks inside one grapheme cluster at a time, so keys spanning "
    "several clusters never match there (nmt_nfkc maps U+1100 U+1161 U+3133 to U+AC03; tokenizers gives "
    "U+1100 U+1161 U+11AA); use engine='labkit' or engine='sentencepiece'"
)

# random t5 GGUFs without a charsmap (labkit.conformance.random_gguf_ugm, seeds 1000:1400): of the
# 10 the other checks let through, 7 gave other ids than llama.cpp's (seeds 1038, 1050, 1114, ...)
GGUF_T5_REFUSAL = (
    "{name}: the hf engine does not serve a GGUF t5 (Unigram) vocabulary: llama.cpp's t5 tokenizer "
    "matches UNUSED tokens and never BYTE tokens in its lattice, scores a token its load-time rules "
    "retype by the new type, and copies text that begins like a user-defined token as it is, where "
    "tokenizers' Unigram does otherwise (7 of 10 random t5 GGUFs gave other ids); use engine='labkit'"
)


def convert_model_file(source) -> HFTokenizer:
    """tokenizers' reading of a SentencePiece ``.model`` or of a "llama" or "bert" GGUF (a bundled
    name or a path), asked for by name, or its VocabData: the pipeline labkit converts the file
    into (Precompiled charsmap, Prepend, Replace, Unigram, BPE or WordPiece, a decoder chain)
    behind the Tokenizer surface, ``.backend`` the ``tokenizers.Tokenizer``. It is **not exact**
    (``MODEL_FILE_REFUSAL``, ``GGUF_LLAMA_REFUSAL`` and ``GGUF_BERT_REFUSAL`` say how it differs
    from sentencepiece and llama.cpp), which is why ``labkit.load(path, engine="hf")`` refuses
    these files; it exists to compare the libraries, and its ``engine_note`` says so.

    Example:
        >>> from labkit.engines.hf import convert_model_file
        >>> converted = convert_model_file("botchan-unigram")
        >>> converted.encode("Hello world").tokens
        ['▁He', 'll', 'o', '▁world']
        >>> converted.engine_note
        "tokenizers' conversion of a .model, not exact: compare, do not serve"
        >>> convert_model_file("llama-spm").encode("Hello world").ids
        [15043, 3186]

    Introduced in notebook ``03_bpe_sentencepiece`` (appendix) and ``14_conformance_matrix``.
    """
    from labkit.formats.detect import read_vocab  # a reader, used only by this comparison helper
    from labkit.paths import BUNDLED, bundled_path

    if isinstance(source, VocabData):
        vocab = source
    else:
        vocab = read_vocab(bundled_path(source) if isinstance(source, str) and source in BUNDLED else source)
    if vocab.format == "gguf" and vocab.model in (MODEL_SPM_BPE, MODEL_WORDPIECE):
        if vocab.model == MODEL_WORDPIECE:
            # tokenizers holds the vocab.txt spellings; llama.cpp's added tokens are the file's phantom-space ones
            vocab = dataclasses.replace(vocab, added_tokens=[dataclasses.replace(a, content=vocab.tokens[a.id])
                                                             for a in vocab.added_tokens])
        converted = _build(vocab)
        converted.engine_note = GGUF_CONVERTED_NOTE
        return converted
    if vocab.format != "spm_model":
        raise EngineUnavailable(f"{vocab.name}: not a SentencePiece .model or a llama/bert GGUF; load it with labkit.load")
    converted = _build(vocab)
    converted.engine_note = CONVERTED_NOTE
    return converted


def build(vocab: VocabData) -> HFTokenizer:
    """Build the ``tokenizers`` engine for ``vocab``; EngineUnavailable if it cannot serve it.

    Example:
        >>> from labkit.engines.hf import build
        >>> from labkit.formats.detect import read_vocab
        >>> from labkit.paths import bundled_path
        >>> tok = build(read_vocab(bundled_path("gpt2")))
        >>> tok.engine, tok.encode("Hello world").tokens
        ('hf', ['Hello', 'Ġworld'])

    Introduced in notebook ``00_tour``.
    """
    if vocab.format == "spm_model":
        raise EngineUnavailable(MODEL_FILE_REFUSAL.format(name=vocab.name))
    if vocab.format == "gguf" and vocab.model == MODEL_SPM_BPE:
        raise EngineUnavailable(GGUF_LLAMA_REFUSAL.format(name=vocab.name))
    if vocab.format == "gguf" and vocab.model == MODEL_WORDPIECE:
        raise EngineUnavailable(GGUF_BERT_REFUSAL.format(name=vocab.name))
    if vocab.format == "gguf" and vocab.model == MODEL_UNIGRAM and vocab.normalizer.get("charsmap"):
        raise EngineUnavailable(GGUF_CHARSMAP_REFUSAL.format(name=vocab.name))
    if vocab.format == "gguf" and vocab.model == MODEL_UNIGRAM:
        raise EngineUnavailable(GGUF_T5_REFUSAL.format(name=vocab.name))
    if vocab.options.get("dna_kmers"):
        raise EngineUnavailable(f"{vocab.name}: a hybriddna GGUF reads DNA between <dna> and </dna> as k-mers, "
                                "which no tokenizers pipeline does; engine='labkit' serves it as llama.cpp does")
    if vocab.format == "gguf" and vocab.options.get("byte_encode") is False:
        raise EngineUnavailable(f"{vocab.name}: a GGUF of BPE over raw UTF-8 (split {vocab.pre!r}), which labkit does "
                                "not rebuild as a tokenizers pipeline (llama.cpp merges whole lines, finds byte tokens "
                                "by spelling and decodes its own way); engine='labkit' serves it as llama.cpp does")
    if vocab.format == "gguf":
        differs = longest_first_differs(vocab.added_tokens)
        if differs is None and vocab.model == MODEL_BPE_BYTE:
            differs = _missing_byte_differs(vocab) or _byte_level_decode_differs(vocab)
        if differs is not None:
            raise EngineUnavailable(f"{vocab.name}: llama.cpp and tokenizers serve this GGUF "
                                    f"differently ({differs}); engine='labkit' serves it as llama.cpp does")
    return _build(vocab)


def _missing_byte_differs(vocab: VocabData) -> str | None:
    """A byte no GGUF token spells, described (llama.cpp keeps it as a symbol while merging and
    drops it after, so its neighbours do not merge across it; tokenizers drops it first); None if
    every byte has a token."""
    spelled = set(vocab.tokens)
    alphabet = bytes_to_unicode()
    missing = [b for b in range(256) if alphabet[b] not in spelled]
    if missing:
        return (f"byte 0x{missing[0]:02X} has no token: llama.cpp merges around it and then drops it, "
                "tokenizers drops it before merging")
    return None


def _byte_level_decode_differs(vocab: VocabData) -> str | None:
    """A GGUF token that tokenizers' ByteLevel decoder and llama.cpp decode differently, described
    (llama.cpp: an unused token is nothing, an added one its text as it is, an ordinary one with
    a char outside the byte alphabet a marker); None if there is none."""
    added = {a.id for a in vocab.added_tokens}
    for a in vocab.added_tokens:
        if decode_like_byte_level(a.content) != a.content.encode("utf-8", "replace"):
            return f"the added token {a.content!r} decodes to its own text in llama.cpp"
    types = vocab.token_types
    if TOKEN_UNUSED in types:
        token = vocab.tokens[types.index(TOKEN_UNUSED)]
        return f"the unused token {token!r} decodes to nothing in llama.cpp"
    within = frozenset(bytes_to_unicode().values()).issuperset
    for i in (i for i, token in enumerate(vocab.tokens) if not within(token)):  # few, and checked in C
        if i not in added and types[i] != TOKEN_CONTROL:
            return f"the token {vocab.tokens[i]!r} is outside the byte alphabet, which llama.cpp decodes to a marker"
    return None


def _build(vocab: VocabData) -> HFTokenizer:
    plain = None
    with library_errors(f"{vocab.name}: tokenizers could not build this vocabulary", FormatError):
        if vocab.format == "hf_json":
            backend = _from_tokenizer_json(vocab)
        elif vocab.model == MODEL_BPE_BYTE:
            backend = _byte_level_bpe(vocab)
        elif vocab.model == MODEL_SPM_BPE:
            backend = _sentencepiece_like(vocab, unigram=False)
        elif vocab.model == MODEL_UNIGRAM:
            backend = _sentencepiece_like(vocab, unigram=True)
            if TOKEN_CONTROL in vocab.token_types:
                plain = _sentencepiece_like(vocab, unigram=True, hide_controls=True)
        elif vocab.model == MODEL_WORDPIECE:
            backend = _wordpiece(vocab)
        else:
            raise EngineUnavailable(f"{vocab.name}: the hf engine has no pipeline for model {vocab.model!r}")
    return HFTokenizer(vocab, backend=backend, plain_backend=plain)


# ----------------------------------------------------------------------------- tokenizer.json


def _from_tokenizer_json(vocab: VocabData) -> tokenizers.Tokenizer:
    raw = vocab.metadata.get("tokenizer_json")
    if raw is None:
        raise EngineUnavailable(f"{vocab.name}: no tokenizer.json content in metadata")
    text = raw if isinstance(raw, str) else json.dumps(raw)
    backend = tokenizers.Tokenizer.from_str(text)
    # all-MiniLM-L6-v2 ships Fixed(128) padding and truncation: ids must be the text's own
    backend.no_padding()
    backend.no_truncation()
    return backend


# ----------------------------------------------------------------------------- shared pieces


def _added_tokens(vocab: VocabData) -> tuple[list[tokenizers.AddedToken], list[tokenizers.AddedToken]]:
    """(special, non-special) tokenizers.AddedToken lists, in id order."""
    special, plain = [], []
    entries = list(vocab.added_tokens)
    if vocab.format == "spm_model":
        # a .model's control pieces are not added tokens (sentencepiece reads their spelling as
        # text), but tokenizers needs them registered as special to skip them in decode
        entries += [AddedToken(piece, index, special=True)
                    for index, (piece, kind) in enumerate(zip(vocab.tokens, vocab.token_types)) if kind == TOKEN_CONTROL]
    for added in sorted(entries, key=lambda a: a.id):
        token = tokenizers.AddedToken(
            added.content,
            special=added.special,
            normalized=added.normalized,
            lstrip=added.lstrip,
            rstrip=added.rstrip,
            single_word=added.single_word,
        )
        (special if added.special else plain).append(token)
    return special, plain


def _finish(vocab: VocabData, backend: tokenizers.Tokenizer, *, with_specials: bool = True) -> tokenizers.Tokenizer:
    """Add the added tokens and the BOS/EOS or CLS/SEP post-processor."""
    special, plain = _added_tokens(vocab)
    if special and with_specials:
        backend.add_special_tokens(special)
    if plain:
        backend.add_tokens(plain)
    if with_specials:
        _check_added_ids(vocab, backend)
    post = _post_processor(vocab)
    if post is not None:
        backend.post_processor = post
    return backend


def _check_added_ids(vocab: VocabData, backend: tokenizers.Tokenizer) -> None:
    # an added token that is not already in the model's vocab would get a new id: names and ids must agree
    for added in vocab.added_tokens:
        got = backend.token_to_id(added.content)
        if got != added.id:
            raise EngineUnavailable(
                f"{vocab.name}: added token {added.content!r} would get id {got} instead of {added.id} in tokenizers"
            )


def _post_processor(vocab: VocabData):
    sp = vocab.specials
    if sp.add_cls_sep:
        if sp.cls is None or sp.sep is None or sp.cls_id is None or sp.sep_id is None:
            raise FormatError(f"{vocab.name}: CLS/SEP framing asked for but [CLS]/[SEP] are not set")
        return processors.TemplateProcessing(
            single=f"{sp.cls}:0 $A:0 {sp.sep}:0",
            pair=f"{sp.cls}:0 $A:0 {sp.sep}:0 $B:1 {sp.sep}:1",
            special_tokens=[(sp.cls, sp.cls_id), (sp.sep, sp.sep_id)],
        )
    pieces, pairs = [], {}
    if sp.add_bos and sp.bos is not None and sp.bos_id is not None:
        pieces.append("bos")
        pairs[sp.bos] = sp.bos_id
    if sp.add_eos and sp.eos is not None and sp.eos_id is not None:
        pieces.append("eos")
        pairs[sp.eos] = sp.eos_id
    if not pieces:
        return None
    bos = f"{sp.bos}:0 " if "bos" in pieces else ""
    eos = f" {sp.eos}:0" if "eos" in pieces else ""
    return processors.TemplateProcessing(
        single=f"{bos}$A:0{eos}",
        pair=f"{bos}$A:0{eos} {bos}$B:1{eos}".replace(":0 $B", ":1 $B"),
        special_tokens=list(pairs.items()),
    )


def _vocab_dict(vocab: VocabData) -> dict[str, int]:
    table: dict[str, int] = {}
    holes = hole_ids(vocab)
    for index, token in enumerate(vocab.tokens):
        if index in holes:
            continue  # a hole in the ids: tokenizers has no token there (decode drops the id)
        if token in table:
            # tokenizers maps each spelling to one id: a duplicate cannot keep names and ids aligned
            raise EngineUnavailable(f"{vocab.name}: token {token!r} appears twice (ids {table[token]} and {index})")
        table[token] = index
    return table


# ----------------------------------------------------------------------------- byte-level BPE

def _byte_level_bpe(vocab: VocabData) -> tokenizers.Tokenizer:
    spec = get_pre_tokenizer(vocab.pre or "default")
    # tiktoken spells its regexes with possessive quantifiers, which Oniguruma (inside
    # tokenizers) reads otherwise ("{1,3}+" as a repeated group); ``regexes`` holds the plain
    # spelling of the same split (cl100k's and r50k's whitespace at the end of the text
    # included, where the Llama-3 and GPT-2 regexes cut differently)
    regexes = spec.regexes
    if spec.custom_steps:
        raise EngineUnavailable(
            f"{vocab.name}: pre-tokenizer {spec.name!r} groups digits with llama.cpp's own function "
            f"({spec.custom_steps[0]}, unicode_regex_split_custom_afmoe); tokenizers has no such step, and "
            "the same split as a regex takes quadratic time there")
    if vocab.merges is not None:
        merges = list(vocab.merges)
        ignore_merges = spec.ignore_merges
    elif vocab.token_bytes is not None:
        singles = {raw for raw in vocab.token_bytes if raw is not None and len(raw) == 1}
        if len(singles) != 256:
            missing = min(set(range(256)) - {raw[0] for raw in singles})
            raise EngineUnavailable(
                f"{vocab.name}: byte 0x{missing:02X} has no rank; tokenizers would drop it where tiktoken fails, "
                "so the hf engine cannot serve this file exactly")
        merges = list(_merges_from_ranks_memo(tuple(vocab.token_bytes)))
        # tiktoken looks a whole pre-token up before merging
        ignore_merges = True
    else:
        raise EngineUnavailable(f"{vocab.name}: byte-level BPE without merges or token bytes")
    model = models.BPE(
        vocab=_vocab_dict(vocab),
        merges=merges,
        ignore_merges=bool(vocab.options.get("ignore_merges", ignore_merges)),
    )
    backend = tokenizers.Tokenizer(model)
    if spec.nfc or vocab.normalizer.get("nfc"):
        backend.normalizer = normalizers.NFC()
    splits = [pre_tokenizers.Split(Regex(pattern), behavior="isolated") for pattern in regexes]
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    backend.decoder = decoders.ByteLevel()
    return _finish(vocab, backend)


@functools.lru_cache(maxsize=4)
def _merges_from_ranks_memo(token_bytes: tuple[bytes | None, ...]) -> tuple[tuple[str, str], ...]:
    # deriving cl100k's 100k merges takes about a second; the same ranks loaded again reuse them
    return tuple(merges_from_ranks(token_bytes))


# ----------------------------------------------------------------------------- SentencePiece


# sentencepiece never puts these pieces in its lattice; tokenizers' Unigram would match their spelling
# (unknown and unused pieces are never added tokens, so they are hidden in both twins;
# control pieces must keep their spelling where they are matched as added tokens)
_NOT_IN_LATTICE = (TOKEN_UNKNOWN, TOKEN_UNUSED)


def _sentencepiece_like(vocab: VocabData, *, unigram: bool, hide_controls: bool = False) -> tokenizers.Tokenizer:
    norm = vocab.normalizer
    if norm.get("treat_whitespace_as_suffix", False):
        # tokenizers has a Prepend normaliser but none that appends the dummy '▁'
        raise EngineUnavailable(f"{vocab.name}: the hf engine cannot serve treat_whitespace_as_suffix=True "
                                "(tokenizers has no normaliser that appends the '▁'); use engine='labkit' or 'sentencepiece'")
    byte_fallback = bool(vocab.options.get("byte_fallback", False))
    unk_id = vocab.specials.unk_id
    if unk_id is None:
        unk_ids = [i for i, t in enumerate(vocab.token_types) if t == TOKEN_UNKNOWN]
        unk_id = unk_ids[0] if unk_ids else None
    if unigram:
        if vocab.scores is None:
            raise EngineUnavailable(f"{vocab.name}: Unigram needs scores")
        pieces = list(vocab.tokens)
        hidden = (*_NOT_IN_LATTICE, TOKEN_CONTROL) if hide_controls else _NOT_IN_LATTICE
        # same ids, but spellings no text can produce (U+FFFE is a noncharacter)
        pieces = [f"\ufffe{i}\ufffe" if t in hidden else p for i, (p, t) in enumerate(zip(pieces, vocab.token_types))]
        model = models.Unigram(list(zip(pieces, vocab.scores)), unk_id, byte_fallback)
    else:
        merges = vocab.merges if vocab.merges is not None else spm_merges_from_scores(vocab)
        model = models.BPE(
            vocab=_vocab_dict(vocab),
            merges=list(merges),
            unk_token=vocab.tokens[unk_id] if unk_id is not None else None,
            fuse_unk=True,
            byte_fallback=byte_fallback,
        )
    backend = tokenizers.Tokenizer(model)
    steps = []
    if norm.get("charsmap"):
        check_charsmap(norm["charsmap"])  # tokenizers aborts the process on some corrupt blobs
        steps.append(normalizers.Precompiled(norm["charsmap"]))
    if norm.get("remove_extra_whitespaces", False):
        # sentencepiece drops leading/trailing spaces and squeezes runs, after the charsmap
        # \A and \z: in Oniguruma ^ and $ match at every line break
        steps.append(normalizers.Replace(Regex(r"\A +| +\z"), ""))
        # the spaces after a run's first go, so the kept one is aligned with the first (as in sentencepiece)
        steps.append(normalizers.Replace(Regex("(?<= ) +"), ""))
    if norm.get("add_dummy_prefix", True):
        steps.append(normalizers.Prepend(" "))
    if norm.get("escape_whitespaces", True):
        steps.append(normalizers.Replace(" ", SPIECE_UNDERLINE))
        if norm.get("remove_extra_whitespaces", False):
            # sentencepiece strips trailing '▁' after escaping: a literal U+2581 the charsmap keeps goes too
            steps.append(normalizers.Replace(Regex(SPIECE_UNDERLINE + r"+\z"), ""))
    if steps:
        backend.normalizer = normalizers.Sequence(steps)
    parts = [decoders.Replace(SPIECE_UNDERLINE, " ")]
    if byte_fallback:
        parts.append(decoders.ByteFallback())
    parts.append(decoders.Fuse())
    if norm.get("add_dummy_prefix", True):
        parts.append(decoders.Strip(" ", 1, 0))
    backend.decoder = decoders.Sequence(parts)
    return _finish(vocab, backend, with_specials=not hide_controls)


# ----------------------------------------------------------------------------- WordPiece


def _wordpiece(vocab: VocabData) -> tokenizers.Tokenizer:
    opts, norm = vocab.options, vocab.normalizer
    prefix = opts.get("continuing_subword_prefix", "##")
    model = models.WordPiece(
        _vocab_dict(vocab),
        unk_token=opts.get("unk_token") or vocab.specials.unk or "[UNK]",
        max_input_chars_per_word=int(opts.get("max_input_chars_per_word", 100)),
        continuing_subword_prefix=prefix,
    )
    backend = tokenizers.Tokenizer(model)
    backend.normalizer = normalizers.BertNormalizer(
        clean_text=bool(norm.get("clean_text", True)),
        handle_chinese_chars=bool(norm.get("handle_chinese_chars", True)),
        strip_accents=norm.get("strip_accents"),
        lowercase=bool(norm.get("lowercase", True)),
    )
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece(prefix=prefix, cleanup=True)
    return _finish(vocab, backend)
