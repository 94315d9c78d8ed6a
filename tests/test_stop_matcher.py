"""Stop strings at the text level: the Aho-Corasick matcher, the jail, the fixed hold-back.

No tokenizer here: text arrives in arbitrary chunks and is compared with a naive reference
(``str.find`` for every stop, whole text at once).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit import LabkitError
from labkit.algorithms.aho_corasick import ROOT, AhoCorasick
from labkit.streaming.stop import FixedHoldBack, StopReason, StopStringMatcher, stop_reference

# a small alphabet (with multi-byte characters) so that stops and near-misses are frequent
ALPHABET = "ab ×Δ°€中🚀"
texts = st.text(alphabet=ALPHABET, max_size=40)
stops = st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=5), min_size=1, max_size=6, unique=True)


def naive_first(text, patterns):
    """(end, pattern index) of the match ending first (longest at a tie), by brute force."""
    best = None
    for end in range(1, len(text) + 1):
        for i, p in enumerate(patterns):
            if text[:end].endswith(p) and (best is None or len(p) > len(patterns[best])):
                best = i
        if best is not None:
            return end, best
    return None


def naive_jail(text, patterns):
    """The longest suffix of text that is a proper prefix of some pattern."""
    for k in range(min(len(text), max(map(len, patterns)) - 1), 0, -1):
        suffix = text[len(text) - k:]
        if any(len(p) > k and p.startswith(suffix) for p in patterns):
            return suffix
    return ""


def split_at(text, cuts):
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points + [len(text)]:
        pieces.append(text[last:p])
        last = p
    return pieces


def run(matcher, chunks):
    out, reason = [], None
    for chunk in chunks:
        released, reason = matcher.push(chunk)
        out.append(released)
        if reason is not None:
            return "".join(out), reason
    out.append(matcher.release())
    return "".join(out), None


# ----------------------------------------------------------------------------- Aho-Corasick


def test_aho_corasick_examples():
    assert AhoCorasick(["world", "or"]).find_first("hello world") == (9, 1)
    assert AhoCorasick(["abcd", "bc"]).find_first("abcd") == (3, 1)
    assert AhoCorasick(["he", "she", "his", "hers"]).find_first("ushers") == (4, 1)
    assert AhoCorasick(["x"]).find_first("abc") is None
    ac = AhoCorasick(["<|im_end|>"])
    state, end, _ = ac.scan(ROOT, "hi <|im")
    assert end == -1 and ac.hold_length(state) == 4


@settings(max_examples=300, deadline=None)
@given(texts, stops)
def test_aho_corasick_matches_brute_force(text, patterns):
    assert AhoCorasick(patterns).find_first(text) == naive_first(text, patterns)


def test_aho_corasick_rejects_bad_patterns():
    with pytest.raises(LabkitError, match="empty"):
        AhoCorasick(["ok", ""])
    with pytest.raises(LabkitError, match="not str"):
        AhoCorasick([b"bytes"])


# ----------------------------------------------------------------------------- the jail


def test_hello_held_then_released_with_test():
    m = StopStringMatcher(["Hello world"])
    assert m.push("Hello") == ("", None)
    assert m.jail == "Hello"
    assert m.push(" test") == ("Hello test", None)
    assert m.jail == ""


def test_im_start_is_not_cut_by_im_end():
    m = StopStringMatcher(["<|im_end|>"])
    out = [m.push(c)[0] for c in ["<|", "im", "_start", "|>", "user"]]
    assert "".join(out) + m.release() == "<|im_start|>user"
    assert out[1] == "" and m.jail == ""  # "<|im" was jailed, then released at "_start"


def test_stop_spanning_three_chunks():
    m = StopStringMatcher(["</answer>"])
    assert m.push("ok </") == ("ok ", None)
    assert m.push("ans") == ("", None)
    released, reason = m.push("wer> tail")
    assert released == "" and reason == StopReason("string", "</answer>", False)


def test_stop_inside_one_chunk_with_text_on_both_sides():
    assert StopStringMatcher(["STOP"]).push("beforeSTOPafter") == ("before", StopReason("string", "STOP", False))
    assert StopStringMatcher(visible=["STOP"]).push("beforeSTOPafter") == ("beforeSTOP", StopReason("string", "STOP", True))


@pytest.mark.parametrize("stop", [" ×", "Δ", "°", " (∆", " –", "€", "中", "🚀", "💡"])
@pytest.mark.parametrize("visible", [False, True])
def test_multibyte_stops_character_by_character(stop, visible):
    text = f"x{stop[:-1]}y 1{stop}2 tail"
    m = StopStringMatcher(*(((), [stop]) if visible else ([stop], ())))
    out, reason = run(m, list(text))
    assert out == f"x{stop[:-1]}y 1" + (stop if visible else "")
    assert reason is not None and reason.value == stop


def test_stops_completing_together_resolve_to_the_earliest():
    # "bc" ends before "abcd": it wins even though "abcd" starts first
    assert StopStringMatcher(["abcd", "bc"]).push("xabcd") == ("xa", StopReason("string", "bc", False))
    # same end: the longer one starts first and wins
    assert StopStringMatcher(["cd"], ["bcd"]).push("abcde") == ("abcd", StopReason("string", "bcd", True))


def test_stopped_stays_stopped_until_reset():
    m = StopStringMatcher(["x"])
    assert m.push("ax")[1] is not None
    assert m.push("more") == ("", m.stopped)
    assert m.release() == ""
    m.reset()
    assert m.push("ab") == ("ab", None)


def test_empty_and_duplicate_stop_strings():
    with pytest.raises(LabkitError, match="empty string"):
        StopStringMatcher(["ok", ""])
    with pytest.raises(LabkitError, match="list of str"):
        StopStringMatcher("abc")
    assert StopStringMatcher(["a", "a"]).push("ba")[0] == "b"


def test_suppressed_matches_keep_the_jail():
    m = StopStringMatcher(["ab", "abc"])
    assert m.push("xab", check=False) == ("x", None)
    assert m.jail == "ab"  # "ab" matched but was let through; it may still become "abc"
    assert m.push("c") == ("", StopReason("string", "abc", False))


@settings(max_examples=300, deadline=None)
@given(texts, stops, st.lists(st.booleans(), max_size=6), st.lists(st.integers(0, 60), max_size=8))
def test_chunked_stream_equals_reference(text, patterns, flags, cuts):
    visible = [p for p, f in zip(patterns, flags + [False] * len(patterns)) if f]
    hidden = [p for p in patterns if p not in visible]
    expected, reason = stop_reference(text, hidden, visible)
    m = StopStringMatcher(hidden, visible)
    seen, out = "", []
    for chunk in split_at(text, cuts):
        released, got = m.push(chunk)
        out.append(released)
        if got is not None:
            assert got == reason
            break
        seen += chunk
        # the jail is exactly the longest suffix that is a proper prefix of a stop string
        assert m.jail == naive_jail(seen, patterns)
        assert "".join(out) + m.jail == seen
    else:
        assert reason is None
        out.append(m.release())
    assert "".join(out) == expected
    shown = "".join(out)
    if reason is not None and reason.visible:  # a visible stop is shown, and may hold a hidden one
        shown = shown[: len(shown) - len(reason.value)]  # ('ba' visible, 'a' hidden: both end at 'a')
    for h in hidden:
        assert h not in shown


@settings(max_examples=200, deadline=None)
@given(texts, stops, st.lists(st.integers(0, 60), max_size=8))
def test_fixed_hold_back_agrees_on_the_result(text, patterns, cuts):
    out, reason = run(FixedHoldBack(patterns), split_at(text, cuts))
    assert (out, reason) == stop_reference(text, patterns)


def test_fixed_hold_back_delays_everything():
    h = FixedHoldBack(["Hello world"])
    assert h.push("The cat") == ("", None)  # 7 characters, all withheld (window 10)
    m = StopStringMatcher(["Hello world"])
    assert m.push("The cat") == ("The cat", None)


def test_held_text_is_a_function_of_the_state():
    ac = AhoCorasick(["Hello world", "lol"])
    state, end, _ = ac.scan(ROOT, "Say Hello")
    assert end == -1 and ac.held_text(state) == "Hello" == naive_jail("Say Hello", ac.patterns)


def test_memo_is_bounded_and_gives_the_same_answers(monkeypatch):
    import labkit.streaming.stop as stop

    monkeypatch.setattr(stop, "MEMO_LIMIT", 5)
    stops = ["zz top", "zz bottom"]  # a stop set no other test uses: fresh tables
    text = "a zz to zz b zz bot zz top end"
    for _ in range(3):  # the second and third runs read the memo (cleared every 5 entries)
        m = StopStringMatcher(stops)
        assert run(m, list(text)) == stop_reference(text, stops)
        assert m.tables.entries <= 5


def test_a_visible_stop_ending_with_a_hidden_one_is_shown_whole():
    # both end at the same character: the longer one, which starts first, wins and is shown
    assert StopStringMatcher(["a"], ["ba"]).push("ba") == ("ba", StopReason("string", "ba", True))
    assert StopStringMatcher(["ba"], ["a"]).push("ba") == ("", StopReason("string", "ba", False))


# the lowest and highest code points bound the search for a child among the sorted patterns
EDGE_ALPHABET = "ab\x00\U0010ffff\ud7ff"


def naive_longest_ending(text, patterns):
    """Index of the longest pattern that ``text`` ends with (lowest index at a tie), or -1."""
    ending = [i for i, p in enumerate(patterns) if text.endswith(p)]
    return max(ending, key=lambda i: (len(patterns[i]), -i), default=-1)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=EDGE_ALPHABET + " ", max_size=30),
       st.lists(st.text(alphabet=EDGE_ALPHABET, min_size=1, max_size=4), min_size=1, max_size=8))
def test_children_made_on_demand_give_every_state_its_jail_and_match(text, patterns):
    ac = AhoCorasick(patterns)
    state = ROOT
    for end in range(1, len(text) + 1):
        state = ac.step(state, text[end - 1])
        assert ac.held_text(state) == naive_jail(text[:end], patterns)
        assert ac.match_of(state) == naive_longest_ending(text[:end], patterns)
    # a duplicate pattern: the lowest index is the one reported
    twice = AhoCorasick(patterns + patterns[:1])
    assert twice.find_first(patterns[0]) == naive_first(patterns[0], patterns)


def test_only_the_children_the_text_asks_for_are_made():
    stops = ["Hello world", "Hello there", "<|im_end|>"]
    ac = AhoCorasick(stops)
    ac.scan(ROOT, "Say Hello")
    assert ac.node_count == 1 + len("Hello")  # the root and H-e-l-l-o; not " world", " there", "<|im_end|>"
    assert len(AhoCorasick(stops).table()) == 1 + len("Hello ") + len("world") + len("there") + len("<|im_end|>")
