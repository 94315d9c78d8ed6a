"""The cache's cheap paths (issue 15): entries keep ids until a caller reads token strings or
offsets, short segments are not cut, a node whose children are never found again stops
taking new ones, and every one of these still gives exactly the engine's Encoding."""
from __future__ import annotations

import sys

import pytest

import labkit
from support.engines import loaded
from labkit.bench.workloads import chatml, make_workload
from labkit.cache.boundaries import kept_cuts
from labkit.cache.cached_tokenizer import MIN_SEGMENT, CacheConfig, CachedTokenizer
from labkit.cache.lru import ADMIT_ONE_IN
from labkit.cache.prefix_tree import PrefixTree


def same(a, b) -> bool:
    return a.ids == b.ids and a.tokens == b.tokens and a.offsets == b.offsets


def test_entries_keep_ids_until_offsets_are_read_then_charge_them():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True))
    system = chatml([("system", "You answer questions about the novel. " * 20)], add_generation_prompt=False)
    cached.encode(system + chatml([("user", "first?")]))
    nodes = list(cached.l1._lru)
    assert nodes and all(n.tokens is None and n.offsets is None for n in nodes)
    before = cached.stats()["l1"]["bytes"]
    prompt = system + chatml([("user", "second?")])
    prefix, _ = cached.cached_prefix(prompt)
    enc = cached.encode(prompt)
    assert enc.ids == tok.encode(prompt).ids and all(n.tokens is None for n in nodes)
    assert same(enc, tok.encode(prompt))  # reading them fills the prefix's nodes
    assert all(n.tokens is not None for n in prefix.chain())
    assert cached.stats()["l1"]["bytes"] > before


@pytest.mark.parametrize("add_special_tokens", [False, True])
def test_l0_hit_reads_offsets_made_again_and_equal(add_special_tokens):
    tok = loaded("minilm", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l0=True))
    text = "Hello wörld, again and again."
    cached.encode(text, add_special_tokens=add_special_tokens)
    for _ in range(2):  # first hit makes them, second finds them kept
        assert same(cached.encode(text, add_special_tokens=add_special_tokens),
                    tok.encode(text, add_special_tokens=add_special_tokens))
    assert cached.stats()["l0"]["hits"] == 2


def test_l0_texts_with_the_same_key_never_share_an_answer():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l0=True))
    a = "x" * 40 + "middle one" + "y" * 40
    b = "x" * 40 + "middle two" + "y" * 40  # same length, head and tail
    for text in (a, b, a, b):
        assert same(cached.encode(text), tok.encode(text))


def test_short_segments_are_not_cut():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True))
    text = "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
    every = cached.boundaries.cut_points(text)
    kept = cached.cut_points(text)
    assert kept == kept_cuts(every, 0, MIN_SEGMENT) and len(kept) < len(every)
    assert all(b - a >= MIN_SEGMENT for a, b in zip([0, *kept], kept))
    assert kept_cuts([12, 40, 52, 90], 0, 16) == [40, 90]


def test_a_node_whose_children_are_never_found_again_takes_one_in_eight():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True))
    prompts = make_workload("customer_service", n_requests=200).prompts
    for prompt in prompts:
        assert cached.encode(prompt).ids == tok.encode(prompt).ids
    system_node = next(iter(cached.l1._roots[cached.fingerprint].children.values()))[0]
    admit_after = cached.l1.admit_after
    assert admit_after <= system_node.added <= admit_after + (len(prompts) - admit_after) // ADMIT_ONE_IN + 1
    assert cached.stats()["prefix_tokens_reused"] > 0.9 * sum(len(tok.encode(p).ids) for p in prompts[1:])


def test_growing_conversations_keep_storing_every_turn():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True))
    prompts = make_workload("multi_turn", n_requests=120).prompts
    for prompt in prompts:
        cached.encode(prompt)
    stats = cached.stats()
    assert stats["prefix_tokens_reused"] / (stats["prefix_tokens_reused"] + stats["tokens_encoded"]) > 0.75


def test_split_points_refuse_ids_that_do_not_match_the_text():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True))
    text = "a long enough user turn<|im_end|>and the rest"
    ends = cached.boundaries.ends_from(text, 0)
    ids = tok.encode(text).ids
    end_id = tok.token_to_id("<|im_end|>")
    assert cached._split_points(ids, text, ends, ends) == [ids.index(end_id) + 1]
    assert cached._split_points(ids + [end_id], text, ends, ends) is None  # one special too many
    start_id = tok.token_to_id("<|im_start|>")
    swapped = [start_id if i == end_id else i for i in ids]
    assert cached._split_points(swapped, text, ends, ends) is None  # another special's id at the cut


def test_a_segment_that_encodes_otherwise_alone_is_an_error_not_a_wrong_answer():
    tree = PrefixTree(max_bytes=2**20)
    node, _ = tree.add(tree.root(b"fp"), "abc<x>", 6, (1, 2, 3), allowance=2**20)

    def encode(segment):
        return labkit.core.Encoding([9, 9], ["a", "b"], [(0, 1), (1, 2)])

    with pytest.raises(labkit.LabkitError, match="not a safe cut"):
        tree.filled(node, encode)


def test_walk_finds_children_among_many_lengths_and_short_segments():
    tree = PrefixTree(max_bytes=2**22, admit_after=None)
    root = tree.root(b"fp")
    # short segments (under the 64-character key) of 22 lengths, and long ones that share
    # their first 64 characters with 20 lengths: both walks must scan for the cut
    texts = [f"user: question {'?' * k}<x>" for k in range(20)] + ["<x>", "ab<x>"]
    texts += [f"user: {'the same long head ' * 4}{'!' * k}<x>" for k in range(20)]
    nodes = {}
    for text in texts:
        nodes[text], _ = tree.add(root, text, len(text), tuple(range(len(text))), allowance=2**22)

    def next_cut(text, position):
        found = text.find("<x>", position)
        return None if found < 0 else found + 3

    for text in texts:
        node, depth = tree.longest(b"fp", text + "tail", next_cut)
        assert node is nodes[text] and depth == 0
    assert tree.longest(b"fp", "user: question ??<y>", next_cut) == (None, -1)
    assert tree.longest(b"fp", f"user: {'the same long head ' * 4}!!?<x>", next_cut) == (None, -1)
    assert tree.root(b"fp").short is not None and len(tree.root(b"fp").short) > 8
    assert max(len(lengths) for lengths in tree.root(b"fp").lengths.values()) > 8


def test_l0_stores_one_in_eight_once_its_texts_are_never_found_again():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l0=True))
    texts = [f"question {k}: what happened on page {k * 7}?" for k in range(200)]
    for text in texts:
        assert cached.encode(text).ids == tok.encode(text).ids
    admit_after = cached.l0.admit_after
    assert len(cached.l0) == admit_after + (len(texts) - admit_after) // ADMIT_ONE_IN
    # texts that are sent again keep the store open: every one is kept, and every repeat hits
    again = CachedTokenizer(tok, CacheConfig(enable_l0=True))
    for text in texts:
        assert again.encode(text).ids == again.encode(text).ids == tok.encode(text).ids
    assert len(again.l0) == len(texts) and again.stats()["l0"]["hits"] == len(texts)


def test_a_prefix_hit_again_copies_one_kept_list_that_callers_cannot_change():
    tok = loaded("qwen2", "hf")
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True))
    system = chatml([("system", "You answer questions about the novel. " * 20)], add_generation_prompt=False)
    prompts = [system + chatml([("user", f"question number {k}?")]) for k in range(4)]
    cached.encode(prompts[0])
    node, _ = cached.cached_prefix(prompts[1])
    assert node.prefix is None  # found once (just now): nothing kept yet
    for prompt in prompts[1:]:
        enc = cached.encode(prompt)
        assert enc.ids == tok.encode(prompt).ids
        enc.ids[: node.length] = [0] * node.length  # a caller's changes stay its own
    joined = [i for link in node.chain() for i in link.ids]
    assert node.prefix == joined and node.size >= sys.getsizeof(node.prefix)
    assert cached.encode(prompts[3]).ids == tok.encode(prompts[3]).ids
    assert cached.encode(prompts[3], add_special_tokens=True).ids == tok.encode(prompts[3], add_special_tokens=True).ids


def test_a_head_shared_by_two_children_is_found_by_key_and_survives_eviction_of_either():
    tree = PrefixTree(max_bytes=2**22, admit_after=None)
    root = tree.root(b"fp")
    head = "h" * 70  # longer than a key's head: both children share it
    first, _ = tree.add(root, head + "one<x>", len(head) + 6, (1,), allowance=2**22)
    assert root.single == {head[:64]: first}  # one child with this head: found without a key
    second, _ = tree.add(root, head + "two!<x>", len(head) + 7, (2,), allowance=2**22)
    assert root.single == {}

    def next_cut(text, position):
        return text.find("<x>", position) + 3

    assert tree.longest(b"fp", head + "one<x>tail", next_cut)[0] is first
    assert tree.longest(b"fp", head + "two!<x>tail", next_cut)[0] is second
    with tree._lock:
        tree._detach(first)
    assert tree.longest(b"fp", head + "one<x>tail", next_cut) == (None, -1)
    assert tree.longest(b"fp", head + "two!<x>tail", next_cut)[0] is second
    assert tree.longest(b"fp", head + "three<x>", next_cut) == (None, -1)
