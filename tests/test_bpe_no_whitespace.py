"""Long inputs without whitespace (digits, letters, unknown characters): the BPE engines merge
them piece by piece where no merge can cross, and still give the reference's ids, and the
offsets of the uncut merge."""
from __future__ import annotations

import random

import pytest

import labkit

# letters, digits, characters the small vocabularies lack (unknown, or byte fallback)
ALPHABET = "abcdefghijklmnopqrstuvwxyz" * 3 + "0123456789" * 3 + "éü日本語😀🦙Ωж"


def _texts(seed: int, count: int, longest: int) -> list[str]:
    rng = random.Random(seed)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(200, longest))) for _ in range(count)]
    spaced = " ".join("".join(rng.choice(ALPHABET) for _ in range(300)) for _ in range(3))
    return texts + [spaced, "1234567890" * 60, "日日日😀😀" * 80, "supercalifragilisticexpialidocious" * 12]


@pytest.mark.parametrize("name", ["llama-spm", "botchan-bpe"])
def test_spm_bpe_long_chunks_match_sentencepiece(name, tokenizer):
    mine, reference = labkit.load(name, engine="labkit"), tokenizer(name, "sentencepiece")
    for text in _texts(1, 25, 1500):
        assert mine.encode(text).ids == reference.encode(text).ids, text[:60]
        assert mine.encode_ordinary(text) == reference.backend.encode(text), text[:60]


@pytest.mark.parametrize("name", ["llama-spm", "botchan-bpe"])
def test_spm_bpe_cut_changes_no_offsets(name):
    cut, whole = labkit.load(name, engine="labkit"), labkit.load(name, engine="labkit")
    whole.model._joinable, whole.model._isolated_class = None, None  # merge every chunk whole
    assert whole.model.cut("abc") == ["abc"] and whole.model.isolated_runs("123") == ["123"]
    for text in _texts(2, 15, 1200):
        a, b = cut.encode(text), whole.encode(text)
        assert (a.ids, a.offsets) == (b.ids, b.offsets), text[:60]


def test_cut_keeps_unknown_runs_together():
    from labkit.algorithms.spm_bpe import SpmBpeModel

    model = SpmBpeModel(["<unk>", "a", "b", "ab"], [0, -1, -2, -0.5], [2, 1, 1, 1])
    # 'x' and 'y' are unknown: without byte fallback they fuse into one <unk>, so no cut between
    assert model.cut("abxyba") == ["ab", "xy", "b", "a"]
    assert model.pieces_to_ids(model.merge("xy")) == [(0, 0, 2)]


def test_cut_is_off_with_unused_pieces():
    from labkit.algorithms.spm_bpe import SpmBpeModel

    model = SpmBpeModel(["<unk>", "a", "b", "ab", "c"], [0, -1, -2, -0.5, -3], [2, 1, 1, 5, 1])
    assert model.cut("abcab") == ["abcab"]


# characters a regex class must escape, a newline, and characters no toy piece holds
TOY_ALPHABET = "abc-]^\\\n" * 4 + "xyé😀"


def _toy_model(rng, byte_fallback, reserved_lookup=True):
    from labkit.algorithms.spm_bpe import SpmBpeModel

    pieces = sorted({"".join(rng.choice("abc-]^\\\n") for _ in range(rng.randint(2, 4))) for _ in range(40)})
    pieces = ["<unk>", "a", "b", "c", "-", "]", "^", "\\", "\n", "d", *pieces, *(f"<0x{v:02X}>" for v in range(256))]
    types = [2, 1, 1, 1, 1, 1, 1, 1, 1, 3] + [1] * (len(pieces) - 266) + [6] * 256
    scores = [0.0] + [float(rng.randint(-6, 0)) for _ in pieces[1:]]
    return SpmBpeModel(pieces, scores, types, byte_fallback=byte_fallback, reserved_lookup=reserved_lookup)


def _expand(parts):
    """re.split's parts as chunks: each character of an even part alone, each odd part whole."""
    return [chunk for index, part in enumerate(parts) for chunk in ((part,) if index % 2 else part)]


def test_joined_runs_split_the_text_where_cut_does():
    """The regex that keeps stretches of joined characters (runs_pattern) gives cut()'s chunks, on
    toy models with characters a class must escape, unknown characters that fuse (no byte
    fallback) or not, and a CONTROL piece spelled like a character; and on botchan-bpe."""
    checked = 0
    for seed in range(60):
        rng = random.Random(seed)
        for byte_fallback in (False, True):
            model = _toy_model(rng, byte_fallback, reserved_lookup=rng.random() < 0.5)
            pattern = model.runs_pattern()
            if pattern is None:
                continue
            for _ in range(10):
                text = "".join(rng.choice(TOY_ALPHABET + "d") for _ in range(rng.randint(1, 80)))
                parts = pattern.split(text)
                assert all(len(run) >= 2 for run in parts[1::2])
                assert _expand(parts) == model.cut(text), (seed, byte_fallback, text)
                checked += 1
    assert checked > 600
    model = labkit.load("botchan-bpe", engine="labkit").model
    for text in _texts(3, 10, 1200):
        text = text.replace(" ", "▁")
        assert _expand(model.runs_pattern().split(text)) == model.cut(text), text[:60]


def test_joined_runs_gives_up_where_the_groups_are_too_many():
    from labkit.algorithms.spm_bpe import JOINED_RUN_GROUPS, joined_runs

    # each of these characters may stand after a different set: one group each
    chars = [chr(0x4E00 + k) for k in range(JOINED_RUN_GROUPS + 1)]
    pairs = frozenset(chars[k] + right for k in range(len(chars)) for right in chars[:k + 1])
    assert joined_runs(pairs) is None
    assert joined_runs(frozenset()) is None
    assert joined_runs(frozenset(), known=frozenset("a")).split("abcd") == ["a", "bcd", ""]


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_a_long_chunk_by_the_runs_pattern_gives_the_ids_of_the_cut(byte_fallback):
    """The engine's long-chunk path with the runs pattern (characters alone looked up as one id
    or a tuple of byte ids, stretches merged once each) against the same engine cutting with
    cut(), which the sentencepiece tests hold exact, and against the spans pass that offsets
    need (it raises when its ids differ); every text longer than the word cache's limit."""
    from labkit.core import TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_UNKNOWN, SpecialTokens, VocabData
    from labkit.engines.labkit_spm_bpe import CACHED_WORD_CHARS, SpmBpeTokenizer

    for seed in range(12):
        rng = random.Random(seed)
        model = _toy_model(rng, byte_fallback)
        kinds = {2: TOKEN_UNKNOWN, 1: TOKEN_NORMAL, 3: TOKEN_CONTROL, 6: TOKEN_BYTE}
        vocab = VocabData(
            source="toy", format="gguf", model="spm_bpe", tokens=model.tokens, scores=model.scores,
            token_types=[kinds[t] for t in model.types],
            normalizer={"add_dummy_prefix": False, "remove_extra_whitespaces": False,
                        "escape_whitespaces": True, "charsmap": None},
            options={"byte_fallback": byte_fallback}, specials=SpecialTokens(unk="<unk>", unk_id=0))
        runs, cuts = SpmBpeTokenizer(vocab), SpmBpeTokenizer(vocab)
        cuts.model._runs_pattern = None  # the path before the pattern: cut() and isolated runs
        assert runs.model.runs_pattern() is not None
        for _ in range(6):
            text = "".join(rng.choice(TOY_ALPHABET) for _ in range(rng.randint(CACHED_WORD_CHARS + 1, 900)))
            ids = runs.encode_ordinary(text)
            assert ids == cuts.encode_ordinary(text), (seed, text[:60])
            # reading the offsets runs the spans pass (cut(), each chunk's spans), which must give these ids
            encoding = runs.encode(text)
            assert encoding.ids == ids and len(encoding.offsets) == len(ids)


def test_a_text_with_no_joinable_neighbours_is_left_as_characters_as_the_queue_leaves_it():
    """merge_buckets returns the characters at once when no two neighbours sit side by side in
    any piece (a line of CJK for an English vocabulary): the queue makes no merge there either."""
    model = labkit.load("botchan-bpe", engine="labkit").model
    for text in ("日本語の文章です" * 20, "日本" + "0" * 70, "▁" + "x" * 80, "▁the" + "日" * 70):
        assert model.merge_buckets(text) == model.merge(text), text[:20]
    assert model.merge_buckets("日本語" * 30) == list("日本語" * 30)
    assert model.merge_buckets("▁the" + "日" * 70)[0] == "▁the"  # a joinable pair: merged as before


def test_the_rescanning_loop_makes_the_queues_merges_on_short_texts():
    """rescan (what every short piece of a long word goes through) against the textbook loop and
    sentencepiece's queue, on toy models whose scores tie often, texts of 0 to 40 characters."""
    from labkit.algorithms.spm_bpe import rescan

    for seed in range(80):
        rng = random.Random(seed)
        model = _toy_model(rng, byte_fallback=False)
        place, nothing = model._score_rank.get, len(model._score_rank) + 1
        for _ in range(15):
            text = "".join(rng.choice("abc-]^") for _ in range(rng.randint(0, 40)))
            assert rescan(text, place, nothing) == model.merge_naive(text) == model.merge(text), (seed, text)
