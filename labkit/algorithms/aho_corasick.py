"""Aho-Corasick: find the first place where any of many strings ends, in one left-to-right pass.

A trie of the patterns plus failure links (the longest proper suffix of a node's string that
is also a node) turns "does any of 100 stop strings occur?" into one table lookup per
character, whatever the number of patterns. The automaton is resumable: its state after a
chunk of text is an int, so text can arrive in pieces (a token at a time) and a match that
spans pieces is still found. The state also tells how much of the text seen so far could
still grow into a match, which is exactly what a stop-sequence jail must hold back.

Nothing is built up front but the patterns grouped by first character: trie nodes, failure
links and the transitions the text actually takes are worked out the first time they are
needed and remembered. Compiling a stop set costs one step per pattern, memory stays linear
in the total length of the patterns (capped at ``MAX_PATTERN_CHARS``), and the remembered
transitions are bounded (``MAX_TRANSITIONS``, cleared when full).

Introduced in notebook ``09_stop_sequences_jail``.

Example:
    >>> from labkit.algorithms.aho_corasick import AhoCorasick
    >>> AhoCorasick(["world", "or"]).find_first("hello world")
    (9, 1)

(the match ending earliest is "or", pattern 1, ending at index 9).
"""
from __future__ import annotations

import functools
import re
from bisect import bisect_left
from operator import itemgetter
from typing import Iterable

from labkit.core import LabkitError

ROOT = 0
# the total length of all patterns one automaton takes (about 30 MB of trie at the cap)
MAX_PATTERN_CHARS = 200_000
# remembered transitions (state, char) -> state; cleared when full (they come back on demand)
MAX_TRANSITIONS = 1 << 18


def check_patterns(patterns: Iterable[str], what: str = "AhoCorasick", limit: int = MAX_PATTERN_CHARS) -> tuple[str, ...]:
    """The patterns as a tuple of non-empty str whose total length is within ``limit``, else LabkitError.

    The total is checked before any of the trie is built.

    Example:
        >>> check_patterns(["ab", "<|im_end|>"])
        ('ab', '<|im_end|>')
    """
    out = _strings_checked(patterns, what)
    _total_checked(out, what, limit)
    return out


def _strings_checked(patterns: Iterable[str], what: str) -> tuple[str, ...]:
    # the patterns as a tuple of non-empty str, else LabkitError
    out = tuple(patterns)
    if not ({str}.issuperset(map(type, out)) and all(out)):  # the usual case checked at C speed
        for i, p in enumerate(out):
            if not isinstance(p, str):
                raise LabkitError(f"{what}: pattern {i} is {type(p).__name__}, not str")
            if not p:
                raise LabkitError(f"{what}: pattern {i} is the empty string (it would match everywhere)")
    return out


def _total_checked(patterns: tuple[str, ...], what: str, limit: int) -> int:
    # the patterns' total length, within limit, else LabkitError
    total = sum(map(len, patterns))
    if total > limit:
        raise LabkitError(
            f"{what}: the patterns hold {total:,} characters in all, more than the limit of {limit:,}"
        )
    return total


def _first_chars(ordered: list[str]) -> frozenset[str]:
    """The first characters of sorted non-empty strings: one bisection from each to the next.

    Example:
        >>> sorted(_first_chars(sorted(["<|im_end|>", "\\n\\nUser:", "<|eot_id|>"])))
        ['\\n', '<']
    """
    found: list[str] = []
    at = 0
    while at < len(ordered):
        if len(found) == 64:  # many: one pass over all the strings is cheaper
            return frozenset(map(itemgetter(0), ordered))
        ch = ordered[at][0]
        found.append(ch)
        # the strings that start with ch end where those starting with the next character begin
        at = len(ordered) if ch == "\U0010ffff" else bisect_left(ordered, chr(ord(ch) + 1), at)
    return frozenset(found)


class AhoCorasick:
    """A resumable multi-pattern matcher over ``str`` (code points, never bytes).

    ``step`` and ``scan`` advance a state (an int, ``ROOT`` at the start). Where several
    patterns end at the same character, the longest one is reported: it starts earliest.

    Example:
        >>> from labkit.algorithms.aho_corasick import AhoCorasick, ROOT
        >>> ac = AhoCorasick(["<|im_end|>"])
        >>> ac.scan(ROOT, "hi <|im")
        (4, -1, -1)

    (no match yet; state 4 stands for "<|im", a prefix of the pattern).
    """

    def __init__(self, patterns: Iterable[str], *, what: str = "AhoCorasick"):
        # ``what`` names the caller in the errors of check_patterns (e.g. "stop strings")
        self._build(_strings_checked(patterns, what), what)

    @classmethod
    def _of_strings(cls, patterns: tuple[str, ...], what: str) -> "AhoCorasick":
        """The automaton for a tuple of non-empty str checked already (a stop set's, checked by
        labkit.streaming.stop): only their total length is checked here.

        Example:
            >>> AhoCorasick._of_strings(("he", "she"), "stop strings").find_first("ushers")
            (4, 1)
        """
        automaton = cls.__new__(cls)
        automaton._build(patterns, what)
        return automaton

    def _build(self, patterns: tuple[str, ...], what: str) -> None:
        self.total_chars = _total_checked(patterns, what, MAX_PATTERN_CHARS)  # before any of the trie
        self.patterns = patterns
        # The patterns in sorted order: the patterns through a node are then one run of this
        # list, found by bisection instead of a pass over all of them.
        self._sorted = sorted(self.patterns)
        self._index_of: dict[str, int] | None = None  # pattern -> its lowest index, made when first needed
        # One entry per trie node, appended as nodes are made. A node is made the first time a
        # transition or a failure link asks its parent for it: a trie nobody walks into is never
        # built. ``_run[node]`` is the node's run ``(lo, hi)`` of the sorted patterns (the
        # node's text is ``_sorted[lo][:depth]``).
        self._run: list[tuple[int, int]] = [(0, len(self.patterns))]
        self._parent = [ROOT]
        self._depth = [0]
        # Worked out on demand, None until then; these lists grow a block at a time, ahead of
        # the nodes (see _grow). ``_children[node]``: the children asked for so far (-1: no such
        # child). ``_rows[node]``: remembered transitions (None until the state is left once);
        # a target that completes a match is stored as ~target (negative): one comparison tells.
        self._children: list[dict[str, int] | None] = [None]
        self._fail: list[int | None] = [ROOT]
        self._match: list[int | None] = [-1]
        self._hold: list[int | None] = [0]
        self._rows: list[dict[str, int] | None] = [None]
        self._remembered = 0
        # Only a pattern's first character can leave ROOT: a chunk without one is skipped whole.
        self.first_chars = _first_chars(self._sorted)
        # A pattern ends only on one of these: a node reached by any other character completes none.
        self.last_chars = frozenset(map(itemgetter(-1), self.patterns))
        self._starts_or_ends = self.first_chars | self.last_chars
        self._first_search = None  # a regex over first_chars, compiled when a scan first needs it

    @functools.cached_property
    def max_length(self) -> int:
        """The length of the longest pattern (0 without patterns)."""
        return max(map(len, self.patterns), default=0)

    @property
    def node_count(self) -> int:
        """How many trie nodes have been made so far (all of them after :meth:`table`)."""
        return len(self._depth)

    @property
    def remembered(self) -> int:
        """How many transitions are remembered now (at most ``MAX_TRANSITIONS``)."""
        return self._remembered

    def _child(self, node: int, ch: str) -> int:
        """The node's child by ``ch`` (-1: none), made the first time it is asked for."""
        asked = self._children[node]
        if asked is None:
            asked = self._children[node] = {}
        else:
            known = asked.get(ch)
            if known is not None:
                return known
        child = asked[ch] = self._make_child(node, ch)
        return child

    def _make_child(self, node: int, ch: str) -> int:
        # the node's run of sorted patterns narrowed to those going on with ch: two bisections at most
        depth, ordered = self._depth[node], self._sorted
        lo, hi = self._run[node]
        while lo < hi and len(ordered[lo]) == depth:  # the node's own pattern sorts first
            lo += 1
        if lo == hi:  # a leaf
            return -1
        low, high = ordered[lo][depth], ordered[hi - 1][depth]
        if ch < low or ch > high:
            return -1
        if low != high:  # several next characters (one is the usual case down a long pattern)
            prefix = ordered[lo][:depth]
            lo = bisect_left(ordered, prefix + ch, lo, hi)
            if ordered[lo][depth] != ch:
                return -1
            if ch != high:  # the run going on with ch ends where the next character's begins
                hi = bisect_left(ordered, prefix + chr(ord(ch) + 1), lo, hi)
        child = len(self._depth)
        if child == len(self._fail):
            self._grow()
        self._run.append((lo, hi))
        self._parent.append(node)
        self._depth.append(depth + 1)
        if self._fail[node] == ROOT and ch not in self._starts_or_ends:
            # known at once (the usual case down a stop string): the node links to ROOT, as its
            # parent does and ROOT has no child on ch, and completes no pattern
            self._fail[child] = ROOT
            self._match[child] = -1
        return child

    def _grow(self) -> None:
        # room for as many nodes again (64 at least): one extend per list, not five appends per node
        block = [None] * max(64, len(self._fail))
        for worked_out in (self._children, self._fail, self._match, self._hold, self._rows):
            worked_out += block

    def _pattern_indices(self) -> dict[str, int]:
        """Each pattern's lowest index (the one reported when a pattern is given twice)."""
        if self._index_of is None:
            count = len(self.patterns)
            self._index_of = dict(zip(reversed(self.patterns), range(count - 1, -1, -1)))
        return self._index_of

    def _terminal(self, node: int) -> int | None:
        """The pattern whose last character is this node (its lowest index), or None."""
        first = self._sorted[self._run[node][0]]  # a pattern equal to the node's text sorts first in its run
        return self._pattern_indices()[first] if len(first) == self._depth[node] else None

    def _has_children(self, node: int) -> bool:
        # the run's last pattern is its longest, and the node's own patterns sort first
        lo, hi = self._run[node]
        return hi > lo and len(self._sorted[hi - 1]) > self._depth[node]

    def _make_all_children(self, node: int) -> None:
        """Every child of the node, numbered in the order their patterns were given (for :meth:`table`)."""
        depth, ordered, index_of = self._depth[node], self._sorted, self._pattern_indices()
        lo, hi = self._run[node]
        while lo < hi and len(ordered[lo]) == depth:
            lo += 1
        groups = []  # (lowest pattern index, next char) per child
        while lo < hi:
            head = ordered[lo]
            ch = head[depth]
            end = hi if ch == "\U0010ffff" else bisect_left(ordered, head[:depth] + chr(ord(ch) + 1), lo, hi)
            groups.append((min(map(index_of.__getitem__, ordered[lo:end])), ch))
            lo = end
        for _, ch in sorted(groups):
            self._child(node, ch)

    def cannot_start(self, text: str) -> bool:
        """True if no pattern starts anywhere in ``text`` (no pattern's first character is in it).

        Example:
            >>> from labkit.algorithms.aho_corasick import AhoCorasick
            >>> AhoCorasick(["<|im_end|>"]).cannot_start("hello")
            True
        """
        return self.first_chars.isdisjoint(text)

    def _first_at(self, text: str, start: int) -> int:
        """Where the first character that can start a pattern is in ``text[start:]``, or -1."""
        if self._first_search is None:
            chars = "".join(re.escape(c) for c in sorted(self.first_chars))
            self._first_search = re.compile(f"[{chars}]").search
        found = self._first_search(text, start)
        return -1 if found is None else found.start()

    # -- the parts worked out on demand ------------------------------------------
    def fail(self, state: int) -> int:
        """The failure link: the state of the longest proper suffix of this state's string.

        Example:
            >>> from labkit.algorithms.aho_corasick import AhoCorasick, ROOT
            >>> ac = AhoCorasick(["she", "he"])
            >>> ac.prefix_text(ac.fail(ac.scan(ROOT, "sh")[0]))
            'h'
        """
        fail = self._fail
        known = fail[state]
        if known is not None:
            return known
        found = self._fail_from_parent(state)
        if found is not None:
            return found
        parent, child_of = self._parent, self._child
        stack = [state]  # explicit stack: a chain of links can be as deep as the longest pattern
        while stack:
            node = stack[-1]
            if fail[node] is not None:
                stack.pop()
                continue
            up = parent[node]
            if up == ROOT:
                fail[node] = ROOT
                stack.pop()
                continue
            if fail[up] is None:
                stack.append(up)
                continue
            ch = self._sorted[self._run[node][0]][self._depth[node] - 1]
            f = fail[up]
            while True:  # the classic walk: shorter and shorter suffixes until one goes on with ch
                child = child_of(f, ch)
                if child >= 0:
                    fail[node] = child
                    break
                if f == ROOT:
                    fail[node] = ROOT
                    break
                if fail[f] is None:
                    stack.append(f)  # work that one out first, then come back to node
                    break
                f = fail[f]
            if fail[node] is not None:
                stack.pop()
        return fail[state]

    def _fail_from_parent(self, node: int) -> int | None:
        # fail(node) when the parent's link and every link the walk meets are known, else None
        up = self._parent[node]
        fail = self._fail
        if up == ROOT:
            fail[node] = ROOT
            return ROOT
        f = fail[up]
        if f is None:
            return None
        ch = self._sorted[self._run[node][0]][self._depth[node] - 1]
        children = self._children
        while True:
            asked = children[f]
            child = asked.get(ch) if asked is not None else None
            if child is None:
                child = self._child(f, ch)
            if child >= 0:
                fail[node] = child
                return child
            if f == ROOT:
                fail[node] = ROOT
                return ROOT
            f = fail[f]
            if f is None:
                return None

    def _chain(self, table: list, state: int, own) -> int:
        # table[state] = own(node) where it is set, else the value at the failure link
        path = []
        node = state
        while table[node] is None:
            value = own(node)
            if value is not None:
                table[node] = value
                break
            path.append(node)
            node = self.fail(node)
        value = table[node]
        for node in path:
            table[node] = value
        return value

    def match_of(self, state: int) -> int:
        """The longest pattern ending at this state (itself, else via failure links), or -1."""
        found = self._match[state]
        if found is not None:
            return found
        return self._chain(self._match, state, self._terminal)

    def _match_reached(self, node: int, last: str) -> int:
        """:meth:`match_of` for a node a transition on ``last`` has reached (its match not known yet)."""
        if last in self.last_chars:
            return self.match_of(node)
        # No pattern ends with ``last``, so none ends here: no walk down the failure links. The
        # node's own link is made now all the same, as match_of would have made it (the nodes
        # keep their numbers), the cheap way when the parent's link is known.
        if self._fail[node] is None and self._fail_from_parent(node) is None:
            self.fail(node)
        self._match[node] = -1
        return -1

    def hold_length(self, state: int) -> int:
        """How many trailing characters could still become a match (the jail's length).

        Example:
            >>> from labkit.algorithms.aho_corasick import ROOT, AhoCorasick
            >>> ac = AhoCorasick(["Hello world"])
            >>> ac.hold_length(ac.scan(ROOT, "Hello")[0])
            5
        """
        found = self._hold[state]
        if found is not None:
            return found
        if self._has_children(state):
            found = self._hold[state] = self._depth[state]
            return found
        has_children, depth = self._has_children, self._depth
        return self._chain(self._hold, state, lambda node: depth[node] if has_children(node) else None)

    def _goto(self, state: int, ch: str) -> int:
        """The transition worked out and remembered, encoded (``~target`` when it completes a match)."""
        asked = self._children[state]
        if asked is None:  # the state is left for the first time: no child asked for, nothing remembered
            target = self._make_child(state, ch)
            self._children[state] = {ch: target}
            row = self._rows[state] = {}
        else:
            target = asked.get(ch)
            if target is None:
                target = asked[ch] = self._make_child(state, ch)
            row = self._rows[state]
            if row is None:
                row = self._rows[state] = {}
        if target < 0:  # no such child: follow the failure links
            target = ROOT if state == ROOT else self._goto_via_links(state, ch)
        match = self._match[target]
        if match is None:
            match = self._match_reached(target, ch)
        code = ~target if match >= 0 else target
        if self._remembered >= MAX_TRANSITIONS:
            self._rows[:] = [None] * len(self._rows)  # bounded memory; the hot ones come back quickly
            self._remembered = 0
            row = self._rows[state] = {}
        row[ch] = code
        self._remembered += 1
        return code

    def _goto_via_links(self, state: int, ch: str) -> int:
        # the first node down the state's failure links that has a child on ch (ROOT if none does)
        children, fail = self._children, self._fail
        node = fail[state]
        if node is None:
            node = self.fail(state)
        if node == ROOT and ch not in self.first_chars:
            return ROOT  # ROOT has children on the patterns' first characters only
        while True:
            asked = children[node]
            if asked is None:
                asked = children[node] = {}
            target = asked.get(ch)
            if target is None:
                target = asked[ch] = self._make_child(node, ch)
            if target >= 0:
                return target
            if node == ROOT:
                return ROOT
            up = fail[node]
            node = up if up is not None else self.fail(node)

    # -- the matcher -------------------------------------------------------------
    def step(self, state: int, ch: str) -> int:
        """The state after one more character.

        Example:
            >>> ac = AhoCorasick(["<|im_end|>"])
            >>> after_lt = ac.step(ROOT, "<")
            >>> ac.depth(after_lt), ac.step(after_lt, "x") == ROOT
            (1, True)
        """
        row = self._rows[state]
        code = row.get(ch) if row is not None else None
        if code is None:
            code = self._goto(state, ch)
        return ~code if code < 0 else code

    def scan(self, state: int, text: str, start: int = 0) -> tuple[int, int, int]:
        """Advance over ``text[start:]`` until the first match ends.

        Returns ``(state, end, pattern)``: ``end`` is the index just past the first match in
        ``text`` and ``pattern`` its index (the longest of those ending there), or
        ``(state, -1, -1)`` with the state after the whole text when nothing matched.

        Example:
            >>> from labkit.algorithms.aho_corasick import ROOT, AhoCorasick
            >>> AhoCorasick(["ab"]).scan(ROOT, "xaby")
            (2, 3, 0)
        """
        if not self.first_chars:
            return state, -1, -1
        if state == ROOT:
            start = self._first_at(text, start)
            if start < 0:  # no character here can start a pattern
                return ROOT, -1, -1
        rows, goto = self._rows, self._goto
        for i in range(start, len(text)):
            ch = text[i]
            row = rows[state]
            code = row.get(ch) if row is not None else None
            if code is None:
                code = goto(state, ch)
            if code < 0:
                state = ~code
                return state, i + 1, self.match_of(state)
            state = code
        return state, -1, -1

    def depth(self, state: int) -> int:
        """Length of the string a state stands for (the longest suffix that is a prefix)."""
        return self._depth[state]

    def prefix_text(self, state: int, start: int = 0, stop: int | None = None) -> str:
        """The string a state stands for (a prefix of some pattern), or its slice ``[start:stop]``.

        Example:
            >>> from labkit.algorithms.aho_corasick import AhoCorasick, ROOT
            >>> ac = AhoCorasick(["Hello"])
            >>> ac.prefix_text(ac.scan(ROOT, "Hel")[0])
            'Hel'
        """
        if state == ROOT:
            return ""
        size = self._depth[state]
        stop = size if stop is None else min(stop, size)
        return self._sorted[self._run[state][0]][start:stop]

    def held_text(self, state: int, size: int | None = None) -> str:
        """The trailing text a state must hold back (its first ``size`` characters if given).

        Every state stands for one string (a prefix of some pattern) that the text seen so
        far ends with, so the jail's content is a function of the state alone.
        Example:
            >>> from labkit.algorithms.aho_corasick import ROOT, AhoCorasick
            >>> ac = AhoCorasick(["Hello world"])
            >>> ac.held_text(ac.scan(ROOT, "Say Hello")[0])
            'Hello'
        """
        end = self._depth[state]
        begin = end - self.hold_length(state)
        return self.prefix_text(state, begin, end if size is None else begin + size)

    def table(self) -> list[dict]:
        """One row per state (a trace to look at): its string, failure link, what it matches, its hold.

        Keys: ``state``, ``text`` (the prefix it stands for), ``fail`` and ``fail_text`` (the
        longest proper suffix that is also a state), ``matches`` (the longest pattern that
        ends here, or None) and ``hold`` (how many characters it keeps in a jail).
        Example:
            >>> from labkit.algorithms.aho_corasick import AhoCorasick
            >>> AhoCorasick(["he", "she"]).table()[2]  # doctest: +ELLIPSIS
            {'state': 2, 'text': 's', ...}
        """
        node = 0
        while node < self.node_count:  # make every node: each one's children are appended
            self._make_all_children(node)
            node += 1
        rows = []
        for node in range(self.node_count):
            pattern = self.match_of(node)
            fail = self.fail(node)
            rows.append({
                "state": node,
                "text": self.prefix_text(node),
                "fail": fail,
                "fail_text": self.prefix_text(fail),
                "matches": self.patterns[pattern] if pattern >= 0 else None,
                "hold": self.hold_length(node),
            })
        return rows

    def find_first(self, text: str) -> tuple[int, int] | None:
        """``(end, pattern)`` of the match that ends first in ``text``, or None.

        Example:
            >>> from labkit.algorithms.aho_corasick import AhoCorasick
            >>> AhoCorasick(["abcd", "bc"]).find_first("abcd")
            (3, 1)
        """
        _, end, pattern = self.scan(ROOT, text)
        return None if end < 0 else (end, pattern)

    def __repr__(self) -> str:
        return f"<AhoCorasick patterns={len(self.patterns)} nodes={self.node_count}>"
