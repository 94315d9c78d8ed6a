"""The checkers of notebooks 01, 07, 11 and 14 say which part of a wrong answer is wrong."""
from __future__ import annotations

import labkit
from labkit.exercises.bpe import check_gpt2_char, check_gpt2_spelling, check_utf8_length
from labkit.exercises.chat import check_plain_template, check_stop_ids, check_token_count
from labkit.exercises.formats import check_private_repo


def last_line(capsys):
    return capsys.readouterr().out.strip().splitlines()[-1]


def test_bytes_checkers_name_the_slip(capsys):
    assert not check_utf8_length("naïve 😀", 7)
    assert "number of characters" in last_line(capsys)
    assert not check_utf8_length("naïve 😀", 8)  # UTF-16 code units
    assert "UTF-16" in last_line(capsys)
    assert not check_gpt2_char(0x7F, "\x7f")
    assert "not printable" in last_line(capsys)
    assert not check_gpt2_char(0x7F, chr(0x17F))  # U+0100 + the byte, not + its rank
    assert "rank" in last_line(capsys)
    assert not check_gpt2_spelling(" über", "Ġüber")
    assert "character 1" in last_line(capsys)
    assert not check_gpt2_spelling(" über", "ĠÃ")
    assert "too short" in last_line(capsys)
    assert check_utf8_length("naïve 😀", ...) is None
    assert last_line(capsys).startswith("not answered yet")


def test_chat_checkers_name_the_part(capsys):
    qwen2 = labkit.load("qwen2")
    plain = len(qwen2.encode("<|im_start|>assistant\n", parse_special=False).ids)
    assert not check_token_count(qwen2, "<|im_start|>assistant\n", plain)
    assert "plain text" in last_line(capsys)
    lines_ok = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    assert not check_plain_template(lines_ok + "{% if add_generation_prompt %}assistant:\n{% endif %}")
    assert last_line(capsys).startswith("wrong: the generation prompt:")
    assert not check_plain_template("{% for m in messages %}{{ m.content }}\n{% endfor %}")
    assert last_line(capsys).startswith("wrong: the message lines:")
    assert check_stop_ids(qwen2, ...) is None
    assert last_line(capsys).startswith("not answered yet")


def test_private_repo_checker_names_each_load(capsys):
    assert not check_private_repo(True, True)
    line = last_line(capsys)
    assert "without the token" in line and "with HF_TOKEN" not in line
    assert not check_private_repo(False, False)
    line = last_line(capsys)
    assert "with HF_TOKEN" in line and "without the token" not in line


def test_refused_component_checker_names_kind_or_type(capsys):
    from labkit.conformance import all_cases
    from labkit.exercises.conformance import check_refused_component

    case = next(c for c in all_cases(["hf"]) if c.name == "hf/wordlevel-split-oniguruma-hex")
    assert check_refused_component(case, "pre_tokenizer Split")
    assert not check_refused_component(case, "Split")
    assert "the kind" in last_line(capsys)
    assert not check_refused_component(case, "pre_tokenizer Digits")
    assert "the kind (pre_tokenizer) is right" in last_line(capsys)
    assert not check_refused_component(case, "")
    assert not check_refused_component(case, "none")
    assert "refused" in last_line(capsys)
