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

from dataclasses import dataclass
from itertools import compress

from labkit import metrics
from labkit.cache.boundaries import SafeBoundaries, kept_cuts
from labkit.cache.fingerprint import tokenizer_fingerprint
from labkit.cache.lru import TextStore
from labkit.cache.prefix_tree import PrefixNode, PrefixTree
from labkit.core import Encoding, LabkitError, Tokenizer

# one request's or one entry's share of a level's budget, at most
SHARE_OF_BUDGET = 8
# a cut closer than this to the previous one is skipped (a node for "\n<|im_start|>" costs
# more to keep and to store than it saves); decided from the text before the cut, so every
# prompt that shares a prefix cuts it the same way
MIN_SEGMENT = 16


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
            # "is not None": an empty store has len() 0, so `or` would replace a shared store
            self.l0 = l0_store if l0_store is not None else TextStore(max_entries=config.l0_max_entries, max_bytes=config.l0_max_memory,
                                            max_entry=max(1, config.l0_max_memory // SHARE_OF_BUDGET))
        self.l1 = None
        if config.enable_l1:
            self.l1 = l1_store if l1_store is not None else PrefixTree(max_bytes=config.l1_max_memory)
        self.boundaries = SafeBoundaries(tok) if config.enable_l1 else None
        # safe special id -> its spelling
        self._safe_spelling = {a.id: a.content for a in self.boundaries.tokens} if self.boundaries else {}
        self._framing = self._find_framing() if config.enable_l1 else None
        self._cuts_prompts = self.l1 is not None and bool(self._safe_spelling)  # else L1 has nothing to cut at
        self.prefix_tokens_reused = 0
        self.tokens_encoded = 0

    # -- the surface ---------------------------------------------------------
    def encode(self, text: str, *, add_special_tokens: bool = False, parse_special: bool = True) -> Encoding:
        """Text -> Encoding, as the wrapped tokenizer gives it. The text is not scanned for lone
        surrogates here: each character either reaches the wrapped engine, which refuses them,
        or is part of a text that engine already took."""
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode() takes str, got {type(text).__name__}")
        if metrics.ENABLED:
            return self._encode_recorded(text, bool(add_special_tokens), bool(parse_special))
        return self._encode(text, bool(add_special_tokens), bool(parse_special))  # a call fewer per hit

    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        # L1 is asked first: L0 keeps only texts L1 had no prefix of, so a text L1 finds a
        # prefix of is served there, and its lookup is the only one a prefix hit pays
        node = None
        by_prefix = parse_special and self._cuts_prompts
        if by_prefix:
            node, _ = self.l1.longest(self.fingerprint, text, self._next_cut)
            if metrics.ENABLED:  # checked here: a call per lookup costs a hit's share when they are off
                metrics.record_cache_lookup(self, "l1", node is not None)
        l0 = self.l0
        if l0 is not None and node is None:
            entry = l0.lookup(self.fingerprint, text, add_special_tokens, parse_special)
            if metrics.ENABLED:
                metrics.record_cache_lookup(self, "l0", entry is not None)
            if entry is not None:
                parts = _MadeOnce(self._l0_payload, (entry, add_special_tokens, parse_special))
                return Encoding(list(entry.ids), parts.tokens, parts.offsets)
        if by_prefix:
            enc = self._encode_below(node, text, add_special_tokens)
        else:
            enc = self._encode_uncut(text, add_special_tokens, parse_special)
        if l0 is not None and node is None and l0.admits():
            l0.store(self.fingerprint, text, add_special_tokens, parse_special, tuple(enc.ids))
        return enc

    def _l0_payload(self, entry, add_special_tokens: bool, parse_special: bool) -> tuple[list, list]:
        """An L0 entry's token strings and offsets: kept ones, or the text encoded again
        (its ids must equal the stored ones) and kept from then on."""
        if entry.tokens is not None:
            return entry.tokens, entry.offsets
        enc = self.inner.encode(entry.text, add_special_tokens=add_special_tokens, parse_special=parse_special)
        if tuple(enc.ids) != entry.ids:
            raise LabkitError(f"{self.name}: the engine encodes a cached text to other ids than before")
        tokens, offsets = tuple(enc.tokens), tuple(enc.offsets)
        self.l0.fill(entry, tokens, offsets)
        return tokens, offsets

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

    def cut_points(self, text: str, parse_special: bool = True) -> list[int]:
        """The cuts L1 uses: safe cut points, each at least MIN_SEGMENT characters after the one before."""
        return kept_cuts(self.boundaries.cut_points(text, parse_special), 0, MIN_SEGMENT) if self.boundaries else []

    def cached_prefix(self, text: str) -> tuple[PrefixNode | None, int]:
        """The deepest L1 node on the path of ``text`` and its depth (-1 if none); counts a lookup."""
        return self.l1.longest(self.fingerprint, text, self._next_cut)

    def _next_cut(self, text: str, start: int) -> int | None:
        return self.boundaries.next_cut(text, start, MIN_SEGMENT)

    def _encode_segment(self, segment: str) -> Encoding:
        return self.inner.encode(segment, add_special_tokens=False, parse_special=True)

    def _split_points(self, ids: list[int], text: str, ends: list[int], cuts: list[int]) -> list[int] | None:
        """For each cut, the index in ``ids`` just past the special token that ends there: the
        suffix's safe special ids must be, in order, one per safe spelling found in its text,
        each the token of the spelling that ends at its offset. None if they are not."""
        spelling = self._safe_spelling
        where = list(compress(range(len(ids)), map(spelling.__contains__, ids)))
        if len(where) != len(ends):
            return None
        for index, end in zip(where, ends):
            if not text.endswith(spelling[ids[index]], 0, end):
                return None
        after = dict(zip(ends, where))
        return [after[cut] + 1 for cut in cuts]

    def _encode_below(self, node: PrefixNode | None, text: str, add_special_tokens: bool) -> Encoding:
        """The Encoding of ``text`` (parse_special on) given the deepest L1 node on its path
        (None if none): the node's ids, then the rest encoded, storing its new segments."""
        tree = self.l1
        position = node.end if node is not None else 0
        if not tree.admits(node or tree.root(self.fingerprint)):
            ends = cuts = ()
        else:
            ends = self.boundaries.ends_from(text, position)
            cuts = kept_cuts(ends, position, MIN_SEGMENT)
        if node is None and not cuts:  # nothing to reuse and nothing to keep: the engine's own Encoding
            return self._encode_uncut(text, add_special_tokens, True)
        part = self.inner.encode(text[position:] if position else text, add_special_tokens=False, parse_special=True)
        ids = part.ids
        if cuts:
            splits = self._split_points(ids, text, ends, cuts)
            if splits is None:  # the engine did not cut where the text says: serve it whole, keep nothing
                return self._encode_uncut(text, add_special_tokens, True)
            parent, begin, allowance = node or tree.root(self.fingerprint), 0, tree.max_per_request
            for cut, split in zip(cuts, splits):
                parent, charged = tree.add(parent, text, cut, tuple(ids[begin:split]), allowance)
                if parent is None:
                    break
                allowance -= charged
                begin = split
        self.tokens_encoded += len(ids)
        if node is None and not add_special_tokens:
            return part
        prefix = tree.prefix_ids(node) if node is not None else []
        if add_special_tokens:
            framing = self._framing
            out = [*(i for i, _, _ in framing[0]), *prefix, *ids, *(i for i, _, _ in framing[1])]
        else:
            framing = ((), (), ())
            if prefix is node.prefix:  # kept in the tree, so never handed out: one copy
                out = prefix + ids
            else:  # made for this call: ours to extend
                out = prefix
                out += ids
        if node is not None:
            self.prefix_tokens_reused += node.length
        parts = _MadeOnce(self._tokens_and_offsets, (text, node, part, position, framing))
        return Encoding(out, parts.tokens, parts.offsets)

    def _encode_uncut(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        enc = self.inner.encode(text, add_special_tokens=add_special_tokens, parse_special=parse_special)
        self.tokens_encoded += len(enc.ids)
        return enc

    def _tokens_and_offsets(self, text: str, node: PrefixNode | None, part: Encoding, position: int, framing):
        """Token strings and offsets of a result made from cached segments and a new suffix."""
        head, tail, tail_at_end = framing
        tokens, offsets = [t for _, t, _ in head], [o for _, _, o in head]
        for link in node.chain() if node is not None else ():
            link_tokens, link_offsets = self.l1.filled(link, self._encode_segment)
            tokens += link_tokens
            offsets += link_offsets
        tokens += part.tokens
        offsets += _shifted(part.offsets, position) if position else part.offsets
        tokens += [t for _, t, _ in tail]
        offsets += [(len(text), len(text)) if at_end else off for (_, _, off), at_end in zip(tail, tail_at_end)]
        return tokens, offsets


def _shifted(offsets: list[tuple[int, int]], by: int) -> list[tuple[int, int]]:
    """Offsets moved right by ``by`` characters (zip and map: no Python-level loop)."""
    if not offsets:
        return []
    starts, ends = zip(*offsets)
    return list(zip(map(by.__add__, starts), map(by.__add__, ends)))


class _MadeOnce:
    """An Encoding's lazy tokens and offsets, sharing one call of ``make(*args)`` that gives
    both; each read gets a fresh list."""

    __slots__ = ("make", "args", "made")

    def __init__(self, make, args: tuple):
        self.make, self.args, self.made = make, args, None

    def _pair(self):
        if self.made is None:
            self.made = self.make(*self.args)
        return self.made

    def tokens(self) -> list[str]:
        return list(self._pair()[0])

    def offsets(self) -> list[tuple[int, int]]:
        return list(self._pair()[1])
