"""A two-level tokenization cache in front of any engine.

L0 is an exact-match cache: the same (text, add_special_tokens, parse_special) gives the
stored Encoding. L1 is a prefix cache whose keys are cut only at safe special-token
boundaries (see :mod:`labkit.cache.boundaries`): a chat prompt that shares its system
prompt and earlier turns with a previous one re-uses their ids and only the new suffix is
tokenized. Keys are blake3 digests keyed by the tokenizer's fingerprint, computed
incrementally so hashing every prefix of a text costs one pass over it.
Introduced in notebook ``10_cache_boundaries``.

Example: ``CachedTokenizer(labkit.load("qwen2"), CacheConfig(enable_l0=True, enable_l1=True))``
"""
from __future__ import annotations

from dataclasses import dataclass

import blake3

from labkit import metrics
from labkit.cache.boundaries import SafeBoundaries
from labkit.cache.fingerprint import tokenizer_fingerprint
from labkit.cache.lru import LruStore
from labkit.core import Encoding, LabkitError, Tokenizer

# per-entry bookkeeping bytes counted on top of the ids (key digest and tuple headers)
_ENTRY_OVERHEAD = 32 + 3 * 56
# per token: an id, a token-string reference and an offset pair
_BYTES_PER_TOKEN = 24


def _entry_size(prefix_bytes: int, n_tokens: int) -> int:
    """Bytes an L1 entry is charged: the prefix it stands for plus its ids (as the router counts)."""
    return _ENTRY_OVERHEAD + prefix_bytes + _BYTES_PER_TOKEN * n_tokens


@dataclass(frozen=True)
class CacheConfig:
    """Which cache levels are on and how large they may grow. Disabled by default.

    Example: ``CacheConfig(enable_l1=True, l1_max_memory=8 * 2**20)``
    """

    enable_l0: bool = False
    l0_max_entries: int = 10_000
    enable_l1: bool = False
    l1_max_memory: int = 50 * 2**20

    def __post_init__(self):
        for name in ("enable_l0", "enable_l1"):
            if not isinstance(getattr(self, name), bool):
                raise LabkitError(f"CacheConfig.{name} must be a bool, got {getattr(self, name)!r}")
        for name in ("l0_max_entries", "l1_max_memory"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise LabkitError(f"CacheConfig.{name} must be an int, got {value!r}")
        if self.enable_l0 and self.l0_max_entries <= 0:
            raise LabkitError(f"CacheConfig.l0_max_entries must be > 0 when L0 is enabled, got {self.l0_max_entries}")
        if self.enable_l1 and self.l1_max_memory <= 0:
            raise LabkitError(f"CacheConfig.l1_max_memory must be > 0 when L1 is enabled, got {self.l1_max_memory}")


@dataclass(frozen=True)
class _Prefix:
    """What L1 stores for one prefix: the ids, token strings and char offsets it adds to its
    ``parent`` prefix (a chain, so a growing conversation shares its earlier turns instead of
    copying them), and the token count of the whole prefix."""

    parent: "_Prefix | None"
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    length: int

    def chain(self) -> list["_Prefix"]:
        """The prefixes from the first cut to this one."""
        nodes, node = [], self
        while node is not None:
            nodes.append(node)
            node = node.parent
        nodes.reverse()
        return nodes


def _expand(entry: _Prefix) -> Encoding:
    """A fresh Encoding (lists the caller may change) of everything a cache entry stands for."""
    ids: list[int] = []
    tokens: list[str] = []
    offsets: list[tuple[int, int]] = []
    for node in entry.chain():
        ids += node.ids
        tokens += node.tokens
        offsets += node.offsets
    return Encoding(ids, tokens, offsets)


class CachedTokenizer(Tokenizer):
    """The Tokenizer surface with an L0 exact cache and an L1 special-token prefix cache.

    Pass ``l0_store``/``l1_store`` to share stores between tokenizers: keys carry each
    tokenizer's fingerprint, so one never gets another's ids.

    Example: ``CachedTokenizer(tok, CacheConfig(enable_l1=True)).encode(prompt).ids == tok.encode(prompt).ids``
    """

    def __init__(self, tok: Tokenizer, config: CacheConfig | None = None, *,
                 l0_store: LruStore | None = None, l1_store: LruStore | None = None):
        if not isinstance(tok, Tokenizer):
            raise LabkitError(f"CachedTokenizer wraps a labkit Tokenizer, got {type(tok).__name__}")
        config = config if config is not None else CacheConfig()
        if not isinstance(config, CacheConfig):
            raise LabkitError(f"CachedTokenizer takes a CacheConfig, got {type(config).__name__}")
        super().__init__(tok.vocab, backend=tok.backend)
        self.inner = tok
        self.engine = tok.engine
        self.config = config
        self.fingerprint = tokenizer_fingerprint(tok)
        self.l0 = (l0_store or LruStore(max_entries=config.l0_max_entries)) if config.enable_l0 else None
        self.l1 = (l1_store or LruStore(max_bytes=config.l1_max_memory)) if config.enable_l1 else None
        self.boundaries = SafeBoundaries(tok) if config.enable_l1 else None
        self._framing = self._find_framing() if config.enable_l1 else None
        self.prefix_tokens_reused = 0
        self.tokens_encoded = 0

    # -- the surface ---------------------------------------------------------
    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        key = None
        if self.l0 is not None:
            key = (self.fingerprint, text, add_special_tokens, parse_special)
            hit = self.l0.get(key)
            metrics.record_cache_lookup(self, "l0", hit is not None)
            if hit is not None:
                return _expand(hit)
        node = None
        if self.l1 is not None:
            enc, node = self._encode_with_prefixes(text, add_special_tokens, parse_special)
        else:
            enc = self.inner.encode(text, add_special_tokens=add_special_tokens, parse_special=parse_special)
        if key is not None:
            # link to the L1 prefix the ids start with, so only the tail is copied
            n = node.length if node is not None and not add_special_tokens else 0
            self.l0.put(key, _Prefix(node if n else None, tuple(enc.ids[n:]), tuple(enc.tokens[n:]),
                                     tuple(enc.offsets[n:]), len(enc.ids)))
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
        offsets = [(s + position, e + position) for s, e in part.offsets] if position else list(part.offsets)
        pieces, begin, j, n = [], 0, 0, len(part.ids)
        safe = self.boundaries.ids
        for cut in cuts:
            while j < n and offsets[j][1] < cut:
                j += 1
            if j >= n or offsets[j][1] != cut or part.ids[j] not in safe:
                return self._encode_segments(text, position, cuts, parse_special)
            pieces.append((part.ids[begin : j + 1], part.tokens[begin : j + 1], offsets[begin : j + 1]))
            begin = j = j + 1
        pieces.append((part.ids[begin:], part.tokens[begin:], offsets[begin:]))
        return pieces

    def _encode_segments(self, text: str, position: int, cuts: list[int], parse_special: bool):
        """The slow, obviously right way: one encode per segment between cuts."""
        pieces = []
        for end in [*cuts, len(text)]:
            part = self.inner.encode(text[position:end], add_special_tokens=False, parse_special=parse_special)
            pieces.append((list(part.ids), list(part.tokens), [(s + position, e + position) for s, e in part.offsets]))
            position = end
        return pieces

    def _encode_with_prefixes(self, text: str, add_special_tokens: bool, parse_special: bool) -> tuple[Encoding, "_Prefix | None"]:
        cuts = self.boundaries.cut_points(text, parse_special)
        digests, prefix_bytes = [], []
        hasher = blake3.blake3(key=self.fingerprint)
        previous, byte_count = 0, 0
        for cut in cuts:
            segment = text[previous:cut].encode("utf-8", "surrogatepass")
            hasher.update(segment)
            byte_count += len(segment)
            digests.append(hasher.copy().digest())
            prefix_bytes.append(byte_count)
            previous = cut
        # the longest cached prefix wins; one lookup counts as one hit or one miss
        start_index, prefix = -1, None
        for index in range(len(cuts) - 1, -1, -1):
            if self.l1.peek(digests[index]):
                prefix = self.l1.get(digests[index])
                if prefix is not None:
                    start_index = index
                    break
        if prefix is None and cuts:
            self.l1.get(b"")  # count the miss
        if cuts:
            metrics.record_cache_lookup(self, "l1", prefix is not None)
        if prefix is not None:
            reused = _expand(prefix)
            ids, tokens, offsets = reused.ids, reused.tokens, reused.offsets
            self.prefix_tokens_reused += len(ids)
        else:
            ids, tokens, offsets = [], [], []
        position = cuts[start_index] if start_index >= 0 else 0
        new_cuts = cuts[start_index + 1 :]
        pieces = self._encode_suffix(text, position, new_cuts, parse_special)
        # a miss stores every prefix; a partial hit stores only the deepest new one, which is
        # what the next turn of a growing conversation will share; each entry holds only what
        # it adds to its parent
        deepest = len(new_cuts) - 1
        parent, added_ids, added_tokens, added_offsets = prefix, [], [], []
        for k, (part_ids, part_tokens, part_offsets) in enumerate(pieces):
            ids += part_ids
            tokens += part_tokens
            offsets += part_offsets
            if k > deepest:
                break
            added_ids += part_ids
            added_tokens += part_tokens
            added_offsets += part_offsets
            if prefix is None or k == deepest:
                index = start_index + 1 + k
                entry = _Prefix(parent, tuple(added_ids), tuple(added_tokens), tuple(added_offsets), len(ids))
                self.l1.put(digests[index], entry, size=_entry_size(prefix_bytes[index], len(ids)))
                parent, added_ids, added_tokens, added_offsets = entry, [], [], []
        if add_special_tokens:
            head, tail, tail_at_end = self._framing
            ids = [i for i, _, _ in head] + ids + [i for i, _, _ in tail]
            tokens = [t for _, t, _ in head] + tokens + [t for _, t, _ in tail]
            end_offsets = [(len(text), len(text)) if at_end else off for (_, _, off), at_end in zip(tail, tail_at_end)]
            offsets = [o for _, _, o in head] + offsets + end_offsets
        return Encoding(ids, tokens, offsets), parent
