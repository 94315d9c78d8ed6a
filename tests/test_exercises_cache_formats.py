"""The checkers of notebooks 10 and 11 say right to right answers and wrong to wrong ones."""
from __future__ import annotations

import labkit
from labkit.exercises.cache import check_cut, check_cut_before_special, check_entry_size, l1_entry_bytes
from labkit.exercises.formats import check_error_names_file_and_place, check_private_repo, check_sniff
from labkit.paths import bundled_path


def test_cut_checker(capsys):
    text = "Hello world, how are you?"
    tok = labkit.load("qwen2", engine="hf")
    changing = next(c for c in range(1, len(text)) if tok.encode(text[:c]).ids + tok.encode(text[c:]).ids != tok.encode(text).ids)
    assert check_cut(text, changing, changes=True) and not check_cut(text, changing, changes=False)
    assert check_cut(text, 0, changes=False)
    assert check_cut_before_special("hello", "<|im_start|>user\nhi") and not check_cut_before_special("a", "b")
    assert capsys.readouterr().out.count("right") == 3


def test_entry_size_checker():
    prompt = "<|im_start|>system\n" + "Be brief. " * 200 + "<|im_end|>\n<|im_start|>user\nhi"
    size = l1_entry_bytes(prompt)
    assert size > len(prompt) // 2
    assert check_entry_size(prompt, size) and not check_entry_size(prompt, size * 3)


def test_formats_checkers(tmp_path):
    assert check_sniff(bundled_path("qwen2"), "gguf") and not check_sniff(bundled_path("qwen2"), "hf_json")
    broken = tmp_path / "cut.gguf"
    broken.write_bytes(bundled_path("gpt2").read_bytes()[:1000])
    try:
        labkit.load(broken)
    except labkit.LabkitError as exc:
        message = str(exc)
    assert check_error_names_file_and_place(broken, message)
    assert not check_error_names_file_and_place(broken, "something else")
    assert check_private_repo(False, True) and not check_private_repo(True, True)
