"""Views and exercise checkers of notebook 07, and the end-of-generation ids."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

import labkit
from labkit import chat
from labkit.core import SpecialTokens
from labkit.exercises.chat import check_plain_template, check_stop_ids, check_token_count
from labkit.viz.chat import TemplateTable, compare_templates, prompt_view


@pytest.fixture(scope="module")
def qwen2():
    return labkit.load("qwen2")


@pytest.fixture(scope="module")
def qwen2_ref():
    return labkit.load("qwen2", engine="hf")


def test_prompt_view_marks_exactly_the_special_ids(qwen2, qwen2_ref):
    text = qwen2.apply_chat_template([{"role": "user", "content": "<b>é & co</b>"}], add_generation_prompt=True)
    view = prompt_view(qwen2, text, title="t")
    assert [t.id for t in view.tokens] == qwen2_ref.encode(text, parse_special=True).ids
    assert "".join(t.text for t in view.tokens) == text
    special_ids = {qwen2_ref.token_to_id("<|im_start|>"), qwen2_ref.token_to_id("<|im_end|>")}
    assert sum(t.special for t in view.tokens) == text.count("<|im_start|>") + text.count("<|im_end|>")
    assert all(t.id in special_ids for t in view.tokens if t.special)
    html = view._repr_html_()
    assert html == prompt_view(qwen2, text, title="t")._repr_html_()  # deterministic
    assert "<b>" not in html and "</b>" not in html and "&lt;" in html and "&amp;" in html
    assert repr(view).startswith("t (") and "[<|im_start|>]" in repr(view)


def test_template_table_shows_renders_and_errors():
    table = compare_templates({"ok": "{{ messages[0].content }}", "bad": "{{ raise_exception('no <x>') }}"},
                              [{"role": "user", "content": "a<b"}])
    assert table.renders["ok"] == "a<b"
    assert isinstance(table.renders["bad"], chat.TemplateRaised)
    assert repr(table) == "== ok ==\na<b\n== bad ==\nTemplateRaised: no <x>"
    html = table._repr_html_()
    assert "a&lt;b" in html and "no &lt;x&gt;" in html and html == TemplateTable(table.renders)._repr_html_()


def test_end_of_generation_ids(qwen2, qwen2_ref):
    expected = tuple(sorted({qwen2_ref.token_to_id("<|endoftext|>"), qwen2_ref.token_to_id("<|im_end|>")}))
    assert chat.end_of_generation_ids(qwen2) == expected
    assert chat.end_of_generation_ids(labkit.load("bert-bge")) == ()


def test_duplicate_eos_warning_text():
    specials = SpecialTokens(bos="<s>", bos_id=1, eos="</s>", eos_id=2, add_eos=True)
    fake = SimpleNamespace(special_tokens=specials)
    assert chat.duplicate_special_warnings(fake, [1, 5, 2]) == []
    messages = chat.duplicate_special_warnings(fake, [1, 1, 5, 2, 2])
    assert len(messages) == 2 and "2 BOS" in messages[0] and "2 EOS" in messages[1]


def test_exercise_checkers_say_right_and_wrong(qwen2, capsys):
    assert check_token_count(qwen2, "<|im_end|>", 1)
    assert not check_token_count(qwen2, "<|im_end|>", 1, parse_special=False)
    good = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"
    assert check_plain_template(good)
    assert not check_plain_template("{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}")
    assert not check_plain_template("{{ raise_exception('nope') }}")
    assert check_stop_ids(qwen2, [151643, 151645])
    assert not check_stop_ids(qwen2, {151643})
    with pytest.raises(labkit.LabkitError):
        check_stop_ids(qwen2, "abc")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "right" and out[1].startswith("wrong:")
