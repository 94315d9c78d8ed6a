"""Stop sequences with a jail buffer: end generation on stop tokens or stop strings, token by token.

A stop string such as ``"Hello world"`` can arrive split over several tokens ("Hello",
" world"), so text that might be the start of a stop string cannot be shown yet: it goes to
a *jail* and is released as soon as the text goes another way ("Hello", " test" releases
"Hello test"). The jail holds exactly the longest suffix of the decoded text that is a
proper prefix of some stop string, which an Aho-Corasick automaton knows for free: it is
the depth of its current state. Token stops (EOS, ``<|im_end|>``) are checked on the id,
before any decoding.

Layers, bottom up:
  * :class:`StopStringMatcher` -- plain text chunks in, released text and the stop out.
  * :class:`StopSequenceDecoder` -- token ids in (through :class:`labkit.DecodeStream`),
    ``Text | Held | Stopped | StoppedWithText`` out.
  * :class:`FixedHoldBack` -- the simpler approach (always withhold ``max(len) - 1``
    characters) kept for comparison.

Introduced in notebook ``09_stop_sequences_jail``.

Example (the first newline is held; the second completes the stop):
    >>> import labkit
    >>> tok = labkit.load("gpt2")
    >>> dec = labkit.StopSequenceDecoder(tok, labkit.StopSequenceConfig(stop_sequences=["\\n\\n", "User:"]))
    >>> [dec.process_token(i) for i in tok.encode("Hi there.\\n\\nBye").ids][:5]
    [Text(text='Hi'), Text(text=' there'), Text(text='.'), Held(), Stopped()]
"""
from __future__ import annotations

import weakref
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence, Union

from labkit.algorithms.aho_corasick import ROOT, AhoCorasick
from labkit.algorithms.bounded import BoundedDict
from labkit import metrics as _metrics
from labkit.core import LabkitError

# StopStringMatcher remembers the outcome of pushing short chunks (token texts) per state
MEMO_LIMIT = 1 << 15
MEMO_MAX_CHARS = 32

__all__ = [
    "Text",
    "Held",
    "Stopped",
    "StoppedWithText",
    "StopOutput",
    "StopReason",
    "StopSequenceConfig",
    "StopSequenceDecoder",
    "StopStringMatcher",
    "FixedHoldBack",
    "SuffixScanJail",
    "stop_reference",
    "stop_timeline",
]


# ----------------------------------------------------------------------------- outputs


@dataclass(frozen=True, slots=True)  # frozen: outputs are remembered and handed out again
class Text:
    """Text released to the reader (never empty from ``process_token``).

    Example:
        >>> Text("Hello test").text
        'Hello test'
    """

    text: str


@dataclass(frozen=True)
class Held:
    """Nothing to show for this token: its text is in the jail (or is not complete UTF-8 yet).

    Example:
        >>> from labkit.streaming.stop import Held
        >>> Held()
        Held()
    """


@dataclass(frozen=True)
class Stopped:
    """Generation has stopped and there is no text left to show.

    Example:
        >>> Stopped() == Stopped()
        True
    """


@dataclass(frozen=True, slots=True)
class StoppedWithText:
    """Generation has stopped; this is the last text to show (a released jail, a visible stop).

    Example:
        >>> from labkit.streaming.stop import StoppedWithText
        >>> StoppedWithText("Hello")
        StoppedWithText(text='Hello')
    """

    text: str


StopOutput = Union[Text, Held, Stopped, StoppedWithText]
_TEXTS: BoundedDict = BoundedDict(1 << 14)  # chunk -> Text(chunk), for chunks shown as they are


def _text_of(text: str) -> Text:
    out = _TEXTS[text] = Text(text)
    return out
_HELD = Held()
_STOPPED = Stopped()


class _EveryId:
    """A set that holds every id: the decoder's guard while stopped or under min_tokens."""

    def __contains__(self, item) -> bool:
        return True


_EVERY_ID = _EveryId()


@dataclass(frozen=True)
class StopReason:
    """Which stop fired: ``kind`` is "token", "eos" or "string"; ``value`` the id or the string.

    Example:
        >>> from labkit.streaming.stop import StopReason
        >>> StopReason("string", "\\n\\n", visible=False)
        StopReason(kind='string', value='\\n\\n', visible=False)
    """

    kind: str
    value: Union[int, str]
    visible: bool


# ----------------------------------------------------------------------------- configuration


def _ids(name: str, values) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise LabkitError(f"StopSequenceConfig: {name} must be a list of token ids, got {type(values).__name__}")
    out = []
    for pos, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, int):
            raise LabkitError(f"StopSequenceConfig: {name}[{pos}] is {value!r}, not a token id (int)")
        out.append(int(value))
    return tuple(dict.fromkeys(out))


def _strings(name: str, values) -> tuple[str, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        # a bare str would otherwise become one stop per character
        raise LabkitError(f"StopSequenceConfig: {name} must be a list of str, got {type(values).__name__} {values!r}")
    values = tuple(values)
    if {str}.issuperset(map(type, values)) and all(values):  # the usual case checked at C speed
        return tuple(dict.fromkeys(values))
    out = []
    for pos, value in enumerate(values):
        if not isinstance(value, str):
            raise LabkitError(f"StopSequenceConfig: {name}[{pos}] is {type(value).__name__}, not str")
        if not value:
            raise LabkitError(f"StopSequenceConfig: {name}[{pos}] is the empty string, which would stop everywhere")
        out.append(value)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class StopSequenceConfig:
    """What ends generation: token ids and strings, each hidden (cut) or visible (kept).

    ``stop_tokens``/``stop_sequences`` are hidden: the stop itself is not shown.
    ``visible_stop_tokens``/``visible_stop_sequences`` are shown, then generation stops.
    ``eos_token_ids`` are hidden stop tokens too (a model may have several, e.g. Llama-3's
    ``<|end_of_text|>`` and ``<|eot_id|>``); :meth:`for_tokenizer` fills them from a model.
    ``min_tokens``: no stop of any kind fires within the first ``min_tokens`` tokens (the
    tokens are then decoded as ordinary text).

    Example:
        >>> from labkit.streaming.stop import StopSequenceConfig
        >>> StopSequenceConfig(stop_sequences=["\\n\\nUser:"], visible_stop_sequences=["</answer>"])
        StopSequenceConfig(stop_tokens=(), stop_sequences=('\\n\\nUser:',), visible_stop_tokens=(), visible_stop_sequences=('</answer>',), eos_token_ids=(), min_tokens=0)
    """

    stop_tokens: Sequence[int] = ()
    stop_sequences: Sequence[str] = ()
    visible_stop_tokens: Sequence[int] = ()
    visible_stop_sequences: Sequence[str] = ()
    eos_token_ids: Sequence[int] = ()
    min_tokens: int = 0

    def __post_init__(self):
        fix = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        fix("stop_tokens", _ids("stop_tokens", self.stop_tokens))
        fix("visible_stop_tokens", _ids("visible_stop_tokens", self.visible_stop_tokens))
        fix("eos_token_ids", _ids("eos_token_ids", self.eos_token_ids))
        fix("stop_sequences", _strings("stop_sequences", self.stop_sequences))
        fix("visible_stop_sequences", _strings("visible_stop_sequences", self.visible_stop_sequences))
        both = set(self.stop_sequences) & set(self.visible_stop_sequences)
        if both:
            raise LabkitError(f"StopSequenceConfig: {sorted(both)!r} are both hidden and visible stop sequences")
        both_ids = (set(self.stop_tokens) | set(self.eos_token_ids)) & set(self.visible_stop_tokens)
        if both_ids:
            raise LabkitError(f"StopSequenceConfig: ids {sorted(both_ids)} are both hidden and visible stop tokens")
        if isinstance(self.min_tokens, bool) or not isinstance(self.min_tokens, int) or self.min_tokens < 0:
            raise LabkitError(f"StopSequenceConfig: min_tokens must be an int >= 0, got {self.min_tokens!r}")

    @classmethod
    def for_tokenizer(cls, tok, **kwargs) -> "StopSequenceConfig":
        """A config whose ``eos_token_ids`` are every end-of-generation id the model declares.

        Example:
            >>> from labkit.streaming.stop import StopSequenceConfig
            >>> import labkit
            >>> StopSequenceConfig.for_tokenizer(labkit.load("qwen2"), stop_sequences=["\\n\\n"])
            StopSequenceConfig(stop_tokens=(), stop_sequences=('\\n\\n',), visible_stop_tokens=(), visible_stop_sequences=(), eos_token_ids=(151643,), min_tokens=0)
        """
        specials = tok.special_tokens
        eos = tuple(specials.eos_ids) or ((specials.eos_id,) if specials.eos_id is not None else ())
        extra = tuple(kwargs.pop("eos_token_ids", ()))
        return cls(eos_token_ids=eos + extra, **kwargs)


# ----------------------------------------------------------------------------- text level


class _StopTables:
    """One stop set compiled: the automaton, a StopReason per pattern, and the push memo.

    ``memo[state][chunk]`` is the outcome of pushing ``chunk`` in ``state``:
    ``(next state, output, released, reason)`` (one dict per state: a lookup builds no key
    tuple). Shared by every matcher with the same stops.
    """

    def __init__(self, hidden: tuple[str, ...], visible: tuple[str, ...]):
        patterns = hidden + visible
        # the strings are checked already (by _strings): only their total length is, before building
        self.automaton = AhoCorasick._of_strings(patterns, "stop strings")
        self._hidden_count = len(hidden)
        self.memo: defaultdict[int, dict[str, tuple]] = defaultdict(dict)
        self._memo_entries = 0  # bounded by MEMO_LIMIT: the memo empties itself when full
        self.size = self.automaton.total_chars
        self.charged = 0  # the units the compile cache counted for it when last taken (see _compile)

    def reason(self, pattern: int) -> StopReason:
        """The StopReason for pattern number ``pattern`` (hidden ones come first)."""
        return StopReason("string", self.automaton.patterns[pattern], pattern >= self._hidden_count)

    @property
    def units(self) -> int:
        """What the compile cache charges: patterns, trie nodes, transitions, push outcomes (each a few hundred bytes)."""
        automaton = self.automaton
        return len(automaton.patterns) + automaton.node_count + automaton.remembered + self._memo_entries

    @property
    def entries(self) -> int:
        """How many push outcomes are remembered.

        Example (a stop set compiled just now remembers none yet):
            >>> _compile(("<|a stop set only this example compiles|>",), ()).entries
            0
        """
        return self._memo_entries

    def _joined(self, state: int, held: int, text: str, cut: int) -> str:
        # (jail + text)[:cut] without building the whole jail (it can be long; the cut rarely is)
        if cut <= held:
            return self.automaton.held_text(state, cut)
        return self.automaton.held_text(state) + text[: cut - held]

    def outcome(self, state: int, text: str, check: bool = True) -> tuple:
        """One push worked out with the automaton: (next state, output, released, reason)."""
        automaton = self.automaton
        after, end, pattern = automaton.scan(state, text)
        if state == ROOT and end < 0:  # the usual miss: an empty jail, no stop completed
            keep = automaton.hold_length(after)
            released = text[: len(text) - keep] if keep else text
            return after, (_TEXTS.get(released) or _text_of(released)) if released else _HELD, released, None
        held = automaton.hold_length(state)
        while end >= 0 and not check:
            # a suppressed match: keep scanning; the automaton carries on as if nothing happened
            after, end, pattern = automaton.scan(after, text, end)
        if end >= 0:
            reason = self.reason(pattern)
            # the match may start inside the jail: cut the jail and the chunk as one text
            released = self._joined(state, held, text, held + (end if reason.visible else end - len(reason.value)))
            return ROOT, (StoppedWithText(released) if released else _STOPPED), released, reason
        released = self._joined(state, held, text, held + len(text) - automaton.hold_length(after))
        return after, (Text(released) if released else _HELD), released, None

    def remember(self, state: int, text: str) -> tuple:
        """:meth:`outcome`, stored for next time (short chunks and short releases only)."""
        hit = self.outcome(state, text)
        if len(text) <= MEMO_MAX_CHARS and len(hit[2]) <= MEMO_MAX_CHARS * 2:
            if self._memo_entries >= MEMO_LIMIT:
                self.memo.clear()  # bounded memory, as a BoundedDict; the common chunks come back quickly
                self._memo_entries = 0
            row = self.memo[state]
            if text not in row:
                self._memo_entries += 1
            row[text] = hit
        return hit


# Compiled stop sets, kept for the next request with the same stops (a server sends the same
# stops request after request, or cycles through a few dozen sets). Bounded by count and by
# what the kept sets have remembered (``_StopTables.units``: trie nodes, transitions, push
# outcomes, a few hundred bytes each), recounted for a set each time a request takes it. A
# set of more than CACHE_SET_CHARS characters is not kept once its decoders are gone; while
# some decoder uses a set, the weak table still shares it.
CACHE_SETS = 1024
CACHE_UNITS = 1_000_000  # a few hundred MB at the very most
CACHE_SET_CHARS = 25_000
_CACHE: "OrderedDict[_SetKey, _StopTables]" = OrderedDict()
_LIVE: "weakref.WeakValueDictionary[_SetKey, _StopTables]" = weakref.WeakValueDictionary()
_cache_units = 0  # the sum of the kept sets' charges


class _SetKey(tuple):
    """A stop set's key in the caches, ``(hidden, visible)``, hashed once.

    A plain tuple is hashed again on every dict operation, and hashing it reads every stop
    string (1,000 of them in a big set); a compile looks the key up four times.

    Example:
        >>> from labkit.streaming.stop import _SetKey
        >>> _SetKey(("a",), ()) == (("a",), ()) and hash(_SetKey(("a",), ())) == hash((("a",), ()))
        True
    """

    def __new__(cls, hidden: tuple[str, ...], visible: tuple[str, ...]):
        key = super().__new__(cls, (hidden, visible))
        key.hashed = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self.hashed


def _charge(tables: _StopTables) -> None:
    """Bring the cache's count up to date with what ``tables`` remembers now."""
    global _cache_units
    units = tables.units
    _cache_units += units - tables.charged
    tables.charged = units


def _compile(hidden: tuple[str, ...], visible: tuple[str, ...]) -> _StopTables:
    """The tables for one stop set, built once and shared (see ``CACHE_SETS``, ``CACHE_UNITS``).

    ``hidden`` and ``visible`` are tuples of non-empty str, as ``_strings`` returns them.

    Example:
        >>> from labkit.streaming.stop import _compile
        >>> _compile(("<|a stop set only this example uses|>",), ()).automaton  # fresh: only the root is made
        <AhoCorasick patterns=1 nodes=1>
    """
    global _cache_units
    key = _SetKey(hidden, visible)
    tables = _CACHE.get(key)
    if tables is not None:
        _CACHE.move_to_end(key)
    else:
        tables = _LIVE.get(key)
        if tables is None:
            tables = _LIVE[key] = _StopTables(hidden, visible)
        if tables.size > CACHE_SET_CHARS:
            return tables
        _CACHE[key] = tables
    _charge(tables)  # what the last request with these stops added
    while len(_CACHE) > 1 and (len(_CACHE) > CACHE_SETS or _cache_units > CACHE_UNITS):
        _, old = _CACHE.popitem(last=False)  # the least recently used set goes first
        _cache_units -= old.charged
        old.charged = 0
    return tables


class StopStringMatcher:
    """Stop strings over text that arrives in chunks: releases what is safe, jails the rest.

    :meth:`push` takes the next chunk of decoded text and returns ``(released, reason)``:
    ``released`` is the text that can be shown now; ``reason`` is a :class:`StopReason` when
    a stop string completed (then ``released`` ends just before a hidden stop, or just after
    a visible one, and anything later in the chunk is dropped). Between pushes, :attr:`jail`
    is exactly the longest suffix of the text that is a proper prefix of some stop string.
    Where several stops complete in one chunk, the one that ends first wins (and of those
    ending at the same character, the longest, which starts first).

    The whole state is one automaton state: the jail's text is a function of it, so the
    outcome of a push depends only on ``(state, chunk)`` and is remembered (token texts
    repeat), which makes the usual push one dictionary lookup however many stops there are.

    Example:
        >>> from labkit.streaming.stop import StopStringMatcher
        >>> m = StopStringMatcher(["Hello world"])
        >>> m.push("Hello")
        ('', None)
        >>> m.push(" test")
        ('Hello test', None)
    """

    def __init__(self, hidden: Iterable[str] = (), visible: Iterable[str] = ()):
        hidden = _strings("stop_sequences", hidden)
        visible = _strings("visible_stop_sequences", visible)
        self._use(_compile(hidden, visible))

    @classmethod
    def _for_config(cls, config: StopSequenceConfig) -> "StopStringMatcher":
        """The matcher for a config's stop strings (checked once already, by the config).

        Example:
            >>> StopStringMatcher._for_config(StopSequenceConfig(stop_sequences=["Hello world"])).push("Hello")
            ('', None)
        """
        matcher = cls.__new__(cls)
        matcher._use(_compile(config.stop_sequences, config.visible_stop_sequences))
        return matcher

    def _use(self, tables: _StopTables) -> None:
        # a compiled stop set, with an empty jail
        self.tables = tables
        self.automaton = self.tables.automaton
        self._memo = self.tables.memo  # bound once: feed is the hot loop
        self._cannot_start = self.automaton.first_chars.isdisjoint
        self.state = ROOT
        self.stopped: StopReason | None = None

    @property
    def jail(self) -> str:
        """The text held back now: the longest suffix that is a proper prefix of a stop string."""
        return "" if self.stopped is not None else self.automaton.held_text(self.state)

    @property
    def jail_length(self) -> int:
        """``len(jail)``, without building it.

        Example:
            >>> matcher = StopStringMatcher(["Hello world"])
            >>> matcher.push("Say Hello")
            ('Say ', None)
            >>> matcher.jail_length
            5
        """
        return 0 if self.stopped is not None else self.automaton.hold_length(self.state)

    def reset(self) -> None:
        """Forget all text: empty jail, no stop.

        Example:
            >>> matcher = StopStringMatcher(["Hello world"])
            >>> _ = matcher.push("Hello")
            >>> matcher.reset()
            >>> matcher.jail, matcher.stopped
            ('', None)
        """
        self.state, self.stopped = ROOT, None

    def push(self, text: str, check: bool = True) -> tuple[str, StopReason | None]:
        """Feed the next chunk; ``check=False`` lets stops pass (min_tokens) but keeps the jail.

        Example:
            >>> from labkit.streaming.stop import StopStringMatcher
            >>> StopStringMatcher(["<|im_end|>"]).push("ok<|im_end|>tail")  # doctest: +ELLIPSIS
            ('ok', StopReason(...))
        """
        if self.stopped is not None:
            return "", self.stopped
        tables, state = self.tables, self.state
        if check:
            hit = tables.memo[state].get(text) or tables.remember(state, text)
        else:
            hit = tables.outcome(state, text, False)
        self.state, _, released, reason = hit
        if reason is not None:
            self.stopped = reason
        return released, reason

    def feed(self, text: str) -> StopOutput:
        """:meth:`push` for a decoder: the output object (Text, Held, StoppedWithText, Stopped).

        Example:
            >>> from labkit.streaming.stop import StopStringMatcher
            >>> StopStringMatcher(["Hello world"]).feed("Hello")
            Held()
        """
        if self.stopped is not None:
            return _STOPPED
        state = self.state
        if state == ROOT and self._cannot_start(text):
            # no stop string starts in this chunk: shown as it is, without the automaton or the
            # memo (so a new stop set's first request costs what a warm one does)
            return _TEXTS.get(text) or _text_of(text)
        hit = self._memo[state].get(text)
        if hit is None:
            hit = self.tables.remember(state, text)
        self.state, out, _, reason = hit
        if reason is not None:
            self.stopped = reason
        return out

    def release(self) -> str:
        """End of text: hand back the jail and start over.

        Example:
            >>> matcher = StopStringMatcher(["Hello world"])
            >>> matcher.push("Say Hello"), matcher.release(), matcher.jail
            (('Say ', None), 'Hello', '')
        """
        out = self.jail
        self.state = ROOT
        return out


class SuffixScanJail:
    """The jail written plainly: the readable twin of :class:`StopStringMatcher`.

    Each push joins the jail and the new text, looks for the first stop string in it (as
    :func:`stop_reference` does), and otherwise keeps back the longest suffix that is a proper
    prefix of some stop string, found by trying every suffix length. Its work per push grows
    with the number and length of the stop strings; the Aho-Corasick matcher reads the same
    jail off one automaton state. Introduced in notebook ``09_stop_sequences_jail``.

    Example:
        >>> from labkit.streaming.stop import SuffixScanJail
        >>> j = SuffixScanJail(["Hello world"])
        >>> j.push("Hello"), j.push(" test")
        (('', None), ('Hello test', None))
    """

    def __init__(self, hidden: Iterable[str] = (), visible: Iterable[str] = ()):
        self.hidden = _strings("stop_sequences", hidden)
        self.visible = _strings("visible_stop_sequences", visible)
        self.jail = ""
        self.stopped: StopReason | None = None

    def push(self, text: str) -> tuple[str, StopReason | None]:
        """Feed a chunk; returns ``(released, reason)`` like :meth:`StopStringMatcher.push`."""
        if self.stopped is not None:
            return "", self.stopped
        buffer = self.jail + text
        shown, reason = stop_reference(buffer, self.hidden, self.visible)
        if reason is not None:
            self.jail, self.stopped = "", reason
            return shown, reason
        stops = self.hidden + self.visible
        keep = 0
        for size in range(1, min(len(buffer), max(map(len, stops), default=1) - 1) + 1):
            tail = buffer[len(buffer) - size:]  # a suffix that some longer stop string starts with
            if any(len(stop) > size and stop.startswith(tail) for stop in stops):
                keep = size
        self.jail = buffer[len(buffer) - keep:] if keep else ""
        return buffer[: len(buffer) - keep], None

    def release(self) -> str:
        """End of text: hand back the jail.

        Example (as :meth:`StopStringMatcher.release`, by scanning suffixes):
            >>> jail = SuffixScanJail(["Hello world"])
            >>> jail.push("Say Hello"), jail.release()
            (('Say ', None), 'Hello')
        """
        out, self.jail = ("" if self.stopped is not None else self.jail), ""
        return out


class FixedHoldBack:
    """The simple approach, for comparison: always withhold the last ``max(len) - 1`` characters.

    It never shows part of a stop string either, but it delays *every* character by that
    many characters, whether or not the text looks like a stop. Matching is a plain search of
    each stop string in the held window.

    Example:
        >>> from labkit.streaming.stop import FixedHoldBack
        >>> h = FixedHoldBack(["Hello world"])
        >>> h.push("Hello")
        ('', None)
    """

    def __init__(self, hidden: Iterable[str] = (), visible: Iterable[str] = ()):
        hidden = _strings("stop_sequences", hidden)
        visible = _strings("visible_stop_sequences", visible)
        self._stops = [(s, False) for s in hidden] + [(s, True) for s in visible]
        self.window = max((len(s) for s, _ in self._stops), default=1) - 1
        self.buffer = ""
        self.stopped: StopReason | None = None

    def push(self, text: str) -> tuple[str, StopReason | None]:
        """Feed a chunk; returns ``(released, reason)`` like :meth:`StopStringMatcher.push`."""
        if self.stopped is not None:
            return "", self.stopped
        self.buffer += text
        best = None
        for stop, visible in self._stops:  # one scan per stop string: the cost grows with their number
            at = self.buffer.find(stop)
            if at >= 0:
                key = (at + len(stop), -len(stop))
                if best is None or key < best[0]:
                    best = (key, stop, visible, at)
        if best is not None:
            _, stop, visible, at = best
            self.stopped = StopReason("string", stop, visible)
            out = self.buffer[: at + len(stop) if visible else at]
            self.buffer = ""
            return out, self.stopped
        cut = max(0, len(self.buffer) - self.window)
        out, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return out, None

    def release(self) -> str:
        """End of text: hand back what is held."""
        out = "" if self.stopped is not None else self.buffer
        self.buffer = ""
        return out


def stop_reference(text: str, hidden: Iterable[str] = (), visible: Iterable[str] = ()) -> tuple[str, StopReason | None]:
    """The whole text cut at its first stop string, computed naively (the tests' reference).

    The first stop is the one that ends first; of those ending at the same character, the
    longest. A hidden stop is cut off, a visible one kept; later text is dropped.

    Example:
        >>> from labkit.streaming.stop import stop_reference
        >>> stop_reference("a<|im_end|>b", ["<|im_end|>"])  # doctest: +ELLIPSIS
        ('a', StopReason(...))
    """
    candidates = [(s, False) for s in hidden] + [(s, True) for s in visible]
    best = None
    for stop, is_visible in candidates:
        at = text.find(stop)
        if at >= 0:
            key = (at + len(stop), -len(stop))
            if best is None or key < best[0]:
                best = (key, stop, is_visible, at)
    if best is None:
        return text, None
    _, stop, is_visible, at = best
    return text[: at + len(stop) if is_visible else at], StopReason("string", stop, is_visible)


# ----------------------------------------------------------------------------- token level


class StopSequenceDecoder:
    """Decode a token stream and stop on stop tokens or stop strings, holding back only what
    might turn out to be a stop string.

    ``process_token(id)`` returns one of:
      * ``Text(text)`` -- show this text;
      * ``Held()`` -- nothing to show yet (text jailed, or an incomplete UTF-8 character);
      * ``StoppedWithText(text)`` -- the stop fired; show this last text (released jail,
        a visible stop);
      * ``Stopped()`` -- the stop fired (or had fired) and there is nothing more to show.

    Token stops are checked on the id before decoding: a hidden one never has its text
    decoded, a visible one adds its own text (empty for a special token when
    ``skip_special_tokens``). String stops are matched on the decoded text, across token
    boundaries. Once stopped, every call returns ``Stopped()`` until :meth:`reset`.
    :meth:`flush` ends the generation and releases the jail.

    Example:
        >>> from labkit.streaming.stop import StopSequenceDecoder, StopSequenceConfig
        >>> import labkit
        >>> tok = labkit.load("qwen2")
        >>> dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=["Hello world"]))
    """

    def __init__(self, tok, config: StopSequenceConfig, *, skip_special_tokens: bool = True, prompt_ids: Sequence[int] = ()):
        if not isinstance(config, StopSequenceConfig):
            raise LabkitError(f"StopSequenceDecoder: config must be a StopSequenceConfig, got {type(config).__name__}")
        from labkit.streaming.decode_stream import DecodeStream, check_tokenizer

        self.tok = tok = check_tokenizer(tok)
        self.config = config
        self.skip_special_tokens = bool(skip_special_tokens)
        self.prompt_ids = tuple(tok.check_ids(prompt_ids, "StopSequenceDecoder prompt_ids"))
        size = tok.vocab_size
        for name in ("stop_tokens", "visible_stop_tokens", "eos_token_ids"):
            for i in getattr(config, name):
                if not 0 <= i < size:
                    raise LabkitError(f"StopSequenceDecoder: {name} has id {i}, outside {tok.name}'s vocab (size {size})")
        self._hidden_ids = frozenset(config.stop_tokens)
        self._eos_ids = frozenset(config.eos_token_ids)
        self._visible_ids = frozenset(config.visible_stop_tokens)
        self._token_stops = self._hidden_ids | self._eos_ids | self._visible_ids
        self._min_tokens = config.min_tokens
        self._stream_class = DecodeStream
        self.matcher = StopStringMatcher._for_config(config)
        # bound once: process_token is the hot loop (it does what matcher.feed does, inlined)
        self._memo = self.matcher._memo
        self._cannot_start = self.matcher._cannot_start
        self.reset()

    # -- state --------------------------------------------------------------
    def reset(self) -> None:
        """Start a new generation with the same tokenizer and config.

        Example:
            >>> import labkit
            >>> dec = labkit.StopSequenceDecoder(labkit.load("gpt2"), labkit.StopSequenceConfig(stop_sequences=["Hello"]))
            >>> dec.process_token(15496)
            Stopped()
            >>> dec.reset()
            >>> dec.process_token(995)
            Text(text=' world')
        """
        self._stream = self._stream_class(self.tok, self.prompt_ids, skip_special_tokens=self.skip_special_tokens)
        self._step = self._stream.step  # bound once: process_token is the hot loop
        self.matcher.reset()
        self.stop_reason: StopReason | None = None
        self._count = 0  # ids seen, counted only while min_tokens is pending
        self._guard = _EVERY_ID if self._min_tokens else self._token_stops

    @property
    def stopped(self) -> bool:
        """True once a stop has fired (until :meth:`reset`)."""
        return self.stop_reason is not None

    @property
    def jail(self) -> str:
        """The text held back right now (a proper prefix of some stop string)."""
        return self.matcher.jail

    # -- the stream ---------------------------------------------------------
    def process_token(self, token_id: int) -> StopOutput:
        """Take the next generated id; return what to show.

        Example ("Hello" could start the stop string, so it is held):
            >>> import labkit
            >>> dec = labkit.StopSequenceDecoder(labkit.load("gpt2"), labkit.StopSequenceConfig(stop_sequences=["Hello world"]))
            >>> dec.process_token(15496), dec.process_token(1332)
            (Held(), Text(text='Hello test'))
        """
        # The hot loop, once per generated token. One set test sends every unusual case to
        # _slow_token: stop ids, and every id while stopped or while min_tokens holds stops
        # back (then the guard is _EVERY_ID). The usual case is the matcher's feed, inlined: a chunk
        # no stop string starts in, or one remembered push.
        try:
            if token_id in self._guard:
                return self._slow_token(token_id)
        except TypeError:  # unhashable: not an id (the stream below says so)
            pass
        chunk = self._step(token_id)  # raises LabkitError on anything that is not an id
        if not chunk:
            return _HELD
        matcher = self.matcher  # not stopped: the guard sent every id to _slow_token then
        state = matcher.state
        if state == ROOT and self._cannot_start(chunk):
            return _TEXTS.get(chunk) or _text_of(chunk)  # no stop string starts in it
        hit = self._memo[state].get(chunk)
        if hit is None:
            hit = matcher.tables.remember(state, chunk)
        matcher.state, out, _, reason = hit
        if reason is not None:
            self._stop(reason)
        return out

    def _stop(self, reason: StopReason) -> None:
        """Record the stop; from now on every id takes the slow path, which says Stopped."""
        self.stop_reason = self.matcher.stopped = reason
        self._guard = _EVERY_ID
        if _metrics.ENABLED:  # an eos id is a token stop too
            _metrics.record_stop(self.tok, "string" if reason.kind == "string" else "token")

    def _slow_token(self, token_id: int) -> StopOutput:
        """A stop id, or any id while stopped or while min_tokens holds stops back."""
        if self.stop_reason is not None:
            self.tok.check_id(token_id)  # stopped, but a bad id is still an error
            return _STOPPED
        self._count += 1
        if self._count > self._min_tokens:
            self._guard = self._token_stops  # min_tokens is behind us
            if type(token_id) is int and token_id in self._token_stops:  # 7.0 == 7, but is no id
                return self._token_stop(token_id)
            chunk = self._step(token_id)
            out = self.matcher.feed(chunk) if chunk else _HELD
            if self.matcher.stopped is not None:
                self._stop(self.matcher.stopped)
            return out
        chunk = self._step(token_id)
        if not chunk:
            return _HELD
        released, _ = self.matcher.push(chunk, False)
        return Text(released) if released else _HELD

    def _token_stop(self, token_id: int) -> StopOutput:
        visible = token_id in self._visible_ids
        if visible:
            # the stop token's own text is decoded like any text (a string stop inside it still wins)
            chunk = (self._stream.step(token_id) or "") + (self._stream.flush() or "")
        else:
            chunk = self._stream.flush() or ""  # an incomplete character before the stop
        released, reason = self.matcher.push(chunk)
        if reason is None:
            released += self.matcher.release()
            kind = "eos" if token_id in self._eos_ids and token_id not in self._hidden_ids else "token"
            reason = StopReason(kind, token_id, visible)
        self._stop(reason)
        return StoppedWithText(released) if released else _STOPPED

    def process_tokens(self, ids: Iterable[int]) -> list[StopOutput]:
        """``process_token`` for each id, in order.

        Example:
            >>> import labkit
            >>> tok = labkit.load("gpt2")
            >>> dec = labkit.StopSequenceDecoder(tok, labkit.StopSequenceConfig(stop_sequences=["Hello world"]))
            >>> dec.process_tokens(tok.encode("Say Hello world and more").ids)[:3]
            [Text(text='Say'), Text(text=' '), Stopped()]
        """
        # every id checked first: a bad one part-way through raises before any output is lost
        return [self.process_token(i) for i in self.tok.check_ids(ids, "process_tokens()")]

    def flush(self) -> StopOutput:
        """End of generation without a stop: release the jail (and any incomplete character).

        Returns ``Text(rest)`` (possibly empty), or ``Stopped()``/``StoppedWithText`` if a stop
        had fired or completes in the flushed text.

        Example (the held "Hello" comes out at the end):
            >>> import labkit
            >>> dec = labkit.StopSequenceDecoder(labkit.load("gpt2"), labkit.StopSequenceConfig(stop_sequences=["Hello world"]))
            >>> dec.process_token(15496), dec.flush()
            (Held(), Text(text='Hello'))
        """
        if self.stop_reason is not None:
            return _STOPPED
        tail = self._stream.flush() or ""
        released, reason = self.matcher.push(tail, self._guard is not _EVERY_ID)
        if reason is not None:
            self._stop(reason)
            return StoppedWithText(released) if released else _STOPPED
        return Text(released + self.matcher.release())

    def __repr__(self) -> str:
        state = f"stopped={self.stop_reason}" if self.stop_reason else f"jail={self.jail!r}"
        return f"<StopSequenceDecoder {self.tok.name} {state}>"


# ----------------------------------------------------------------------------- trace


def stop_timeline(tok, config: StopSequenceConfig, ids: Iterable[int], *, skip_special_tokens: bool = True,
                  flush: bool = True) -> list[dict]:
    """Run a StopSequenceDecoder over ``ids`` and record one row per token (a trace to look at).

    Row keys: ``step``, ``id``, ``token`` (the id's text decoded alone), ``decoded`` (what
    the DecodeStream gave the decoder: None while a character is incomplete, "-" for a
    token stop that is never decoded), ``output`` (Text, Held, Stopped, StoppedWithText),
    ``shown`` (the text the reader sees now) and ``jail`` (held back after this token). With
    ``flush`` and no stop, a last row ``step="flush"`` releases the jail.

    Example:
        >>> import labkit
        >>> from labkit.streaming.stop import StopSequenceConfig, stop_timeline
        >>> tok = labkit.load("gpt2")
        >>> rows = stop_timeline(tok, StopSequenceConfig(stop_sequences=["Hello world"]), tok.encode("Hello test").ids)
        >>> [(row["token"], row["output"]) for row in rows]
        [('Hello', 'Held'), (' test', 'Text'), ('', 'Text')]
    """
    dec = StopSequenceDecoder(tok, config, skip_special_tokens=skip_special_tokens)
    seen: list = []
    real_step = dec._step

    def watched_step(token_id):  # records what the DecodeStream hands over
        chunk = real_step(token_id)
        seen.append(chunk)
        return chunk

    dec._step = watched_step
    rows = []
    for index, token_id in enumerate(ids):
        before = len(seen)
        out = dec.process_token(token_id)
        rows.append({
            "step": index,
            "id": token_id,
            "token": tok.decode([token_id], skip_special_tokens=skip_special_tokens),
            "decoded": seen[-1] if len(seen) > before else "-",
            "output": type(out).__name__,
            "shown": getattr(out, "text", ""),
            "jail": dec.jail,
        })
    if flush and not dec.stopped:
        out = dec.flush()
        rows.append({"step": "flush", "id": None, "token": "", "decoded": "-", "output": type(out).__name__,
                     "shown": getattr(out, "text", ""), "jail": dec.jail})
    return rows

