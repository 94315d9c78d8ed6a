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

Example: ``s = DecodeStream(tok); [s.step(i) for i in tok.encode("héllo").ids]; s.flush()``
"""
from __future__ import annotations

import operator
import re
import weakref
from typing import Iterable, Sequence

from labkit.core import LabkitError, Tokenizer

REPLACEMENT = "\ufffd"
# vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET: ids of prompt context decoded with the first step
INITIAL_OFFSET = 5
# held ids beyond this are settled in pieces (an incomplete UTF-8 sequence is at most 3 bytes)
MAX_HELD = 8
# chars after a split point that make it safe (one more than the longest incomplete sequence)
SAFE_TAIL_CHARS = 4

_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def check_id(tok: Tokenizer, token_id) -> int:
    """Return ``token_id`` as an int if ``tok`` knows it, else raise LabkitError.

    Example: ``check_id(tok, 42)`` -> ``42``
    """
    if isinstance(token_id, bool):
        raise LabkitError(f"{tok.name}: token id {token_id!r} is a bool, not an int")
    try:
        value = operator.index(token_id)
    except TypeError:
        raise LabkitError(f"{tok.name}: token id must be an int, got {type(token_id).__name__}") from None
    if not 0 <= value < tok.vocab_size:
        raise LabkitError(f"{tok.name}: unknown token id {value} (vocab size {tok.vocab_size})")
    return value


def check_tokenizer(tok) -> Tokenizer:
    """Return ``tok`` if it has the Tokenizer surface a stream needs, else raise LabkitError.

    Example: ``check_tokenizer(labkit.load("gpt2"))``
    """
    if not callable(getattr(tok, "decode", None)) or not hasattr(tok, "vocab_size"):
        raise LabkitError(f"a stream needs a labkit Tokenizer, got {type(tok).__name__}")
    return tok


# ----------------------------------------------------------------------------- decoder probe

_RUN_PROBES: "weakref.WeakKeyDictionary[Tokenizer, frozenset[int]]" = weakref.WeakKeyDictionary()


def run_sensitive_byte_ids(tok: Tokenizer) -> frozenset[int]:
    """The ``<0xNN>`` byte-piece ids if ``tok``'s decoder re-renders a whole byte run, else empty.

    ``tokenizers``' ByteFallback decoder turns a run of byte pieces into its UTF-8 text, or,
    when any byte of the run is invalid, into one U+FFFD per byte, so ``<0xC3><0xA9>`` is
    ``'é'`` but ``<0xC3><0xA9><0x80>`` is three U+FFFD. Found by decoding those two probes.

    Example: ``run_sensitive_byte_ids(labkit.load("llama-spm", engine="hf"))`` -> 256 ids
    """
    try:
        return _RUN_PROBES[tok]
    except (KeyError, TypeError):
        pass
    result: frozenset[int] = frozenset()
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


# ----------------------------------------------------------------------------- the stream


class DecodeStream:
    """Incremental detokenizer: ``step(id)`` returns the new text (or None while held).

    Joined, the chunks of every ``step`` plus ``flush()`` equal
    ``tok.decode(prompt + ids)[len(tok.decode(prompt)):]``. Each step decodes a window of a
    few ids only, so the cost per id does not grow with the length of the output.

    Introduced in notebook ``08_incremental_detokenization``.

    Example: ``s = labkit.DecodeStream(tok, prompt_ids=[9707]); s.step(1879)`` -> ``' world'``
    """

    def __init__(self, tok: Tokenizer, prompt_ids: Sequence[int] = (), skip_special_tokens: bool = False):
        self.tok = check_tokenizer(tok)
        self.skip_special_tokens = bool(skip_special_tokens)
        if isinstance(prompt_ids, (str, bytes)):
            raise LabkitError(f"{tok.name}: prompt_ids must be a sequence of ids, not {type(prompt_ids).__name__}")
        prompt = [check_id(tok, i) for i in prompt_ids]
        self._byte_ids = run_sensitive_byte_ids(tok)
        self.decode_calls = 0  # how many decode() calls, how many ids they read, the widest window
        self.decoded_ids = 0
        self.max_window = 0
        start = max(0, len(prompt) - INITIAL_OFFSET)
        # only ids[prefix_offset:] are kept; offsets below are relative to that window
        self._ids: list[int] = prompt[start:]
        self._read = len(self._ids)
        self._prefix_text = self._decode(self._ids)
        self._open_run = bool(self._ids) and self._ids[-1] in self._byte_ids
        self._next_settle = 0

    # -- public -----------------------------------------------------------------
    def step(self, token_id: int) -> str | None:
        """Add one id; return the text it completes, or None while the text may still change."""
        token_id = check_id(self.tok, token_id)
        self._ids.append(token_id)
        if self._byte_ids:
            self._track_run(token_id)
        text = self._decode(self._ids)
        prefix_len = len(self._prefix_text)
        if len(text) > prefix_len and not text.endswith(REPLACEMENT) and not self._open_run:
            new_text = text[prefix_len:]
            # the window now starts where the last emitted chunk started
            self._ids = self._ids[self._read:]
            self._read = len(self._ids)
            self._prefix_text = self._decode(self._ids)
            self._next_settle = 0
            return new_text or None
        if len(self._ids) - self._read > MAX_HELD:
            return self._settle_held(text)
        return None

    def step_batch(self, token_ids: Iterable[int]) -> list[str]:
        """Step each id in turn; return the chunks that were produced (None results left out)."""
        if isinstance(token_ids, (str, bytes)):
            raise LabkitError(f"{self.tok.name}: step_batch() takes ids, not {type(token_ids).__name__}")
        out = []
        for token_id in token_ids:
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
        self._ids = self._ids[self._read:]
        self._read = len(self._ids)
        self._prefix_text = self._decode(self._ids)
        self._open_run = False
        self._next_settle = 0
        return new_text or None

    @property
    def held_ids(self) -> list[int]:
        """Ids stepped but whose text has not been emitted yet."""
        return list(self._ids[self._read:])

    def __repr__(self) -> str:
        return (
            f"<labkit.DecodeStream {self.tok.name} window={len(self._ids)} held={len(self._ids) - self._read} "
            f"prefix_text={self._prefix_text!r}>"
        )

    # -- internals ---------------------------------------------------------------
    def _decode(self, ids: list[int]) -> str:
        self.decode_calls += 1
        self.decoded_ids += len(ids)
        if len(ids) > self.max_window:
            self.max_window = len(ids)
        return self.tok.decode(ids, skip_special_tokens=self.skip_special_tokens)

    def _track_run(self, token_id: int) -> None:
        # the run goes on through a silent id, and ends at any other id that is not a byte piece
        if token_id in self._byte_ids:
            self._open_run = True
        elif not self._is_silent(token_id):
            self._open_run = False

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
        if text == self._prefix_text:
            # silent ids: restart as if the ids so far were a prompt (INITIAL_OFFSET of context)
            self._ids = self._ids[-INITIAL_OFFSET:]
            self._read = len(self._ids)
            self._prefix_text = self._decode(self._ids)
            self._next_settle = 0
            return None
        ids = self._ids
        # newest split point first; b is safe when the window text is exactly
        # decode(ids[:b]) + decode(ids[b:]) and the second part is longer than any
        # unfinished character can render, so no later id can reach back past b
        for b in range(len(ids) - 1, max(self._read, len(ids) - MAX_HELD - 1), -1):
            if self._byte_ids and self._run_open_at(b):
                continue  # a run-sensitive decoder may still re-render the bytes before b
            tail = self._decode(ids[b:])
            if len(tail) < SAFE_TAIL_CHARS:
                continue
            head = self._decode(ids[:b])
            if head + tail != text or len(head) < prefix_len:
                continue
            new_text = head[prefix_len:]
            # decoding restarts cleanly at b: keep the window from b, with no prefix text
            self._ids = ids[b:]
            self._read = 0
            self._prefix_text = ""
            self._next_settle = 0
            return new_text or None
        return None

    def _is_silent(self, token_id: int) -> bool:
        # a skipped special token is removed before the decoder runs
        return self.skip_special_tokens and self.tok.decode([token_id], skip_special_tokens=True) == ""

    def _run_open_at(self, b: int) -> bool:
        # does a byte piece come last before b (skipping silent ids), so that the run goes on?
        for i in range(b - 1, -1, -1):
            token_id = self._ids[i]
            if token_id in self._byte_ids:
                return True
            if not self._is_silent(token_id):
                return False
        return False
