"""A two-level tokenization cache in front of any engine.

L0 is an exact-match cache: the same (text, add_special_tokens, parse_special) gives the
stored Encoding. L1 is a prefix cache whose keys are cut only at safe special-token
boundaries (see :mod:`labkit.cache.boundaries`): a chat prompt that shares its system
prompt and earlier turns with a previous one re-uses their ids and only the new suffix is
tokenized. L1 is a tree of text segments (:mod:`labkit.cache.prefix_tree`), found by
comparing the text in place, so a hit is exact and costs no hashing of the prefix. Both
levels are bounded by bytes measured from the objects they keep (:mod:`labkit.cache.sizes`).
Introduced in notebook ``10_cache_boundaries``.

Example:
    >>> from labkit.cache.cached_tokenizer import CachedTokenizer, CacheConfig
    >>> import labkit
    >>> CachedTokenizer(labkit.load("qwen2"), CacheConfig(enable_l0=True, enable_l1=True))
    <labkit.Tokenizer ggml-vocab-qwen2.gguf model=bpe_byte engine=labkit vocab_size=151936>
"""
from __future__ import annotations

import sys
from bisect import bisect_left
from dataclasses import dataclass
from operator import itemgetter

from labkit import metrics
from labkit.cache.boundaries import SafeBoundaries
from labkit.cache.fingerprint import tokenizer_fingerprint
from labkit.cache.lru import TextStore
from labkit.cache.prefix_tree import PrefixTree
from labkit.cache.sizes import encoding_bytes
from labkit.core import Encoding, LabkitError, Tokenizer

# an L0 entry beyond its payload: key tuple, value tuple, two slots in the LRU map
_L0_OVERHEAD = sys.getsizeof((b"", "", True, True)) + sys.getsizeof(((), (), ())) + 2 * 104 + 64
# one request's or one entry's share of a level's budget, at most
SHARE_OF_BUDGET = 8
_END = itemgetter(1)


@dataclass(frozen=True)
class CacheConfig:
    """Which cache levels are on and how large they may grow (bytes measured, see
    :mod:`labkit.cache.sizes`). Disabled by default. No single entry (and, in L1, no single
    request) may take more than 1/8 of its level's memory.

    Example:
        >>> from labkit.cache.cached_tokenizer import CacheConfig
        >>> CacheConfig(enable_l1=True, l1_max_memory=8 * 2**20)
        CacheConfig(enable_l0=False, l0_max_entries=10000, enable_l1=True, l1_max_memory=8388608, l0_max_memory=16777216)
    """

    enable_l0: bool = False
    l0_max_entries: int = 10_000
    enable_l1: bool = False
    l1_max_memory: int = 50 * 2**20
    l0_max_memory: int = 16 * 2**20

    def __post_init__(self):
        for name in ("enable_l0", "enable_l1"):
            if not isinstance(getattr(self, name), bool):
                raise LabkitError(f"CacheConfig.{name} must be a bool, got {getattr(self, name)!r}")
        for name in ("l0_max_entries", "l1_max_memory", "l0_max_memory"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise LabkitError(f"CacheConfig.{name} must be an int, got {value!r}")
        if self.enable_l0 and self.l0_max_entries <= 0:
            raise LabkitError(f"CacheConfig.l0_max_entries must be > 0 when L0 is enabled, got {self.l0_max_entries}")
        if self.enable_l0 and self.l0_max_memory <= 0:
            raise LabkitError(f"CacheConfig.l0_max_memory must be > 0 when L0 is enabled, got {self.l0_max_memory}")
        if self.enable_l1 and self.l1_max_memory <= 0:
            raise LabkitError(f"CacheConfig.l1_max_memory must be > 0 when L1 is enabled, got {self.l1_max_memory}")


class CachedTokenizer(Tokenizer):
    """The Tokenizer surface with an L0 exact cache and an L1 special-token prefix cache.

    Pass ``l0_store``/``l1_store`` to share stores between tokenizers: keys carry each
    tokenizer's fingerprint, so one never gets another's ids.

    Example:
        >>> import labkit
        >>> from labkit.cache.cached_tokenizer import CachedTokenizer, CacheConfig
        >>> tok = labkit.load("qwen2")
        >>> prompt = "<|im_start|>user\\nhi<|im_end|>"
        >>> CachedTokenizer(tok, CacheConfig(enable_l1=True)).encode(prompt).ids == tok.encode(prompt).ids
        True
    """

    def __init__(self, tok: Tokenizer, config: CacheConfig | None = None, *,
                 l0_store: TextStore | None = None, l1_store: PrefixTree | None = None):
        if not isinstance(tok, Tokenizer):
            raise LabkitError(f"CachedTokenizer wraps a labkit Tokenizer, got {type(tok).__name__}")
        config = config if config is not None else CacheConfig()
        if not isinstance(config, CacheConfig):
            raise LabkitError(f"CachedTokenizer takes a CacheConfig, got {type(config).__name__}")
        if l0_store is not None and not isinstance(l0_store, TextStore):
            raise LabkitError(f"l0_store must be a labkit.cache.lru.TextStore, got {type(l0_store).__name__}")
        if l1_store is not None and not isinstance(l1_store, PrefixTree):
            raise LabkitError(f"l1_store must be a labkit.cache.prefix_tree.PrefixTree, got {type(l1_store).__name__}")
        super().__init__(tok.vocab, backend=tok.backend)
        self.inner = tok
        self.engine = tok.engine
        self.config = config
        self.fingerprint = tokenizer_fingerprint(tok)
        self.l0 = None
        if config.enable_l0:
            self.l0 = l0_store or TextStore(max_entries=config.l0_max_entries, max_bytes=config.l0_max_memory,
                                            max_entry=max(1, config.l0_max_memory // SHARE_OF_BUDGET))
        self.l1 = None
        if config.enable_l1:
            self.l1 = l1_store or PrefixTree(max_bytes=config.l1_max_memory)
        self.boundaries = SafeBoundaries(tok) if config.enable_l1 else None
        self._framing = self._find_framing() if config.enable_l1 else None
        self.prefix_tokens_reused = 0
        self.tokens_encoded = 0

    # -- the surface ---------------------------------------------------------
    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        l0 = self.l0
        key = None
        if l0 is not None:
            key = (self.fingerprint, text, add_special_tokens, parse_special)
            # a text of a length L0 does not hold cannot hit: skip hashing it
            hit = l0.get(key) if l0.may_hold(text) else l0.count_miss()
            metrics.record_cache_lookup(self, "l0", hit is not None)
            if hit is not None:
                return Encoding(list(hit[0]), list(hit[1]), list(hit[2]))
        reused = 0
        if self.l1 is not None:
            enc, reused = self._encode_with_prefixes(text, add_special_tokens, parse_special)
        else:
            enc = self.inner.encode(text, add_special_tokens=add_special_tokens, parse_special=parse_special)
        if key is not None and not reused:
            # L0 keeps what L1 could not serve (a prompt L1 served costs little to serve again)
            value = (tuple(enc.ids), tuple(enc.tokens), tuple(enc.offsets))
            l0.put(key, value, size=_L0_OVERHEAD + sys.getsizeof(text) + encoding_bytes(*value))
        return enc

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return self.inner.decode(ids, skip_special_tokens=skip_special_tokens)

    @property
    def chat_template(self):
        return self.inner.chat_template

    def apply_chat_template(self, messages, *, add_generation_prompt: bool = False, **kwargs) -> str:
        return self.inner.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, **kwargs)

    def stats(self) -> dict:
        """Hits, misses, hit rate, entries, bytes and evictions per level."""
        out: dict = {}
        for level, store in (("l0", self.l0), ("l1", self.l1)):
            out[level] = store.stats() if store is not None else None
        out["prefix_tokens_reused"] = self.prefix_tokens_reused
        out["tokens_encoded"] = self.tokens_encoded
        return out

    def clear(self) -> None:
        for store in (self.l0, self.l1):
            if store is not None:
                store.clear()

    # -- L1 ------------------------------------------------------------------
    def _find_framing(self):
        """What add_special_tokens puts around the ids (BOS, EOS, [CLS] ... [SEP]), by probing."""
        probe = "a b"
        with_specials = self.inner.encode(probe, add_special_tokens=True)
        plain = self.inner.encode(probe, add_special_tokens=False)
        n = len(plain.ids)
        for i in range(len(with_specials.ids) - n + 1):
            if with_specials.ids[i : i + n] == plain.ids:
                head = [(with_specials.ids[j], with_specials.tokens[j], with_specials.offsets[j]) for j in range(i)]
                tail = [(with_specials.ids[j], with_specials.tokens[j], with_specials.offsets[j])
                        for j in range(i + n, len(with_specials.ids))]
                # a tail offset at the end of the probe means "at the end of the text"
                tail_at_end = [off == (len(probe), len(probe)) for _, _, off in tail]
                return head, tail, tail_at_end
        raise LabkitError(f"{self.name}: cannot find what add_special_tokens adds; L1 cannot serve this tokenizer")

    def _encode_suffix(self, text: str, position: int, cuts: list[int], parse_special: bool):
        """Encode text[position:] in one call and split it at ``cuts``: one (ids, tokens,
        offsets) piece per cut plus the tail. Each cut must fall right after a safe special
        token in the result; if one does not, encode segment by segment instead."""
        part = self.inner.encode(text[position:], add_special_tokens=False, parse_special=parse_special)
        self.tokens_encoded += len(part.ids)
        ids, tokens = part.ids, part.tokens
        offsets = [(s + position, e + position) for s, e in part.offsets] if position else part.offsets
        if not cuts:
            return [(ids, tokens, offsets)]
        pieces, begin, safe = [], 0, self.boundaries.ids
        for cut in cuts:
            # the first token ending at or after the cut must be the special token ending there
            j = bisect_left(offsets, cut, begin, key=_END)
            if j >= len(ids) or offsets[j][1] != cut or ids[j] not in safe:
                return self._encode_segments(text, position, cuts, parse_special)
            pieces.append((ids[begin : j + 1], tokens[begin : j + 1], offsets[begin : j + 1]))
            begin = j + 1
        pieces.append((ids[begin:], tokens[begin:], offsets[begin:]))
        return pieces

    def _encode_segments(self, text: str, position: int, cuts: list[int], parse_special: bool):
        """The slow, obviously right way: one encode per segment between cuts."""
        pieces = []
        for end in [*cuts, len(text)]:
            part = self.inner.encode(text[position:end], add_special_tokens=False, parse_special=parse_special)
            pieces.append((list(part.ids), list(part.tokens), [(s + position, e + position) for s, e in part.offsets]))
            position = end
        return pieces

    def _encode_with_prefixes(self, text: str, add_special_tokens: bool, parse_special: bool) -> tuple[Encoding, int]:
        """The Encoding, and how many of its tokens came from L1."""
        cuts = self.boundaries.cut_points(text, parse_special)
        if not cuts:
            enc = self.inner.encode(text, add_special_tokens=add_special_tokens, parse_special=parse_special)
            self.tokens_encoded += len(enc.ids)
            return enc, 0
        tree = self.l1
        node, depth = tree.longest(self.fingerprint, text, cuts)
        metrics.record_cache_lookup(self, "l1", node is not None)
        if node is not None:
            ids, tokens, offsets = [], [], []
            for link in node.chain():  # the shared tuples are extended into fresh lists, not copied one by one
                ids += link.ids
                tokens += link.tokens
                offsets += link.offsets
            reused = len(ids)
            self.prefix_tokens_reused += reused
            parent, position = node, node.end
        else:
            ids, tokens, offsets, reused = [], [], [], 0
            parent, position = tree.root(self.fingerprint), 0
        new_cuts = cuts[depth + 1 :]
        pieces = self._encode_suffix(text, position, new_cuts, parse_special)
        allowance = tree.max_per_request
        for k, (part_ids, part_tokens, part_offsets) in enumerate(pieces):
            if k < len(new_cuts) and parent is not None:
                parent, charged = tree.add(parent, text, new_cuts[k], tuple(part_ids), tuple(part_tokens),
                                           tuple(part_offsets), allowance)
                allowance -= charged
            ids += part_ids
            tokens += part_tokens
            offsets += part_offsets
        if add_special_tokens:
            head, tail, tail_at_end = self._framing
            ids = [i for i, _, _ in head] + ids + [i for i, _, _ in tail]
            tokens = [t for _, t, _ in head] + tokens + [t for _, t, _ in tail]
            end_offsets = [(len(text), len(text)) if at_end else off for (_, _, off), at_end in zip(tail, tail_at_end)]
            offsets = [o for _, _, o in head] + offsets + end_offsets
        return Encoding(ids, tokens, offsets), reused
