"""Chat templates on 360 random conversations (data/templates/random_renders.json, rendered by
transformers' own apply_chat_template with tools/make_random_chat_renders.py): labkit's render
is the same text byte for byte, or fails with the template's own message."""
from __future__ import annotations

import json
from collections import Counter

import pytest

import labkit
from labkit import chat
from labkit.paths import data_path

STORED = json.loads(data_path("templates/random_renders.json").read_bytes().decode("utf-8"))
CASES = STORED["cases"]


def _render(case: dict) -> str:
    source = data_path(f"templates/{case['template']}").read_bytes().decode("utf-8")
    extra = {key: case[key] for key in ("tools", "documents") if case[key] is not None}
    return labkit.render_chat_template(source, case["messages"], add_generation_prompt=case["add_generation_prompt"],
                                       continue_final_message=case["continue_final_message"], **case["variables"],
                                       **extra)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c['template'][:16]}-{i}" for i, c in enumerate(CASES)])
def test_random_conversation_renders_as_transformers_does(index):
    case = CASES[index]
    expected = case["expected"]
    if "text" in expected:
        assert _render(case).encode("utf-8") == expected["text"].encode("utf-8")
        return
    with pytest.raises(labkit.LabkitError) as info:
        _render(case)
    if expected["error"] == "TemplateError":  # the template's raise_exception: its message, unchanged
        assert isinstance(info.value, chat.TemplateRaised) and str(info.value) == expected["message"]
    elif expected["error"] == "ValueError" and expected["message"].startswith("continue_final_message"):
        # transformers' own rule around the render (the final message must appear), in labkit's words
        assert "continue_final_message is set but the final message does not appear" in str(info.value)
    else:  # a Jinja or Python error inside the template: the same error, with the template line
        assert f"{expected['error']}: {expected['message']}" in str(info.value)


def test_the_stored_conversations_reach_every_feature():
    """The draws exercise what they claim: tools, documents, tool calls, reasoning, list contents,
    continued final messages, and both outcomes on every template."""
    seen = Counter()
    for case in CASES:
        seen["tools"] += case["tools"] is not None
        seen["documents"] += case["documents"] is not None
        seen["continue_final_message"] += case["continue_final_message"]
        for message in case["messages"]:
            seen["tool_calls"] += "tool_calls" in message
            seen["reasoning_content"] += "reasoning_content" in message
            seen["content parts"] += isinstance(message["content"], list)
    assert all(seen[key] >= 5 for key in ("tools", "documents", "continue_final_message", "tool_calls",
                                          "reasoning_content", "content parts")), seen
    outcomes = Counter((case["template"], "text" in case["expected"]) for case in CASES)
    assert all(outcomes[name, True] >= 10 for name, _ in outcomes), outcomes
