"""Chat templates are untrusted code: Python internals, mutation and resource exhaustion are
refused with a LabkitError (quickly, never a hang), and the renderer keeps working after."""
from __future__ import annotations

import copy
import threading

import jinja2.ext
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

import labkit
from labkit import chat

MESSAGES = [{"role": "user", "content": "hi", "meta": {"k": [1, 2]}}]
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]

INTERNALS = {
    "__class__": "{{ ''.__class__ }}",
    "__mro__": "{{ messages.__mro__ }}",
    "__subclasses__": "{{ ().__class__.__base__.__subclasses__() }}",
    "__globals__ of a global": "{{ raise_exception.__globals__ }}",
    "__globals__ via cycler": "{{ cycler.__init__.__globals__ }}",
    "__builtins__": "{{ strftime_now.__globals__['__builtins__'] }}",
    "__class__ by subscript": "{{ messages[0]['__class__'] }}",
    "attr filter": "{{ messages|attr('__class__') }}",
    "map(attribute=)": "{{ messages|map(attribute='__class__')|list }}",
    "format field": "{{ '{0.__class__}'.format(messages) }}",
    "namespace dunder": "{% set ns = namespace() %}{{ ns.__init__ }}",
    "loop internals": "{% for m in messages %}{{ loop.__class__ }}{% endfor %}",
    "generator frame": "{{ (messages|select).gi_frame }}",
    "template context": "{{ self._TemplateReference__context }}",
}
MUTATION = {
    "list.append": "{{ messages.append({'role': 'x'}) }}",
    "list.pop": "{% set x = messages.pop() %}",
    "list.sort": "{{ messages.sort() }}",
    "dict.update": "{{ messages[0].update({'role': 'x'}) }}",
    "dict.clear test": "{% if messages[0].clear %}x{% endif %}",
    "nested dict.setdefault": "{{ messages[0].meta.setdefault('k', 0) }}",
    "nested list.extend": "{{ messages[0].meta.k.extend([3]) }}",
    "tools dict.pop": "{{ tools[0].pop('type') }}",
}
EXHAUSTION = {
    "huge range": "{% for i in range(10**9) %}{% endfor %}",
    "nested ranges": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "nested list loops": "{% set r = range(100000)|list %}{% for a in r %}{% for b in r %}{% endfor %}{% endfor %}",
    "text in nested loops": "{% for a in range(100000) %}{% for b in range(100000) %}xxxxxxxx{% endfor %}{% endfor %}",
    "macro recursion": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "recursive loop": "{% for m in [[1]] recursive %}{{ loop([m]) }}{% endfor %}",
    "caller recursion": "{% macro f() %}{{ caller() }}{% endmacro %}{% macro g() %}{% call f() %}{{ g() }}{% endcall %}{% endmacro %}{{ g() }}",
    "deep parse": "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
    "string repeat": "{{ 'x' * 10**10 }}",
    "bytes repeat": "{{ 'x'.encode() * 10**10 }}",
    "bytes expandtabs": "{{ ('\t' * 1000000).encode().expandtabs(100000) }}",
    "bytes replace": "{% set b = ('x' * 1000000).encode() %}{{ b.replace(''.encode(), b) }}",
    "bytes printf": "{{ 'x%*s'.encode() % (10**10, 'x'.encode()) }}",
    "list repeat": "{{ [1] * 10**9 }}",
    "power": "{{ 2 ** (10**9) }}",
    "squaring loop": "{% set ns = namespace(x=3) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
    "doubling with ~": "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "doubling with +": "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "shared list printed": "{% set a = ['x' * 100000] * 100000 %}{{ a }}",
    "shared list joined": "{% set a = ['x' * 100000] * 100000 %}{{ a|join }}",
    "shared list str.join": "{% set a = ['x' * 100000] * 100000 %}{{ ''.join(a) }}",
    "shared list tojson": "{% set a = ['x' * 100000] * 100000 %}{{ a|tojson }}",
    "shared dict printed": "{{ dict.fromkeys(range(100000), 'x' * 1000000) }}",
    "sum of lists": "{% set a = [range(100000)|list] * 100000 %}{{ a|sum(start=[])|length }}",
    "replace amplifier": "{% set s = 'x' * 1000000 %}{{ s.replace('', s) }}",
    "replace filter": "{% set s = 'x' * 1000000 %}{{ s|replace('x', s) }}",
    "translate": "{% set s = 'a' * 1000000 %}{{ s.translate({97: s}) }}",
    "expandtabs": "{% set s = '\t' * 1000000 %}{{ s.expandtabs(100000) }}",
    "center": "{{ 'x'.center(10**10) }}",
    "center filter": "{{ 'x'|center(10**10) }}",
    "format width": "{{ '{:>9999999999}'.format('x') }}",
    "format nested width": "{{ '{:>{w}}'.format('x', w=10**10) }}",
    "printf width": "{{ '%9999999999s' % 'x' }}",
    "printf star width": "{{ '%*s' % (10**10, 'x') }}",
    "printf star precision": "{{ '%.*f' % (10**10, 1.5) }}",
    "format filter star": "{{ '%*s'|format(10**10, 'x') }}",
    "format filter width": "{{ '%9999999999s'|format('x') }}",
    "indent": "{% set s = '\n' * 1000000 %}{{ s|indent(100000) }}",
    "wordwrap": "{% set s = 'a ' * 1000000 %}{{ s|wordwrap(1, wrapstring='x' * 1000000) }}",
    "tojson indent": "{{ messages|tojson(indent=10**9) }}",
    "lipsum": "{{ lipsum(100000, max=100000) }}",
    "set block": "{% set x %}{% for i in range(100000) %}{{ 'y' * 1000000 }}{% endfor %}{% endset %}{{ x|length }}",
}
PAYLOADS = {**{f"internals: {k}": v for k, v in INTERNALS.items()},
            **{f"mutation: {k}": v for k, v in MUTATION.items()},
            **{f"exhaustion: {k}": v for k, v in EXHAUSTION.items()}}


def run_guarded(source: str, messages, tools) -> BaseException | str:
    """Render in a thread so that a regression shows up as a failed test, not a hung run."""
    box: list = []

    def target():
        try:
            box.append(chat.render_chat_template(source, messages, tools=tools))
        except BaseException as exc:  # noqa: BLE001 - the test inspects what escaped
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the renderer hung on this payload"
    return box[0]


@pytest.mark.parametrize("source", list(PAYLOADS.values()), ids=list(PAYLOADS))
def test_payload_is_refused_and_the_renderer_survives(source):
    messages, tools = copy.deepcopy(MESSAGES), copy.deepcopy(TOOLS)
    outcome = run_guarded(source, messages, tools)
    assert isinstance(outcome, chat.TemplateRefused), repr(outcome)
    assert isinstance(outcome, labkit.LabkitError)
    assert "refused" in str(outcome)
    assert messages == MESSAGES and tools == TOOLS  # nothing passed in was changed
    # the renderer is still healthy afterwards
    assert chat.render_chat_template("{{ messages[0].content }}!", messages) == "hi!"


def plain_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.globals["raise_exception"] = lambda message: None
    return env


@pytest.mark.parametrize("name", ["__globals__ of a global", "__class__ by subscript", "format field"])
def test_plain_sandbox_is_silent_where_labkit_refuses(name):
    # the fact from REFERENCES.md: jinja's sandbox renders an unsafe attribute as ''
    assert plain_env().from_string(INTERNALS[name]).render(messages=MESSAGES) == ""
    with pytest.raises(chat.TemplateRefused):
        chat.render_chat_template(INTERNALS[name], MESSAGES)


def test_plain_sandbox_would_let_mutating_methods_be_probed_silently():
    assert plain_env().from_string(MUTATION["dict.clear test"]).render(messages=MESSAGES) == ""
    with pytest.raises(chat.TemplateRefused, match="'clear'"):
        chat.render_chat_template(MUTATION["dict.clear test"], MESSAGES)


def test_ordinary_errors_are_labkit_errors_too():
    for source in ("{{ nothing() }}", "{% include 'other.jinja' %}", "{{ 10 ** 5000 }}", "{{ 1 / 0 }}"):
        with pytest.raises(labkit.LabkitError):
            chat.render_chat_template(source, MESSAGES)


def test_limits_are_per_template_and_checked():
    source = "{% for i in range(1000) %}.{% endfor %}"
    assert chat.ChatTemplate(source).render([]) == "." * 1000
    tight = chat.ChatTemplate(source, limits=chat.RenderLimits(max_steps=500))
    with pytest.raises(chat.TemplateRefused, match="500 steps"):
        tight.render([])
    small = chat.ChatTemplate(source, limits=chat.RenderLimits(max_output=999))
    with pytest.raises(chat.TemplateRefused, match="output passed 999"):
        small.render([])


def test_legitimate_large_values_still_render():
    # big but bounded work is allowed: a 1 MB message, a 100k-item loop, a 64-deep macro chain
    big = "word " * 200_000
    assert chat.render_chat_template("{{ messages[0].content|length }}", [{"role": "user", "content": big}]) == "1000000"
    assert chat.render_chat_template("{% for i in range(100000) %}{% endfor %}ok", []) == "ok"
    source = "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% else %}bottom{% endif %}{% endmacro %}{{ f(40) }}"
    assert chat.render_chat_template(source, []) == "bottom"


FRAGMENTS = list(INTERNALS.values()) + list(MUTATION.values()) + list(EXHAUSTION.values()) + [
    "{{ messages[0].content }}", "{% for m in messages %}{{ m.role }}{% endfor %}", "{% if tools %}T{% endif %}",
    "{{ ", " }}", "{% ", " %}", "{% endfor %}", "{{ x|tojson }}", "text", "{% set x = 1 %}", "{{ raise_exception('r') }}",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3))
def test_fuzzed_combinations_never_escape_as_other_errors(parts):
    messages = copy.deepcopy(MESSAGES)
    outcome = run_guarded("".join(parts), messages, None)
    assert isinstance(outcome, (str, labkit.LabkitError)), repr(outcome)
    assert messages == MESSAGES
