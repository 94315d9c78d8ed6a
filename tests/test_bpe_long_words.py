"""The fast long-word merges (rank buckets over ids, score buckets) against the heap versions,
on real vocabularies and on toy ones whose ranks/scores are shuffled so a merge can make a
better pair than itself (the case where a bucket must stop)."""
from __future__ import annotations

import random

import pytest

import labkit
from labkit.algorithms import bpe
from labkit.algorithms.spm_bpe import SpmBpeModel


@pytest.fixture(scope="module")
def gpt2():
    return labkit.load("gpt2", engine="labkit")


@pytest.fixture(scope="module")
def llama():
    return labkit.load("llama-spm", engine="labkit")


def _words(rng, alphabet, count, longest):
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


def test_rank_buckets_equal_the_heap_on_gpt2(gpt2):
    rng = random.Random(11)
    for word in _words(rng, "abcdefghijklmnopqrstuvwxyz0123456789 éé日😀", 300, 400) + ["a" * 999, "1" * 500]:
        data = word.encode()
        expected = [gpt2.bytes_id[p] for p in bpe.bpe_heap(bpe.byte_parts(data), gpt2.rank)] if data else []
        assert gpt2._long_word_ids(data) == expected, word


def test_engine_ids_and_lazy_offsets_on_a_long_word_match_tiktoken(gpt2):
    reference = labkit.load("gpt2", engine="tiktoken")
    rng = random.Random(5)
    text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(20_000))
    mine, theirs = gpt2.encode(text), reference.encode(text)
    assert mine.ids == theirs.ids
    assert mine.offsets == theirs.offsets and mine.tokens == theirs.tokens


def _toy_rank_vocab(rng):
    """Every token over 'abc' up to 4 bytes, ranked at random (so long tokens can outrank short)."""
    tokens = [bytes([b]) for b in range(256)]
    extra = sorted({bytes(rng.choice(b"abc") for _ in range(rng.randint(2, 4))) for _ in range(60)})
    rng.shuffle(extra)
    return {t: i for i, t in enumerate(tokens + extra)}


def _toy_pair(ranks):
    """What merging two ids of a toy rank table makes, packed as the bucket loop wants it."""
    rank = bpe.concat_ranker(ranks)
    id_bytes = {i: t for t, i in ranks.items()}

    def pair(a, b):
        r = rank(id_bytes[a], id_bytes[b])
        return -1 if r is None else (r << 24) | ranks[id_bytes[a] + id_bytes[b]]

    return rank, pair


def test_rank_buckets_and_chunks_equal_the_heap_on_shuffled_toy_ranks():
    """Toy ranks where long tokens can outrank their parts: a bucket must stop for the better
    pair, and a chunk that cannot be cut (a merge makes a better pair than itself) is merged
    whole; the ids never change."""
    for seed in range(40):
        rng = random.Random(seed)
        ranks = _toy_rank_vocab(rng)
        rank, pair = _toy_pair(ranks)
        for word in _words(rng, "abc", 30, 60) + _words(rng, "abc", 8, 400):
            data = word.encode()
            start = [ranks[bytes([b])] for b in data]
            expected = [ranks[p] for p in bpe.bpe_heap(bpe.byte_parts(data), rank)] if data else []
            assert bpe.bpe_rank_buckets(start, {}, pair) == expected, (seed, word)
            for chunk in (3, 8, 40):
                assert bpe.bpe_rank_chunks(start, {}, pair, chunk=chunk) == expected, (seed, word, chunk)


@pytest.mark.parametrize("ties", [False, True])
def test_rank_buckets_hand_the_word_back_only_when_a_merge_that_is_no_token_happens(ties):
    """A merge whose bytes are no token makes NO_TOKEN: the word goes back to the bytes path
    (None) when that merge happens, not when a better merge takes one of its parts first."""
    # ids 0 1 2: 0+1 -> 3 at rank 1; 1+2 at rank 5 makes bytes that are no token
    table = {(0 << 24) | 1: (1 << 24) | 3, (1 << 24) | 2: (5 << 24) | bpe.NO_TOKEN}
    no_merge = lambda a, b: -1
    assert bpe.bpe_rank_buckets([1, 2], dict(table), no_merge, ties=ties) is None
    assert bpe.bpe_rank_buckets([0, 1, 2], dict(table), no_merge, ties=ties) == [3, 2]
    assert bpe.bpe_rank_buckets([2, 1, 2], dict(table), no_merge, ties=ties) is None


@pytest.mark.parametrize("ties", [False, True])
def test_a_bucket_set_aside_at_every_merge_gives_the_heaps_ids(ties):
    """'aba' ranked before 'ab': each merge of a+b makes a pair that goes first, so the bucket of
    a+b is set aside at every one of its merges (a walk that copied or re-sorted what is left
    there took time quadratic in the word: 1.0 s on 80,000 bytes, 0.07 s now)."""
    ranks = {b"a": 0, b"b": 1, b"ab": 10, b"aba": 5}
    rank, pair = _toy_pair(ranks)
    data = b"ab" * 2000
    expected = [ranks[p] for p in bpe.bpe_heap(bpe.byte_parts(data), rank)]
    assert bpe.bpe_rank_buckets([ranks[bytes([b])] for b in data], {}, pair, ties=ties) == expected


def test_a_position_filed_in_a_bucket_set_aside_goes_before_the_waiting_ones_or_among_them():
    bucket, resume = [1, 4, 9, 12], {7: 2}  # positions 1 and 4 walked, 9 and 12 waiting
    bpe._file_in_set_aside(bucket, resume, 7, 6)  # before every waiting one: it takes a walked slot
    assert bucket[resume[7]:] == [6, 9, 12] and len(bucket) == 4
    bpe._file_in_set_aside(bucket, resume, 7, 10)  # among them: in its place
    assert bucket[resume[7]:] == [6, 9, 10, 12]


def test_ranks_that_tie_between_merges_need_one_bucket_per_rank():
    """Two different merges at one rank (SentencePiece's equal scores) merge left to right
    among themselves, as the heap does: one bucket per rank (ties=True). One bucket per merge
    runs them merge by merge, lowest key first, which differs on this word."""
    table = {(0 << 24) | 1: (0 << 24) | 4, (1 << 24) | 2: (0 << 24) | 3}  # 0+1 -> 4 and 1+2 -> 3, both rank 0
    no_merge = lambda a, b: -1
    assert bpe.bpe_rank_buckets([0, 1, 2], dict(table), no_merge, ties=True) == [4, 2]  # the leftmost pair first
    assert bpe.bpe_rank_buckets([0, 1, 2], dict(table), no_merge) == [0, 3]  # the lower key first


def test_score_buckets_equal_the_heap_on_llama(llama):
    rng = random.Random(3)
    model = llama.model
    for text in _words(rng, "abcdefghij  ▁▁éü日😀1", 400, 300) + ["▁" * 300, "a" * 300]:
        normalized = llama.normalizer.normalize(text)
        assert model.merge_buckets(normalized) == model.merge(normalized), text


@pytest.mark.parametrize("scores_tie", [True, False])
def test_score_buckets_equal_the_heap_on_shuffled_toy_scores(scores_tie):
    """Few distinct scores (ties and same-score chains are common: a bucket per score), or
    a score of its own for every piece (a bucket per piece); some models with unused pieces
    (merge_buckets is then the queue itself)."""
    for seed in range(60):
        rng = random.Random(seed)
        pieces = sorted({"".join(rng.choice("abc") for _ in range(rng.randint(2, 4))) for _ in range(40)})
        pieces = ["<unk>", "a", "b", "c", *pieces]
        if scores_tie:
            scores = [0.0] + [float(rng.randint(-5, 0)) for _ in pieces[1:]]
        else:
            scores = [0.0] + [-float(k) for k in rng.sample(range(1, 1000), len(pieces) - 1)]
        types = [2] + [rng.choice([1, 1, 1, 5]) if seed % 3 == 0 else 1 for _ in pieces[1:]]
        model = SpmBpeModel(pieces, scores, types)
        assert bool(model.tied_groups) == scores_tie
        for word in _words(rng, "abc", 30, 50) + _words(rng, "abc", 2, 3000):
            assert model.merge_buckets(word) == model.merge(word), (seed, word)
            if len(word) <= 50:
                assert model.merge(word) == model.merge_naive(word), (seed, word)


# ----------------------------------------------------------------------------- chunks


def test_rank_chunks_equal_the_whole_word_on_gpt2_with_tiny_chunks(gpt2, monkeypatch):
    """Chunks of 5 to 300 parts put a cut every few tokens: each must hold or be undone (and a
    few are undone: the check is not a formality)."""
    verdicts = []
    check = bpe.cut_holds
    monkeypatch.setattr(bpe, "cut_holds", lambda *args: verdicts.append(check(*args)) or verdicts[-1])
    rng = random.Random(8)
    for word in _words(rng, "abcdefghijklmnopqrstuvwxyz", 6, 3000) + _words(rng, "0123456789", 4, 2000) + ["ab" * 900]:
        start = [gpt2._byte_ids[b] for b in word.encode()]
        whole = bpe.bpe_rank_buckets(start, gpt2._pairs, gpt2._pair)
        for chunk in (5, 17, 300):
            assert bpe.bpe_rank_chunks(start, gpt2._pairs, gpt2._pair, chunk=chunk) == whole, (word[:20], chunk)
    assert verdicts.count(True) > 1000 and verdicts.count(False) >= 1


def test_a_cut_the_merges_would_join_is_undone():
    """'ab' + 'ab' ... with the pair (ab, ab) ranked: a cut between two 'ab' looks like a token end
    to each side alone, but the two would be joined into 'abab', so the check refuses it."""
    a, b, ab, abab = 0, 1, 2, 3
    table = {(a << 24) | b: (0 << 24) | ab, (ab << 24) | ab: (1 << 24) | abab}
    left = bpe.merge_chunk([a, b, a, b], 0, 2, dict(table), lambda x, y: -1)
    right = bpe.merge_chunk([a, b, a, b], 2, 4, dict(table), lambda x, y: -1)
    assert left[0] == right[0] == [ab]
    assert not bpe.cut_holds(left[2], right[1], dict(table), lambda x, y: -1)
    word = [a, b] * 50
    assert bpe.bpe_rank_chunks(word, dict(table), lambda x, y: -1, chunk=6) == [abab] * 25


def test_score_chunks_equal_the_heap_on_llama(llama):
    model = llama.model
    rng = random.Random(4)
    for text in _words(rng, "abcdefghij", 3, 9000) + ["▁" * 9000]:
        normalized = llama.normalizer.normalize(text)
        assert model.merge_buckets(normalized) == model.merge(normalized), text[:20]


def test_chunks_whose_cuts_keep_failing_cost_at_most_a_few_passes_over_the_word(monkeypatch):
    """A word that merges into one token ('a' * 2**14 where each power of two of 'a' is a token):
    every cut is undone. Merging the growing prefix again at each undo was quadratic (about
    2,000,000 parts merged for these 16,384); past the word's length of re-merged parts the
    word is merged whole instead."""
    table = {(k << 24) | k: (k << 24) | (k + 1) for k in range(20)}  # id k + k -> id k + 1 at rank k
    word = [0] * (1 << 14)
    merged_parts = []
    real = bpe.merge_chunk
    monkeypatch.setattr(bpe, "merge_chunk", lambda ids, start, end, *rest, **options: merged_parts.append(end - start) or real(ids, start, end, *rest, **options))
    assert bpe.bpe_rank_chunks(word, dict(table), lambda a, b: -1, chunk=64) == [14]
    assert sum(merged_parts) <= 3 * len(word)


def test_score_ids_in_one_pass_equal_the_spans_on_toy_models():
    """SpmBpeModel.encode_ids (merged symbols looked up in one pass, the spans loop only when
    one is unknown) against encode_spans, on toy models with unknown characters, byte
    fallback or not, a control and a user-defined piece, and an unknown piece spelled like a
    character of the text (its id comes from a symbol, yet it is unknown: bytes or fused)."""
    for seed in range(120):
        rng = random.Random(seed)
        pieces = sorted({"".join(rng.choice("abc") for _ in range(rng.randint(2, 4))) for _ in range(30)})
        unknown = rng.choice(["<unk>", "u"])
        pieces = [unknown, "a", "b", "c", "d", "e", *pieces, *(f"<0x{v:02X}>" for v in range(256))]
        types = [2, 1, 1, 1, 3, 4] + [1] * (len(pieces) - 262) + [6] * 256
        scores = [0.0] + [float(rng.randint(-6, 0)) for _ in pieces[1:]]
        for byte_fallback in (False, True):
            model = SpmBpeModel(pieces, scores, types, byte_fallback=byte_fallback)
            for text in _words(rng, "abcabcabcdeuxé", 25, 90):
                expected = [index for index, _, _ in model.encode_spans(text)]
                assert model.encode_ids(text) == expected, (seed, byte_fallback, text)


def test_repeating_words_merge_each_distinct_chunk_once_with_the_same_ids(monkeypatch):
    """A word that repeats a random unit, on random rank tables: its chunks repeat (each cut is
    planned a chunk after the one before), each distinct chunk is merged once, and the ids are
    still those of the heap on bytes."""
    calls = []
    real = bpe.merge_chunk
    monkeypatch.setattr(bpe, "merge_chunk", lambda ids, start, end, *rest, **options: calls.append(end - start) or real(ids, start, end, *rest, **options))
    repeats = 0
    for seed in range(30):
        rng = random.Random(seed)
        ranks = _toy_rank_vocab(rng)
        rank, pair = _toy_pair(ranks)
        unit = "".join(rng.choice("abc") for _ in range(rng.randint(1, 9)))
        word = (unit * (900 // len(unit) + 1))[: rng.randint(500, 900)] + rng.choice(["", "a", "cab"])
        data = word.encode()
        start = [ranks[bytes([b])] for b in data]
        expected = [ranks[p] for p in bpe.bpe_heap(bpe.byte_parts(data), rank)]
        for chunk in (7, 20, 64):
            calls.clear()
            assert bpe.bpe_rank_chunks(start, {}, pair, chunk=chunk) == expected, (seed, word, chunk)
            repeats += len(calls) < len(data) // chunk - 2  # fewer merges than chunks: some were seen
    assert repeats > 30


def test_a_word_from_twice_the_smallest_chunk_is_cut_at_least_once(gpt2, monkeypatch):
    """Chunks are up to CHUNK_PARTS long, but a word of 2 * CHUNK_MIN_PARTS parts or more is
    still merged in at least two (so the conformance suites' 3,000-5,000 byte words go through
    the cuts), and one shorter is merged whole."""
    calls = []
    real = bpe.merge_chunk
    monkeypatch.setattr(bpe, "merge_chunk", lambda ids, start, end, *rest, **options: calls.append(end - start) or real(ids, start, end, *rest, **options))
    rng = random.Random(12)
    for length, merged_in in ((2 * bpe.CHUNK_MIN_PARTS - 1, 0), (2 * bpe.CHUNK_MIN_PARTS, 2), (3000, 2),
                              (3 * bpe.CHUNK_PARTS, 3)):
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(length))
        start = [gpt2._byte_ids[b] for b in word.encode()]
        calls.clear()
        assert bpe.bpe_rank_chunks(start, gpt2._pairs, gpt2._pair) == bpe.bpe_rank_buckets(start, gpt2._pairs, gpt2._pair)
        assert len(calls) == merged_in, (length, calls)


def test_score_buckets_equal_the_heap_when_most_scores_are_equal():
    """One or two distinct scores: a merge often makes pairs of its own rank on both sides, and
    the left one (further left, so first for the heap) must merge before the right one."""
    for seed in range(60):
        rng = random.Random(seed)
        pieces = sorted({"".join(rng.choice("ab") for _ in range(rng.randint(2, 6))) for _ in range(30)})
        pieces = ["<unk>", "a", "b", *pieces]
        scores = [0.0, -1.0, -1.0] + [float(rng.choice([-1, -1, -1, -2])) for _ in pieces[3:]]
        model = SpmBpeModel(pieces, scores, [2] + [1] * (len(pieces) - 1))
        for word in _words(rng, "ab", 20, 120):
            assert model.merge_buckets(word) == model.merge(word), (seed, word)


def test_a_planned_cut_with_no_token_start_after_the_last_one_moves_on():
    """'a' * 200 where each power of two of 'a' is a token, in chunks of 3: the window around
    the first planned cut (position 3) merges into 16 + 2 + 1 parts, so the token start nearest
    to it is 0, the last cut; the next cut is planned a chunk further (planning the same one
    again never ended)."""
    table = {(k << 24) | k: (k << 24) | (k + 1) for k in range(20)}  # id k + k -> id k + 1 at rank k
    assert bpe.likely_token_end([0] * 200, 3, dict(table), lambda a, b: -1) == 0
    whole = bpe.bpe_rank_buckets([0] * 200, dict(table), lambda a, b: -1)
    assert bpe.bpe_rank_chunks([0] * 200, dict(table), lambda a, b: -1, chunk=3) == whole == [7, 6, 3]


def test_byte_pairs_read_from_the_table_are_what_the_memo_says():
    """The byte-level engine reads what each pair of neighbouring bytes makes from a table of
    byte pairs (the bytes taken two at a time as 16-bit numbers, even then odd positions):
    the same values as the pair memo, on a fresh engine (the table fills) and again (it is
    read), for words of odd and even length over bytes that merge and bytes that do not."""
    fresh = labkit.load("gpt2", engine="labkit")
    rng = random.Random(21)
    for word in _words(rng, "abcdefghijklmnopqrstuvwxyz0123456789éü日😀", 40, 300) + ["ab", "abc"]:
        data = word.encode()
        if len(data) < 2:
            continue
        start = [fresh._byte_ids[b] for b in data]
        expected = [fresh._pair(a, b) for a, b in zip(start, start[1:])]
        assert fresh._byte_pairs_make(data) == expected == fresh._byte_pairs_make(data), word
    assert sum(value is not None for value in fresh._byte_pair_table) > 500


def test_a_first_long_word_asks_what_each_distinct_byte_pair_makes_once():
    """On a fresh engine the byte-pair table is empty: a long word's first pairs are each asked
    of the pair memo once per distinct pair, not once per position (a first encode of one word
    repeated 10,000 times cost 300,000 calls). Same for the id pairs of the bucket loops."""
    fresh = labkit.load("gpt2", engine="labkit")
    asked = []
    pair = fresh._pair
    fresh._pair = lambda a, b: asked.append((a, b)) or pair(a, b)
    data = b"abcab" * 2000
    made = fresh._byte_pairs_make(data)
    assert sorted(asked) == sorted({(fresh._byte_ids[x], fresh._byte_ids[y]) for x, y in zip(data, data[1:])})
    assert made == [pair(fresh._byte_ids[x], fresh._byte_ids[y]) for x, y in zip(data, data[1:])]
    known, asked = {}, []

    def ask(a, b):  # a memo the caller fills, as the engines' pair functions do
        asked.append((a, b))
        known[(a << 24) | b] = value = pair(a, b)
        return value

    start = [fresh._byte_ids[b] for b in data]
    for loop in (bpe.bpe_rank_buckets, bpe.bpe_rank_chunks):
        known.clear(), asked.clear()
        assert loop(start, known, ask) == fresh._long_word_ids(data)
        assert len(asked) == len(set(asked)) < 50  # a memo starting empty: each pair it meets asked once
    known.clear(), asked.clear()
    assert bpe.bpe_rank_buckets(start, known, ask, ties=True) == fresh._long_word_ids(data)
    assert len(asked) == len(set(asked)) < 50


def test_rank_chunks_given_the_first_pairs_equal_the_heap_on_shuffled_toy_ranks():
    """bpe_rank_chunks / bpe_rank_buckets / merge_chunk / likely_token_end with ``made`` (what
    the word's first pairs make, given by the caller) give what they give without it, and leave
    the caller's list as it was."""
    for seed in range(25):
        rng = random.Random(seed)
        ranks = _toy_rank_vocab(rng)
        rank, pair = _toy_pair(ranks)
        for word in _words(rng, "abc", 10, 300):
            data = word.encode()
            if len(data) < 2:
                continue
            start = [ranks[bytes([b])] for b in data]
            made = [pair(a, b) for a, b in zip(start, start[1:])]
            kept = list(made)
            expected = [ranks[p] for p in bpe.bpe_heap(bpe.byte_parts(data), rank)]
            assert bpe.bpe_rank_buckets(start, {}, pair, made) == expected, (seed, word)
            for chunk in (3, 8, 40):
                assert bpe.bpe_rank_chunks(start, {}, pair, chunk=chunk, made=made) == expected, (seed, word, chunk)
            # a chunk and a probe window take their slice of it
            a = rng.randrange(len(start) - 1)
            b = rng.randrange(a + 1, len(start) + 1)
            assert bpe.merge_chunk(start, a, b, {}, pair, made) == bpe.merge_chunk(start, a, b, {}, pair), (seed, word, a, b)
            assert bpe.likely_token_end(start, a, {}, pair, made) == bpe.likely_token_end(start, a, {}, pair), (seed, word, a)
            assert made == kept
