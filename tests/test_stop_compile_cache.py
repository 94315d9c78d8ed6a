"""The compile cache of stop sets: a rotation of many sets stays compiled, memory stays bounded."""
from __future__ import annotations

from labkit.streaming import stop as stop_module
from labkit.streaming.stop import StopSequenceConfig, StopSequenceDecoder


def _sets(count: int, strings: int, tag: str) -> list[tuple[str, ...]]:
    return [tuple(f" w{i}{tag}{j} qzx" for i in range(strings)) for j in range(count)]


def _kept_units() -> int:
    return sum(tables.charged for tables in stop_module._CACHE.values())


def test_a_rotation_of_65_large_stop_sets_stays_compiled():
    sets = _sets(65, 1000, "rot")
    first = [stop_module._compile(stops, ()) for stops in sets]
    again = [stop_module._compile(stops, ()) for stops in sets]
    assert all(a is b for a, b in zip(first, again))  # the second time round, nothing is compiled again
    assert stop_module._cache_units == _kept_units()


def test_the_cache_lets_the_oldest_sets_go_past_its_budget(monkeypatch):
    import labkit

    monkeypatch.setattr(stop_module, "_CACHE", type(stop_module._CACHE)())
    monkeypatch.setattr(stop_module, "_cache_units", 0)
    monkeypatch.setattr(stop_module, "CACHE_UNITS", 600)
    tok = labkit.load("gpt2")
    ids = tok.encode(" the house and the garden of the school " * 20).ids
    sets = _sets(12, 100, "budget")
    for stops in sets:
        dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=list(stops)))
        dec.process_tokens(ids)
    stop_module._compile(sets[-1], ())  # the last request's work is charged when the set is taken again
    kept = list(stop_module._CACHE)
    assert 1 <= len(kept) < len(sets) and kept[-1] == (sets[-1], ())
    assert stop_module._cache_units == _kept_units() <= 600
    assert all(key == (stops, ()) for key, stops in zip(kept, sets[len(sets) - len(kept):]))  # the newest stay


def test_the_cache_keeps_at_most_cache_sets_sets(monkeypatch):
    monkeypatch.setattr(stop_module, "_CACHE", type(stop_module._CACHE)())
    monkeypatch.setattr(stop_module, "_cache_units", 0)
    monkeypatch.setattr(stop_module, "CACHE_SETS", 3)
    for stops in _sets(5, 2, "count"):
        stop_module._compile(stops, ())
    assert len(stop_module._CACHE) == 3 and stop_module._cache_units == _kept_units()


class _CountedStr(str):
    """A str that counts how often it is hashed (a str subclass with __hash__ does not cache it)."""

    hashed = 0

    def __hash__(self):
        _CountedStr.hashed += 1
        return str.__hash__(self)


def test_compiling_a_new_stop_set_hashes_each_stop_string_once():
    stops = tuple(_CountedStr(f" w{i}hashed qzx") for i in range(50))
    _CountedStr.hashed = 0
    tables = stop_module._compile(stops, ())  # looked up in two caches, stored in both: one hash of the key
    assert _CountedStr.hashed == len(stops)
    _CountedStr.hashed = 0
    assert stop_module._compile(stops, ()) is tables  # found again: hashed once more, not twice
    assert _CountedStr.hashed == len(stops)
