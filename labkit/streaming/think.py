"""Strip ``<think> ... </think>`` blocks from streamed text, chunk by chunk.

Reasoning models (Qwen3, DeepSeek-R1) write their reasoning between ``<think>`` and
``</think>`` before the answer. A stream arrives in arbitrary pieces, so a tag can be split
anywhere (``"<th"`` + ``"ink>"``). The stripper is a two-state machine (outside / inside a
block) that holds back only the longest tail that could still become the tag it is waiting
for; any other angle bracket (``"a < b"``, ``"<b>"``) goes out as soon as it cannot be a tag.

At ``flush()`` a held tail outside a block is ordinary text; an unterminated block (no
``</think>`` ever came) is reasoning, never shown as the answer, and ``unterminated`` is set.

Introduced in notebooks ``07_special_tokens_chat_templates`` and ``08_incremental_detokenization``.

Example:
    >>> from labkit.streaming.think import ThinkStripper
    >>> s = ThinkStripper()
    >>> s.step("<th") + s.step("ink>hmm</think>Hi") + s.flush()
    'Hi'
"""
from __future__ import annotations

import re

from labkit.core import LabkitError

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


def partial_tag_length(text: str, tag: str) -> int:
    """Length of the longest tail of ``text`` that is a proper prefix of ``tag`` (0 if none).

    Example:
        >>> from labkit.streaming.think import partial_tag_length
        >>> partial_tag_length("abc</thi", "</think>")
        5
    """
    for size in range(min(len(text), len(tag) - 1), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


class ThinkStripper:
    """Streaming state machine: ``step(chunk)`` returns the visible text outside think blocks.

    The reasoning text is collected too: ``step_parts`` / ``flush_parts`` return
    ``(visible, reasoning)`` for the chunk, and ``reasoning`` holds all of it so far.
    ``start_inside=True`` is for prompts that already opened the block (DeepSeek-R1 style
    templates end the prompt with ``<think>``, so the output holds only ``</think>``).

    Introduced in notebook ``08_incremental_detokenization``.

    Example:
        >>> from labkit.streaming.think import ThinkStripper
        >>> ThinkStripper().step("<think>plan</think>Answer")
        'Answer'
    """

    def __init__(self, open_tag: str = OPEN_TAG, close_tag: str = CLOSE_TAG, *, start_inside: bool = False):
        if not isinstance(open_tag, str) or not isinstance(close_tag, str) or not open_tag or not close_tag:
            raise LabkitError("ThinkStripper: open_tag and close_tag must be non-empty strings")
        self.open_tag = open_tag
        self.close_tag = close_tag
        self.inside = bool(start_inside)
        self.unterminated = False
        self._held = ""  # a tail that may be the start of the tag we wait for
        self._reasoning: list[str] = []

    @property
    def reasoning(self) -> str:
        """All reasoning text seen so far (the insides of the blocks, tags removed)."""
        return "".join(self._reasoning)

    def step(self, chunk: str) -> str:
        """Feed one chunk; return the visible text that can no longer be part of a tag."""
        return self.step_parts(chunk)[0]

    def step_parts(self, chunk: str) -> tuple[str, str]:
        """Feed one chunk; return ``(visible, reasoning)`` text released by it."""
        if not isinstance(chunk, str):
            raise LabkitError(f"ThinkStripper.step() takes str, got {type(chunk).__name__}")
        text = self._held + chunk
        self._held = ""
        visible: list[str] = []
        thought: list[str] = []
        while text:
            tag = self.close_tag if self.inside else self.open_tag
            out = thought if self.inside else visible
            at = text.find(tag)
            if at >= 0:
                out.append(text[:at])
                text = text[at + len(tag):]
                self.inside = not self.inside
                continue
            keep = partial_tag_length(text, tag)
            out.append(text[: len(text) - keep])
            self._held = text[len(text) - keep:]
            break
        reasoning = "".join(thought)
        if reasoning:
            self._reasoning.append(reasoning)
        return "".join(visible), reasoning

    def flush(self) -> str:
        """End of stream: return the held visible text (an unterminated block stays hidden)."""
        return self.flush_parts()[0]

    def flush_parts(self) -> tuple[str, str]:
        """End of stream: return ``(visible, reasoning)`` still held, and reset the hold."""
        held, self._held = self._held, ""
        if self.inside:
            self.unterminated = True
            if held:
                self._reasoning.append(held)
            return "", held
        return held, ""

    def __repr__(self) -> str:
        state = "inside" if self.inside else "outside"
        return f"<labkit.ThinkStripper {state} held={self._held!r}>"


def strip_think(text: str, open_tag: str = OPEN_TAG, close_tag: str = CLOSE_TAG) -> str:
    """Remove every think block from a whole text at once, with a regex (no streaming).

    An unterminated block runs to the end of the text. This is the whole-text answer the
    streaming stripper must reproduce, however the text is cut into chunks.

    Example:
        >>> from labkit.streaming.think import strip_think
        >>> strip_think("<think>x</think>Hi")
        'Hi'
    """
    pattern = re.escape(open_tag) + r".*?(?:" + re.escape(close_tag) + r"|\Z)"
    return re.sub(pattern, "", text, flags=re.DOTALL)
