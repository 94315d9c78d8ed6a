"""What one chat-template render may spend, and the counters that refuse it past that.

:class:`RenderLimits` holds the limits; :class:`Budget` is the per-render account the
sandbox charges (see ``labkit/chat/sandbox.py``). Introduced in notebook
``07_special_tokens_chat_templates``.

Example:
    >>> import labkit.chat
    >>> from labkit.chat.budget import RenderLimits
    >>> labkit.chat.ChatTemplate("{{ messages[0].content }}", limits=RenderLimits(max_seconds=0.1)).render([{"role": "user", "content": "hi"}])
    'hi'
"""
from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import ItemsView, KeysView, ValuesView
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

from jinja2.runtime import Undefined
from jinja2.utils import Namespace

from labkit.chat.errors import TemplateRefused


@dataclass(frozen=True)
class RenderLimits:
    """What one render may spend before the sandbox refuses it (generous for real templates).

    Example:
        >>> from labkit.chat.budget import RenderLimits
        >>> RenderLimits(max_seconds=0.1).max_seconds
        0.1
    """

    max_steps: int = 500_000          # loop iterations + calls + filters + operators + prints
    max_depth: int = 48               # nested macro / recursive-loop calls
    max_string: int = 8_000_000       # chars of any one value a template builds or stringifies
    max_items: int = 200_000          # items of any one list a template builds
    max_output: int = 32_000_000      # chars emitted in total (blocks and macros included)
    max_width: int = 100_000          # a width, count or indent argument (center, %10000d, ...)
    max_int_bits: int = 100_000       # size of an integer built with * or **
    max_seconds: float = 0.5          # wall clock, checked at every step
    max_source: int = 1_000_000       # chars of template source
    max_built: int = 128 * 2**20      # bytes of all strings and lists built in one render
    max_nesting: int = 16             # nested for / if / macro / call / filter / with blocks
    max_filter_items: int = 50_000    # items (or chars) a sequence filter may walk: sort, batch, ...
                                      # (a tenth of it with an attribute looked up per item: groupby, ...)
    max_separator: int = 16           # chars of one tojson separator


DEFAULT_LIMITS = RenderLimits()


class Budget:
    """Per-render counters; found through a context variable so templates cannot reach it.

    Every check runs before the work it guards: ``step`` at each loop item, call, filter and
    print (steps and wall clock), ``bound``/``width``/``items`` on the sizes a call is about to
    build or walk. Each single call is bounded in size, so none can run long past the clock.
    Example:
        >>> from labkit.chat.budget import Budget, RenderLimits
        >>> Budget(RenderLimits(), None).bound(10, "x")
    """

    def __init__(self, limits: RenderLimits, now: datetime | Callable[[], datetime] | None):
        self.limits = limits
        self.now = now
        self.steps = 0
        self.depth = 0
        self.output = 0
        self.built = 0
        self.deadline = time.perf_counter() + limits.max_seconds
        self.sizes: dict[tuple[int, int], tuple[Any, int]] = {}  # (id, indent) -> (obj, size)

    def step(self, count: int = 1) -> None:
        self.steps += count
        if self.steps > self.limits.max_steps:
            raise TemplateRefused(f"template refused: more than {self.limits.max_steps:,} steps (loops, calls, filters)")
        if time.perf_counter() > self.deadline:
            raise TemplateRefused(f"template refused: rendering took more than {self.limits.max_seconds} s")

    def bound(self, size: int, what: str) -> None:
        if size > self.limits.max_string:
            raise TemplateRefused(
                f"template refused: {what} would build about {size:,} chars (limit {self.limits.max_string:,})"
            )

    def width(self, value: Any, what: str) -> None:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > self.limits.max_width:
            raise TemplateRefused(f"template refused: {what} argument {value} is above {self.limits.max_width:,}")

    def items(self, count: int, what: str, limit: int | None = None) -> None:
        limit = self.limits.max_filter_items if limit is None else limit
        if count > limit:
            raise TemplateRefused(f"template refused: {what} would walk {count:,} items (limit {limit:,})")

    def flat(self, value: Any, what: str, indent: int = 0) -> int:
        size = self.flat_size(value, indent)
        self.bound(size, what)
        return size

    def result(self, value: Any, what: str, inputs: tuple = ()) -> Any:
        """Check a value an operation returned (sizes were estimated before it ran) and charge
        what it built to the render's memory account; a value passed through is not charged."""
        self.sized(value, what)
        if isinstance(value, (str, bytes, list, tuple)) and not any(value is i for i in inputs):
            self.charge(sys.getsizeof(value), what)
        return value

    def sized(self, value: Any, what: str) -> None:
        """A string within max_string chars, a list within max_items items."""
        if isinstance(value, (str, bytes)):
            self.bound(len(value), what)
        elif isinstance(value, (list, tuple)) and len(value) > self.limits.max_items:
            raise TemplateRefused(
                f"template refused: {what} built a list of {len(value):,} items (limit {self.limits.max_items:,})"
            )

    def charge(self, size: int, what: str) -> None:
        """Add ``size`` bytes to what this render has built; refuse past ``max_built``.

        Many values, each within max_string, could together fill memory: this bounds the sum
        (an over-count, as values a render drops are still counted).
        """
        self.built += size
        if self.built > self.limits.max_built:
            raise TemplateRefused(
                f"template refused: {what}: the render has built {self.built:,} bytes of values "
                f"(limit {self.limits.max_built:,})"
            )

    def flat_size(self, value: Any, indent: int = 0, depth: int = 0) -> int:
        """About how many chars ``str(value)`` (or ``tojson``) makes; stops early past the limit.

        Shared references count every time they appear, because printing repeats them.
        """
        limit = self.limits.max_string
        if isinstance(value, (str, bytes)):
            return len(value) * (4 if isinstance(value, bytes) else 1)  # repr of bytes: up to \xNN each
        if value is None or isinstance(value, (bool, int, float)):
            return 24
        if isinstance(value, Undefined):
            return 0
        if isinstance(value, Namespace):
            return 16 + self.flat_size(object.__getattribute__(value, "_Namespace__attrs"), indent, depth)
        if isinstance(value, (list, tuple, dict, set, frozenset, KeysView, ValuesView, ItemsView)):
            key = (id(value), depth if indent else 0)
            cached = self.sizes.get(key)
            if cached is not None:
                return cached[1]
            if depth > 64:
                return limit + 1  # printing this deep a structure is itself a hazard
            overhead = 4 + indent * (depth + 1)
            total = 2
            pairs = value.items() if isinstance(value, dict) else None
            for item in pairs if pairs is not None else value:
                if pairs is not None:
                    total += self.flat_size(item[0], indent, depth + 1) + self.flat_size(item[1], indent, depth + 1)
                else:
                    total += self.flat_size(item, indent, depth + 1)
                total += overhead
                if total > limit:
                    break
            self.sizes[key] = (value, total)  # keeps value alive, so its id is not reused
            return total
        return 64


CURRENT: contextvars.ContextVar[Budget] = contextvars.ContextVar("labkit_chat_budget")


def current_budget() -> Budget:
    """The budget of the render in progress (default limits while compiling: constant folding).

    Example:
        >>> from labkit.chat.budget import current_budget
        >>> current_budget().step()
    """
    budget = CURRENT.get(None)
    if budget is None:
        budget = Budget(DEFAULT_LIMITS, None)
    return budget


