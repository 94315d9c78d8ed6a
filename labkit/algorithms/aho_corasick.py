"""Aho-Corasick: find the first place where any of many strings ends, in one left-to-right pass.

A trie of the patterns plus failure links (the longest proper suffix of a node's string that
is also a node) turns "does any of 100 stop strings occur?" into one table lookup per
character, whatever the number of patterns. The automaton is resumable: its state after a
chunk of text is an int, so text can arrive in pieces (a token at a time) and a match that
spans pieces is still found. The state also tells how much of the text seen so far could
still grow into a match, which is exactly what a stop-sequence jail must hold back.

Introduced in notebook ``09_stop_sequences_jail``.

Example: ``AhoCorasick(["world", "or"]).find_first("hello world")`` -> ``(9, 1)``
(the match ending earliest is "or", pattern 1, ending at index 9).
"""
from __future__ import annotations

import re
from collections import deque
from typing import Iterable

from labkit.core import LabkitError

ROOT = 0


class AhoCorasick:
    """A resumable multi-pattern matcher over ``str`` (code points, never bytes).

    ``step`` and ``scan`` advance a state (an int, ``ROOT`` at the start). Where several
    patterns end at the same character, the longest one is reported: it starts earliest.

    Example: ``ac = AhoCorasick(["<|im_end|>"]); ac.scan(ROOT, "hi <|im")`` -> ``(4, -1, -1)``
    (no match yet; state 4 stands for "<|im", a prefix of the pattern).
    """

    def __init__(self, patterns: Iterable[str]):
        patterns = list(patterns)
        for i, p in enumerate(patterns):
            if not isinstance(p, str):
                raise LabkitError(f"AhoCorasick: pattern {i} is {type(p).__name__}, not str")
            if not p:
                raise LabkitError(f"AhoCorasick: pattern {i} is the empty string (it would match everywhere)")
        self.patterns: tuple[str, ...] = tuple(patterns)
        children: list[dict[str, int]] = [{}]
        depth = [0]
        prefix = [""]  # the string each node stands for
        terminal = [-1]  # pattern index whose last character is this node (-1: none)
        for index, pattern in enumerate(self.patterns):
            node = ROOT
            for ch in pattern:
                nxt = children[node].get(ch)
                if nxt is None:
                    nxt = len(children)
                    children[node][ch] = nxt
                    children.append({})
                    depth.append(depth[node] + 1)
                    prefix.append(pattern[: depth[-1]])
                    terminal.append(-1)
                node = nxt
            if terminal[node] < 0:  # a repeated pattern keeps its first index
                terminal[node] = index
        n = len(children)
        fail = [ROOT] * n
        # breadth-first, so a node's failure target is finished before the node itself
        order = []
        queue = deque(children[ROOT].values())
        while queue:
            node = queue.popleft()
            order.append(node)
            for ch, child in children[node].items():
                f = fail[node]
                while f != ROOT and ch not in children[f]:
                    f = fail[f]
                fail[child] = children[f].get(ch, ROOT)
                queue.append(child)
        # match[node]: the longest pattern ending here (itself, else via its failure chain)
        match = [-1] * n
        for node in order:
            match[node] = terminal[node] if terminal[node] >= 0 else match[fail[node]]
        # hold[node]: the longest suffix of this node's string that can still grow into a match
        # (a node with children); equals depth[node] for every node the matcher stops on
        hold = [0] * n
        for node in order:
            hold[node] = depth[node] if children[node] else hold[fail[node]]
        # The full transition table, stored sparsely: a missing entry means "back to ROOT".
        delta: list[dict[str, int]] = [dict() for _ in range(n)]
        delta[ROOT] = dict(children[ROOT])
        for node in order:
            row = dict(delta[fail[node]])
            row.update(children[node])
            delta[node] = row
        self._delta = delta
        self._match = match
        self._hold = hold
        self._depth = depth
        self._fail = fail
        self.prefixes: tuple[str, ...] = tuple(prefix)
        # The hot loop's table: one bound ``dict.get`` per state, and a state that completes a
        # match stored as ``~state`` (negative), so "did anything match?" is one comparison.
        self._gets = [{ch: (~t if match[t] >= 0 else t) for ch, t in row.items()}.get for row in delta]
        self.node_count = n
        self.max_length = max((len(p) for p in self.patterns), default=0)
        # Only a pattern's first character can leave ROOT: a chunk without one is skipped whole.
        firsts = sorted(children[ROOT])
        self._first = re.compile("[" + "".join(re.escape(c) for c in firsts) + "]") if firsts else None

    def step(self, state: int, ch: str) -> int:
        """The state after one more character. Example: ``ac.step(ROOT, "<")``"""
        return self._delta[state].get(ch, ROOT)

    def scan(self, state: int, text: str, start: int = 0) -> tuple[int, int, int]:
        """Advance over ``text[start:]`` until the first match ends.

        Returns ``(state, end, pattern)``: ``end`` is the index just past the first match in
        ``text`` and ``pattern`` its index (the longest of those ending there), or
        ``(state, -1, -1)`` with the state after the whole text when nothing matched.

        Example: ``AhoCorasick(["ab"]).scan(ROOT, "xaby")`` -> ``(2, 3, 0)``
        """
        first = self._first
        if first is None:
            return state, -1, -1
        if state == ROOT:
            found = first.search(text, start)
            if found is None:  # no character here can start a pattern
                return ROOT, -1, -1
            start = found.start()
        gets = self._gets
        for i, ch in enumerate(text[start:] if start else text, start + 1):
            state = gets[state](ch, ROOT)
            if state < 0:
                state = ~state
                return state, i, self._match[state]
        return state, -1, -1

    def hold_length(self, state: int) -> int:
        """How many trailing characters could still become a match (the jail's length).

        Example: ``AhoCorasick(["Hello world"]).hold_length(5)`` -> ``5`` after "Hello".
        """
        return self._hold[state]

    def depth(self, state: int) -> int:
        """Length of the string a state stands for (the longest suffix that is a prefix)."""
        return self._depth[state]

    def held_text(self, state: int) -> str:
        """The trailing text a state must hold back: the last ``hold_length`` characters seen.

        Every state stands for one string (a prefix of some pattern) that the text seen so
        far ends with, so the jail's content is a function of the state alone.
        Example: ``ac.held_text(ac.scan(ROOT, "Say Hello")[0])`` -> ``'Hello'``
        """
        node_text = self.prefixes[state]
        return node_text[len(node_text) - self._hold[state]:]

    def table(self) -> list[dict]:
        """One row per state (a trace to look at): its string, failure link, what it matches, its hold.

        Keys: ``state``, ``text`` (the prefix it stands for), ``fail`` and ``fail_text`` (the
        longest proper suffix that is also a state), ``matches`` (the longest pattern that
        ends here, or None) and ``hold`` (how many characters it keeps in a jail).
        Example: ``AhoCorasick(["he", "she"]).table()[3]`` -> ``{'state': 3, 'text': 's', ...}``
        """
        rows = []
        for node in range(self.node_count):
            pattern = self._match[node]
            rows.append({
                "state": node,
                "text": self.prefixes[node],
                "fail": self._fail[node],
                "fail_text": self.prefixes[self._fail[node]],
                "matches": self.patterns[pattern] if pattern >= 0 else None,
                "hold": self._hold[node],
            })
        return rows

    def find_first(self, text: str) -> tuple[int, int] | None:
        """``(end, pattern)`` of the match that ends first in ``text``, or None.

        Example: ``AhoCorasick(["abcd", "bc"]).find_first("abcd")`` -> ``(3, 1)``
        """
        _, end, pattern = self.scan(ROOT, text)
        return None if end < 0 else (end, pattern)

    def __repr__(self) -> str:
        return f"<AhoCorasick patterns={len(self.patterns)} nodes={self.node_count}>"
