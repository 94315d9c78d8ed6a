"""The hf engine's encode_batch (the backend's own batch, in Rust) gives exactly the Encodings of
a loop over encode, on every bundled file and in every mode; parse_special=False never leaks
into a concurrent parse_special=True call (the flag is not toggled on a shared backend)."""
from __future__ import annotations

import threading

import pytest

import labkit
from support.engines import compared, loaded
from labkit.bench.harness import corpus_lines
from labkit.core import LabkitError, Tokenizer
from labkit.paths import BUNDLED

MODES = [dict(add_special_tokens=a, parse_special=p) for a in (False, True) for p in (True, False)]


def texts_for(tok: labkit.Tokenizer) -> list[str]:
    """Corpus lines, the file's own added-token spellings inside text, unknowns, odd whitespace."""
    specials = [a.content for a in tok.vocab.added_tokens][:6]
    lines = corpus_lines()[:40:3]
    glued = [f"{s}Hello {s} world{s}" for s in specials]
    return [*lines, *glued, "".join(specials), "", " ", "日本語 😀 e\u0301", "  two  spaces\n\ttab", "\u2581▁ x", "ｈｅｌｌｏ ①"]


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_batch_equals_the_loop(name):
    tok = compared(name, "hf")  # a .model: tokenizers' conversion, by name (the hf engine refuses it)
    texts = texts_for(tok)
    for mode in MODES:
        loop = Tokenizer.encode_batch(tok, texts, **mode)  # the base class: one encode per text
        assert tok.encode_batch(texts, **mode) == loop, (name, mode)
    # the shared backend's flag is never switched on
    assert tok.backend.encode_special_tokens is False


def test_parse_special_changes_the_ids():
    # the check above would be empty if parse_special did nothing on these texts
    tok = loaded("qwen2", "hf")
    text = "<|im_start|>user"
    assert tok.encode_batch([text])[0].ids[0] == 151644
    assert 151644 not in tok.encode_batch([text], parse_special=False)[0].ids
    assert 151644 not in tok.encode(text, parse_special=False).ids
    # ...and a parse_special=False call leaves the shared backend as it was
    assert tok.backend.encode(text, add_special_tokens=False).ids[0] == 151644


def test_batch_checks_its_arguments():
    tok = loaded("gpt2", "hf")
    with pytest.raises(LabkitError, match="takes a list of str"):
        tok.encode_batch("a string")
    with pytest.raises(LabkitError, match="item 1 is NoneType"):
        tok.encode_batch(["ok", None])
    with pytest.raises(LabkitError, match="U\\+D800"):
        tok.encode_batch(["ok", "a\ud800b"])
    with pytest.raises(TypeError):
        tok.encode_batch(["ok"], add_bos=True)
    assert tok.encode_batch([]) == [] and tok.encode_batch(iter(["a"])) == [tok.encode("a")]


def test_threads_mixing_parse_special():
    """8 threads, half with parse_special=True and half False, single and batch calls
    interleaved on one qwen2 tokenizer; each gets the ids tiktoken gives in its mode."""
    tok, reference = loaded("qwen2", "hf"), labkit.load("qwen2", engine="tiktoken")
    texts = [f"<|im_start|>user\n{line}<|im_end|>\n<|endoftext|>" for line in corpus_lines()[:24]]
    expected = {p: [reference.encode(t, parse_special=p).ids for t in texts] for p in (True, False)}
    assert expected[True] != expected[False]
    errors: list[str] = []
    start = threading.Barrier(8)

    def worker(index: int) -> None:
        parse_special = index % 2 == 0
        start.wait()
        for round_ in range(15):
            if round_ % 2:
                got = [e.ids for e in tok.encode_batch(texts, parse_special=parse_special)]
            else:
                got = [tok.encode(t, parse_special=parse_special).ids for t in texts[:6]]
            if got != expected[parse_special][: len(got)]:
                errors.append(f"thread {index} round {round_} parse_special={parse_special}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:5]


def test_parse_special_false_makes_no_copy_of_the_backend():
    # the flag is switched on the shared backend under a lock, for the one call that needs it
    tok = labkit.load("qwen2", engine="hf")
    text = "<|im_start|>user hi<|im_end|>"
    assert 151644 not in tok.encode(text, parse_special=False).ids
    assert 151644 not in tok.encode_batch([text, "plain"], parse_special=False)[0].ids
    assert tok._unparsed_backend is None and tok.backend.encode_special_tokens is False
    assert tok.encode(text).ids[0] == 151644


def test_threads_mixing_parse_special_see_their_own_setting():
    import threading

    tok = labkit.load("qwen2", engine="hf")
    texts = [f"<|im_start|>user {i}<|im_end|>" for i in range(40)] + [f"plain text {i}" for i in range(40)]
    expected = {(t, p): tok.encode(t, parse_special=p).ids for t in texts for p in (True, False)}
    assert expected[(texts[0], True)] != expected[(texts[0], False)]
    wrong = []

    def worker(parse_special: bool) -> None:
        for _ in range(30):
            for text in texts:
                if tok.encode(text, parse_special=parse_special).ids != expected[(text, parse_special)]:
                    wrong.append((text, parse_special))
            batch = tok.encode_batch(texts, parse_special=parse_special)
            wrong.extend((t, parse_special) for t, e in zip(texts, batch) if e.ids != expected[(t, parse_special)])

    threads = [threading.Thread(target=worker, args=(p,)) for p in (True, False, True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, wrong[:5]
