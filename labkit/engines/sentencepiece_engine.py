"""The ``sentencepiece`` reference engine: a ``SentencePieceProcessor`` behind the labkit surface.

``.model`` files are loaded as they are; SentencePiece-family GGUF vocabularies (llama's SPM
BPE, t5's Unigram) are first written back into a ``ModelProto`` by
:func:`labkit.formats.spm_model.write_model_proto`. sentencepiece does not know about special
tokens in text, so labkit splits the text at added tokens first (``parse_special``) and lets
sentencepiece encode each plain segment, exactly as llama.cpp does.
Introduced in notebook ``00_tour``.

Example:
    >>> import labkit
    >>> labkit.load("botchan-unigram", engine="sentencepiece").encode("I am").tokens
    ['▁I', '▁am']
"""
from __future__ import annotations

import sentencepiece

from labkit.algorithms.specials import AddedTokenSplitter
from labkit.algorithms.spm_decode import join_runs
from labkit.core import MODEL_SPM_BPE, MODEL_SPM_CHAR, MODEL_SPM_WORD, MODEL_UNIGRAM, TOKEN_CONTROL
from labkit.core import Encoding, EngineUnavailable, FormatError, LabkitError, Tokenizer, VocabData
from labkit.engines.base import frame
from labkit.formats.spm_model import write_model_proto


class SentencePieceTokenizer(Tokenizer):
    """A labkit Tokenizer whose work is done by a ``SentencePieceProcessor`` (``.backend``).

    Example:
        >>> import labkit
        >>> labkit.load("llama-spm", engine="sentencepiece").encode(" Hello").ids
        [29871, 15043]

    Introduced in notebook ``00_tour``.
    """

    engine = "sentencepiece"

    def __init__(self, vocab: VocabData, backend: sentencepiece.SentencePieceProcessor):
        super().__init__(vocab, backend=backend)
        # a .model's user-defined pieces are sentencepiece's own business (matched after
        # normalisation, inside the model); a GGUF's are cut out first, as llama.cpp does
        own = vocab.format == "spm_model"
        self._splitter = AddedTokenSplitter([a for a in vocab.added_tokens if a.special or not own])
        self._dummy_prefix = bool(vocab.normalizer.get("add_dummy_prefix", True))
        # what is_special_id says, as a set: control pieces and special added tokens
        self._special_ids_all = frozenset(i for i in range(len(vocab.tokens)) if self.is_special_id(i))
        # the CONTROL pieces among them, which sentencepiece's decode drops by itself
        self._control_ids = frozenset(i for i, kind in enumerate(vocab.token_types) if kind == TOKEN_CONTROL)

    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        segments = self._splitter.split(text, parse_special=parse_special)
        ids: list[int] = []
        for start, end, added_id in segments:
            if added_id is not None:
                ids.append(added_id)
                continue
            try:
                ids += self.backend.encode(text[start:end])
            except Exception as exc:
                raise LabkitError(f"{self.name}: sentencepiece could not encode {text[start:end][:40]!r}: {exc}") from None
        model_ids = ids
        if add_special_tokens:
            ids = frame(self.vocab, ids, [], len(text))[0]

        def offsets() -> list[tuple[int, int]]:
            # asked of sentencepiece only when read: an ids-only caller costs what sentencepiece costs
            out: list[tuple[int, int]] = []
            for start, end, added_id in segments:
                if added_id is not None:
                    out.append((start, end))
                    continue
                result = self.backend.encode(text[start:end], out_type="offset_mapping", return_bytes=False)
                out.extend((start + a, start + b) for a, b in result["offsets"])
            return frame(self.vocab, model_ids, out, len(text))[1] if add_special_tokens else out

        return Encoding(ids, lambda: list(map(self.vocab.tokens.__getitem__, ids)), offsets)

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        # sentencepiece drops control ids; labkit spells them (unless skipped), so the ordinary
        # runs between them are decoded by sentencepiece and the spellings put back in between
        if self._special_ids_all.isdisjoint(ids):
            return self._decode_run(ids)  # one run (the common case): sentencepiece's own call
        return join_runs(ids, self._special_ids_all, self.vocab.tokens, self._decode_run,
                         skip_special_tokens=skip_special_tokens, add_dummy_prefix=self._dummy_prefix,
                         vanishing=self._control_ids)

    def _decode_run(self, run: list[int]) -> str:
        try:
            return self.backend.decode(run)
        except Exception as exc:
            raise LabkitError(f"{self.name}: sentencepiece could not decode: {exc}") from None


def build(vocab: VocabData) -> SentencePieceTokenizer:
    """Build the sentencepiece engine; it serves SentencePiece BPE and Unigram vocabularies.

    Example:
        >>> from labkit.engines.sentencepiece_engine import build
        >>> from labkit.formats.spm_model import read_spm_model
        >>> from labkit.paths import data_path
        >>> build(read_spm_model(data_path("sentencepiece/botchan_en_bpe_1000.model"))).engine
        'sentencepiece'

    Introduced in notebook ``00_tour``.
    """
    # word and char models exist only as .model files; sentencepiece itself serves them
    servable = vocab.model in (MODEL_SPM_BPE, MODEL_UNIGRAM) or (
        vocab.model in (MODEL_SPM_WORD, MODEL_SPM_CHAR) and vocab.format == "spm_model")
    if not servable or vocab.format not in ("spm_model", "gguf"):
        raise EngineUnavailable(
            f"{vocab.name}: sentencepiece serves SentencePiece BPE/Unigram (.model, GGUF) and word/char .model files, "
            f"not {vocab.format} {vocab.model}"
        )
    # always rebuilt from the plain data (round-trips .model files), never re-read from a path
    proto = write_model_proto(vocab)
    try:
        backend = sentencepiece.SentencePieceProcessor(model_proto=proto)
    except Exception as exc:
        raise FormatError(f"{vocab.name}: sentencepiece rejected the model: {exc}") from None
    if backend.get_piece_size() != len(vocab.tokens):
        raise FormatError(f"{vocab.name}: sentencepiece sees {backend.get_piece_size()} pieces, the file {len(vocab.tokens)}")
    return SentencePieceTokenizer(vocab, backend)
