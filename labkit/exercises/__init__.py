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
| ``perf`` | 12_performance_and_metrics |
| ``training`` | 13_where_vocabularies_come_from |

Example: ``from labkit.exercises.tour import check_token_count``
"""
from __future__ import annotations


def verdict(ok: bool, hint: str) -> bool:
    """Print ``right``, or ``wrong: <hint>``; return ``ok``.

    Example: ``verdict(2 + 2 == 4, "count again")`` prints ``right``
    """
    print("right" if ok else f"wrong: {hint}")
    return ok
