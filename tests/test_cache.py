"""The two-level tokenization cache: correct first (equal to the uncached engine, cold and
warm, under threads), then bounded, then fast (the speed is measured by the benchmark)."""
from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import labkit
from support.engines import loaded
from labkit.bench.harness import corpus_lines
from labkit.bench.workloads import WORKLOADS, chatml, make_workload
from labkit.cache.boundaries import SafeBoundaries, _find_safe_added_tokens, _overlaps, _overlaps_itself
from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer
from labkit.cache.lru import LruStore, TextStore
from labkit.cache.prefix_tree import PrefixTree
from labkit.core import AddedToken

BOTH = CacheConfig(enable_l0=True, enable_l1=True)
# (bundled name, engine) pairs the cache is checked over
SERVED = [
    ("qwen2", "hf"), ("qwen2", "labkit"), ("qwen2", "tiktoken"),
    ("gpt2", "hf"), ("gpt2", "labkit"),
    ("llama-spm", "labkit"), ("llama-spm", "sentencepiece"),
    ("bert-bge", "labkit"),
    ("cl100k_base", "tiktoken"), ("cl100k_base", "labkit"),
    ("botchan-unigram", "sentencepiece"), ("botchan-unigram", "labkit"),
    ("minilm", "hf"),
]
def load(name, engine):
    return loaded(name, engine)  # every pair in SERVED must load


def same(a, b) -> bool:
    return a.ids == b.ids and a.tokens == b.tokens and a.offsets == b.offsets


def chat_prompts(tok, n: int, seed: int) -> list[str]:
    """Random chat-like prompts that share prefixes, rendered with the shipped templates
    (and the tokenizer's own), with the tokenizer's special tokens sprinkled in."""
    from labkit.chat import render_chat_template
    from labkit.paths import data_dir

    rng = random.Random(seed)
    lines = corpus_lines()
    templates = [p.read_text(encoding="utf-8") for p in sorted((data_dir() / "templates").glob("*.jinja"))]
    if tok.chat_template:
        templates.append(tok.chat_template)
    specials = [a.content for a in tok.vocab.added_tokens][:20]
    systems = [" ".join(rng.choice(lines) for _ in range(rng.randint(1, 12))) for _ in range(4)]
    prompts = []
    while len(prompts) < n:
        messages = [{"role": "system", "content": rng.choice(systems)}] if rng.random() < 0.7 else []
        for turn in range(rng.randint(1, 3)):
            text = rng.choice(lines)
            if specials and rng.random() < 0.2:
                text += rng.choice(specials) + rng.choice(lines)
            messages.append({"role": "user", "content": text})
            if turn < 2 and rng.random() < 0.6:
                messages.append({"role": "assistant", "content": rng.choice(lines)})
        if messages[-1]["role"] == "assistant":
            messages.pop()
        template = rng.choice(templates)
        try:
            prompt = render_chat_template(template, messages, add_generation_prompt=True,
                                          bos_token="<s>", eos_token="</s>")
        except labkit.LabkitError:  # gemma refuses a system turn, mistral wants alternation
            prompt = chatml([(m["role"], m["content"]) for m in messages])
        prompts.append(prompt)
    return prompts


# ----------------------------------------------------------------------------- config


@pytest.mark.parametrize("kwargs", [
    dict(enable_l0=True, l0_max_entries=0),
    dict(enable_l1=True, l1_max_memory=0),
    dict(enable_l1=True, l1_max_memory=-5),
    dict(enable_l0="yes"),
    dict(l0_max_entries=1.5),
])
def test_bad_config_is_refused(kwargs):
    with pytest.raises(labkit.LabkitError):
        CacheConfig(**kwargs)


def test_disabled_by_default_and_passes_through():
    tok = load("qwen2", "hf")
    cached = CachedTokenizer(tok)
    assert cached.l0 is None and cached.l1 is None
    text = "<|im_start|>user\nhi<|im_end|>"
    assert same(cached.encode(text), tok.encode(text))
    assert cached.decode([9707, 1879]) == tok.decode([9707, 1879])
    assert cached.vocab_size == tok.vocab_size and cached.engine == tok.engine


# ----------------------------------------------------------------------------- why boundaries


@pytest.mark.parametrize("name,engine", [("gpt2", "hf"), ("qwen2", "hf"), ("cl100k_base", "tiktoken"),
                                         ("llama-spm", "sentencepiece")])
def test_bpe_is_not_prefix_compositional_at_ordinary_boundaries(name, engine):
    """Search botchan for cut points where encode(a + b) != encode(a) + encode(b)."""
    tok = load(name, engine)
    counterexamples = []
    for line in corpus_lines()[:200]:
        for cut in range(1, len(line)):
            a, b = line[:cut], line[cut:]
            if tok.encode(a).ids + tok.encode(b).ids != tok.encode(line).ids:
                counterexamples.append((a[-12:], b[:12]))
                break
        if len(counterexamples) >= 5:
            break
    print(name, counterexamples)
    assert len(counterexamples) >= 5


def test_safe_boundaries_of_qwen2_are_its_chat_tokens():
    tok = load("qwen2", "hf")
    safe = {a.content for a in SafeBoundaries(tok).tokens}
    assert {"<|im_start|>", "<|im_end|>", "<|endoftext|>"} <= safe


@pytest.mark.parametrize("name,engine", [("qwen2", "hf"), ("llama-spm", "sentencepiece"), ("minilm", "hf"), ("cl100k_base", "tiktoken")])
def test_fast_cut_points_equal_the_splitters(name, engine):
    tok = load(name, engine)
    bounds = SafeBoundaries(tok)
    for text in chat_prompts(tok, 300, seed=11) + ["<|im_end|><|im_end|>", "<s></s><s>", "[CLS][SEP]x[SEP]"]:
        assert bounds.cut_points(text) == bounds.cut_points_by_splitting(text), text


def test_overlapping_spellings_are_not_safe():
    assert _overlaps("<|im_end|>", "<|im_end|>x")
    assert _overlaps("ab]", "]cd")
    assert not _overlaps("<|a|>", "<|b|>")
    assert _overlaps_itself("aba") and not _overlaps_itself("<|im_end|>")


def test_cut_points_only_after_safe_specials_and_not_when_specials_are_text():
    tok = load("qwen2", "hf")
    bounds = SafeBoundaries(tok)
    text = "<|im_start|>user\nhi<|im_end|>\n"
    assert bounds.cut_points(text) == [len("<|im_start|>"), len("<|im_start|>user\nhi<|im_end|>")]
    assert bounds.cut_points(text, parse_special=False) == []


# ----------------------------------------------------------------------------- correctness


@pytest.mark.parametrize("name,engine", SERVED)
def test_cached_equals_uncached_cold_and_warm(name, engine):
    tok = load(name, engine)
    prompts = chat_prompts(tok, 150, seed=sum(name.encode()))
    reference = {p: tok.encode(p) for p in prompts}
    reference_framed = {p: tok.encode(p, add_special_tokens=True) for p in prompts[:40]}
    cached = CachedTokenizer(tok, BOTH)
    for _ in range(2):  # cold, then warm
        for p in prompts:
            assert same(cached.encode(p), reference[p]), p
        for p in prompts[:40]:
            assert same(cached.encode(p, add_special_tokens=True), reference_framed[p]), p
    stats = cached.stats()
    assert stats["l0"]["hits"] > 0
    if SafeBoundaries(tok).tokens:
        assert stats["l1"]["hits"] > 0


@pytest.mark.parametrize("name,engine", [("qwen2", "hf"), ("llama-spm", "sentencepiece"), ("minilm", "hf")])
def test_l1_alone_under_eight_threads(name, engine):
    tok = load(name, engine)
    prompts = chat_prompts(tok, 400, seed=7)
    reference = [tok.encode(p, add_special_tokens=True) for p in prompts]
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True, l1_max_memory=256 * 1024))
    errors = []

    def work(offset):
        order = list(range(len(prompts)))
        random.Random(offset).shuffle(order)
        for i in order:
            if not same(cached.encode(prompts[i], add_special_tokens=True), reference[i]):
                errors.append(i)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    assert errors == []
    assert cached.stats()["l1"]["bytes"] <= 256 * 1024


def test_add_special_tokens_is_applied_once_at_the_start():
    tok = load("llama-spm", "sentencepiece")
    assert tok.special_tokens.add_bos
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True))
    text = "<s>[INST] hi [/INST] there</s><s>[INST] again"
    for _ in range(2):
        ids = cached.encode(text, add_special_tokens=True).ids
        assert ids == tok.encode(text, add_special_tokens=True).ids
        assert ids[0] == tok.special_tokens.bos_id and ids[1] == tok.special_tokens.bos_id


def test_workloads_are_deterministic_and_equal_uncached():
    tok = load("qwen2", "hf")
    for name in WORKLOADS:
        a = make_workload(name, seed=3, n_requests=30)
        assert a.prompts == make_workload(name, seed=3, n_requests=30).prompts
        cached = CachedTokenizer(tok, BOTH)
        for p in a.prompts:
            assert same(cached.encode(p), tok.encode(p))
    assert make_workload("realistic_chat", n_requests=50).shared_prefix_fraction() > 0.95
    assert make_workload("no_reuse", n_requests=50).shared_prefix_fraction() < 0.05


# ----------------------------------------------------------------------------- bounds, sharing


def test_lru_store_bounds_entries_and_bytes():
    store = LruStore(max_entries=3)
    for i in range(10):
        store.put(i, i)
    assert len(store) == 3 and store.evictions == 7 and store.get(9) == 9 and store.get(0) is None
    store = LruStore(max_bytes=100)
    for i in range(10):
        store.put(i, i, size=30)
    assert store.bytes <= 100 and len(store) == 3
    store.put("huge", 0, size=1000)
    assert store.get("huge") is None and len(store) == 3 and store.refused == 1


def test_l1_memory_budget_evicts_and_stays_correct():
    tok = load("qwen2", "hf")
    workload = make_workload("multi_turn", n_requests=60)
    cached = CachedTokenizer(tok, CacheConfig(enable_l1=True, l1_max_memory=256 * 1024))
    for p in workload.prompts:
        assert same(cached.encode(p), tok.encode(p))  # offsets read: entries keep them too
    stats = cached.stats()["l1"]
    assert stats["evictions"] > 0 and stats["bytes"] <= 256 * 1024


def test_shared_stores_never_serve_another_tokenizer():
    qwen, gpt2 = load("qwen2", "hf"), load("gpt2", "hf")
    l0, l1 = TextStore(max_entries=100, max_bytes=2**20), PrefixTree(max_bytes=2**20)
    a = CachedTokenizer(qwen, BOTH, l0_store=l0, l1_store=l1)
    b = CachedTokenizer(gpt2, BOTH, l0_store=l0, l1_store=l1)
    assert a.fingerprint != b.fingerprint
    assert a.l0 is l0 and b.l0 is l0 and a.l1 is l1 and b.l1 is l1  # empty stores are shared too
    text = "<|endoftext|>héllo wörld <|endoftext|> again"
    assert a.encode(text).ids == qwen.encode(text).ids
    assert b.encode(text).ids == gpt2.encode(text).ids
    assert a.encode(text).ids != b.encode(text).ids


def test_fingerprint_is_the_same_for_every_engine_of_a_file():
    fingerprints = {CachedTokenizer(load("qwen2", e)).fingerprint for e in ("hf", "labkit")}
    assert len(fingerprints) == 1


def test_fingerprint_is_taken_once_per_tokenizer_and_equals_a_fresh_digest():
    from labkit.cache import fingerprint

    tok = load("gpt2", "labkit")
    first = fingerprint.tokenizer_fingerprint(tok)
    assert fingerprint._DIGESTS[tok] == first == fingerprint._digest(tok)
    assert fingerprint.tokenizer_fingerprint(tok) is first  # remembered, not hashed again


def test_l0_length_index_follows_puts_replacements_evictions_and_clear():
    from collections import Counter

    store = TextStore(max_entries=50, max_bytes=2**24)
    rng = random.Random(1)
    texts = ["x" * rng.randint(1, 40) + str(i) for i in range(300)]
    for i, text in enumerate(texts):
        store.store(b"fp", text, False, True, (i,))
        if i % 7 == 0:
            store.store(b"fp", text, False, True, (i, i))  # the same key again: replaced
        stored = Counter(len(entry.text) for entry, _ in store._items.values())
        assert store._lengths == dict(stored)
    assert store.evictions > 0 and store.lookup(b"fp", texts[-1], False, True).ids == (299,)
    assert store.lookup(b"fp", "y" * 999, False, True) is None  # a length no entry has: a miss
    store.clear()
    assert store._lengths == {} and store.lookup(b"fp", texts[-1], False, True) is None


def test_clear_starts_the_prefix_tree_afresh():
    # a root's counts decide what it admits: after clear() a cache admits as a new one does
    tree = PrefixTree(max_bytes=2**24)
    root = tree.root(b"fp")
    text = "x" * 40
    for index in range(64):
        tree.add(root, f"{index:02d}{text}", 42, (index,), 2**20)
    assert not tree.admits(root) or root.declined  # the policy has started declining
    tree.clear()
    fresh = tree.root(b"fp")
    assert fresh is not root and fresh.added == fresh.reused == fresh.declined == 0 and tree.admits(fresh)


def test_cached_tokenizer_rejects_what_it_cannot_wrap():
    with pytest.raises(labkit.LabkitError):
        CachedTokenizer("qwen2", BOTH)
    with pytest.raises(labkit.LabkitError):
        CachedTokenizer(load("qwen2", "hf"), {"enable_l0": True})


def test_unsafe_special_tokens_are_not_boundaries():
    tok = load("qwen2", "hf")
    vocab = tok.vocab
    extra = AddedToken("<|im_start|>x", vocab.added_tokens[0].id, special=True)
    original = vocab.added_tokens
    try:
        vocab.added_tokens = [*original, extra]
        safe = {a.content for a in _find_safe_added_tokens(tok)}
    finally:
        vocab.added_tokens = original
    assert "<|im_start|>" not in safe
