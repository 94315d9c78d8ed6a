"""Write ``data/templates/random_renders.json``: random conversations for every shipped chat
template, rendered by transformers' own ``apply_chat_template`` (the reference).

``tests/test_chat_random_renders.py`` checks labkit's renderer against these renders: the
same text, or an error with the same message. The conversations come from a fixed seed:
alternating and non-alternating roles, an optional system message, contents with newlines,
edge spaces, special-token spellings, Jinja-looking text and emoji, now and then a list of
content parts, tool calls with tool replies, ``reasoning_content``, tools, documents,
``add_generation_prompt``, ``continue_final_message`` and ``enable_thinking``.

transformers 5 needs a newer ``regex`` than labkit pins (see pyproject.toml), so it runs in
a venv of its own; labkit itself is not imported here:

    python3 -m venv /tmp/tf && /tmp/tf/bin/pip install transformers==5.24.0 jinja2==3.1.6
    /tmp/tf/bin/python tools/make_random_chat_renders.py
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SEED = 2026
PER_TEMPLATE = 60
ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "data" / "templates"
PIECES = ("Hello", "What is 2+2?", " leading space", "trailing space ", "line\nbreak", "", "  ", "日本語のテキスト",
          "emoji 🙂👍🏽", "<|im_end|>", "<|eot_id|>", "[INST]", "</s>", "{{ not jinja }}", "{% raw %}", "tab\tin",
          "ends with newline\n", "\n\nstarts with newlines", "'quotes' \"double\"", "a\\backslash", "x" * 50)
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
         {"type": "function", "function": {"name": "add", "description": "Add two numbers",
          "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3)))


def _content(rng: random.Random):
    return [{"type": "text", "text": _text(rng)}] if rng.random() < 0.06 else _text(rng)


def _conversation(rng: random.Random) -> list[dict]:
    messages = []
    if rng.random() < 0.4:
        messages.append({"role": "system", "content": _content(rng)})
    role = "user"
    for _ in range(rng.randint(1, 5)):
        if rng.random() < 0.06:  # a role out of turn now and then: some templates refuse it
            role = rng.choice(("user", "assistant", "system"))
        message = {"role": role, "content": _content(rng)}
        if role == "assistant" and rng.random() < 0.2:
            call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": _text(rng)}}}
            if rng.random() < 0.5:
                call["id"] = "".join(rng.choice("abcdefghij0123456789") for _ in range(9))
            message["tool_calls"] = [call]
            messages += [message, {"role": "tool", "content": _text(rng), "name": "get_weather",
                                   "tool_call_id": call.get("id", "call_1")}]
            role = "assistant"
            continue
        if role == "assistant" and rng.random() < 0.2:
            message["reasoning_content"] = _text(rng)
        messages.append(message)
        role = "assistant" if role == "user" else "user"
    return messages


def draw_cases(seed: int = SEED, per_template: int = PER_TEMPLATE) -> list[dict]:
    """The conversations and flags, ``per_template`` for each shipped template."""
    rng = random.Random(seed)
    cases = []
    for path in sorted(TEMPLATES.glob("*.jinja")):
        for _ in range(per_template):
            messages = _conversation(rng)
            variables = {"bos_token": rng.choice(("<s>", "<|begin_of_text|>", "<bos>")),
                         "eos_token": rng.choice(("</s>", "<|im_end|>", "<eos>")),
                         "date_string": "26 Nov 2026"}  # else Llama 3.1 prints today's date
            if rng.random() < 0.3:
                variables["enable_thinking"] = rng.random() < 0.5
            continue_final = messages[-1]["role"] == "assistant" and rng.random() < 0.3
            cases.append({"template": path.name, "messages": messages,
                          "add_generation_prompt": not continue_final and rng.random() < 0.5,
                          "continue_final_message": continue_final,
                          "tools": TOOLS[: rng.randint(1, 2)] if rng.random() < 0.25 else None,
                          "documents": [{"title": "Doc", "text": _text(rng)}] if rng.random() < 0.1 else None,
                          "variables": variables})
    return cases


def render_with_transformers(cases: list[dict]) -> None:
    """Add ``expected`` to each case: {"text": ...} or {"error": class name, "message": ...}."""
    import tokenizers
    from tokenizers import models
    from transformers import PreTrainedTokenizerFast

    # any tokenizer will do: tokenize=False only renders the template
    tok = PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")))
    sources = {path.name: path.read_text(encoding="utf-8") for path in TEMPLATES.glob("*.jinja")}
    for case in cases:
        try:
            text = tok.apply_chat_template(case["messages"], tools=case["tools"], documents=case["documents"],
                                           add_generation_prompt=case["add_generation_prompt"],
                                           continue_final_message=case["continue_final_message"],
                                           chat_template=sources[case["template"]], tokenize=False, **case["variables"])
            case["expected"] = {"text": text}
        except Exception as exc:  # the template's own refusal (raise_exception) or a Jinja error
            case["expected"] = {"error": type(exc).__name__, "message": str(exc)}


def main() -> int:
    import jinja2
    import transformers

    cases = draw_cases()
    render_with_transformers(cases)
    meta = {"produced_with": f"transformers {transformers.__version__} apply_chat_template(tokenize=False), "
                             f"jinja2 {jinja2.__version__}, by tools/make_random_chat_renders.py",
            "seed": SEED, "per_template": PER_TEMPLATE}
    out = TEMPLATES / "random_renders.json"
    out.write_text(json.dumps({"_meta": meta, "cases": cases}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    errors = sum("error" in case["expected"] for case in cases)
    print(f"{out}: {len(cases)} conversations, {len(cases) - errors} rendered, {errors} refused by the template")
    return 0


if __name__ == "__main__":
    sys.exit(main())
