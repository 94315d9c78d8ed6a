"""Size checks made before a template operation runs: what it would build or walk.

An operation that multiplies sizes (``*``, ``%``, ``str.format``, ``replace``, ``join``,
``indent``, ``tojson`` with an indent or separators) has its result size estimated first;
a filter that walks a sequence (``sort``, ``groupby``, ``batch``, ``unique``, ...) has its
input counted first (a generator is drawn into a list, at most one item past the limit);
``wordwrap`` is quadratic in the length of a long word, so its input has its own small bound.
Introduced in notebook ``07_special_tokens_chat_templates``.

Example:
    >>> from labkit.chat.budget import Budget, RenderLimits
    >>> from labkit.chat.checks import check_filter
    >>> check_filter(Budget(RenderLimits(), None), "wordwrap", "a" * 10**6, (1,), {})
    Traceback (most recent call last):
    labkit.chat.errors.TemplateRefused: template refused: filter 'wordwrap' takes at most 22,360 chars in a 0.5 s budget, got 1,000,000
"""
from __future__ import annotations

import itertools
import re
import string
from collections.abc import Mapping
from typing import Any

from labkit.chat.budget import Budget
from labkit.chat.errors import ChatTemplateError, TemplateRefused

_PRINTF_FIELD = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")


def printf_bound(budget: Budget, fmt: str, values: Any, what: str) -> None:
    widest = 0
    fields = 0
    for match in _PRINTF_FIELD.finditer(fmt):
        fields += 1
        for group in match.groups():
            if group == "*":  # the width comes from the values: each int value must be a sane width
                widest = max(widest, budget.limits.max_width)
                for value in values if isinstance(values, (list, tuple)) else (values,):
                    budget.width(value, what)
            elif group:
                if len(group) > 7:
                    raise TemplateRefused(f"template refused: {what} width {group[:12]}... is too large")
                widest = max(widest, int(group))
    if widest > budget.limits.max_width:
        raise TemplateRefused(f"template refused: {what} width {widest} is above {budget.limits.max_width:,}")
    if fields:
        budget.bound(len(fmt) + fields * (budget.flat_size(values) + widest), what)


def format_bound(budget: Budget, fmt: str, args: tuple, kwargs: Mapping, what: str) -> None:
    fields = 0
    widest = 0
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError as exc:
        raise ChatTemplateError(f"chat template: bad format string for {what}: {exc}") from None
    for _literal, name, spec, _conversion in parsed:
        if name is None:
            continue
        fields += 1
        if spec:
            if "{" in spec:  # a width taken from the arguments: every int argument must be a sane width
                widest = max(widest, budget.limits.max_width)
                for value in (*args, *kwargs.values()):
                    budget.width(value, what)
            for digits in re.findall(r"\d+", spec):
                if len(digits) > 7 or int(digits) > budget.limits.max_width:
                    raise TemplateRefused(f"template refused: {what} width {digits[:12]} is too large")
                widest = max(widest, int(digits))
    if fields:
        payload = budget.flat_size(list(args)) + budget.flat_size(dict(kwargs))
        budget.bound(len(fmt) + fields * (payload + widest), what)


def _replace_bound(budget: Budget, text: str, old: Any, new: Any, count: Any, what: str) -> None:
    if not (isinstance(text, (str, bytes)) and type(old) is type(text) and type(new) is type(text)):
        return
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    budget.bound(len(text) + hits * max(0, len(new) - len(old)), what)


def check_str_method(budget: Budget, method: Any, args: tuple, kwargs: dict) -> tuple:
    """Bounds for the str/bytes methods that multiply sizes; returns the (maybe materialised) args."""
    name = method.__name__
    text = method.__self__
    what = f"str.{name}()"
    if name == "replace":
        old = args[0] if len(args) > 0 else kwargs.get("old")
        new = args[1] if len(args) > 1 else kwargs.get("new")
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        _replace_bound(budget, text, old, new, count, what)
    elif name == "join" and args:
        items = args[0] if isinstance(args[0], (list, tuple, str)) else bounded_items(budget, args[0], what)
        budget.sized(list(items) if isinstance(items, tuple) else items, what)
        budget.bound(budget.flat_size(items) + len(text) * len(items), what)
        args = (items,) + tuple(args[1:])
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        budget.width(size, what)
        if isinstance(size, int):
            budget.bound(len(text) + text.count("\t" if isinstance(text, str) else b"\t") * max(size, 0), what)
    elif name in ("center", "ljust", "rjust", "zfill"):
        for value in (*args, *kwargs.values()):
            budget.width(value, what)
    elif name in ("split", "rsplit", "splitlines"):
        _split_bound(budget, text, name, args, kwargs, what)
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        budget.bound(len(text) * max(longest, 1), what)
    return args




_ASCII_SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_ASCII_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e"


def _split_bound(budget: Budget, text: Any, name: str, args: tuple, kwargs: dict, what: str) -> None:
    """An upper bound on the pieces ``split``/``rsplit``/``splitlines`` would make, before they run."""
    if not isinstance(text, str):
        return
    sep = args[0] if args else kwargs.get("sep")
    maxsplit = args[1] if len(args) > 1 else kwargs.get("maxsplit", -1)
    if name == "splitlines":
        breaks = _ASCII_LINE_BREAKS
        pieces = sum(text.count(c) for c in breaks) + 1 if text.isascii() else len(text) + 1
    elif isinstance(sep, str) and sep:
        pieces = text.count(sep) + 1
    elif text.isascii():  # words are at most one more than the whitespace chars
        pieces = sum(text.count(c) for c in _ASCII_SPACES) + 1
    else:
        pieces = len(text) // 2 + 1
    if isinstance(maxsplit, int) and maxsplit >= 0:
        pieces = min(pieces, maxsplit + 1)
    if pieces > budget.limits.max_items:
        raise TemplateRefused(
            f"template refused: {what} would build up to {pieces:,} items (limit {budget.limits.max_items:,})"
        )


# filters that turn their input into text: their input is size-checked first
STRINGIFYING = frozenset(
    "capitalize center e escape forceescape format indent join lower pprint replace safe string "
    "striptags sum title tojson trim truncate upper urlencode urlize wordcount wordwrap xmlattr list".split()
)


def check_filter(budget: Budget, name: str, value: Any, args: tuple, kwargs: dict) -> Any:
    """Per-filter bounds, checked before the filter runs; returns the value to pass on
    (a generator input is drawn into a bounded list first).

    Example (the string is 8,000,000 items for ``batch``; refused before it is walked):
        >>> from labkit.chat.budget import Budget, RenderLimits
        >>> budget = Budget(RenderLimits(), None)
        >>> check_filter(budget, "batch", "ab" * 4_000_000, (1,), {})
        Traceback (most recent call last):
        labkit.chat.errors.TemplateRefused: template refused: filter 'batch' would walk 8,000,000 items (limit 50,000)
        >>> check_filter(budget, "batch", (c for c in "abc"), (2,), {})
        ['a', 'b', 'c']
    """
    what = f"filter {name!r}"
    if name in SEQUENCE_FILTERS:
        value = bounded_items(budget, value, what)
    if name in PER_ITEM_CALLBACK and (args or kwargs):  # an attribute or test looked up per item
        budget.items(_length(value), what, budget.limits.max_filter_items // 10)
    if name in TEXT_COST_NS or name == "wordwrap":
        text_limit = longest_text(name, budget.limits.max_seconds)
        size = len(value) if isinstance(value, str) else budget.flat_size(value)
        if size > text_limit:
            raise TemplateRefused(
                f"template refused: {what} takes at most {text_limit:,} chars in a "
                f"{budget.limits.max_seconds} s budget, got {size:,}"
            )
    if name in ("center", "wordwrap", "truncate", "batch", "slice", "round"):
        for arg in (*args[:1], *(kwargs.get(k) for k in ("width", "length", "linecount", "slices", "precision"))):
            budget.width(arg, what)
    if name == "indent":
        width = args[0] if args else kwargs.get("width", 4)
        budget.width(width, what)
        step = len(width) if isinstance(width, str) else (width if isinstance(width, int) else 0)
        text = str(value) if not isinstance(value, str) else value
        budget.bound(len(text) + (text.count("\n") + 1) * max(step, 0), what)
    elif name == "wordwrap" and isinstance(value, str):
        wrap = args[2] if len(args) > 2 else kwargs.get("wrapstring")
        if isinstance(wrap, str):
            budget.bound(len(value) + (len(value) + 1) * len(wrap), what)
    elif name in ("e", "escape", "forceescape") and isinstance(value, str):
        # each & < > " ' becomes an entity of up to 5 chars
        budget.bound(len(value) + 4 * sum(value.count(c) for c in "&<>\"'"), what)
    elif name == "replace":
        _replace_bound(budget, str(value), args[0] if args else None, args[1] if len(args) > 1 else None,
                       args[2] if len(args) > 2 else kwargs.get("count"), what)
    elif name == "join":
        if not isinstance(value, (list, tuple, str, dict)):
            value = list(value)
        budget.sized(value if isinstance(value, list) else [], what)
        sep = args[0] if args else kwargs.get("d", "")
        budget.bound(budget.flat_size(value) + len(sep if isinstance(sep, str) else "") * len(value), what)
    elif name == "tojson":
        indent = args[1] if len(args) > 1 else kwargs.get("indent")
        step = len(indent) if isinstance(indent, str) else (indent if isinstance(indent, int) else 0)
        budget.width(step, what)
        separators = args[2] if len(args) > 2 else kwargs.get("separators")
        widest = _separator_width(budget, separators, what)
        # every item and key is followed by a separator: charge the widest one per item
        budget.flat(value, what, indent=max(step, 0) + widest)
    elif name == "format" and isinstance(value, str):
        printf_bound(budget, value, [*args, *kwargs.values()], what)
    return value




# filters that walk their input item by item (a str counts its chars as items)
SEQUENCE_FILTERS = frozenset(
    "batch slice sort groupby unique dictsort map select reject selectattr rejectattr list sum min max "
    "first last random reverse join".split()
)
# filters that look an attribute up (or call a test or filter) for every item, in Python
PER_ITEM_CALLBACK = frozenset("groupby sort unique dictsort map select reject selectattr rejectattr sum min max".split())
# The cost model that keeps one filter call inside the wall-clock budget (a running call
# cannot be interrupted, so its input is bounded instead). Nanoseconds per input char,
# measured on the project's loaded 2-core machine (the slowest filters; the rest run at
# C speed, well under 100 ns a char, and are bounded by max_string alone).
TEXT_COST_NS = {
    "title": 1000,      # a regex with a Python callback per word
    "capitalize": 100,
    "striptags": 650,
    "wordcount": 400,
    "indent": 300,
    "urlencode": 300,
    "urlize": 2000,     # a regex and several checks per word
    "pprint": 2000,     # pure-Python pretty printer, per char of output
    "center": 50,
    "truncate": 50,
}
# textwrap (``wordwrap``) is quadratic in a long word's length: nanoseconds per char squared
WORDWRAP_NS_PER_CHAR2 = 0.5


def longest_text(name: str, max_seconds: float) -> int:
    """The longest input (chars) filter ``name`` may take so one call uses at most half of
    a ``max_seconds`` budget, by the cost model above.

    Example:
        >>> from labkit.chat.checks import longest_text
        >>> longest_text("wordwrap", 0.5)
        22360
    """
    allowed_ns = max_seconds * 1e9 / 2
    if name == "wordwrap":
        return int((allowed_ns / WORDWRAP_NS_PER_CHAR2) ** 0.5)
    return int(allowed_ns / TEXT_COST_NS[name])


def _length(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return 0


def bounded_items(budget: Budget, value: Any, what: str) -> Any:
    """``value`` if its length is within the item limit; a generator drawn into a list of at
    most limit + 1 items (then refused if full); anything larger refused before it is walked.

    Example:
        >>> from labkit.chat.budget import Budget, RenderLimits
        >>> from labkit.chat.checks import bounded_items
        >>> bounded_items(Budget(RenderLimits(), None), (i for i in range(3)), "x")
        [0, 1, 2]
    """
    limit = budget.limits.max_filter_items
    try:
        budget.items(len(value), what)
        return value
    except TypeError:  # no len(): an iterator (map, select, batch results, ...)
        pass
    if not hasattr(value, "__iter__") or isinstance(value, Mapping):
        return value
    drawn = list(itertools.islice(value, limit + 1))
    budget.items(len(drawn), what)
    return drawn


def _separator_width(budget: Budget, separators: Any, what: str) -> int:
    if separators is None:
        return 0
    if not (isinstance(separators, (list, tuple)) and len(separators) == 2 and all(isinstance(s, str) for s in separators)):
        raise ChatTemplateError(f"chat template: {what} separators must be two strings, e.g. (',', ':')")
    widest = max(len(s) for s in separators)
    if widest > budget.limits.max_separator:
        raise TemplateRefused(
            f"template refused: {what} separator of {widest:,} chars is over {budget.limits.max_separator}"
        )
    return widest
