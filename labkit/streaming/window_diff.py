"""The window-diff detokenizer: decode only the last K ids and emit the difference.

Each step decodes ``ids[-K:]`` and ``ids[-K:-1]`` and emits what the first has past the
second: the text the new id adds, in the context of the K-1 ids before it (so
SentencePiece spaces and WordPiece ``##`` joins come out right). While the window text
ends in U+FFFD the id is held: it may be the first bytes of a character.

**The bug** (``fallback=False``): when a held character is finished by a later id, the
previous window already rendered its first bytes as U+FFFD, and U+FFFD is one character,
just like the finished character. The difference is then empty: the character (🫨 split
over ids in the Qwen2 vocabulary, say) never comes out of ``step``. It shows only if
``flush`` comes right after it; any later id moves the stream past it and it is lost.

**The fix** (``fallback=True``): when ids are held, diff against the text at the last point
where text was emitted (``read``), with K ids of context before it, instead of against the
window one id back. That is exactly the prefix/read offset pair of ``DecodeStream``. The
fixed version also settles a long held tail the way ``DecodeStream`` does, so its work per
id stays bounded.

Introduced in notebook ``08_incremental_detokenization``.

Example:
    >>> import labkit
    >>> from labkit.streaming.window_diff import WindowDiffDecoder
    >>> tok = labkit.load("gpt2")
    >>> WindowDiffDecoder(tok, k=4, fallback=True).step_batch(tok.encode("Hello world").ids)
    ['Hello', ' world']
"""
from __future__ import annotations

from typing import Iterable, Sequence

from labkit.core import LabkitError, Tokenizer
from labkit.streaming.decode_stream import (
    MAX_HELD,
    REPLACEMENT,
    check_tokenizer,
    find_safe_split,
    initial_window_start,
    run_clean_start,
    run_open,
    run_sensitive_byte_ids,
)


class WindowDiffDecoder:
    """Diff of the last ``k`` ids' text against the last ``k-1`` ids'; ``fallback`` fixes held characters.

    ``trace`` (when ``record=True``) lists one dict per step: the id, the window, both
    texts, what was emitted and why, for the notebook's token-by-token table.

    Introduced in notebook ``08_incremental_detokenization``.

    Example:
        >>> import labkit
        >>> from labkit.streaming.window_diff import WindowDiffDecoder
        >>> tok = labkit.load("gpt2")
        >>> d = WindowDiffDecoder(tok, k=4)
        >>> [d.step(i) for i in tok.encode("héllo").ids]
        ['h', 'é', 'llo']
        >>> d.flush()
    """

    def __init__(
        self,
        tok: Tokenizer,
        prompt_ids: Sequence[int] = (),
        skip_special_tokens: bool = False,
        *,
        k: int = 4,
        fallback: bool = True,
        record: bool = False,
    ):
        self.tok = check_tokenizer(tok)
        if not isinstance(k, int) or k < 2:
            raise LabkitError(f"WindowDiffDecoder: k must be an int >= 2, got {k!r}")
        self.k = k
        self.fallback = bool(fallback)
        self.skip_special_tokens = bool(skip_special_tokens)
        self._ids = [tok.check_id(i) for i in prompt_ids]
        self._read = len(self._ids)  # ids before this have had their text emitted
        self._byte_ids = run_sensitive_byte_ids(tok) if self.fallback else frozenset()
        # no window reaches before this id: k ids into the prompt (further if that is blind)
        self._floor = max(0, len(self._ids) - k)
        if self.fallback:
            self._floor = initial_window_start(self._ids, self._decode_ids, self._byte_ids, offset=k)
        self.record = bool(record)
        self.trace: list[dict] = []
        self.decoded_ids = 0
        self.max_window = 0

    def _decode_ids(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=self.skip_special_tokens)

    def _decode(self, lo: int, hi: int | None = None) -> str:
        ids = self._ids[lo:hi]
        self.decoded_ids += len(ids)
        self.max_window = max(self.max_window, len(ids))
        return self.tok.decode(ids, skip_special_tokens=self.skip_special_tokens)

    def step(self, token_id: int) -> str | None:
        """Add one id; return the text it completes, or None while held."""
        token_id = self.tok.check_id(token_id)
        self._ids.append(token_id)
        n = len(self._ids)
        start = self._clean_start(max(self._floor, n - self.k))
        window_text = self._decode(start)
        held_before = n - 1 - self._read  # ids held back by earlier steps
        row = {"id": token_id, "window": list(self._ids[start:]), "window_text": window_text} if self.record else None
        if window_text.endswith(REPLACEMENT) or (self._byte_ids and self._run_open(n)):
            return self._hold(row, "window text ends in U+FFFD: wait", window_text)
        unsettled = getattr(self.tok, "unsettled_tail", None)  # llama.cpp's clean_spaces on a bert GGUF
        if self.fallback and unsettled is not None and unsettled(window_text):
            return self._hold(row, "the next id may still rewrite the end of this text: wait", window_text)
        if self.fallback and held_before:
            # diff against the text where the last chunk ended, with k ids of context before it
            ctx = self._clean_start(max(self._floor, self._read - self.k))
            base, text = self._decode(ctx, self._read), self._decode(ctx)
            why = f"{held_before} held id(s): diff from read offset {self._read}"
            while base == "" and ctx > self._floor:
                # blind context here too: a word-initial space needs text before it
                ctx = self._clean_start(max(self._floor, ctx - self.k))
                base, text = self._decode(ctx, self._read), self._decode(ctx)
                why += " (blind context widened)"
        else:
            base, text = self._decode(start, n - 1), window_text
            why = "diff against the window one id back"
            while self.fallback and base == "" and start > self._floor:
                # blind context (skipped specials only): look further back for a word-initial space
                start = self._clean_start(max(self._floor, start - self.k))
                base, text = self._decode(start, n - 1), self._decode(start)
                why = "blind window: widened"
        if row is not None:
            row.update(base_text=base, diff_text=text)
        if len(text) <= len(base):
            return self._hold(row, why + ": nothing longer, wait", text)
        new_text = text[len(base):]
        self._read = n
        if row is not None:
            row.update(emitted=new_text, why=why)
            self.trace.append(row)
        return new_text

    def _hold(self, row, why: str, text: str) -> str | None:
        if row is not None:
            row.update(emitted=None, why=why)
            self.trace.append(row)
        if self.fallback and len(self._ids) - self._read > MAX_HELD:
            return self._settle()
        return None

    def _settle(self) -> str | None:
        # a long held tail (U+FFFD really in the text, or silent ids): emit what cannot change
        ctx = self._clean_start(max(self._floor, self._read - self.k))
        base, text = self._decode(ctx, self._read), self._decode(ctx)
        if text == base and not (self._byte_ids and self._run_open(len(self._ids))):
            # the held ids add nothing even in context: shorten each run of silent ids (skipped
            # specials, one boundary to a SentencePiece decoder) to one; a held ▁ stays
            kept: list[int] = []
            for token_id in self._ids[self._read:]:
                if not (kept and self._is_silent(token_id) and self._is_silent(kept[-1])):
                    kept.append(token_id)
            self._ids[self._read:] = kept if len(kept) <= MAX_HELD else []
            return None
        window = self._ids[ctx:]
        found = find_safe_split(
            self._decode_ids,
            window,
            text,
            lo=self._read - ctx,
            min_head=len(base),
            blocked=(lambda b: self._run_open(ctx + b)) if self._byte_ids else None,
        )
        if found is None:
            return None
        b, head = found
        self._read = self._floor = ctx + b  # decoding restarts cleanly here
        return head[len(base):] or None

    def _clean_start(self, lo: int) -> int:
        """Move a window start back out of a <0xNN> run (see run_clean_start)."""
        if not self.fallback or not self._byte_ids:
            return lo
        return run_clean_start(self._ids, lo, self._floor, self._byte_ids, self._is_silent)

    def _is_silent(self, token_id: int) -> bool:
        # a skipped special token vanishes before the decoder runs (a bare ▁ reads as '' too, but is text)
        return (self.skip_special_tokens and self.tok.decode([token_id], skip_special_tokens=True) == ""
                and self.tok.decode([token_id]) != "")

    def _run_open(self, end: int) -> bool:
        return run_open(self._ids, end, self._floor, self._byte_ids, self._is_silent)

    def step_batch(self, token_ids: Iterable[int]) -> list[str]:
        """Step each id; return the chunks produced."""
        return [c for c in (self.step(i) for i in token_ids) if c is not None]

    def flush(self) -> str | None:
        """Emit the held ids' text (an unfinished character shows as U+FFFD)."""
        n = len(self._ids)
        if self._read == n:
            return None
        ctx = self._clean_start(max(self._floor, self._read - self.k))
        new_text = self._decode(ctx)[len(self._decode(ctx, self._read)):]
        self._read = n
        return new_text or None
