"""Checkers for the "Try it" exercises of the notebooks, one module per notebook topic.

Each checker works the right answer out itself (with labkit or a reference engine), prints
``right`` or ``wrong`` with a hint, and returns True/False, so a reader can test an answer
without being shown it.

| module | notebook |
|---|---|
| ``tour`` | 00_tour |
| ``bpe`` | 01_bytes_and_unicode, 02_bpe_byte_level |
| ``spm`` | 03_bpe_sentencepiece |
| ``wordpiece`` | 04_wordpiece |
| ``unigram`` | 05_unigram_trie_viterbi, 06_normalization_charsmap |
| ``chat`` | 07_special_tokens_chat_templates |
| ``stream`` | 08_incremental_detokenization |
| ``stop`` | 09_stop_sequences_jail |
| ``cache`` | 10_cache_boundaries |
| ``formats`` | 11_factory_formats_hub |
| ``perf`` | 12_performance, 15_serving_metrics |
| ``training`` | 13_where_vocabularies_come_from |
| ``conformance`` | 14_conformance_matrix |

Example:
    >>> from labkit.exercises.tour import check_token_count
"""
from __future__ import annotations

import functools
import re
from typing import Any

NOT_ANSWERED = "not answered yet"
# Every checker in this package has the same shape on purpose (a docstring with a runnable
# example, the right answer worked out with labkit, one verdict with a hint), so a reader who
# has seen one can read them all; the duplicate finder reports them as alike by shape.


def unanswered(*answers: Any) -> bool:
    """True (and prints ``not answered yet``) while an answer is still the stub ``None`` or ``...``.

    Example:
        >>> from labkit.exercises import unanswered
        >>> unanswered(...)
        not answered yet: replace ... with your answer
        True
    """
    if any(answer is None or answer is Ellipsis for answer in answers):
        print(f"{NOT_ANSWERED}: replace ... with your answer")
        return True
    return False


def spelling(name: Any) -> str:
    """A name as a reader might spell it, reduced to compare: case, spaces, '-', '_' and '.' dropped.

    Example:
        >>> from labkit.exercises import spelling
        >>> spelling("GPT-2") == spelling("gpt2")
        True
    """
    return re.sub(r"[\s_.\-]+", "", str(name)).casefold()


def verdict(ok: bool, hint: str) -> bool:
    """Print ``right``, or ``wrong: <hint>``; return ``ok``.

    Example:
        >>> from labkit.exercises import verdict
        >>> verdict(2 + 2 == 4, "count again")
        right
        True
    """
    print("right" if ok else f"wrong: {hint}")
    return ok


def answerable(checker):
    """Decorator for a checker: while an argument is still the stub (``...`` or None) it prints
    the :func:`unanswered` message and returns None instead of judging.

    Example:
        >>> @answerable
        ... def check_sum(a, b, answer):
        ...     return verdict(a + b == answer, "add again")
        >>> check_sum(2, 2, ...)
        not answered yet: replace ... with your answer
        >>> check_sum(2, 2, 4)
        right
        True
    """
    @functools.wraps(checker)
    def check(*args, **kwargs):
        if unanswered(*args, *kwargs.values()):
            return None
        return checker(*args, **kwargs)

    return check
