"""Chat templates: find a model's Jinja template and render a conversation with it exactly
as ``transformers`` does, inside a sandbox that refuses hostile templates loudly.

A chat template is a small program shipped in a downloaded file, so it is untrusted. The
renderer is jinja2's ``ImmutableSandboxedEnvironment`` (``trim_blocks``, ``lstrip_blocks``,
``loopcontrols``; ``tojson``, ``raise_exception`` and ``strftime_now`` as transformers
defines them) with four additions: an unsafe attribute or a mutating method is refused with
:class:`TemplateRefused` instead of rendering as an empty string; every loop, call, filter and
operator is charged to a per-render budget (steps, call depth, string and output sizes, wall
clock); operations that multiply sizes (``*``, ``**``, ``%``, ``str.format``, ``replace``,
``join``, ``indent``, ``tojson(indent=...)``) are checked before they run; and every failure is
a :class:`labkit.LabkitError`. Introduced in notebook ``07_special_tokens_chat_templates``.

Example: ``labkit.render_chat_template(src, [{"role": "user", "content": "hi"}], add_generation_prompt=True)``
"""
from __future__ import annotations

import contextvars
import copy
import json
import os
import re
import string
import time
import types
import warnings
from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.exceptions import SecurityError, TemplateSyntaxError
from jinja2.runtime import Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace

from labkit.core import Encoding, LabkitError, VocabData

# ----------------------------------------------------------------------------- errors


class ChatTemplateError(LabkitError):
    """A chat template could not be found, compiled or rendered (the message says where).

    Example: ``ChatTemplateError("chat template line 3: 'dict object' has no attribute 'x'")``
    """

    template_line: int | None = None


class TemplateRaised(ChatTemplateError):
    """The template called ``raise_exception(message)``; ``str(error)`` is that message.

    Example: gemma-2 with a system message raises ``TemplateRaised('System role not supported')``
    """


class TemplateRefused(ChatTemplateError):
    """The sandbox refused the template: unsafe attribute, mutation, or a resource limit.

    Example: ``{{ cycler.__init__.__globals__ }}`` -> ``TemplateRefused("... '__init__' ... refused")``
    """


class DuplicateSpecialTokenWarning(UserWarning):
    """The encoded prompt starts with two BOS (or ends with two EOS) ids, as llama.cpp warns."""


# ----------------------------------------------------------------------------- limits and budget


@dataclass(frozen=True)
class RenderLimits:
    """What one render may spend before the sandbox refuses it (generous for real templates).

    Example: ``ChatTemplate(src, limits=RenderLimits(max_seconds=0.1))``
    """

    max_steps: int = 500_000          # loop iterations + calls + filters + operators + prints
    max_depth: int = 48               # nested macro / recursive-loop calls
    max_string: int = 8_000_000       # chars of any one value a template builds or stringifies
    max_items: int = 200_000          # items of any one list a template builds
    max_output: int = 32_000_000      # chars emitted in total (blocks and macros included)
    max_width: int = 100_000          # a width, count or indent argument (center, %10000d, ...)
    max_int_bits: int = 100_000       # size of an integer built with * or **
    max_seconds: float = 0.5          # wall clock, checked at every step


DEFAULT_LIMITS = RenderLimits()
_TOO_BIG = object()


class _Budget:
    """Per-render counters; found through a context variable so templates cannot reach it."""

    def __init__(self, limits: RenderLimits, now: datetime | Callable[[], datetime] | None):
        self.limits = limits
        self.now = now
        self.steps = 0
        self.depth = 0
        self.output = 0
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

    def flat(self, value: Any, what: str, indent: int = 0) -> int:
        size = self.flat_size(value, indent)
        self.bound(size, what)
        return size

    def result(self, value: Any, what: str) -> Any:
        if isinstance(value, (str, bytes)):
            self.bound(len(value), what)
        elif isinstance(value, (list, tuple)) and len(value) > self.limits.max_items:
            raise TemplateRefused(
                f"template refused: {what} built a list of {len(value):,} items (limit {self.limits.max_items:,})"
            )
        return value

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


_CURRENT: contextvars.ContextVar[_Budget] = contextvars.ContextVar("labkit_chat_budget")


def _budget() -> _Budget:
    budget = _CURRENT.get(None)
    if budget is None:  # constant folding at compile time: check with default limits
        budget = _Budget(DEFAULT_LIMITS, None)
    return budget


# ----------------------------------------------------------------------------- size pre-checks


_PRINTF_FIELD = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")


def _printf_bound(budget: _Budget, fmt: str, values: Any, what: str) -> None:
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


def _format_bound(budget: _Budget, fmt: str, args: tuple, kwargs: Mapping, what: str) -> None:
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


def _replace_bound(budget: _Budget, text: str, old: Any, new: Any, count: Any, what: str) -> None:
    if not (isinstance(text, (str, bytes)) and type(old) is type(text) and type(new) is type(text)):
        return
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    budget.bound(len(text) + hits * max(0, len(new) - len(old)), what)


def _check_str_method(budget: _Budget, method: Any, args: tuple, kwargs: dict) -> tuple:
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
        items = args[0] if isinstance(args[0], (list, tuple, str)) else list(args[0])
        budget.result(list(items) if isinstance(items, tuple) else items, what)
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
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        budget.bound(len(text) * max(longest, 1), what)
    return args


# ----------------------------------------------------------------------------- filters and globals


def _tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False) -> str:
    """transformers' ``tojson``: ``json.dumps`` without HTML escaping, with its arguments."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: Any = "") -> None:
    _budget().flat(message, "raise_exception() message")
    raise TemplateRaised(str(message))


def _strftime_now(fmt: Any) -> str:
    if not isinstance(fmt, str):
        raise ChatTemplateError(f"chat template: strftime_now() takes a format string, got {type(fmt).__name__}")
    _budget().bound(len(fmt) * 16, "strftime_now()")
    now = _budget().now
    if now is None:
        now = datetime.now()
    elif callable(now):
        now = now()
    return now.strftime(fmt)


def _lipsum_guard(func: Callable) -> Callable:
    def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002
        budget = _budget()
        budget.step()
        if not all(isinstance(v, int) for v in (n, min, max)) or n * max > 100_000:
            raise TemplateRefused(f"template refused: lipsum({n}, max={max}) is too large")
        return func(n, html, min, max)

    return lipsum


# filters that turn their input into text: their input is size-checked first
_STRINGIFYING = frozenset(
    "capitalize center e escape forceescape format indent join lower pprint replace safe string "
    "striptags sum title tojson trim truncate upper urlencode urlize wordcount wordwrap xmlattr list".split()
)


def _check_filter(budget: _Budget, name: str, value: Any, args: tuple, kwargs: dict) -> Any:
    """Per-filter bounds; returns the value (a generator is materialised for ``join``)."""
    what = f"filter {name!r}"
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
    elif name == "replace":
        _replace_bound(budget, str(value), args[0] if args else None, args[1] if len(args) > 1 else None,
                       args[2] if len(args) > 2 else kwargs.get("count"), what)
    elif name == "join":
        if not isinstance(value, (list, tuple, str, dict)):
            value = list(value)
        budget.result(value if isinstance(value, list) else [], what)
        sep = args[0] if args else kwargs.get("d", "")
        budget.bound(budget.flat_size(value) + len(sep if isinstance(sep, str) else "") * len(value), what)
    elif name == "tojson":
        indent = args[1] if len(args) > 1 else kwargs.get("indent")
        step = len(indent) if isinstance(indent, str) else (indent if isinstance(indent, int) else 0)
        budget.width(step, what)
        budget.flat(value, what, indent=max(step, 0))
    elif name == "format" and isinstance(value, str):
        _printf_bound(budget, value, [*args, *kwargs.values()], what)
    return value


def _guard_filter(name: str, func: Callable) -> Callable:
    pass_arg = getattr(func, "jinja_pass_arg", None)
    offset = 0 if pass_arg is None else 1  # context / eval_ctx / environment comes first

    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.step()
        if len(args) > offset:
            value = args[offset]
            if name in _STRINGIFYING and name not in ("join", "tojson"):
                budget.flat(value, f"filter {name!r}")
            new_value = _check_filter(budget, name, value, args[offset + 1:], kwargs)
            if new_value is not value:
                args = (*args[:offset], new_value, *args[offset + 1:])
        return budget.result(func(*args, **kwargs), f"filter {name!r}")

    guarded.__name__ = getattr(func, "__name__", name)
    if pass_arg is not None:
        guarded.jinja_pass_arg = pass_arg  # type: ignore[attr-defined]
    return guarded


@jinja2.pass_context
def _charge_loop(context: Any, iterable: Any) -> Any:
    """Wrapped around every ``for`` iterable: charge one step per item."""
    budget = _budget()
    try:
        size = len(iterable)
    except TypeError:
        return _counted(iterable, budget)
    budget.step(size)  # up front: the loop body itself needs no hook
    return iterable


def _counted(iterable: Any, budget: _Budget):
    for item in iterable:
        budget.step()
        yield item


@jinja2.pass_context
def _charge_output(context: Any, value: Any) -> Any:
    """Wrapped around every ``{{ expression }}``: count what it will print."""
    budget = _budget()
    budget.step()
    size = budget.flat(value, "an output expression")
    budget.output += size
    if budget.output > budget.limits.max_output:
        raise TemplateRefused(f"template refused: output passed {budget.limits.max_output:,} chars")
    return value


@jinja2.pass_context
def _charge_text(context: Any, size: int) -> str:
    """Inserted into every output statement that prints template text: count that text."""
    budget = _budget()
    budget.step()
    budget.output += size
    if budget.output > budget.limits.max_output:
        raise TemplateRefused(f"template refused: output passed {budget.limits.max_output:,} chars")
    return ""


@jinja2.pass_context
def _checked_concat(context: Any, parts: list) -> str:
    """Replaces ``a ~ b ~ c``: the total size is checked before anything is stringified."""
    budget = _budget()
    budget.step()
    budget.bound(sum(budget.flat_size(p) for p in parts), "the ~ operator")
    return "".join(map(str, parts))


# ----------------------------------------------------------------------------- the environment


class _GenerationBlock(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}`` (transformers' assistant mask): renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


class GuardedEnvironment(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, made loud and budgeted (see the module docstring).

    Example: ``GuardedEnvironment().compile_guarded("{{ x }}")``
    """

    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(self) -> None:
        super().__init__(trim_blocks=True, lstrip_blocks=True,
                         extensions=[jinja2.ext.loopcontrols, _GenerationBlock])
        self.filters["tojson"] = _tojson
        self.filters = {name: _guard_filter(name, f) for name, f in self.filters.items()}
        self.filters["_labkit_loop"] = _charge_loop
        self.filters["_labkit_out"] = _charge_output
        self.filters["_labkit_text"] = _charge_text
        self.filters["_labkit_concat"] = _checked_concat
        self.globals["lipsum"] = _lipsum_guard(self.globals["lipsum"])
        self.globals["raise_exception"] = _raise_exception
        self.globals["strftime_now"] = _strftime_now

    # -- refusals instead of silent Undefined ---------------------------------
    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(attribute, str) and attribute.startswith("__") and not (isinstance(obj, Mapping) and attribute in obj):
            self.unsafe_undefined(obj, attribute)  # dunder probing is refused even where it would be Undefined
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(argument, str) and argument.startswith("__") and not (isinstance(obj, Mapping) and argument in obj):
            self.unsafe_undefined(obj, argument)
        return super().getitem(obj, argument)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        raise TemplateRefused(
            f"template refused: access to attribute {attribute!r} of a {type(obj).__name__!r} object "
            "(Python internals and mutating methods are not available to chat templates)"
        )

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - jinja's own signature
        budget = _budget()
        budget.step()
        if isinstance(__obj, (types.BuiltinMethodType, types.MethodType)) and isinstance(
            getattr(__obj, "__self__", None), (str, bytes)
        ):
            args = _check_str_method(budget, __obj, args, kwargs)
        budget.depth += 1
        try:
            if budget.depth > budget.limits.max_depth:
                raise TemplateRefused(f"template refused: calls nested deeper than {budget.limits.max_depth}")
            result = super().call(__context, __obj, *args, **kwargs)
        except SecurityError as exc:
            raise TemplateRefused(f"template refused: {exc}") from None
        finally:
            budget.depth -= 1
        return budget.result(result, f"call of {getattr(__obj, '__name__', type(__obj).__name__)}")

    def call_binop(self, context, operator, left, right):
        budget = _budget()
        budget.step()
        what = f"the {operator} operator"
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, bytes, list, tuple)) and isinstance(n, int):
                    size = len(seq) * max(n, 0)
                    if isinstance(seq, (str, bytes)):
                        budget.bound(size, what)
                    elif size > budget.limits.max_items:
                        raise TemplateRefused(f"template refused: {what} would build {size:,} items")
            if _is_int(left) and _is_int(right) and left.bit_length() + right.bit_length() > budget.limits.max_int_bits:
                raise TemplateRefused(f"template refused: {what} would build a {left.bit_length() + right.bit_length():,}-bit integer")
        elif operator == "**":
            if _is_int(left) and _is_int(right) and right > 1 and abs(left) > 1:
                if right * left.bit_length() > budget.limits.max_int_bits:
                    raise TemplateRefused(f"template refused: {what} would build a {right * left.bit_length():,}-bit integer")
        elif operator == "%" and isinstance(left, (str, bytes)):
            _printf_bound(budget, left if isinstance(left, str) else left.decode("latin-1"), right, what)
        return budget.result(self.binop_table[operator](left, right), what)

    def wrap_str_format(self, value):
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        fmt = value.__self__
        is_map = value.__name__ == "format_map"

        def checked_format(*args, **kwargs):
            budget = _budget()
            if is_map and args and isinstance(args[0], Mapping):
                _format_bound(budget, fmt, (), args[0], "str.format_map()")
            else:
                _format_bound(budget, fmt, args, kwargs, "str.format()")
            return wrapper(*args, **kwargs)

        return checked_format

    # -- compile with the accounting hooks woven into the syntax tree ---------
    def compile_guarded(self, source: str, name: str = "<chat template>") -> jinja2.Template:
        """Parse, insert the budget hooks, compile. Syntax errors become ChatTemplateError."""
        if not isinstance(source, str):
            raise ChatTemplateError(f"chat template must be a str, got {type(source).__name__}")
        token = _CURRENT.set(_Budget(DEFAULT_LIMITS, None))
        try:
            tree = self.parse(source, filename=name)
            _weave_hooks(tree)
            code = self.compile(tree, filename=name)
        except TemplateSyntaxError as exc:
            raise ChatTemplateError(f"line {exc.lineno}: syntax error: {exc.message}") from None
        except RecursionError:
            raise TemplateRefused("template refused: nested too deeply to compile") from None
        finally:
            _CURRENT.reset(token)
        return self.template_class.from_code(self, code, self.make_globals(None))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _hook(node: nodes.Expr, name: str, lineno: int) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=lineno)


def _weave_hooks(tree: nodes.Template) -> None:
    """Charge loops, count output, and check ``~`` operands, by rewriting the parsed tree."""
    for loop in list(tree.find_all(nodes.For)):
        loop.iter = _hook(loop.iter, "_labkit_loop", loop.lineno)
    for concat in list(tree.find_all(nodes.Concat)):
        if all(isinstance(n, (nodes.Const, nodes.TemplateData)) for n in concat.nodes):
            continue
        parts = nodes.List(list(concat.nodes), lineno=concat.lineno)
        concat.nodes = [_hook(parts, "_labkit_concat", concat.lineno)]
    for output in list(tree.find_all(nodes.Output)):
        text = sum(len(n.data) for n in output.nodes if isinstance(n, nodes.TemplateData))
        children = [n if isinstance(n, nodes.TemplateData) else _hook(n, "_labkit_out", n.lineno)
                    for n in output.nodes]
        if text:
            children.insert(0, _hook(nodes.Const(text, lineno=output.lineno), "_labkit_text", output.lineno))
        output.nodes = children


_ENV: GuardedEnvironment | None = None


def _environment() -> GuardedEnvironment:
    global _ENV
    if _ENV is None:
        _ENV = GuardedEnvironment()
    return _ENV


@lru_cache(maxsize=64)
def _compiled(source: str) -> jinja2.Template:
    return _environment().compile_guarded(source)


# ----------------------------------------------------------------------------- rendering


class ChatTemplate:
    """A compiled chat template with its limits; render it many times.

    Example: ``ChatTemplate(src).render(messages, add_generation_prompt=True, eos_token="</s>")``
    """

    def __init__(self, source: str, *, name: str = "chat template", limits: RenderLimits = DEFAULT_LIMITS):
        self.source = source
        self.name = name
        self.limits = limits
        if not isinstance(source, str):
            raise ChatTemplateError(f"{name}: a chat template is text (str), got {type(source).__name__}")
        try:
            self.template = _compiled(source)
        except ChatTemplateError as exc:
            message = exc.args[0]
            exc.args = (f"{name} {message}" if message.startswith("line ") else f"{name}: {message}",)
            raise

    def __repr__(self) -> str:
        return f"<labkit.chat.ChatTemplate {self.name} ({len(self.source)} chars)>"

    def render_variables(self, variables: dict[str, Any], *, now=None) -> str:
        """Render with exactly these template variables (no transformers preprocessing)."""
        budget = _Budget(self.limits, now)
        token = _CURRENT.set(budget)
        pieces: list[str] = []
        try:
            for piece in self.template.generate(variables):
                pieces.append(piece)
        except ChatTemplateError as exc:
            exc.template_line = _template_line(exc)
            if exc.template_line is not None and not isinstance(exc, TemplateRaised):
                exc.args = (f"{self.name} line {exc.template_line}: {exc.args[0]}",)
            raise
        except SecurityError as exc:
            raise self._error(TemplateRefused, f"template refused: {exc}", exc) from None
        except (RecursionError, MemoryError, OverflowError) as exc:
            kind = type(exc).__name__
            raise self._error(TemplateRefused, f"template refused: {kind}: {exc}", exc) from None
        except jinja2.TemplateError as exc:
            raise self._error(ChatTemplateError, f"{type(exc).__name__}: {exc}", exc) from None
        except Exception as exc:  # the template's own bug, e.g. str + None
            raise self._error(ChatTemplateError, f"{type(exc).__name__}: {exc}", exc) from None
        finally:
            _CURRENT.reset(token)
        return "".join(pieces)

    def _error(self, cls: type[ChatTemplateError], message: str, exc: BaseException) -> ChatTemplateError:
        line = _template_line(exc)
        where = f"{self.name} line {line}" if line is not None else self.name
        error = cls(f"{where}: {message}")
        error.template_line = line
        return error

    def render(self, messages, *, add_generation_prompt: bool = False, now=None, **variables) -> str | list[str]:
        """transformers' ``render_jinja_template`` rules around one render (see module docs)."""
        return _render(self, messages, add_generation_prompt=add_generation_prompt, now=now, **variables)


def _template_line(exc: BaseException) -> int | None:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<chat template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _check_messages(messages: Any) -> list:
    if hasattr(messages, "messages"):
        messages = messages.messages
    if isinstance(messages, (str, bytes)) or not isinstance(messages, (list, tuple)):
        raise ChatTemplateError(f"chat: messages must be a list of dicts, got {type(messages).__name__}")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ChatTemplateError(f"chat: message {i} must be a dict with 'role' and 'content', got {type(message).__name__}")
    return list(messages)


def _alias_reasoning(messages: list) -> list:
    """transformers 5 shows ``reasoning_content`` to templates under ``thinking`` too (copies, no mutation)."""
    out = []
    for message in messages:
        if "reasoning_content" in message and "thinking" not in message:
            message = {**message, "thinking": message["reasoning_content"]}
        out.append(message)
    return out


def _render(template: ChatTemplate, messages, *, add_generation_prompt=False, now=None,
            tools=None, documents=None, continue_final_message=False, **variables):
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError(
            "chat: continue_final_message and add_generation_prompt are not compatible: use "
            "continue_final_message to continue the last message, add_generation_prompt to start a new one"
        )
    if tools is not None:
        if not isinstance(tools, (list, tuple)) or not all(isinstance(t, Mapping) for t in tools):
            raise ChatTemplateError("chat: tools must be a list of JSON-schema dicts (labkit does not convert Python functions)")
        tools = list(tools)
    if documents is not None:
        if not isinstance(documents, (list, tuple)) or not all(isinstance(d, Mapping) for d in documents):
            raise ChatTemplateError("chat: documents must be a list of dicts with 'title' and 'text' keys")
    batched = isinstance(messages, (list, tuple)) and len(messages) > 0 and (
        isinstance(messages[0], (list, tuple)) or hasattr(messages[0], "messages")
    )
    conversations = messages if batched else [messages]
    rendered = []
    for conversation in conversations:
        chat = _check_messages(conversation)
        final_text = None
        if continue_final_message:
            chat, final_text = _tag_final_message(chat, continue_final_message, template.source)
        text = template.render_variables(
            {**variables, "messages": _alias_reasoning(chat), "tools": tools, "documents": documents,
             "add_generation_prompt": add_generation_prompt},
            now=now,
        )
        if final_text is not None:
            text = _cut_at_tag(text, final_text)
        rendered.append(text)
    return rendered if batched else rendered[0]


def _tag_final_message(chat: list, continue_final_message: Any, source: str) -> tuple[list, str]:
    if not chat:
        raise ChatTemplateError("chat: continue_final_message is set but there are no messages")
    chat = copy.deepcopy(chat)
    key = continue_final_message if isinstance(continue_final_message, str) else "content"
    final = chat[-1].get(key)
    if final is None:
        raise ChatTemplateError(f'chat: continue_final_message is set but the final message has no "{key}" to continue')
    if key not in source:
        raise ChatTemplateError(f'chat: continue_final_message is set to "{key}" but the template never mentions that field')
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if isinstance(block, dict) and "text" in block:
                final_text = block["text"]
                block["text"] = block["text"] + _CONTINUE_TAG
                return chat, final_text
        raise ChatTemplateError("chat: continue_final_message is set but the final message has no text block to continue")
    if not isinstance(final, str):
        raise ChatTemplateError(f"chat: the final message's {key!r} must be a str or a list of blocks, got {type(final).__name__}")
    chat[-1][key] = final + _CONTINUE_TAG
    return chat, final


def _cut_at_tag(text: str, final_text: str) -> str:
    tag = _CONTINUE_TAG.strip()
    if final_text.strip() not in text or tag not in text:
        raise ChatTemplateError(
            "chat: continue_final_message is set but the final message does not appear in the rendered chat "
            "(the template changes or drops it)"
        )
    at = text.rindex(tag)
    if text[at:at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return text[:at]
    return text[:at].rstrip()  # the template trimmed the tag's trailing space


def render_chat_template(template, messages, *, add_generation_prompt: bool = False, now=None, **variables):
    """Render a conversation with a chat template source, exactly as transformers would.

    ``variables`` become template variables (``bos_token``, ``eos_token``, ``tools``,
    ``documents``, ``enable_thinking``, ...); ``continue_final_message`` follows transformers'
    rules; ``now`` (a datetime, or a callable returning one) fixes ``strftime_now``.
    A list of conversations renders to a list of strings.

    Example: ``render_chat_template(src, [{"role": "user", "content": "hi"}], eos_token="<|im_end|>")``
    """
    compiled = template if isinstance(template, ChatTemplate) else ChatTemplate(template)
    return compiled.render(messages, add_generation_prompt=add_generation_prompt, now=now, **variables)


# ----------------------------------------------------------------------------- finding templates


@dataclass(frozen=True)
class TemplateSet:
    """The chat templates found for a tokenizer: name -> source, and where they came from.

    Example: ``find_chat_templates("data/gguf/ggml-vocab-qwen2.gguf").origin`` -> ``'...gguf: tokenizer.chat_template'``
    """

    templates: dict[str, str]
    origin: str
    origins: dict[str, str] = field(default_factory=dict)

    def pick(self, name: str | None = None, *, tools=None) -> str:
        """transformers' choice: the named one; else ``tool_use`` when tools are given; else ``default``."""
        if name is not None:
            if name in self.templates:
                return self.templates[name]
            raise ChatTemplateError(f"{self.origin}: no chat template named {name!r}; have {', '.join(sorted(self.templates))}")
        if tools is not None and "tool_use" in self.templates:
            return self.templates["tool_use"]
        if "default" in self.templates:
            return self.templates["default"]
        raise ChatTemplateError(
            f"{self.origin}: several chat templates ({', '.join(sorted(self.templates))}) and none is 'default'; "
            "pass chat_template=<name>"
        )


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")  # a leading BOM is not template text
    except OSError as exc:
        raise ChatTemplateError(f"{path}: cannot read chat template ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ChatTemplateError(f"{path}: chat template is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise ChatTemplateError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def _templates_from_field(value: Any, where: str) -> dict[str, str]:
    """``chat_template`` as transformers stores it: a str, or a list of {name, template}."""
    if isinstance(value, str):
        return {"default": value}
    if isinstance(value, list):
        out = {}
        for i, entry in enumerate(value):
            if not (isinstance(entry, Mapping) and isinstance(entry.get("name"), str) and isinstance(entry.get("template"), str)):
                raise ChatTemplateError(f"{where}: chat_template entry {i} must be {{'name': str, 'template': str}}")
            out[entry["name"]] = entry["template"]
        return out
    if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
        return dict(value)
    raise ChatTemplateError(f"{where}: chat_template must be a str or a list of named templates, got {type(value).__name__}")


def _gguf_templates(kv: Mapping[str, Any], where: str) -> dict[str, str]:
    out = {}
    if isinstance(kv.get("tokenizer.chat_template"), str):
        out["default"] = kv["tokenizer.chat_template"]
    prefix = "tokenizer.chat_template."
    for key, value in kv.items():
        if isinstance(key, str) and key.startswith(prefix) and isinstance(value, str):
            out[key[len(prefix):]] = value
    return out


def find_chat_templates(source, explicit=None) -> TemplateSet:
    """Find a tokenizer's chat templates, in transformers' and llama.cpp's order of priority.

    1. ``explicit``: a ``.jinja`` file (or template text) given by the caller;
    2. ``chat_template.jinja`` (plus ``additional_chat_templates/*.jinja``), then
       ``chat_template.json``, beside the tokenizer;
    3. ``tokenizer_config.json``'s ``chat_template`` (a str or a list of named templates);
    4. the GGUF ``tokenizer.chat_template`` (and ``tokenizer.chat_template.<name>``) keys;
    5. else :class:`ChatTemplateError` (no silent fallback format).

    ``source`` is a path (file or folder), a VocabData or a Tokenizer.
    Example: ``find_chat_templates(labkit.paths.bundled_path("qwen2")).pick()[:20]``
    """
    vocab: VocabData | None = None
    if hasattr(source, "vocab") and isinstance(getattr(source, "vocab"), VocabData):
        vocab = source.vocab
    elif isinstance(source, VocabData):
        vocab = source
    path = Path(vocab.source) if vocab is not None else Path(os.fspath(source)) if isinstance(source, (str, os.PathLike)) else None

    if explicit is not None:
        if isinstance(explicit, os.PathLike) or (isinstance(explicit, str) and explicit.endswith(".jinja") and "\n" not in explicit):
            p = Path(explicit)
            if not p.is_file():
                raise ChatTemplateError(f"{p}: explicit chat template file not found")
            return TemplateSet({"default": _read_text(p)}, str(p))
        if isinstance(explicit, str):
            return TemplateSet({"default": explicit}, "explicit template text")
        raise ChatTemplateError(f"chat: explicit template must be a .jinja path or template text, got {type(explicit).__name__}")

    folder = None
    if path is not None:
        folder = path if path.is_dir() else path.parent
    if folder is not None and folder.is_dir():
        found = _templates_beside(folder)
        if found is not None:
            return found
    if vocab is not None and vocab.format != "gguf" and vocab.metadata.get("chat_templates"):
        named = vocab.metadata["chat_templates"]  # what the format's reader found
        return TemplateSet(dict(named), str(vocab.metadata.get("chat_template_source", vocab.source)))
    if vocab is not None and vocab.format == "gguf":
        templates = _gguf_templates(vocab.metadata, vocab.source)
        if vocab.chat_template and "default" not in templates:
            templates["default"] = vocab.chat_template
        if templates:
            return TemplateSet(templates, f"{vocab.source}: tokenizer.chat_template")
    elif vocab is None and path is not None and path.is_file() and path.suffix == ".gguf":
        from labkit.formats.gguf import read_gguf_kv

        templates = _gguf_templates(read_gguf_kv(path), str(path))
        if templates:
            return TemplateSet(templates, f"{path}: tokenizer.chat_template")
    if vocab is not None and vocab.chat_template:  # whatever the format's reader found
        return TemplateSet({"default": vocab.chat_template}, f"{vocab.source}: chat_template")
    where = str(path) if path is not None else repr(source)
    raise ChatTemplateError(
        f"{where}: no chat template found (looked for an explicit .jinja file, chat_template.jinja, "
        "chat_template.json, tokenizer_config.json 'chat_template', GGUF 'tokenizer.chat_template'); "
        "pass chat_template=... or fallback='chatml' to use a generic format on purpose"
    )


def _templates_beside(folder: Path) -> TemplateSet | None:
    jinja_file = folder / "chat_template.jinja"
    if jinja_file.is_file():
        templates = {"default": _read_text(jinja_file)}
        extra = folder / "additional_chat_templates"
        if extra.is_dir():
            for p in sorted(extra.glob("*.jinja")):
                templates[p.stem] = _read_text(p)
        return TemplateSet(templates, str(jinja_file))
    json_file = folder / "chat_template.json"
    if json_file.is_file():
        data = _read_json(json_file)
        if not isinstance(data, Mapping) or "chat_template" not in data:
            raise ChatTemplateError(f"{json_file}: expected an object with a 'chat_template' key")
        return TemplateSet(_templates_from_field(data["chat_template"], str(json_file)), str(json_file))
    config = folder / "tokenizer_config.json"
    if config.is_file():
        data = _read_json(config)
        if isinstance(data, Mapping) and data.get("chat_template") is not None:
            return TemplateSet(_templates_from_field(data["chat_template"], str(config)), f"{config}: chat_template")
    return None


def load_chat_template(source, explicit=None, *, name: str | None = None, tools=None) -> str:
    """The chat template text a tokenizer would use (see :func:`find_chat_templates`).

    Example: ``load_chat_template("data/gguf/ggml-vocab-qwen2.gguf").startswith("{% for message")``
    """
    return find_chat_templates(source, explicit).pick(name, tools=tools)


def chat_template_of(tok) -> str | None:
    """What ``tok.chat_template`` shows: an override set on the tokenizer (template text or a
    ``.jinja`` path), else the default template by the priority above, else None.

    Example: ``chat_template_of(labkit.load("gpt2"))`` -> ``None``
    """
    override = getattr(tok, "_chat_template_override", None)
    try:
        found = find_chat_templates(tok, explicit=override) if override else find_chat_templates(tok)
    except ChatTemplateError:
        if override:
            raise
        return None
    return found.templates.get("default")


# A generic format, used only when a caller asks for it by name (never silently).
FALLBACK_TEMPLATES = {
    "chatml": (
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
}


def _looks_like_template(text: str) -> bool:
    return "{%" in text or "{{" in text


def select_chat_template(tok, chat_template: str | os.PathLike | None = None, *, tools=None, fallback: str | None = None) -> str:
    """The template text for ``tok.apply_chat_template``: an explicit override, a template
    name or text passed in, else the tokenizer's own by :func:`find_chat_templates`.

    Example: ``select_chat_template(labkit.load("qwen2"))[:12]``
    """
    override = getattr(tok, "_chat_template_override", None)
    if chat_template is not None and (isinstance(chat_template, os.PathLike) or
                                      (isinstance(chat_template, str) and _looks_like_template(chat_template))):
        return find_chat_templates(tok, explicit=chat_template).pick()
    if chat_template is not None and isinstance(chat_template, str) and chat_template.endswith(".jinja") and Path(chat_template).is_file():
        return find_chat_templates(tok, explicit=chat_template).pick()
    try:
        found = find_chat_templates(tok, explicit=override) if override is not None else find_chat_templates(tok)
    except ChatTemplateError:
        if fallback is None:
            raise
        if fallback not in FALLBACK_TEMPLATES:
            raise ChatTemplateError(f"chat: unknown fallback {fallback!r}; have {', '.join(FALLBACK_TEMPLATES)}") from None
        return FALLBACK_TEMPLATES[fallback]
    return found.pick(chat_template, tools=tools)


def apply_chat_template(tok, messages, *, add_generation_prompt: bool = False, chat_template=None,
                        tools=None, documents=None, now=None, fallback: str | None = None,
                        tokenize: bool = False, **kwargs):
    """``tok.apply_chat_template``: the tokenizer's template, its special tokens as variables
    (``bos_token``, ``eos_token``, ... overridable by kwargs), transformers' rules.

    ``tokenize=True`` returns ids instead (special tokens parsed, nothing added), as transformers does.
    Example: ``labkit.load("qwen2").apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True)``
    """
    source = select_chat_template(tok, chat_template, tools=tools, fallback=fallback)
    variables = {**tok.special_tokens.named(), **kwargs}
    name = Path(str(tok.vocab.source)).name if hasattr(tok, "vocab") else "chat template"
    text = ChatTemplate(source, name=f"{name} chat template").render(
        messages, add_generation_prompt=add_generation_prompt, now=now, tools=tools, documents=documents, **variables
    )
    if tokenize:
        if isinstance(text, list):
            return [encode_rendered(tok, t).ids for t in text]
        return encode_rendered(tok, text).ids
    return text


# ----------------------------------------------------------------------------- encoding a render


def duplicate_special_warnings(tok, ids: list[int]) -> list[str]:
    """llama.cpp's warnings for a prompt that starts with BOS twice or ends with EOS twice.

    Example: ``duplicate_special_warnings(tok, [1, 1, 15043])`` -> ``['... 2 BOS tokens ...']``
    """
    specials = tok.special_tokens
    out = []
    if specials.bos_id is not None and len(ids) >= 2 and ids[0] == ids[1] == specials.bos_id:
        out.append(
            f"the prompt starts with 2 BOS tokens ({specials.bos!r}): the template already writes BOS and "
            "add_special_tokens=True added another; render then encode with add_special_tokens=False"
        )
    if specials.add_eos and specials.eos_id is not None and len(ids) >= 2 and ids[-1] == ids[-2] == specials.eos_id:
        out.append(
            f"the prompt ends with 2 EOS tokens ({specials.eos!r}): the template already writes EOS and "
            "add_special_tokens=True added another"
        )
    return out


def encode_rendered(tok, text: str, *, add_special_tokens: bool = False) -> Encoding:
    """Encode a rendered conversation: special-token spellings become single ids.

    Warns (:class:`DuplicateSpecialTokenWarning`) when ``add_special_tokens`` doubles a BOS the
    template already wrote, as llama.cpp does.
    Example: ``encode_rendered(tok, "<|im_start|>user\\nhi<|im_end|>\\n").ids[0]`` -> ``151644``
    """
    encoding = tok.encode(text, add_special_tokens=add_special_tokens, parse_special=True)
    if add_special_tokens:
        for message in duplicate_special_warnings(tok, encoding.ids):
            warnings.warn(message, DuplicateSpecialTokenWarning, stacklevel=2)
    return encoding


def encode_chat(tok, messages, *, add_generation_prompt: bool = False, add_special_tokens: bool = False, **kwargs) -> Encoding:
    """Render with ``tok.apply_chat_template`` and encode the result with :func:`encode_rendered`.

    Example: ``encode_chat(labkit.load("qwen2"), [{"role": "user", "content": "hi"}]).tokens[0]`` -> ``'<|im_start|>'``
    """
    text = tok.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, **kwargs)
    if not isinstance(text, str):
        raise ChatTemplateError("encode_chat() takes one conversation, not a batch")
    return encode_rendered(tok, text, add_special_tokens=add_special_tokens)


# ----------------------------------------------------------------------------- where generation ends

# Spellings llama.cpp treats as end-of-generation wherever they are in the vocabulary, on top
# of the file's eos/eot/eom ids (src/llama-vocab.cpp, "auto-detect special tokens by text").
END_OF_TURN_SPELLINGS = (
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
)


def end_of_generation_ids(tok) -> tuple[int, ...]:
    """Ids that end generation: the file's EOS ids plus every known end-of-turn spelling the
    vocabulary holds as one token (llama.cpp's rule), in id order.

    Example: ``end_of_generation_ids(labkit.load("qwen2"))`` -> ``(151643, 151645)``
    """
    ids = set(tok.special_tokens.eos_ids)
    if tok.special_tokens.eos_id is not None:
        ids.add(tok.special_tokens.eos_id)
    for spelling in END_OF_TURN_SPELLINGS:
        token_id = tok.token_to_id(spelling)
        if token_id is not None:
            ids.add(token_id)
    return tuple(sorted(ids))
