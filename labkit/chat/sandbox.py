"""The sandbox chat templates run in: jinja2's immutable sandbox, made loud and budgeted.

A chat template is a small program shipped in a downloaded file, so it is untrusted. The
renderer is jinja2's ``ImmutableSandboxedEnvironment`` (``trim_blocks``, ``lstrip_blocks``,
``loopcontrols``; ``tojson``, ``raise_exception`` and ``strftime_now`` as transformers
defines them) with four additions: an unsafe attribute or a mutating method is refused with
:class:`TemplateRefused` instead of rendering as an empty string; every loop, call, filter and
operator is charged to a per-render :class:`~labkit.chat.budget.Budget` (steps, call depth,
string and output sizes, wall clock); operations that multiply sizes or walk long inputs are
checked before they run (``labkit/chat/checks.py``); and nesting deeper than Python can
compile is refused before compiling. Every failure is a :class:`labkit.LabkitError`.
Introduced in notebook ``07_special_tokens_chat_templates``.

Example:
    >>> from labkit.chat.sandbox import GuardedEnvironment
    >>> GuardedEnvironment().compile_guarded("{{ x }}").render(x=1)
    '1'
"""
from __future__ import annotations

import json
import types
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.exceptions import SecurityError, TemplateSyntaxError
from jinja2.runtime import Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from labkit.chat.budget import CURRENT, DEFAULT_LIMITS, Budget, current_budget
from labkit.chat.checks import STRINGIFYING, check_filter, check_str_method, format_bound, printf_bound
from labkit.chat.errors import ChatTemplateError, TemplateRaised, TemplateRefused

# ----------------------------------------------------------------------------- filters and globals


def _tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False) -> str:
    """transformers' ``tojson``: ``json.dumps`` without HTML escaping, with its arguments."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: Any = "") -> None:
    current_budget().flat(message, "raise_exception() message")
    raise TemplateRaised(str(message))


def _strftime_now(fmt: Any) -> str:
    if not isinstance(fmt, str):
        raise ChatTemplateError(f"chat template: strftime_now() takes a format string, got {type(fmt).__name__}")
    current_budget().bound(len(fmt) * 16, "strftime_now()")
    now = current_budget().now
    if now is None:
        now = datetime.now()
    elif callable(now):
        now = now()
    return now.strftime(fmt)


def _lipsum_guard(func: Callable) -> Callable:
    def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002
        budget = current_budget()
        budget.step()
        if not all(isinstance(v, int) for v in (n, min, max)) or n * max > 100_000:
            raise TemplateRefused(f"template refused: lipsum({n}, max={max}) is too large")
        return func(n, html, min, max)

    return lipsum


def _guard_filter(name: str, func: Callable) -> Callable:
    pass_arg = getattr(func, "jinja_pass_arg", None)
    offset = 0 if pass_arg is None else 1  # context / eval_ctx / environment comes first

    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = current_budget()
        budget.step()
        if len(args) > offset:
            value = args[offset]
            if name in STRINGIFYING and name not in ("join", "tojson"):
                budget.flat(value, f"filter {name!r}")
            new_value = check_filter(budget, name, value, args[offset + 1:], kwargs)
            if new_value is not value:
                args = (*args[:offset], new_value, *args[offset + 1:])
        return budget.result(func(*args, **kwargs), f"filter {name!r}", args)

    guarded.__name__ = getattr(func, "__name__", name)
    if pass_arg is not None:
        guarded.jinja_pass_arg = pass_arg  # type: ignore[attr-defined]
    return guarded


@jinja2.pass_context
def _charge_loop(context: Any, iterable: Any) -> Any:
    """Wrapped around every ``for`` iterable: charge one step per item."""
    budget = current_budget()
    try:
        size = len(iterable)
    except TypeError:
        return _counted(iterable, budget)
    budget.step(size)  # up front: the loop body itself needs no hook
    return iterable


def _counted(iterable: Any, budget: Budget):
    for item in iterable:
        budget.step()
        yield item


@jinja2.pass_context
def _charge_output(context: Any, value: Any) -> Any:
    """Wrapped around every ``{{ expression }}``: count what it will print."""
    budget = current_budget()
    budget.step()
    size = budget.flat(value, "an output expression")
    budget.output += size
    if budget.output > budget.limits.max_output:
        raise TemplateRefused(f"template refused: output passed {budget.limits.max_output:,} chars")
    return value


@jinja2.pass_context
def _charge_text(context: Any, size: int) -> str:
    """Inserted into every output statement that prints template text: count that text."""
    budget = current_budget()
    budget.step()
    budget.output += size
    if budget.output > budget.limits.max_output:
        raise TemplateRefused(f"template refused: output passed {budget.limits.max_output:,} chars")
    return ""


@jinja2.pass_context
def _checked_concat(context: Any, parts: list) -> str:
    """Replaces ``a ~ b ~ c``: the total size is checked before anything is stringified."""
    budget = current_budget()
    budget.step()
    budget.bound(sum(budget.flat_size(p) for p in parts), "the ~ operator")
    return budget.result("".join(map(str, parts)), "the ~ operator", tuple(parts))




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

    Example:
        >>> from labkit.chat.sandbox import GuardedEnvironment
        >>> GuardedEnvironment().compile_guarded("{{ x }}").render(x=1)
        '1'
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
        budget = current_budget()
        budget.step()
        if isinstance(__obj, (types.BuiltinMethodType, types.MethodType)) and isinstance(
            getattr(__obj, "__self__", None), (str, bytes)
        ):
            args = check_str_method(budget, __obj, args, kwargs)
        budget.depth += 1
        try:
            if budget.depth > budget.limits.max_depth:
                raise TemplateRefused(f"template refused: calls nested deeper than {budget.limits.max_depth}")
            result = super().call(__context, __obj, *args, **kwargs)
        except SecurityError as exc:
            raise TemplateRefused(f"template refused: {exc}") from None
        finally:
            budget.depth -= 1
        return budget.result(result, f"call of {getattr(__obj, '__name__', type(__obj).__name__)}",
                             (*args, *kwargs.values(), getattr(__obj, "__self__", None)))

    def call_binop(self, context, operator, left, right):
        budget = current_budget()
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
        elif operator == "+":
            for kind in ((str, bytes), (list, tuple)):
                if isinstance(left, kind) and isinstance(right, kind):
                    if kind[0] is str:
                        budget.bound(len(left) + len(right), what)
                    elif len(left) + len(right) > budget.limits.max_items:
                        raise TemplateRefused(f"template refused: {what} would build {len(left) + len(right):,} items")
        elif operator == "%" and isinstance(left, (str, bytes)):
            printf_bound(budget, left if isinstance(left, str) else left.decode("latin-1"), right, what)
        return budget.result(self.binop_table[operator](left, right), what, (left, right))

    def wrap_str_format(self, value):
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        fmt = value.__self__
        is_map = value.__name__ == "format_map"

        def checked_format(*args, **kwargs):
            budget = current_budget()
            if is_map and args and isinstance(args[0], Mapping):
                format_bound(budget, fmt, (), args[0], "str.format_map()")
            else:
                format_bound(budget, fmt, args, kwargs, "str.format()")
            return wrapper(*args, **kwargs)

        return checked_format

    # -- compile with the accounting hooks woven into the syntax tree ---------
    def compile_guarded(self, source: str, name: str = "<chat template>") -> jinja2.Template:
        """Parse, check the nesting, insert the budget hooks, compile. Syntax errors become
        ChatTemplateError; a source too long or nested too deep is refused before compiling."""
        if not isinstance(source, str):
            raise ChatTemplateError(f"chat template must be a str, got {type(source).__name__}")
        limits = DEFAULT_LIMITS
        if len(source) > limits.max_source:
            raise TemplateRefused(f"template refused: {len(source):,} chars of source (limit {limits.max_source:,})")
        token = CURRENT.set(Budget(limits, None))
        try:
            tree = self.parse(source, filename=name)
            check_nesting(tree, limits.max_nesting)
            _weave_hooks(tree)
            code = self.compile(tree, filename=name)
        except TemplateSyntaxError as exc:
            raise ChatTemplateError(f"line {exc.lineno}: syntax error: {exc.message}") from None
        except (RecursionError, MemoryError, SyntaxError) as exc:  # a backstop: check_nesting runs first
            raise TemplateRefused(f"template refused: too complex to compile ({type(exc).__name__})") from None
        finally:
            CURRENT.reset(token)
        return self.template_class.from_code(self, code, self.make_globals(None))


# statements that open a block in the Python code jinja generates (Python allows 20 nested loops
# and 100 indentation levels; a real chat template nests 6 at most)
_BLOCKS = (nodes.For, nodes.If, nodes.Macro, nodes.CallBlock, nodes.FilterBlock, nodes.With, nodes.Scope,
           nodes.ScopedEvalContextModifier, nodes.Block)


def check_nesting(tree: nodes.Node, limit: int) -> None:
    """Refuse a template whose blocks (for, if, macro, call, filter, with) nest deeper than ``limit``.

    Walks the tree with an explicit stack, so a deep tree cannot exhaust Python's recursion.

    Example:
        >>> tree = GuardedEnvironment().parse("{% if a %}{% for b in c %}x{% endfor %}{% endif %}")
        >>> check_nesting(tree, 16)
        >>> check_nesting(tree, 1)
        Traceback (most recent call last):
        labkit.chat.errors.TemplateRefused: template refused: line 1: blocks nested 2 deep (limit 1)
    """
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, _BLOCKS):
            depth += 1
            if depth > limit:
                raise TemplateRefused(
                    f"template refused: line {node.lineno}: blocks nested {depth} deep (limit {limit})"
                )
        stack.extend((child, depth) for child in node.iter_child_nodes())


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
def compiled_template(source: str) -> jinja2.Template:
    """``source`` compiled in the shared guarded environment (the 64 most recent are kept).

    Example:
        >>> from labkit.chat.sandbox import compiled_template
        >>> compiled_template("{{ x }}").render(x=1)
        '1'
    """
    return _environment().compile_guarded(source)


