"""Pieces -> text for the SentencePiece family (score BPE and Unigram), two ways.

A SentencePiece vocabulary spells a space as ``▁``, a raw byte as ``<0xNN>`` and has
control (``<s>``), unknown (``<unk>``) and user-defined pieces. Two reference libraries turn
ids back into text, and they differ in small ways:

* ``sentencepiece`` (``SentencePieceProcessor.Decode``, the reference for a ``.model``):
  control pieces vanish, ``<unk>`` reads as the model's ``unk_surface`` (`` ⁇ ``), a run of
  byte pieces is decoded one character at a time (each malformed byte one U+FFFD), and the
  ``▁`` that starts the text is consumed; with ``remove_extra_whitespaces`` every leading
  ``▁`` goes until some text has come out (``▁ ▁ ▁a`` -> ``"a"``); a model with a
  denormaliser (trainer option ``denormalization_rule_tsv``) then normalises the whole text
  with its charsmap.
* the ``tokenizers`` decoder chain labkit builds for these files (``Replace('▁', ' ')``,
  ``ByteFallback``, ``Fuse``, ``Strip`` one space), the reference for tokenizer.json and a
  t5 GGUF (a "llama" GGUF decodes as llama.cpp does: :mod:`labkit.algorithms.llama_spm`): pieces are read by their spelling (``<unk>`` stays ``<unk>``), a byte
  run that is not valid UTF-8 gives one U+FFFD per byte, and one space is stripped from the
  start (``▁ ▁ ▁a`` -> ``"  a"``).

labkit's SentencePiece engines (``labkit_spm_bpe``, ``labkit_unigram``) both decode
through :class:`SpmDecoder`. Introduced in notebook ``03_bpe_sentencepiece``.

Example (``<unk>`` in each style; botchan-unigram is a ``.model``, so sentencepiece's is its default):
    >>> import labkit
    >>> from labkit.algorithms.spm_decode import SpmDecoder
    >>> vocab = labkit.load("botchan-unigram", engine="labkit").vocab
    >>> [SpmDecoder.from_vocab(vocab, style=style).decode([11, 0, 11]) for style in ("sentencepiece", "hf")]
    ['a ⁇  a', 'a<unk> a']
"""
from __future__ import annotations

from typing import Callable, Iterator, Sequence

from labkit.algorithms.bytes_unicode import parse_byte_piece
from labkit.algorithms.charsmap import SPACE_SYMBOL, SpmNormalizer, decode_bytes_per_byte
from labkit.core import TOKEN_BYTE, TOKEN_CONTROL, TOKEN_UNKNOWN, LabkitError, VocabData

DECODE_STYLES = ("hf", "sentencepiece")
DEFAULT_UNK_SURFACE = " \u2047 "  # sentencepiece's default: ' ⁇ '


def default_style(vocab: VocabData) -> str:
    """The decoding a file's own reference library does: ``"sentencepiece"`` for a ``.model``,
    ``"hf"`` (the tokenizers chain) for GGUF and tokenizer.json.

    Example:
        >>> from labkit.formats.spm_model import read_spm_model
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import data_path
        >>> default_style(read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model")))
        'sentencepiece'
        >>> default_style(read_gguf(data_path("gguf/ggml-vocab-llama-spm.gguf")))
        'hf'

    Introduced in notebook ``03_bpe_sentencepiece``.
    """
    return "sentencepiece" if vocab.format == "spm_model" else "hf"


def bytes_all_or_nothing(data: bytes | bytearray) -> str:
    """tokenizers' ``ByteFallback``: a valid UTF-8 run is its text, else one U+FFFD per byte.

    Example:
        >>> from labkit.algorithms.spm_decode import bytes_all_or_nothing
        >>> bytes_all_or_nothing(b"\\xe3\\x99a")
        '���'

    Introduced in notebook ``03_bpe_sentencepiece``.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "\ufffd" * len(data)


def byte_runs(ids: Sequence[int], byte_values: dict[int, int]) -> Iterator[int | bytes]:
    """The ids, with each run of byte pieces (``byte_values``: id -> byte) joined into one
    ``bytes``: both references read a byte run as UTF-8 as a whole.

    Example:
        >>> from labkit.algorithms.spm_decode import byte_runs
        >>> list(byte_runs([5, 200, 201, 6], {200: 0xC3, 201: 0xA9}))
        [5, b'\\xc3\\xa9', 6]
    """
    pending = bytearray()
    for i in ids:
        value = byte_values.get(i)
        if value is not None:
            pending.append(value)
            continue
        if pending:
            yield bytes(pending)
            pending.clear()
        yield i
    if pending:
        yield bytes(pending)


def join_runs(
    ids: Sequence[int],
    special_ids: frozenset[int] | set[int],
    tokens: Sequence[str],
    decode_run: Callable[[list[int]], str],
    *,
    skip_special_tokens: bool,
    add_dummy_prefix: bool,
    vanishing: frozenset[int] | set[int] = frozenset(),
) -> str:
    """Decode ids with a sentencepiece-style ``decode_run``, which knows nothing of labkit's
    special ids: each run of ordinary ids between them is decoded on its own, the special
    ids are spelled out, and the dummy-prefix space that sentencepiece strips from every
    run is put back on all but the text's first. With ``skip_special_tokens`` the text is
    one run: the special ids are dropped, except ``vanishing`` ones (control pieces, which
    ``decode_run`` drops itself where they stand), as sentencepiece's own answer.
    labkit's own decoder and its ``sentencepiece`` engine both decode this way.

    Example (``</s>`` = 2 splits two runs; the second keeps its leading space):
        >>> import sentencepiece
        >>> from labkit.paths import data_path
        >>> sp = sentencepiece.SentencePieceProcessor(model_file=str(data_path("sentencepiece/botchan_en_unigram_1000.model")))
        >>> tokens = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
        >>> join_runs([11, 2, 11], {2}, tokens, sp.decode, skip_special_tokens=False, add_dummy_prefix=True)
        'a</s> a'

    Introduced in notebook ``03_bpe_sentencepiece``.
    """
    if skip_special_tokens:
        # skipped special ids leave nothing behind, as sentencepiece's control pieces do: the
        # whole text is one run (decoding runs apart would strip each run's leading '▁', which
        # sentencepiece keeps once some text has come out: '▁a </s> ▁b' -> 'a b' with
        # add_dummy_prefix off, 'ab' run by run); the ``vanishing`` ones (control pieces,
        # which decode_run drops itself) stay in place, where they end a run of byte pieces
        rest = [i for i in ids if i not in special_ids or i in vanishing]
        return decode_run(rest) if rest else ""
    out: list[str] = []
    run: list[int] = []
    for i in [*ids, None]:
        if i is not None and i not in special_ids:
            run.append(i)
            continue
        if run:
            text = decode_run(run)
            if out and add_dummy_prefix and tokens[run[0]].startswith(SPACE_SYMBOL):
                text = " " + text
            out.append(text)
            run = []
        if i is not None and not skip_special_tokens:
            out.append(tokens[i])
    return "".join(out)


class SpmDecoder:
    """Decode ids of a SentencePiece vocabulary like sentencepiece or like the tokenizers chain.

    ``style`` is ``"sentencepiece"`` or ``"hf"`` (default: :func:`default_style`); the three
    whitespace flags are the model's normaliser settings; ``unk_surface`` is what
    sentencepiece writes for ``<unk>``.

    Example:
        >>> from labkit.algorithms.spm_decode import SpmDecoder
        >>> import labkit
        >>> SpmDecoder.from_vocab(labkit.load("botchan-unigram").vocab).decode([4, 4, 11])
        'a'

    Introduced in notebook ``03_bpe_sentencepiece``.
    """

    def __init__(
        self,
        vocab: VocabData,
        *,
        style: str | None = None,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = False,
        treat_whitespace_as_suffix: bool = False,
        unk_surface: str | None = None,
    ):
        style = default_style(vocab) if style is None else style
        if style not in DECODE_STYLES:
            raise LabkitError(f"{vocab.name}: decode style must be one of {DECODE_STYLES}, got {style!r}")
        self.style = style
        self.tokens = vocab.tokens
        self.types = vocab.token_types
        self.add_dummy_prefix = bool(add_dummy_prefix)
        self.remove_extra_whitespaces = bool(remove_extra_whitespaces)
        self.treat_whitespace_as_suffix = bool(treat_whitespace_as_suffix)
        if unk_surface is None:
            # an unk_surface set to "" is kept: sentencepiece asks has_unk_surface(), so a
            # model trained with unk_surface="" decodes <unk> as nothing
            unk_surface = vocab.options.get("unk_surface")
        self.unk_surface = DEFAULT_UNK_SURFACE if unk_surface is None else unk_surface
        # a .model's denormalizer_spec (trainer option denormalization_rule_tsv): sentencepiece
        # normalises the whole decoded text with it, when its charsmap is not empty
        # (sentencepiece_processor.cc: denormalizer_->Normalize(*text)); a Normalizer built
        # from that spec alone: its own whitespace flags, never whitespace-as-suffix
        self.denormalizer: SpmNormalizer | None = None
        denorm = (vocab.metadata or {}).get("denormalizer_spec") if vocab.format == "spm_model" else None
        if denorm and denorm.get("precompiled_charsmap"):
            self.denormalizer = SpmNormalizer(
                denorm["precompiled_charsmap"],
                add_dummy_prefix=denorm.get("add_dummy_prefix", True),
                remove_extra_whitespaces=denorm.get("remove_extra_whitespaces", True),
                escape_whitespaces=denorm.get("escape_whitespaces", True),
            )
        self.control_ids = frozenset(i for i, kind in enumerate(self.types) if kind == TOKEN_CONTROL)
        # what skip_special_tokens removes, and where sentencepiece-style decoding cuts runs
        self.special_ids = frozenset(
            [i for i, kind in enumerate(self.types) if kind == TOKEN_CONTROL]
            + [a.id for a in vocab.added_tokens if a.special]
        )
        # sentencepiece goes by the piece type; tokenizers' ByteFallback (in the chain only
        # for byte_fallback models) by the spelling
        self.byte_by_type = {
            i: value for i, kind in enumerate(self.types)
            if kind == TOKEN_BYTE and (value := parse_byte_piece(self.tokens[i])) is not None
        }
        self.byte_by_spelling = {
            i: value for i, token in enumerate(self.tokens) if (value := parse_byte_piece(token)) is not None
        } if vocab.options.get("byte_fallback") else {}

    @classmethod
    def from_vocab(cls, vocab: VocabData, *, style: str | None = None) -> "SpmDecoder":
        """The decoder a VocabData's ``normalizer`` flags describe.

        Example:
            >>> import labkit
            >>> vocab = labkit.load("botchan-unigram", engine="labkit").vocab
            >>> decoder = SpmDecoder.from_vocab(vocab, style="hf")
            >>> decoder.style, decoder.add_dummy_prefix
            ('hf', True)
        """
        norm = vocab.normalizer or {}
        return cls(
            vocab,
            style=style,
            add_dummy_prefix=norm.get("add_dummy_prefix", True),
            remove_extra_whitespaces=norm.get("remove_extra_whitespaces", False),
            treat_whitespace_as_suffix=norm.get("treat_whitespace_as_suffix", False),
        )

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """Ids (already checked to be in the vocab) -> text, in this decoder's style.

        Example (``<s> ▁ ▁ ▁a`` of botchan-unigram):
            >>> import labkit
            >>> vocab = labkit.load("botchan-unigram", engine="labkit").vocab
            >>> [SpmDecoder.from_vocab(vocab, style=style).decode([1, 4, 4, 11], skip_special_tokens=True)
            ...  for style in ("sentencepiece", "hf")]
            ['a', '  a']
        """
        if self.style == "hf":
            if skip_special_tokens:
                ids = [i for i in ids if i not in self.special_ids]
            return self.like_tokenizers(ids)
        text = self.like_sentencepiece(ids, skip_special_tokens)
        return self.denormalizer.normalize(text) if self.denormalizer is not None else text

    # -- the tokenizers chain ---------------------------------------------------
    def like_tokenizers(self, ids: Sequence[int]) -> str:
        """tokenizers' chain: Replace('▁', ' '), ByteFallback, Fuse, Strip one space.

        Example (``▁ ▁ ▁a`` of botchan-unigram: only the first space is stripped):
            >>> import labkit
            >>> SpmDecoder.from_vocab(labkit.load("botchan-unigram", engine="labkit").vocab).like_tokenizers([4, 4, 11])
            '  a'
        """
        tokens = self.tokens
        text = "".join(
            bytes_all_or_nothing(item) if isinstance(item, bytes) else tokens[item].replace(SPACE_SYMBOL, " ")
            for item in byte_runs(ids, self.byte_by_spelling)
        )
        if self.add_dummy_prefix:
            if self.treat_whitespace_as_suffix:
                return text[:-1] if text.endswith(" ") else text
            return text[1:] if text.startswith(" ") else text
        return text

    # -- sentencepiece ----------------------------------------------------------
    def like_sentencepiece(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """sentencepiece's Decode on each run between special ids (see :func:`join_runs`).

        Example (``▁a </s> ▁a``: the second run keeps its space):
            >>> import labkit
            >>> decoder = SpmDecoder.from_vocab(labkit.load("botchan-unigram", engine="labkit").vocab)
            >>> decoder.like_sentencepiece([11, 2, 11]), decoder.like_sentencepiece([11, 2, 11], skip_special_tokens=True)
            ('a</s> a', 'a a')
        """
        return join_runs(ids, self.special_ids, self.tokens, self.sentencepiece_run,
                         skip_special_tokens=skip_special_tokens, add_dummy_prefix=self.add_dummy_prefix,
                         vanishing=self.control_ids)

    def sentencepiece_run(self, ids: Sequence[int]) -> str:
        """SentencePieceProcessor.Decode on ids with no special cut: control pieces vanish,
        <unk> reads its surface, byte runs decode one character at a time, leading ▁ consumed.

        Example (what ``SentencePieceProcessor.decode`` gives for the same ids):
            >>> import labkit, sentencepiece
            >>> from labkit.paths import data_path
            >>> sp = sentencepiece.SentencePieceProcessor(model_file=str(data_path("sentencepiece/botchan_en_unigram_1000.model")))
            >>> decoder = SpmDecoder.from_vocab(labkit.load("botchan-unigram", engine="labkit").vocab)
            >>> decoder.sentencepiece_run([11, 0, 4, 4, 11]) == sp.decode([11, 0, 4, 4, 11]) == "a ⁇    a"
            True
        """
        tokens, types = self.tokens, self.types
        strip_leading = self.add_dummy_prefix or self.remove_extra_whitespaces
        text: list[str] = []
        at_start = True        # sentencepiece's is_bos_ws: a leading ▁ may still be consumed
        consumed = False       # the previous piece gave up its leading ▁
        produced = False       # sentencepiece asks whether the text so far is non-empty
        for i in byte_runs(ids, self.byte_by_type):
            if isinstance(i, bytes):
                text.append(decode_bytes_per_byte(i))
                produced = True
                continue
            if consumed or produced:
                at_start = False
            consumed = False
            kind = types[i]
            if kind == TOKEN_CONTROL:
                continue
            if kind == TOKEN_UNKNOWN:
                text.append(self.unk_surface)
                produced = produced or bool(self.unk_surface)
                continue
            piece = tokens[i]
            if at_start and strip_leading and piece.startswith(SPACE_SYMBOL):
                piece = piece[1:]
                # with remove_extra_whitespaces every leading space goes, not just the first
                consumed = not self.remove_extra_whitespaces
            text.append(piece.replace(SPACE_SYMBOL, " "))
            produced = produced or bool(piece)
        return "".join(text)
