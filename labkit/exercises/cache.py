"""Checkers for the "Try it" exercises of notebook 10 (the tokenization cache).

Each checker works the right answer out itself, prints ``right`` or ``wrong`` with a hint,
and returns True/False. Introduced in notebook ``10_cache_boundaries``.

Example:
    >>> from labkit.exercises.cache import check_cut
    >>> check_cut("Hello world", 5, changes=False)
    right
    True
"""
from __future__ import annotations

from functools import lru_cache

from labkit.core import LabkitError
from labkit.exercises import answerable, verdict as _verdict


@lru_cache(maxsize=None)
def _qwen():
    from labkit.factory import load

    return load("qwen2", engine="hf")


def cut_changes_ids(text: str, cut: int) -> bool:
    """True if encoding text[:cut] and text[cut:] apart gives other ids than the whole (Qwen2)."""
    if not isinstance(text, str) or not isinstance(cut, int) or not 0 <= cut <= len(text):
        raise LabkitError(f"cut must be an offset from 0 to {len(text) if isinstance(text, str) else '?'}, got {cut!r}")
    tok = _qwen()
    return tok.encode(text[:cut]).ids + tok.encode(text[cut:]).ids != tok.encode(text).ids


@answerable
def check_cut(text: str, cut: int, changes: bool) -> bool:
    """Does cutting ``text`` at ``cut`` change Qwen2's ids? Say ``changes=True`` or ``False``.

    Example:
        >>> from labkit.exercises.cache import check_cut
        >>> check_cut("Hello world, how are you?", 3, changes=True)
        right
        True

    Introduced in notebook ``10_cache_boundaries``.
    """
    right = cut_changes_ids(text, cut)
    hint = ("a cut inside a word splits what BPE would merge; a cut before a space-word is not always safe either"
            if changes is False else "try encode(a) + encode(b) against encode(a + b) and compare")
    return _verdict(bool(changes) == right, hint)


@answerable
def check_cut_before_special(a: str, b: str) -> bool:
    """Show that a cut right *before* a special token is safe: give ``b`` starting with
    ``<|im_start|>`` and any ``a``; right if the ids of a and b add up to the whole.

    Example:
        >>> from labkit.exercises.cache import check_cut_before_special
        >>> check_cut_before_special("hi", "<|im_start|>user")
        right
        True

    Introduced in notebook ``10_cache_boundaries``.
    """
    if not b.startswith("<|im_start|>"):
        return _verdict(False, "b must start with <|im_start|> to test a cut before it")
    tok = _qwen()
    ok = tok.encode(a).ids + tok.encode(b).ids == tok.encode(a + b).ids
    return _verdict(ok, "the splitter cuts the text on both sides of a special token before BPE runs")


def l1_entry_bytes(prompt: str) -> int:
    """What L1 charges for the longest prefix of ``prompt`` that ends at a safe cut."""
    from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer

    cached = CachedTokenizer(_qwen(), CacheConfig(enable_l1=True))
    cached.encode(prompt)
    stats = cached.stats()["l1"]
    return stats["bytes"] // max(1, stats["entries"]) if stats["entries"] else 0


@answerable
def check_entry_size(prompt: str, answer_bytes: int) -> bool:
    """About how many bytes does one L1 entry for ``prompt``'s prefixes take? Within 25% is right.

    Introduced in notebook ``10_cache_boundaries``.

    Example (a short chat prompt: an entry of about 1.7 KB):
        >>> prompt = "<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n<|im_start|>user\\nHello<|im_end|>\\n"
        >>> check_entry_size(prompt, 1_700)
        right
        True
    """
    right = l1_entry_bytes(prompt)
    ok = right > 0 and abs(answer_bytes - right) <= 0.25 * right
    return _verdict(ok, "an entry is charged what it keeps alive, measured: its text segment and an id per token "
                        "(32 bytes; a token string and an offset pair join them, about 200 bytes a token, once a "
                        "caller reads them); cached.stats()['l1'] shows bytes and entries")
