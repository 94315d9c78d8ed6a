"""The tests' table of which engine serves which bundled file (tests/support/engines.py) is
what the factory does: parametrised tests read the table, so a change in what an engine
serves must show up here, not as tests that silently stop being generated."""
from __future__ import annotations

from support.engines import BUNDLED, ENGINES, SERVABLE, built_servable_pairs, servable_pairs


def test_servable_table_is_what_the_engines_build():
    assert set(SERVABLE) == set(BUNDLED)
    assert servable_pairs() == built_servable_pairs()


def test_servable_pairs_keep_the_order_of_names_then_engines():
    pairs = servable_pairs(("qwen2", "gpt2"), ("tiktoken", "labkit"))
    assert pairs == [("qwen2", "tiktoken"), ("qwen2", "labkit"), ("gpt2", "tiktoken"), ("gpt2", "labkit")]
    assert all(engine in ENGINES for _, engine in servable_pairs())
