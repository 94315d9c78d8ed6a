"""A tokenizer's fingerprint: a blake3 digest of everything that decides its ids, so a
cache keyed with it never serves another tokenizer.

Example:
    >>> from labkit.cache.fingerprint import tokenizer_fingerprint
    >>> import labkit
    >>> tokenizer_fingerprint(labkit.load("gpt2")).hex()[:16]
    '569a38db14904d02'
"""
from __future__ import annotations

import json
import weakref

import blake3

from labkit.core import Tokenizer


# digests already taken, per tokenizer object: hashing qwen2's vocabulary builds tens of MB of
# temporary strings (27 ms), and the freed memory slowed the next requests' encodes by ~9%
_DIGESTS: "weakref.WeakKeyDictionary[Tokenizer, bytes]" = weakref.WeakKeyDictionary()


def tokenizer_fingerprint(tok: Tokenizer) -> bytes:
    """32 bytes: blake3 over model, vocab, scores, merges, normaliser, pre-tokenizer, specials
    (taken once per tokenizer object: a loaded vocabulary does not change)."""
    known = _DIGESTS.get(tok)
    if known is not None:
        return known
    digest = _DIGESTS[tok] = _digest(tok)
    return digest


def _digest(tok: Tokenizer) -> bytes:
    vocab = tok.vocab
    hasher = blake3.blake3()

    def part(label: str, payload: bytes) -> None:
        # length-prefixed so two different splits of the same bytes never collide
        hasher.update(label.encode() + len(payload).to_bytes(8, "little") + payload)

    part("model", f"{vocab.model}|{vocab.pre}".encode())
    part("tokens", "\x00".join(vocab.tokens).encode("utf-8", "surrogatepass"))
    part("types", bytes(vocab.token_types))
    if vocab.scores is not None:
        part("scores", ",".join(repr(s) for s in vocab.scores).encode())
    if vocab.merges is not None:
        part("merges", "\n".join(f"{a} {b}" for a, b in vocab.merges).encode("utf-8", "surrogatepass"))
    # token_bytes is left out: the tokens' own spelling already fixes them
    normalizer = {k: (v.hex() if isinstance(v, (bytes, bytearray)) else v) for k, v in vocab.normalizer.items()}
    part("normalizer", json.dumps(normalizer, sort_keys=True, default=str).encode())
    part("options", json.dumps(vocab.options, sort_keys=True, default=str).encode())
    part("specials", json.dumps(vocab.specials.as_dict(), sort_keys=True, default=str).encode())
    part("added", json.dumps([a.__dict__ for a in vocab.added_tokens], sort_keys=True).encode())
    return hasher.digest()
