"""Hostile chat templates and template files (issue 14): each reproduction runs in a child
process under a 500 MB address-space cap and must end in a LabkitError (or the correct
result) within 2 s, refused before the work it guards (never by running out of memory)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from labkit.paths import data_path

MEMORY_CAP = 500 * 2**20
# CPU time of the probe itself: a bound on a runaway (work done before its limit is checked
# runs for minutes), not a timing assertion; the probes take well under a second
SECONDS = 10.0
# the child: cap memory, import, then time only the probe itself (start-up varies on a loaded machine)
CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
    import labkit, labkit.chat
    probe = json.loads(sys.argv[1])
    started = time.perf_counter()
    try:
        if probe["kind"] == "template":
            result = labkit.render_chat_template(probe["source"], [{{"role": "user", "content": "hi"}}])
        else:
            result = labkit.load(probe["path"]).chat_template
        outcome = {{"outcome": "ok", "result": result if isinstance(result, str) and len(result) < 200 else repr(result)[:200]}}
    except labkit.LabkitError as exc:
        outcome = {{"outcome": "LabkitError", "type": type(exc).__name__, "message": str(exc)[:300]}}
    except BaseException as exc:
        outcome = {{"outcome": "escaped", "type": type(exc).__name__, "message": str(exc)[:300]}}
    outcome["seconds"] = time.perf_counter() - started
    print(json.dumps(outcome))
""").format(cap=MEMORY_CAP)


def run_capped(probe: dict) -> dict:
    """Run one probe in a child under the memory cap; a hang is killed after 30 s (a failure)."""
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(probe)], capture_output=True, text=True,
                              timeout=30, env={**os.environ, "PYTHONHASHSEED": "0"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"probe still running after 30 s: {probe}")
    assert done.returncode == 0, f"child died ({done.returncode}): {done.stderr[-500:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_refused(outcome: dict, *fragments: str) -> None:
    assert outcome["outcome"] == "LabkitError", outcome
    assert "MemoryError" not in outcome["message"], outcome  # refused before allocating, not after
    for fragment in fragments:
        assert fragment in outcome["message"], outcome
    assert outcome["seconds"] < SECONDS, outcome


def nested(open_tag: str, close_tag: str, depth: int) -> str:
    return open_tag * depth + "x" + close_tag * depth


# (name, template source, a fragment the refusal names) -- issue 14's list, then neighbours
HOSTILE_TEMPLATES = [
    ("21 nested for", nested("{% for a in [1] %}", "{% endfor %}", 21), "nested"),
    ("101 nested if", nested("{% if true %}", "{% endif %}", 101), "nested"),
    ("110 nested macros", "".join(f"{{% macro m{i}() %}}" for i in range(110)) + "x" + "{% endmacro %}" * 110, "nested"),
    ("wordwrap(1) on 8M chars", "{{ ('a'*8000000)|wordwrap(1) }}", "wordwrap"),
    ("wordwrap on 8M chars", "{{ ('a'*8000000)|wordwrap }}", "wordwrap"),
    ("groupby on 8M chars", "{{ ('ab'*4000000)|groupby('x') }}", "groupby"),
    ("sort on 8M chars", "{{ ('ab'*4000000)|sort }}", "sort"),
    ("batch chain", "{{ ('ab'*4000000)|batch(1)|batch(1)|batch(1)|batch(1)|list|length }}", "batch"),
    ("tojson separators", "{{ messages|tojson(separators=(','*100000, ':')) }}", "separator"),
    ("string multiplication", "{{ 'ab'*100000000 }}", "*"),
    ("list multiplication", "{{ ([0]*100000000)|length }}", "*"),
    ("string addition", "{% set s = 'a'*8000000 %}{{ (s + s)|length }}", "+"),
    ("title on 8M chars", "{{ ('ab '*2600000)|title|length }}", "title"),
    ("striptags on 8M chars", "{{ ('<a>b'*2000000)|striptags|length }}", "striptags"),
    ("wordcount on 8M chars", "{{ ('ab '*2600000)|wordcount }}", "wordcount"),
    ("indent on 8M chars", "{{ ('a\\n'*4000000)|indent(1)|length }}", "indent"),
    ("urlize on 8M chars", "{{ ('www.a.com '*800000)|urlize|length }}", "urlize"),
    ("escape of 8M ampersands", "{{ ('&'*8000000)|e|length }}", "'e'"),
    ("split into 4M words", "{{ ('a '*4000000).split()|length }}", "split"),
    ("splitlines into 8M lines", "{{ ('\\n'*8000000).splitlines()|length }}", "splitlines"),
    ("unique on 8M chars", "{{ ('ab'*4000000)|unique|list|length }}", "unique"),
    ("map over 8M chars", "{{ ('ab'*4000000)|map('upper')|list|length }}", "map"),
    ("sort by attribute, 40k items", "{{ ('ab'*20000)|sort(attribute='x')|length }}", "sort"),
    ("center width", "{{ 'a'|center(10000000) }}", "center"),
    ("deep expression", "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", ""),
    ("sixty 7M-char strings kept in a list",
     "{% set s = '\U0001F600'*7000000 %}{% set l = [" + ", ".join(f"s ~ {i}" for i in range(60)) + "] %}{{ l|length }}",
     "has built"),
    ("join of a huge generator", "{{ ('ab'*4000000)|select|join(',')|length }}", "select"),
]


@pytest.mark.parametrize("name,source,fragment", HOSTILE_TEMPLATES, ids=[t[0] for t in HOSTILE_TEMPLATES])
def test_hostile_template_is_refused_in_time(name, source, fragment):
    assert_refused(run_capped({"kind": "template", "source": source}), fragment)


# work just inside the limits still gives the right answer in time
WITHIN_LIMITS = [
    ("wordwrap(1) on 20k chars", "{{ ('a'*20000)|wordwrap(1)|length }}", str(20000 * 2 - 1)),
    ("sort of 40k chars", "{{ ('ba'*20000)|sort|first }}", "a"),
    ("16 nested for", nested("{% for a in [1] %}", "{% endfor %}", 16), "x"),
    ("tojson with short separators", "{{ [1, 2]|tojson(separators=(',', ':')) }}", "[1,2]"),
    ("an 8M-char string", "{{ ('ab'*4000000)|length }}", "8000000"),
]


@pytest.mark.parametrize("name,source,expected", WITHIN_LIMITS, ids=[t[0] for t in WITHIN_LIMITS])
def test_work_within_the_limits_renders(name, source, expected):
    outcome = run_capped({"kind": "template", "source": source})
    assert outcome["outcome"] == "ok" and outcome["result"] == expected, outcome
    assert outcome["seconds"] < SECONDS, outcome


# ----------------------------------------------------------------------------- template files


@pytest.fixture
def model_folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copyfile(data_path("hf/all-MiniLM-L6-v2/tokenizer.json"), folder / "tokenizer.json")
    (folder / "chat_template.jinja").write_text("{{ 'default' }}", encoding="utf-8")
    (folder / "additional_chat_templates").mkdir()
    return folder


def test_additional_template_as_a_fifo_is_refused(model_folder):
    os.mkfifo(model_folder / "additional_chat_templates" / "x.jinja")
    assert_refused(run_capped({"kind": "file", "path": str(model_folder)}), "x.jinja", "regular file")


def test_additional_template_linked_to_dev_zero_is_refused(model_folder):
    os.symlink("/dev/zero", model_folder / "additional_chat_templates" / "x.jinja")
    assert_refused(run_capped({"kind": "file", "path": str(model_folder)}), "x.jinja", "regular file")


def test_chat_template_jinja_as_a_fifo_is_refused(model_folder):
    (model_folder / "chat_template.jinja").unlink()
    os.mkfifo(model_folder / "chat_template.jinja")
    assert_refused(run_capped({"kind": "file", "path": str(model_folder)}), "chat_template.jinja", "regular file")


def test_oversized_template_file_is_refused_before_reading(model_folder):
    with open(model_folder / "additional_chat_templates" / "big.jinja", "wb") as handle:
        handle.truncate(3 * 2**30)  # sparse: 3 GB long, nothing written
    assert_refused(run_capped({"kind": "file", "path": str(model_folder)}), "big.jinja", "limit")


def test_named_templates_load_within_limits(model_folder):
    (model_folder / "additional_chat_templates" / "tool_use.jinja").write_text("{{ 'tools' }}", encoding="utf-8")
    outcome = run_capped({"kind": "file", "path": str(model_folder)})
    assert outcome == {**outcome, "outcome": "ok", "result": "{{ 'default' }}"}
    import labkit

    tok = labkit.load(model_folder)
    assert tok.vocab.chat_templates == {"default": "{{ 'default' }}", "tool_use": "{{ 'tools' }}"}
    assert tok.apply_chat_template([], tools=[{"type": "function"}]) == "tools"


@pytest.mark.parametrize("entries", [100, 2000])
def test_added_tokens_decoder_far_ids_do_not_grow_the_vocabulary(model_folder, entries):
    decoder = {str(60000 * (k + 1)): {"content": f"<far_{k}>", "special": True} for k in range(entries)}
    (model_folder / "tokenizer_config.json").write_text(json.dumps({"added_tokens_decoder": decoder}), encoding="utf-8")
    assert_refused(run_capped({"kind": "file", "path": str(model_folder)}), "tokenizer_config.json", "far past")


def test_added_tokens_decoder_near_ids_still_grow(model_folder):
    import labkit

    size = labkit.load(model_folder).vocab_size
    decoder = {str(size + 2): {"content": "<near>", "special": True}}
    (model_folder / "tokenizer_config.json").write_text(json.dumps({"added_tokens_decoder": decoder}), encoding="utf-8")
    tok = labkit.load(model_folder)
    assert tok.vocab_size == size + 3 and tok.token_to_id("<near>") == size + 2
