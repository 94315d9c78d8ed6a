"""``DecodeStream``: turn generated ids into text chunks, one id at a time, in O(1) per id.

The algorithm is the one TGI, vLLM, ``tokenizers.decoders.DecodeStream`` and the SGLang
router share. Two offsets walk along the ids:

    ids:   ... | prefix_offset ....... read_offset ....... len(ids)
                 \\__ already emitted __/ \\__ not yet emitted __/

Each step decodes only ``ids[prefix_offset:]`` (a short window) and compares it with
``prefix_text = decode(ids[prefix_offset:read_offset])``. The part of the window text that
goes past ``prefix_text`` is new. It is emitted only when it is longer than ``prefix_text``
and does not end in U+FFFD (a trailing U+FFFD may be the first bytes of a character whose
last bytes are still to come); then both offsets move forward. Decoding a few tokens of
context before ``read_offset``, instead of the new ids alone, is what keeps SentencePiece's
word-initial spaces and WordPiece's ``##`` joins right. The stream starts 5 ids back into
the prompt, as the servers do.

Two refinements keep the promise "the chunks joined equal ``decode(all)[len(decode(prompt)):]``"
on every engine, and keep the work of one step bounded:

* A long run of held ids (U+FFFD that is really in the text, such as orphan continuation
  bytes) is settled in pieces at a split point that provably cannot change any more, so
  the window does not grow with the output (the O(N^2) bug of a stuck window).
* A decoder that re-renders a whole run of ``<0xNN>`` byte pieces when one byte is invalid
  (``tokenizers``' ByteFallback) is found by a probe at construction; for it the stream
  also holds while the last piece is a byte piece, since a later byte could still change
  the run's text.

Introduced in notebook ``08_incremental_detokenization``.

Example:
    >>> from labkit.streaming.decode_stream import DecodeStream
    >>> import labkit
    >>> tok = labkit.load("qwen2")
    >>> s = DecodeStream(tok)
    >>> [s.step(i) for i in tok.encode("héllo").ids]
    ['h', 'él', 'lo']
    >>> s.flush()
"""
from __future__ import annotations

import weakref
from typing import Iterable, Sequence

from labkit import metrics as _metrics
from labkit.algorithms.bounded import BoundedDict
from labkit.core import LabkitError, Tokenizer, as_tokenizer
from labkit.streaming.utf8 import byte_token_ids

REPLACEMENT = "\ufffd"
# vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET: ids of prompt context decoded with the first step
INITIAL_OFFSET = 5
# held ids beyond this are settled in pieces (an incomplete UTF-8 sequence is at most 3 bytes)
MAX_HELD = 8
# chars after a split point that make it safe (one more than the longest incomplete sequence)
SAFE_TAIL_CHARS = 4
# a byte-fallback run held whole (for a decoder that renders a run all or nothing) up to this
# many byte pieces; past it, the complete characters are emitted (see DecodeStream)
MAX_RUN_BYTES = 64


def check_tokenizer(tok) -> Tokenizer:
    """``tok`` if it is a labkit Tokenizer, else LabkitError (what every stream takes).

    Example:
        >>> from labkit.streaming.decode_stream import check_tokenizer
        >>> import labkit
        >>> check_tokenizer(labkit.load("gpt2"))
        <labkit.Tokenizer ggml-vocab-gpt-2.gguf model=bpe_byte engine=labkit vocab_size=50257 (engine=None picked 'labkit': it serves this file exactly)>
    """
    return as_tokenizer(tok, "a stream")


# ----------------------------------------------------------------------------- decoder probe

_RUN_PROBES: "weakref.WeakKeyDictionary[Tokenizer, frozenset[int]]" = weakref.WeakKeyDictionary()


def run_sensitive_byte_ids(tok: Tokenizer) -> frozenset[int]:
    """The ``<0xNN>`` byte-piece ids if ``tok``'s decoder re-renders a whole byte run, else empty.

    ``tokenizers``' ByteFallback decoder turns a run of byte pieces into its UTF-8 text, or,
    when any byte of the run is invalid, into one U+FFFD per byte, so ``<0xC3><0xA9>`` is
    ``'é'`` but ``<0xC3><0xA9><0x80>`` is three U+FFFD. Found by decoding those two probes.

    Example (Llama's 256 byte pieces under tokenizers' ByteFallback; GPT-2's byte-level decoder has no such runs):
        >>> import labkit
        >>> from labkit.engines.hf import convert_model_file
        >>> len(run_sensitive_byte_ids(convert_model_file("llama-spm"))), len(run_sensitive_byte_ids(labkit.load("gpt2")))
        (256, 0)
    """
    try:
        return _RUN_PROBES[tok]
    except (KeyError, TypeError):
        pass
    result: frozenset[int] = frozenset()
    if not callable(getattr(tok, "token_to_id", None)):
        return result  # a surface without token_to_id has no byte pieces to name
    probe = [tok.token_to_id(p) for p in ("<0xC3>", "<0xA9>", "<0x80>")]
    if all(isinstance(i, int) for i in probe):
        try:
            valid = tok.decode(probe[:2])
            broken = tok.decode(probe)
        except LabkitError:
            valid = broken = ""
        if valid == "é" and not broken.startswith("é"):
            ids = set()
            for byte in range(256):
                found = tok.token_to_id(f"<0x{byte:02X}>")
                if isinstance(found, int):
                    ids.add(found)
            result = frozenset(ids)
    try:
        _RUN_PROBES[tok] = result
    except TypeError:  # not weak-referenceable: probe again next time
        pass
    return result


_CONCAT_PROBE = "Hello world, it's  a test .\n\tÉté 🫨 中文 don't ( x ) !  \n\n  end"
_CONCAT_PROBES: "weakref.WeakKeyDictionary[Tokenizer, bool]" = weakref.WeakKeyDictionary()


def is_concatenative(tok: Tokenizer) -> bool:
    """True if ``decode`` of ids is the concatenation of each id decoded alone, on a probe text.

    Byte-level BPE (GPT-2, Qwen2, cl100k) decodes by joining the bytes of the tokens, so a
    token whose bytes are whole characters reads the same alone as in context. SentencePiece
    (a word-initial ``▁`` is dropped at the start of a decode) and WordPiece (``##`` joins)
    are not. For a concatenative decoder a stream can emit such a token's own text at once.

    Example:
        >>> from labkit.streaming.decode_stream import is_concatenative
        >>> import labkit
        >>> is_concatenative(labkit.load("gpt2"))
        True
    """
    try:
        return _CONCAT_PROBES[tok]
    except (KeyError, TypeError):
        pass
    try:
        ids = list(tok.encode(_CONCAT_PROBE, parse_special=False).ids)
        alone = [tok.decode([i]) for i in ids]
        clean = [REPLACEMENT not in a and a != "" for a in alone]
        result = len(ids) > 8 and tok.decode(ids) == _CONCAT_PROBE
        # every adjacent pair of ids that are whole characters on their own must concatenate
        result = result and all(
            tok.decode(ids[k : k + 2]) == alone[k] + alone[k + 1]
            for k in range(len(ids) - 1)
            if clean[k] and clean[k + 1]
        )
    except LabkitError:
        result = False
    try:
        _CONCAT_PROBES[tok] = result
    except TypeError:
        pass
    return result


# ----------------------------------------------------------------------------- safe split


def find_safe_split(decode, ids: list[int], text: str, *, lo: int, min_head: int = 0, blocked=None):
    """Find a split ``b`` of ``ids`` (``lo < b``) after which no later id can change the text before it.

    ``text`` is ``decode(ids)``. A split is safe when ``decode(ids[:b]) + decode(ids[b:])``
    is exactly ``text`` (decoding restarts cleanly at ``b``: no character, leading space or
    ``##`` join spans it) and ``decode(ids[b:])`` has at least ``SAFE_TAIL_CHARS`` chars, more
    than an unfinished character (at most 3 bytes) can render as. The newest splits with a
    long enough tail are tried first, at most ``MAX_HELD`` of them. Returns
    ``(b, decode(ids[:b]))`` or None.

    Example:
        >>> import labkit
        >>> from labkit.streaming.decode_stream import find_safe_split
        >>> tok = labkit.load("gpt2")
        >>> ids = tok.encode("Hello wörld").ids
        >>> find_safe_split(tok.decode, ids, tok.decode(ids), lo=0)
        (2, 'Hello w')
    """
    tried = 0
    for b in range(len(ids) - 1, lo, -1):
        if blocked is not None and blocked(b):
            continue
        tail = decode(ids[b:])
        if len(tail) < SAFE_TAIL_CHARS:
            continue
        head = decode(ids[:b])
        if head + tail == text and len(head) >= min_head:
            return b, head
        tried += 1
        if tried >= MAX_HELD:
            break
    return None


_MEMOS: "weakref.WeakKeyDictionary[Tokenizer, dict]" = weakref.WeakKeyDictionary()
MEMO_LIMIT = 1 << 16


def shared_memos(tok: Tokenizer, skip_special_tokens: bool) -> tuple[dict, dict]:
    """Two dicts shared by all streams over ``tok``: window tuple -> text, and id -> text alone.

    A decode depends only on the ids in the window, so its result can be remembered; the
    streams of a server all step the same tokenizer, so they share what they learn. Each
    dict is cleared when it reaches ``MEMO_LIMIT`` entries (bounded memory).

    Example (a second stream finds what the first one decoded):
        >>> import labkit
        >>> tok = labkit.load("gpt2", engine="labkit")
        >>> DecodeStream(tok).step(15496)
        'Hello'
        >>> shared_memos(tok, False)[1].get(15496)
        'Hello'
    """
    try:
        per_tok = _MEMOS.setdefault(tok, {})
    except TypeError:  # not weak-referenceable: private memos
        per_tok = {}
    return per_tok.setdefault(bool(skip_special_tokens), (BoundedDict(MEMO_LIMIT), BoundedDict(MEMO_LIMIT)))


def run_clean_start(ids: Sequence[int], lo: int, floor: int, byte_ids, is_silent) -> int:
    """Move a window start ``lo`` back (not past ``floor``) until it cuts no ``<0xNN>`` run.

    A decoder that renders a byte run all or nothing turns a run whose first bytes were cut
    off, and everything after them, into U+FFFD. Silent ids (skipped special tokens) vanish
    before the decoder runs, so they do not end a run: ``<0xC3> </s> <0xA9>`` is one run.

    Example:
        >>> from labkit.streaming.decode_stream import run_clean_start
        >>> run_clean_start([5, 200, 201, 202], 2, 0, {200, 201, 202}, lambda i: False)
        1
    """
    if not byte_ids:
        return lo
    n = len(ids)
    while lo > floor:
        after = lo
        while after < n and is_silent(ids[after]):
            after += 1
        if after < n and ids[after] not in byte_ids:
            return lo  # the window opens on ordinary text
        before = lo - 1
        while before >= floor and is_silent(ids[before]):
            before -= 1
        if before < floor or ids[before] not in byte_ids:
            return lo  # no run reaches across the start
        lo = before
    return lo


def run_open(ids: Sequence[int], end: int, floor: int, byte_ids, is_silent) -> bool:
    """Does a ``<0xNN>`` byte piece come last before ``end`` (not looking past ``floor``,
    skipping silent ids), so that a byte run may still go on?

    Example:
        >>> run_open([5, 200, 7], 2, 0, {200}, lambda i: False), run_open([5, 200, 7], 3, 0, {200}, lambda i: i == 7)
        (True, True)
        >>> run_open([5, 200, 7], 3, 0, {200}, lambda i: False)
        False
    """
    for i in range(end - 1, floor - 1, -1):
        token_id = ids[i]
        if token_id in byte_ids:
            return True
        if not is_silent(token_id):
            return False
    return False


def initial_window_start(prompt: list[int], decode, byte_ids=frozenset(), offset: int = INITIAL_OFFSET) -> int:
    """Where a stream's first window starts in the prompt: ``offset`` ids back, further if blind.

    The servers start 5 ids back. Two cases need more: a run-sensitive decoder must see the
    whole ``<0xNN>`` run the prompt ends in, and context that decodes to nothing (skipped
    special tokens) cannot tell whether the first new word starts with a space.

    Example:
        >>> from labkit.streaming.decode_stream import initial_window_start
        >>> import labkit
        >>> tok = labkit.load("qwen2")
        >>> initial_window_start(list(range(12)), tok.decode)
        7
    """
    start = run_clean_start(prompt, max(0, len(prompt) - offset), 0, byte_ids, lambda i: decode([i]) == "")
    while start > 0 and decode(prompt[start:]) == "":
        start = max(0, start - offset)
    return start


# ----------------------------------------------------------------------------- the textbook loop


class SimpleDecodeStream:
    """The prefix/read-offset loop and nothing else: the readable twin of :class:`DecodeStream`.

    Each step decodes ``ids[prefix_offset:]`` and ``ids[prefix_offset:read_offset]``; what the
    first has past the second is new, unless it ends in U+FFFD (an unfinished character).
    When text is emitted both offsets move forward. On ordinary text its chunks are
    DecodeStream's; DecodeStream adds remembered decodes, a fast path for byte-level BPE,
    a bounded window for ids that never complete, and care around byte-fallback runs and
    skipped special tokens. Introduced in notebook ``08_incremental_detokenization``.

    Example:
        >>> from labkit.streaming.decode_stream import SimpleDecodeStream
        >>> import labkit
        >>> tok = labkit.load("qwen2")
        >>> s = SimpleDecodeStream(tok, prompt_ids=[9707])
        >>> s.step(1879)
        ' world'
    """

    def __init__(self, tok: Tokenizer, prompt_ids: Sequence[int] = (), skip_special_tokens: bool = False):
        self.tok = check_tokenizer(tok)
        self.skip_special_tokens = bool(skip_special_tokens)
        self.ids = tok.check_ids(prompt_ids, "prompt_ids")
        self.prefix_offset = max(0, len(self.ids) - INITIAL_OFFSET)
        self.read_offset = len(self.ids)

    def _text(self, start: int, end: int | None = None) -> str:
        return self.tok.decode_unchecked(self.ids[start:end], self.skip_special_tokens)

    def step(self, token_id: int) -> str | None:
        """Add one id; return the new text, or None while it may still change."""
        self.ids.append(self.tok.check_id(token_id))
        prefix_text = self._text(self.prefix_offset, self.read_offset)
        new_text = self._text(self.prefix_offset)
        if len(new_text) > len(prefix_text) and not new_text.endswith(REPLACEMENT):
            self.prefix_offset, self.read_offset = self.read_offset, len(self.ids)
            return new_text[len(prefix_text):]
        return None

    def flush(self) -> str | None:
        """Return what is still held (an unfinished character shows as U+FFFD)."""
        prefix_text = self._text(self.prefix_offset, self.read_offset)
        new_text = self._text(self.prefix_offset)
        self.prefix_offset, self.read_offset = self.read_offset, len(self.ids)
        return new_text[len(prefix_text):] or None


# ----------------------------------------------------------------------------- the stream


class DecodeStream:
    """Incremental detokenizer: ``step(id)`` returns the new text (or None while held).

    Joined, the chunks of every ``step`` plus ``flush()`` equal
    ``tok.decode(prompt + ids)[len(tok.decode(prompt)):]``. Each step decodes a window of a
    few ids only, so the cost per id does not grow with the length of the output. Decodes
    of windows of up to three ids are remembered (the window is all a decode depends on),
    which spares most calls into the engine on ordinary text.

    Introduced in notebook ``08_incremental_detokenization``.

    Example:
        >>> import labkit
        >>> tok = labkit.load("qwen2")
        >>> s = labkit.DecodeStream(tok, prompt_ids=[9707])
        >>> s.step(1879)
        ' world'
    """

    def __init__(self, tok: Tokenizer, prompt_ids: Sequence[int] = (), skip_special_tokens: bool = False):
        self.tok = check_tokenizer(tok)
        self.skip_special_tokens = bool(skip_special_tokens)
        prompt = tok.check_ids(prompt_ids, "prompt_ids")
        skip, decode = self.skip_special_tokens, tok.decode_unchecked  # each id is checked once, on arrival
        self._raw = lambda ids: decode(ids, skip)
        self._raw_kept = lambda ids: decode(ids, False)
        # decodes of short windows, shared by every stream over this tokenizer (a pure function)
        self._memo, self._alone = shared_memos(tok, self.skip_special_tokens)
        self._byte_ids = run_sensitive_byte_ids(tok)
        # a decoder that can still rewrite the end of its text when the next token comes (llama.cpp's
        # clean_spaces on a bert GGUF) says how: such an end is held, not emitted
        self._unsettled = getattr(tok, "unsettled_tail", None)
        self._concat = is_concatenative(tok) and not self._byte_ids and self._unsettled is None
        self._vocab_size = tok.vocab_size
        self.max_window = 0  # the widest window a step has had to decode (its work)
        # only ids[prefix_offset:] are kept; offsets below are relative to that window
        self._ids: list[int] = prompt[initial_window_start(prompt, self._decode, self._byte_ids):]
        self._read = len(self._ids)
        self._prefix_text = self._decode(self._ids)
        self._open_run = any(i in self._byte_ids for i in self._ids[-1:])
        self._run_bytes = self._count_run_bytes()
        self._invalid_run = False
        self._byte_value = {i: b for b, i in byte_token_ids(tok).items() if i in self._byte_ids} if self._byte_ids else {}
        self._next_settle = 0

    # -- public -----------------------------------------------------------------
    def step(self, token_id: int) -> str | None:
        """Add one id; return the text it completes, or None while the text may still change."""
        if not (type(token_id) is int and 0 <= token_id < self._vocab_size):
            token_id = self.tok.check_id(token_id)
        ids = self._ids
        if self._concat and self._read == len(ids):
            # fast path: nothing held, and a token whose text is whole characters reads the same
            # alone as after the window, so the diff is its own text (see is_concatenative)
            alone = self._alone.get(token_id)
            if alone is None:
                alone = self._alone[token_id] = self._raw([token_id])
            if alone and REPLACEMENT not in alone and self._prefix_text[-1:] != REPLACEMENT:
                if not self.max_window:
                    self.max_window = 1  # the fast path's work: one id, decoded alone
                self._ids = [token_id]
                self._read = 1
                self._prefix_text = alone
                if _metrics.ENABLED:
                    _metrics.record_stream_step(self.tok, False)
                return alone
        if self._invalid_run and token_id in self._byte_ids:
            # a long run already known to be invalid: the decoder renders each of its bytes as
            # U+FFFD whatever comes next; the window keeps this byte as context for what follows
            self._ids, self._read = [token_id], 1
            self._prefix_text = self._decode(self._ids)
            return REPLACEMENT
        ids.append(token_id)
        if len(ids) > self.max_window:
            self.max_window = len(ids)  # counted whether the decode below is remembered or not
        if self._byte_ids:
            self._track_run(token_id)
        memo = self._memo
        text = memo.get(tuple(ids)) if len(ids) <= 3 else None  # the usual case, inlined
        if text is None:
            text = self._decode(ids)
        prefix_len = len(self._prefix_text)
        if (len(text) > prefix_len and text[-1] != REPLACEMENT and not self._open_run
                and not (self._unsettled is not None and self._unsettled(text))):
            # emit; the window now starts where this chunk's ids start
            start = self._read
            prefix = memo.get(tuple(ids[start:])) if len(ids) - start <= 3 else None
            if prefix is None:
                prefix = self._decode(ids[start:])
            if prefix == "" and start > 0:
                # blind: the chunk reads as nothing on its own (a SentencePiece decoder strips
                # leading ▁ pieces, or skipped specials), so the next word could lose its space;
                # keep earlier context, as at the start of a stream
                start = initial_window_start(ids, self._decode, self._byte_ids, offset=len(ids) - start + INITIAL_OFFSET)
                prefix = self._decode(ids[start:])
            del ids[:start]
            self._read = len(ids)
            self._prefix_text = prefix
            self._next_settle = 0
            if _metrics.ENABLED:
                _metrics.record_stream_step(self.tok, False)
            return text[prefix_len:]
        if _metrics.ENABLED:  # held: the window text ends in an unfinished character (or byte run)
            _metrics.record_stream_step(self.tok, text[-1:] == REPLACEMENT or self._open_run)
        if self._run_bytes > MAX_RUN_BYTES:
            return self._release_long_run(text)
        if len(ids) - self._read > MAX_HELD:
            return self._settle_held(text)
        return None

    def step_batch(self, token_ids: Iterable[int]) -> list[str]:
        """Step each id in turn; return the chunks that were produced (None results left out)."""
        out = []
        for token_id in self.tok.check_ids(token_ids, "step_batch()"):
            chunk = self.step(token_id)
            if chunk is not None:
                out.append(chunk)
        return out

    def flush(self) -> str | None:
        """Return whatever is still held (e.g. an unfinished character as U+FFFD) and reset it."""
        if len(self._ids) == self._read:
            return None
        text = self._decode(self._ids)
        new_text = text[len(self._prefix_text):]
        del self._ids[: self._read]
        self._read = len(self._ids)
        self._prefix_text = self._decode(self._ids)
        self._open_run = self._invalid_run = False
        self._run_bytes = 0
        self._next_settle = 0
        return new_text or None

    @property
    def held_ids(self) -> list[int]:
        """Ids stepped but whose text has not been emitted yet."""
        return list(self._ids[self._read:])

    @property
    def window(self) -> list[int]:
        """The ids the next step will decode, before the new one: ``ids[prefix_offset:]``."""
        return list(self._ids)

    @property
    def prefix_text(self) -> str:
        """``decode(ids[prefix_offset:read_offset])``: the emitted text the next diff is taken against."""
        return self._prefix_text

    def __repr__(self) -> str:
        return (
            f"<labkit.DecodeStream {self.tok.name} window={len(self._ids)} held={len(self._ids) - self._read} "
            f"prefix_text={self._prefix_text!r}>"
        )

    # -- internals ---------------------------------------------------------------
    def _decode(self, ids: list[int]) -> str:
        size = len(ids)
        if size > self.max_window:
            self.max_window = size
        if size > 3:
            return self._raw(ids)
        key = tuple(ids)
        text = self._memo.get(key)
        if text is None:
            text = self._memo[key] = self._raw(ids)
        return text

    def _is_silent(self, token_id: int) -> bool:
        # a skipped special token is removed before the decoder runs; a bare ▁ also reads as ''
        # alone but is text (it becomes the next word's space), so both settings are asked
        return self.skip_special_tokens and self._decode([token_id]) == "" and self._raw_kept([token_id]) != ""

    def _track_run(self, token_id: int) -> None:
        # the run goes on through a silent id, and ends at any other id that is not a byte piece
        if token_id in self._byte_ids:
            self._open_run = True
            self._run_bytes += 1
        elif not self._is_silent(token_id):
            self._open_run = self._invalid_run = False
            self._run_bytes = 0

    def _count_run_bytes(self) -> int:
        # byte pieces in the run the window ends in (silent ids do not end a run)
        count = 0
        for token_id in reversed(self._ids):
            if token_id in self._byte_ids:
                count += 1
            elif not self._is_silent(token_id):
                break
        return count

    def _run_open_at(self, b: int) -> bool:
        return run_open(self._ids, b, 0, self._byte_ids, self._is_silent)

    def _release_long_run(self, text: str) -> str | None:
        """Emit a byte-fallback run that has grown past ``MAX_RUN_BYTES``, so the window stays small.

        Such a decoder renders a run all or nothing: its complete characters while every byte
        fits, one U+FFFD per byte once any byte cannot. Held to this length the run is exact;
        past it: a valid run (at a character boundary) is emitted and goes on as a new run, with
        its last character as context; an invalid one is emitted, and each later byte of it is
        U+FFFD (as the decoder renders it). The one difference from ``decode(all)``: a valid run
        longer than the bound that turns invalid later shows its first characters, where
        ``decode(all)`` turns the whole run into U+FFFD (notebook 08, section 6).
        """
        run = []
        for token_id in reversed(self._ids):
            value = self._byte_value.get(token_id)
            if value is not None:
                run.append(value)
            elif not self._is_silent(token_id):
                break
        data = bytes(reversed(run))
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as error:
            if error.reason == "unexpected end of data" and error.end == len(data):
                return None  # a character still incomplete: at most three more bytes
            self._invalid_run = True  # invalid for good: every byte of the run is U+FFFD
            keep = 1
        else:
            keep = 1  # the ids of the last character are the next window's context
            while keep < len(run) and (run[keep - 1] & 0xC0) == 0x80:
                keep += 1
        new_text = text[len(self._prefix_text):]
        byte_ids = self._byte_ids
        start = len(self._ids)
        while keep and start > 0:  # back over `keep` byte pieces (and the silent ids among them)
            start -= 1
            keep -= self._ids[start] in byte_ids
        del self._ids[:start]
        self._read = len(self._ids)
        self._prefix_text = self._decode(self._ids)
        self._run_bytes = 0 if self._invalid_run else self._count_run_bytes()
        self._next_settle = 0
        return new_text or None

    def _settle_held(self, text: str) -> str | None:
        """Emit the part of a long held tail that can no longer change, and shrink the window.

        Two cases keep a tail held for long: ids that add no text at all (skipped special
        tokens), and text that really ends in U+FFFD (orphan continuation bytes). Both would
        otherwise make every later step decode an ever longer window.
        """
        if len(self._ids) < self._next_settle:
            return None  # tried recently; try again after MAX_HELD more ids (amortised O(1))
        self._next_settle = len(self._ids) + MAX_HELD
        prefix_len = len(self._prefix_text)
        if text == self._prefix_text and not self._open_run:
            # the held ids add nothing, even in context: shorten each run of skipped specials to
            # one (a SentencePiece decoder treats the run as one boundary, so the text cannot
            # change); a held ▁ stays, it is the space of the word to come
            kept: list[int] = []
            for token_id in self._ids[self._read:]:
                if not (kept and self._is_silent(token_id) and self._is_silent(kept[-1])):
                    kept.append(token_id)
            if len(kept) > MAX_HELD:
                kept = []  # ids that render as nothing even with specials kept: bounded, not kept
            self._ids[self._read:] = kept
            self._next_settle = 0
            return None
        found = find_safe_split(
            self._decode,
            self._ids,
            text,
            lo=self._read,
            min_head=prefix_len,
            blocked=self._run_open_at if self._byte_ids else None,
        )
        if found is None:
            return None
        b, head = found
        # decoding restarts cleanly at b: keep the window from b, with no prefix text
        del self._ids[:b]
        self._read = 0
        self._prefix_text = ""
        self._next_settle = 0
        return head[prefix_len:] or None
