"""The three texts the throughput suites measure on, all made from shipped data (no downloads):

* ``botchan``: ``botchan.txt`` repeated (English, and very repetitive: a word cache shines);
* ``mixed``: a non-repetitive mixed-script text: Qwen2 vocabulary pieces (Latin, Cyrillic,
  CJK, Arabic, code, digits, emoji ...) drawn at random and joined, so few words recur;
* ``chinese``: a non-English text: CJK pieces of the Qwen2 vocabulary drawn at random, with
  Chinese punctuation every few words.

The draws use a fixed seed, so every run measures the same text.
Introduced in notebook ``12_performance``.

Example:
    >>> from labkit.bench.texts import bench_texts
    >>> sorted(bench_texts(0.01))
    ['botchan', 'chinese', 'mixed']
"""
from __future__ import annotations

import functools
import random
import unicodedata

from labkit.bench.harness import corpus

TEXTS = ("botchan", "mixed", "chinese")
# the inputs without whitespace of ``python -m labkit.bench long``: one pre-token each for most vocabularies
LONG_TEXTS = ("letters", "digits", "word")
SEED = 2024


@functools.lru_cache(maxsize=1)
def _qwen2_pieces() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(printable pieces of every script, pure-CJK pieces) of the bundled Qwen2 vocabulary."""
    from labkit.algorithms.bytes_unicode import try_gpt2_to_bytes
    from labkit.formats.detect import read_vocab
    from labkit.paths import bundled_path

    # the file's spellings, read without building an engine (that took 2.7 s of the 4)
    printable, cjk = [], []
    for raw in map(try_gpt2_to_bytes, read_vocab(bundled_path("qwen2")).tokens):
        if raw is None:
            continue
        try:
            piece = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not piece or any(unicodedata.category(ch)[0] == "C" for ch in piece):
            continue
        printable.append(piece)
        if all("\u4e00" <= ch <= "\u9fff" for ch in piece):
            cjk.append(piece)
    return tuple(printable), tuple(cjk)


def mixed_text(megabytes: float, seed: int = SEED) -> str:
    """About ``megabytes`` MB of Qwen2 pieces of every script in random order.

    Example:
        >>> from labkit.bench.texts import mixed_text
        >>> len(mixed_text(0.001).encode()) >= 1000
        True
    """
    printable, _ = _qwen2_pieces()
    rng = random.Random(seed)
    out, size = [], 0
    while size < megabytes * 1e6:
        piece = rng.choice(printable)
        out.append(piece)
        size += len(piece.encode("utf-8"))
        if rng.random() < 0.05:
            out.append("\n")
    return "".join(out)


def chinese_text(megabytes: float, seed: int = SEED) -> str:
    """About ``megabytes`` MB of CJK pieces of the Qwen2 vocabulary with Chinese punctuation.

    Example:
        >>> from labkit.bench.texts import chinese_text
        >>> chinese_text(0.001)[:1] >= "\\u4e00"
        True
    """
    _, cjk = _qwen2_pieces()
    rng = random.Random(seed)
    out, size = [], 0
    while size < megabytes * 1e6:
        for _ in range(rng.randint(3, 12)):
            piece = rng.choice(cjk)
            out.append(piece)
            size += len(piece.encode("utf-8"))
        out.append(rng.choice("，，，。、；：！？"))
        if rng.random() < 0.1:
            out.append("\n")
    return "".join(out)


def bench_texts(megabytes: float, names=TEXTS) -> dict[str, str]:
    """The three texts (or those in ``names``), each about ``megabytes`` MB.

    Example:
        >>> from labkit.bench.texts import bench_texts
        >>> {k: len(v) > 0 for k, v in bench_texts(0.01).items()}
        {'botchan': True, 'mixed': True, 'chinese': True}
    """
    makers = {"botchan": corpus, "mixed": mixed_text, "chinese": chinese_text}
    return {name: makers[name](megabytes) for name in names}


def long_texts(megabytes: float, names=LONG_TEXTS, seed: int = SEED) -> dict[str, str]:
    """Inputs without whitespace, each about ``megabytes`` MB: random lowercase letters, random
    digits, and one English word repeated (the long-word cases of issue 15).

    Example:
        >>> from labkit.bench.texts import long_texts
        >>> {k: (len(v), " " in v) for k, v in long_texts(0.001).items()}
        {'letters': (1000, False), 'digits': (1000, False), 'word': (1000, False)}
    """
    size = max(1, int(megabytes * 1e6))
    word = "supercalifragilisticexpialidocious"

    def drawn(alphabet: str) -> str:
        rng = random.Random(seed)
        return "".join(rng.choice(alphabet) for _ in range(size))

    makers = {
        "letters": lambda: drawn("abcdefghijklmnopqrstuvwxyz"),
        "digits": lambda: drawn("0123456789"),
        "word": lambda: (word * (size // len(word) + 1))[:size],
    }
    return {name: makers[name]() for name in names}
