"""The ``sentencepiece`` reference engine: a ``SentencePieceProcessor`` behind the labkit surface.

``.model`` files are loaded as they are; SentencePiece-family GGUF vocabularies (llama's SPM
BPE, t5's Unigram) are first written back into a ``ModelProto`` by
:func:`labkit.formats.spm_model.write_model_proto`. sentencepiece does not know about special
tokens in text, so labkit splits the text at added tokens first (``parse_special``) and lets
sentencepiece encode each plain segment, exactly as llama.cpp does. For a GGUF the reference is
llama.cpp: a "t5" file is refused (llama.cpp's t5 loop is its own), a "llama" file is served only
where sentencepiece's loop gives llama.cpp's ids (:func:`gguf_differs`), and decoded as llama.cpp
joins its pieces' bytes.
Introduced in notebook ``00_tour``.

Example:
    >>> import labkit
    >>> labkit.load("botchan-unigram", engine="sentencepiece").encode("I am").tokens
    ['▁I', '▁am']
"""
from __future__ import annotations

import itertools

import sentencepiece

from labkit.algorithms.llama_spm import SPACE, byte_of, loops_agree, piece_bytes
from labkit.algorithms.specials import AddedTokenSplitter
from labkit.algorithms.spm_decode import join_runs
from labkit.core import MODEL_SPM_BPE, MODEL_SPM_CHAR, MODEL_SPM_WORD, MODEL_UNIGRAM, TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL
from labkit.core import TOKEN_TYPE_NAMES, TOKEN_UNKNOWN
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
        self._splitter = AddedTokenSplitter([a for a in vocab.added_tokens if a.special or not own],
                                            llama_cpp=vocab.format == "gguf")
        # a "llama" GGUF decodes as llama.cpp joins its pieces' bytes (see _decode_as_llama_cpp)
        self._llama_gguf = vocab.format == "gguf" and vocab.model == MODEL_SPM_BPE
        self._not_normal = frozenset(i for i, kind in enumerate(vocab.token_types) if kind != TOKEN_NORMAL)
        self._byte_values = {i: byte_of(t) for i, (t, kind) in enumerate(zip(vocab.tokens, vocab.token_types))
                             if kind == TOKEN_BYTE}
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
        if self._llama_gguf:
            return self._decode_as_llama_cpp(ids, skip_special_tokens)
        # sentencepiece drops control ids; labkit spells them (unless skipped), so the ordinary
        # runs between them are decoded by sentencepiece and the spellings put back in between
        if self._special_ids_all.isdisjoint(ids):
            return self._decode_run(ids)  # one run (the common case): sentencepiece's own call
        return join_runs(ids, self._special_ids_all, self.vocab.tokens, self._decode_run,
                         skip_special_tokens=skip_special_tokens, add_dummy_prefix=self._dummy_prefix,
                         vanishing=self._control_ids)

    def _decode_as_llama_cpp(self, ids: list[int], skip_special_tokens: bool) -> str:
        """llama.cpp's ``llama_detokenize`` with sentencepiece decoding each run of normal pieces.

        sentencepiece gives no raw bytes (``out_type=bytes`` is its text with one U+FFFD per bad
        byte already), while llama.cpp joins every piece's bytes and reads them once (one
        U+FFFD per bad sequence); and sentencepiece takes the leading space from the first
        piece that shows text, llama.cpp from the first id only. So byte, control and unknown
        ids give llama.cpp's bytes, and a run of normal ids gives sentencepiece's text, its
        leading space put back unless the run starts the ids."""
        tokens, not_normal = self.vocab.tokens, self._not_normal
        if self._sentencepiece_decodes_alike(ids):
            return self._decode_run(ids)  # the common case: sentencepiece's own call
        out = bytearray()
        position = 0
        for is_normal, group in itertools.groupby(ids, lambda i: i not in not_normal):
            run = list(group)
            if is_normal:
                text = self._decode_run(run)
                if self._dummy_prefix and position > 0 and tokens[run[0]].startswith(SPACE):
                    text = " " + text  # sentencepiece strips each run's, llama.cpp only the first id's
                elif self._dummy_prefix and position == 0 and tokens[run[0]].startswith(" "):
                    text = text[1:]  # a literal space: llama.cpp strips it too, sentencepiece only a '▁'
                out += text.encode("utf-8")
            else:
                kinds = self.vocab.token_types
                for offset, i in enumerate(run):
                    piece = piece_bytes(tokens[i], kinds[i], not skip_special_tokens)
                    if position + offset == 0 and self._dummy_prefix and piece[:1] == b" ":
                        piece = piece[1:]  # llama.cpp strips the first id's leading space, a byte's too
                    out += piece
            position += len(run)
        return out.decode("utf-8", "replace")

    def _sentencepiece_decodes_alike(self, ids: list[int]) -> bool:
        """Whether one sentencepiece decode of ``ids`` is llama.cpp's text: the first id a normal
        piece not starting with a literal space, and the only other ids byte pieces whose runs
        are valid UTF-8."""
        if not ids or ids[0] in self._not_normal or self.vocab.tokens[ids[0]].startswith(" "):
            return False
        if self._not_normal.isdisjoint(ids):
            return True
        byte_values, not_normal, run = self._byte_values, self._not_normal, bytearray()
        for i in ids:
            if i not in not_normal:
                if run:  # a normal id ends a run of bytes
                    if not _is_utf8(run):
                        return False
                    run.clear()
                continue
            value = byte_values.get(i)
            if value is None:
                return False  # a control, unknown or other id: llama.cpp's rules
            run.append(value)
        return _is_utf8(run)

    def _decode_run(self, run: list[int]) -> str:
        try:
            return self.backend.decode(run)
        except Exception as exc:
            raise LabkitError(f"{self.name}: sentencepiece could not decode: {exc}") from None


def _is_utf8(data: bytes | bytearray) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
    # word and char models exist only as .model files (labkit serves them too: labkit_spm_pieces)
    servable = vocab.model in (MODEL_SPM_BPE, MODEL_UNIGRAM) or (
        vocab.model in (MODEL_SPM_WORD, MODEL_SPM_CHAR) and vocab.format == "spm_model")
    if not servable or vocab.format not in ("spm_model", "gguf"):
        raise EngineUnavailable(
            f"{vocab.name}: sentencepiece serves SentencePiece BPE/Unigram (.model, GGUF) and word/char .model files, "
            f"not {vocab.format} {vocab.model}"
        )
    if vocab.format == "gguf":
        differs = gguf_differs(vocab)
        if differs is not None:
            raise EngineUnavailable(f"{vocab.name}: engine 'sentencepiece' would serve this GGUF otherwise than "
                                    f"llama.cpp ({differs}); engine='labkit' serves it as llama.cpp does")
    # always rebuilt from the plain data (round-trips .model files), never re-read from a path
    proto = write_model_proto(vocab)
    try:
        backend = sentencepiece.SentencePieceProcessor(model_proto=proto)
    except Exception as exc:
        raise FormatError(f"{vocab.name}: sentencepiece rejected the model: {exc}") from None
    if backend.get_piece_size() != len(vocab.tokens):
        raise FormatError(f"{vocab.name}: sentencepiece sees {backend.get_piece_size()} pieces, the file {len(vocab.tokens)}")
    return SentencePieceTokenizer(vocab, backend)


def gguf_differs(vocab: VocabData) -> str | None:
    """Why sentencepiece would tokenize or decode this GGUF otherwise than llama.cpp (the
    reference for a GGUF), or None.

    A "t5" (Unigram) file always: llama.cpp's t5 loop is its own (no byte fallback, its own
    lattice and normaliser; :mod:`labkit.engines.labkit_unigram`). A "llama" file where
    llama.cpp's merge loop can make what sentencepiece's cannot
    (:func:`~labkit.algorithms.llama_spm.loops_agree`), where a character without a token is
    not spelled by the 256 byte tokens (llama.cpp then looks ``<0xNN>`` up whatever its type,
    or ends its process; sentencepiece gives ``<unk>``), where a one-character token is not
    normal (llama.cpp takes it as a leftover symbol, sentencepiece falls back to bytes), or
    where a spelling repeats (the two keep different ids).

    Example:
        >>> from labkit.engines.sentencepiece_engine import gguf_differs
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> gguf_differs(read_gguf(bundled_path("llama-spm"))) is None
        True
    """
    if vocab.model == MODEL_UNIGRAM:
        return "llama.cpp's t5 tokenizer runs a Unigram loop of its own: no byte fallback, its own lattice and normaliser"
    if vocab.model != MODEL_SPM_BPE:
        return None
    tokens, kinds = vocab.tokens, vocab.token_types
    if len(set(tokens)) != len(tokens):
        seen: set[str] = set()
        # the first spelling seen twice, in one pass (a count per token is quadratic in the vocabulary)
        repeated = next(t for t in tokens if t in seen or seen.add(t))
        return f"the spelling {repeated!r} is two tokens, which llama.cpp and sentencepiece tell apart otherwise"
    unknown = vocab.specials.unk_id
    if unknown is None or not 0 <= unknown < len(tokens):
        unknown = next((i for i, kind in enumerate(kinds) if kind == TOKEN_UNKNOWN), None)
    if unknown is not None and kinds[unknown] != TOKEN_UNKNOWN:
        return (f"the unknown id {unknown} is the {TOKEN_TYPE_NAMES.get(kinds[unknown], kinds[unknown])} token "
                f"{tokens[unknown]!r}, which sentencepiece would hold as its unknown piece and never give")
    if not loops_agree(tokens, kinds):
        return "llama.cpp merges into any token, sentencepiece only into normal ones, and here a user-defined or " \
               "unused token, or another token two symbols join into, makes the two loops differ"
    byte_tokens = {t for t, kind in zip(tokens, kinds) if kind == TOKEN_BYTE}
    canonical = {f"<0x{b:02X}>" for b in range(256)}
    if byte_tokens != canonical:
        odd = sorted(canonical - byte_tokens) or sorted(byte_tokens - canonical)
        return (f"the byte tokens are not exactly '<0x00>'..'<0xFF>' ({odd[0]!r}): llama.cpp spells a character "
                "without a token by '<0xNN>' whatever its type (or ends its process), sentencepiece by its byte pieces or <unk>")
    for token, kind in zip(tokens, kinds):
        if len(token) == 1 and kind != TOKEN_NORMAL:
            return (f"the one-character {TOKEN_TYPE_NAMES.get(kind, kind)} token {token!r} is a symbol to "
                    "llama.cpp, while sentencepiece spells that character by its bytes")
    return None
