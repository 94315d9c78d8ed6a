"""SentencePiece normalisation: the precompiled charsmap (an XOR-compressed double array)
and the whitespace rules around it, exactly as sentencepiece's ``Normalizer`` applies them.

A ``precompiled_charsmap`` blob is ``<u32 trie size><XCDA units><replacement pool>``:
the units form a darts-clone double-array trie whose keys are input byte strings and whose
values are offsets into the pool of NUL-terminated replacement strings. Normalising walks
the text left to right; at each position the first rule that applies wins:

1. a user-defined symbol starting here is copied verbatim (the longest one),
2. else the longest charsmap key starting here is replaced by its replacement,
3. else one valid UTF-8 character is copied,
4. else (malformed UTF-8) U+FFFD is written and one byte is consumed.

The pieces produced this way then pass through the whitespace rules: leading spaces are
dropped, runs of spaces are squeezed and trailing spaces dropped
(``remove_extra_whitespaces``), a dummy ``▁`` is put in front (``add_dummy_prefix``) or
behind (``treat_whitespace_as_suffix``), and spaces become ``▁`` (``escape_whitespaces``).
Introduced in notebook ``06_normalization_charsmap``; used by ``05_unigram_trie_viterbi``
and ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.algorithms.charsmap import SpmNormalizer
    >>> SpmNormalizer(None).normalize("  Hello   world ")
    '▁Hello▁world'
"""
from __future__ import annotations

import re
import struct
from array import array
from dataclasses import dataclass
from typing import Iterable, Iterator

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.bytes_unicode import utf8_sequence_length
from labkit.core import TOKEN_USER_DEFINED, LabkitError

_MAX_KEY_BYTES = 256  # no real normalisation rule is anywhere near this long
ENTRIES_PER_UNIT = 16  # CharsMap.entries lists at most this many keys per unit (nmt_nfkc: about 5)
SHAPE_STEPS_PER_UNIT = 16  # CharsMap.second_chars gives up past this many steps per unit
_FEW_CHARS = 16  # up to this many distinct rule chars in a text: one str.replace each
SPACE_SYMBOL = "\u2581"  # '▁' LOWER ONE EIGHTH BLOCK, sentencepiece's visible space
REPLACEMENT_CHAR = "\ufffd"

# ----------------------------------------------------------------------------- XCDA units
# One unit is a little-endian u32. darts-clone packs four fields into it:
#   bit 31 + bits 0-7  label  (bit 31 set marks a value unit, so it never equals a byte)
#   bit 8              has_leaf: the node ends a key; its value sits in child slot 0
#   bit 9              offset is stored shifted left by 8 more bits (large offsets)
#   bits 10-31         offset: XOR it with a node's index to reach its children's block
#   bits 0-30          value  (in a value unit)


def unit_label(unit: int) -> int:
    """The label a unit was reached by (a byte, or >= 2**31 for value units).

    Example:
        >>> from labkit.algorithms.charsmap import unit_label
        >>> unit_label(0x0000_0461)
        97
    """
    return unit & 0x800000FF


def unit_has_leaf(unit: int) -> bool:
    """True when the node ends a key (its value is in the child reached by label 0).

    Example:
        >>> from labkit.algorithms.charsmap import unit_has_leaf
        >>> unit_has_leaf(0x100)
        True
    """
    return bool((unit >> 8) & 1)


def unit_value(unit: int) -> int:
    """The value stored in a value unit (here: an offset into the replacement pool).

    Example:
        >>> from labkit.algorithms.charsmap import unit_value
        >>> unit_value(0x8000_0007)
        7
    """
    return unit & 0x7FFFFFFF


def unit_offset(unit: int) -> int:
    """The XOR offset from a node to its children's block.

    Example:
        >>> from labkit.algorithms.charsmap import unit_offset
        >>> unit_offset(5 << 10)
        5
    """
    return (unit >> 10) << ((unit & 0x200) >> 6)


def decode_unit(unit: int) -> dict:
    """All four fields of one unit, for reading a double array by hand.

    Example:
        >>> from labkit.algorithms.charsmap import decode_unit
        >>> decode_unit(0x1461)  # doctest: +ELLIPSIS
        {'unit': '0x00001461', 'label': 97, ...}
    """
    return {
        "unit": f"0x{unit:08x}",
        "label": unit_label(unit),
        "has_leaf": unit_has_leaf(unit),
        "offset": unit_offset(unit),
        "value": unit_value(unit),
        "is_value_unit": bool(unit >> 31),
    }


# ----------------------------------------------------------------------------- the charsmap

_CHECKED_BLOBS: dict[bytes, bool] = BoundedDict(16)  # blobs whose ranges passed CharsMap's check
# CharsMap.char_shape per blob: it depends on the bytes alone, and most models share one charsmap
_SHAPES: dict[bytes, tuple[frozenset, frozenset] | None] = BoundedDict(16)


def check_charsmap(blob) -> None:
    """Refuse a precompiled charsmap a reference engine could not read safely (a trie size
    beyond the blob, a walk leaving the array): readers call it before any engine sees the blob.

    Example:
        >>> from labkit.algorithms.charsmap import check_charsmap
        >>> check_charsmap(b"\\xff\\xff\\xff\\xff")
        Traceback (most recent call last):
            ...
        labkit.core.LabkitError: charsmap: blob of 4 bytes is too short (needs a u32 size and units)
    """
    CharsMap(blob)


def charsmap_from_base64(text: str, where: str) -> bytes:
    """The blob a tokenizer.json stores as ``precompiled_charsmap``, refused unless it is the one
    canonical base64 spelling: Python's decoder forgives bits and padding that tokenizers rejects.

    Example:
        >>> from labkit.algorithms.charsmap import charsmap_from_base64
        >>> charsmap_from_base64("QQ==", "x.json")
        b'A'
        >>> charsmap_from_base64("QR==", "x.json")
        Traceback (most recent call last):
            ...
        labkit.core.LabkitError: x.json: precompiled_charsmap is not canonical base64 (it differs from the base64 of what it decodes to near character 1 of 4)
    """
    import base64
    import binascii

    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise LabkitError(f"{where}: precompiled_charsmap is not valid base64") from None
    canonical = base64.b64encode(blob).decode("ascii")
    if canonical != text:
        at = next((k for k, (a, b) in enumerate(zip(canonical, text)) if a != b), min(len(text), len(canonical)))
        raise LabkitError(f"{where}: precompiled_charsmap is not canonical base64 (it differs from the "
                          f"base64 of what it decodes to near character {at} of {len(text)})")
    return blob


@dataclass(frozen=True)
class CharsMapMatch:
    """One key of the charsmap found at a position: how many bytes it covers and what
    replaces them.

    Example:
        >>> from labkit.algorithms.charsmap import CharsMapMatch
        >>> CharsMapMatch(length=3, value=1234, replacement='A')
        CharsMapMatch(length=3, value=1234, replacement='A')
    """

    length: int
    value: int
    replacement: str


class CharsMap:
    """A parsed precompiled charsmap: the double-array units and the replacement pool.

    Introduced in notebook ``06_normalization_charsmap``.

    Example (botchan's nmt_nfkc map; a full-width A becomes A):
        >>> import labkit
        >>> CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"]).longest_match("Ａbc".encode())
        CharsMapMatch(length=3, value=1726, replacement='A')
    """

    def __init__(self, blob: bytes):
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise LabkitError(f"charsmap: expected bytes, got {type(blob).__name__}")
        blob = bytes(blob)
        if len(blob) <= 4:
            raise LabkitError(f"charsmap: blob of {len(blob)} bytes is too short (needs a u32 size and units)")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if trie_size >= len(blob):
            raise LabkitError(f"charsmap: trie size {trie_size} exceeds the blob ({len(blob)} bytes)")
        if trie_size % 4 or trie_size == 0:
            raise LabkitError(f"charsmap: trie size {trie_size} is not a positive multiple of 4 bytes")
        units = array("I")
        units.frombytes(blob[4 : 4 + trie_size])
        if units.itemsize != 4:  # pragma: no cover - every supported platform has a 4-byte 'I'
            raise LabkitError("charsmap: this platform has no 4-byte unsigned array type")
        if struct.pack("=I", 1) != struct.pack("<I", 1):  # pragma: no cover - big-endian hosts
            units.byteswap()
        self.blob = blob
        self.units: list[int] = units.tolist()
        self.pool: bytes = blob[4 + trie_size :]
        self._replacements: dict[int, str] = {}
        if blob not in _CHECKED_BLOBS:
            self._check_ranges()
            _CHECKED_BLOBS[blob] = True

    def _check_ranges(self) -> None:
        """Refuse an array whose walk could leave it: from every unit a byte can reach, the
        next block (256 units, where the next byte or the value is read) must lie inside.
        ``tokenizers`` panics on such an array, so this runs before any engine gets the blob."""
        units = self.units
        n = len(units)
        if (unit_offset(units[0]) | 0xFF) >= n:
            raise LabkitError(f"charsmap: the root's block starts at {unit_offset(units[0])}, outside the {n} units")
        outside = [i for i, unit in enumerate(units)
                   if unit & 0x800000FF < 256 and ((i ^ ((unit >> 10) << ((unit & 0x200) >> 6))) | 0xFF) >= n]
        if outside:
            unit = units[outside[0]]
            raise LabkitError(
                f"charsmap: unit {outside[0]} points to a block at {outside[0] ^ unit_offset(unit)}, outside the {n} units "
                f"({len(outside)} such units; corrupt array)"
            )

    @property
    def num_units(self) -> int:
        return len(self.units)

    # -- lookups ---------------------------------------------------------------
    def replacement(self, value: int) -> str:
        """The NUL-terminated replacement string at ``value`` in the pool.

        Example:
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> cmap.replacement(1726)
            'A'
        """
        text = self._replacements.get(value)
        if text is None:
            if not 0 <= value < len(self.pool):
                raise LabkitError(f"charsmap: replacement offset {value} is outside the pool ({len(self.pool)} bytes)")
            end = self.pool.find(b"\0", value)
            raw = self.pool[value : end if end >= 0 else len(self.pool)]
            text = raw.decode("utf-8", errors="replace")
            self._replacements[value] = text
        return text

    def prefix_matches(self, data: bytes, start: int = 0) -> list[tuple[int, int]]:
        """Every key that is a prefix of ``data[start:]``, as (length in bytes, value), shortest
        first: darts-clone's ``commonPrefixSearch``.

        Example (e + U+0301 is one key of three bytes):
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> cmap.prefix_matches("e\\u0301".encode()), cmap.prefix_matches(b"ab")
            ([(3, 2565)], [])
        """
        units = self.units
        n = len(units)
        results = []
        node = unit_offset(units[0])
        for i in range(start, len(data)):
            byte = data[i]
            node ^= byte
            if node >= n:
                break
            unit = units[node]
            if unit & 0x800000FF != byte:
                break
            node ^= (unit >> 10) << ((unit & 0x200) >> 6)
            if unit & 0x100:
                if node >= n:
                    raise LabkitError(f"charsmap: value unit {node} is beyond the {n} units (corrupt trie)")
                results.append((i + 1 - start, units[node] & 0x7FFFFFFF))
        return results

    def key_ends_within(self, data: bytes) -> bool:
        """True when some key is a prefix of ``data`` (a rule can start where ``data`` does
        whatever follows it).

        Example:
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> cmap.key_ends_within("Ａ".encode()), cmap.key_ends_within(b"a")
            (True, False)
        """
        units = self.units
        n = len(units)
        node = unit_offset(units[0])
        for byte in data:
            node ^= byte
            if node >= n:
                return False
            unit = units[node]
            if unit & 0x800000FF != byte:
                return False
            node ^= (unit >> 10) << ((unit & 0x200) >> 6)
            if unit & 0x100:
                return True  # a key ends here
        return False

    def longest_match_chars(self, text: str, start: int = 0) -> tuple[int, int] | None:
        """The longest key that prefixes ``text[start:]``, walked char by char: (chars it
        covers, value), ``(-1, value)`` when it ends inside a character, or None.

        Example (the circled one is one character long, rule 967):
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> cmap.longest_match_chars("①x"), cmap.longest_match_chars("x")
            ((1, 967), None)
        """
        units = self.units
        n = len(units)
        node = unit_offset(units[0])
        found = None
        for index in range(start, len(text)):
            data = text[index].encode("utf-8", errors="surrogatepass")
            last = len(data) - 1
            for k, byte in enumerate(data):
                node ^= byte
                if node >= n:
                    return found
                unit = units[node]
                if unit & 0x800000FF != byte:
                    return found
                node ^= (unit >> 10) << ((unit & 0x200) >> 6)
                if unit & 0x100:
                    if node >= n:
                        raise LabkitError(f"charsmap: value unit {node} is beyond the {n} units (corrupt trie)")
                    found = (index + 1 - start if k == last else -1, units[node] & 0x7FFFFFFF)
        return found

    def longest_match(self, data: bytes, start: int = 0) -> CharsMapMatch | None:
        """The longest key that prefixes ``data[start:]`` and its replacement, or None.

        Example:
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> cmap.longest_match("①".encode())
            CharsMapMatch(length=3, value=967, replacement='1')
        """
        matches = self.prefix_matches(data, start)
        if not matches:
            return None
        length, value = matches[-1]  # shortest first: the last is the longest
        return CharsMapMatch(length, value, self.replacement(value))

    def walk(self, data: bytes, start: int = 0) -> list[dict]:
        """The walk of ``longest_match`` step by step (one row per byte), for teaching.

        Example (a notebook shows it as ``pd.DataFrame(cmap.walk(...))``):
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> [(row["byte"], row["match"]) for row in cmap.walk("Ａ".encode())]
            [('0xef', True), ('0xbc', True), ('0xa1', True)]
        """
        units = self.units
        n = len(units)
        rows = []
        node = unit_offset(units[0])
        for i in range(start, len(data)):
            byte = data[i]
            child = node ^ byte
            unit = units[child] if child < n else None
            ok = unit is not None and unit & 0x800000FF == byte
            row = {"byte": f"0x{byte:02x}", "block": node, "index": child,
                   "unit": f"0x{unit:08x}" if unit is not None else None,
                   "label": unit_label(unit) if unit is not None else None, "match": ok}
            if not ok:
                rows.append(row)
                break
            node = child ^ unit_offset(unit)
            row["has_leaf"] = unit_has_leaf(unit)
            if unit_has_leaf(unit):
                value = unit_value(units[node])
                row["value"] = value
                row["replacement"] = self.replacement(value)
            rows.append(row)
        return rows

    def entries(self) -> Iterator[tuple[bytes, str]]:
        """Every (key bytes, replacement) in the trie, in byte order.

        Example (the first two keys: a combining long solidus after < and =):
            >>> import itertools
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> list(itertools.islice(cmap.entries(), 2))
            [(b'<\\xcc\\xb8', '≮'), (b'=\\xcc\\xb8', '≠')]
        """
        units = self.units
        n = len(units)
        children = self._children_index()
        stack: list[tuple[int, bytes]] = [(0, b"")]
        out = []
        # darts-clone builds from a DAWG, so shared suffixes are legal: a node may be reached
        # from several parents and the paths can multiply (or cycle, if corrupt); listing them
        # is for teaching, so it is bounded by the size of the array (real charsmaps: ~5 keys a unit)
        budget = ENTRIES_PER_UNIT * n + 1024
        while stack:
            node, key = stack.pop()
            budget -= 1
            if budget < 0 or len(key) > _MAX_KEY_BYTES:
                raise LabkitError(
                    f"charsmap: more keys than {ENTRIES_PER_UNIT} per unit or a key over {_MAX_KEY_BYTES} bytes "
                    f"(near unit {node}, key {key[:16]!r}...): the trie's paths multiply or cycle; not listed"
                )
            unit = units[node]
            base = node ^ unit_offset(unit)
            if key and unit_has_leaf(unit):
                if base >= n:
                    raise LabkitError(f"charsmap: value unit {base} is beyond the {n} units (corrupt trie)")
                out.append((key, self.replacement(unit_value(units[base]))))
            for label, child in reversed(children.get(base, ())):
                stack.append((child, key + bytes([label])))
        out.sort()
        return iter(out)

    def second_chars(self) -> frozenset | None:
        """Every character that is the second character of some key, found without listing
        keys: walk one whole character from the root (to the nodes where longer keys go on),
        then one more character from each such node, visiting each node once per character
        prefix. None when a key ends inside a character (only a byte-level walk is exact
        then) or the walk exceeds a budget proportional to the number of units.

        Example (e + U+0301 composes to é, so U+0301 is a second character):
            >>> import labkit
            >>> cmap = CharsMap(labkit.load("botchan-unigram").vocab.normalizer["charsmap"])
            >>> "\\u0301" in cmap.second_chars()
            True
        """
        shape = self.char_shape()
        return None if shape is None else shape[1]

    def char_shape(self) -> tuple[frozenset, frozenset] | None:
        """(every character that is a key by itself, every second character of a key), from
        the walk :meth:`second_chars` describes; None where that gives None.

        Example:
            >>> import labkit
            >>> cmap = labkit.load("botchan-unigram", engine="labkit").normalizer.charsmap
            >>> keys, second = cmap.char_shape()
            >>> "Ａ" in keys, "\u0301" in second
            (True, True)
        """
        if self.blob in _SHAPES:  # found once per process and charsmap (about 0.06 s for nmt_nfkc)
            return _SHAPES[self.blob]
        shape = _SHAPES[self.blob] = self._walk_char_shape()
        return shape

    def _walk_char_shape(self) -> tuple[frozenset, frozenset] | None:
        """:meth:`char_shape`'s walk."""
        keys: set[str] = set()
        children = self._children_index()
        units = self.units
        budget = [SHAPE_STEPS_PER_UNIT * len(units) + 4096]

        def one_char(base: int, found: dict, whole_keys: set | None = None) -> bool:
            # every whole character readable from block ``base``: found[char] = block after it
            stack = [(base, b"")]
            while stack:
                block, prefix = stack.pop()
                for label, index in children.get(block, ()):
                    budget[0] -= 1
                    if budget[0] < 0:
                        return False
                    data = prefix + bytes([label])
                    unit = units[index]
                    after = index ^ unit_offset(unit)
                    need = utf8_sequence_length(data[0])
                    if need == 0 or (len(data) > 1 and not 0x80 <= label <= 0xBF):
                        continue  # no valid text walks this way
                    if len(data) < need:
                        if unit_has_leaf(unit):
                            return False  # a key ends inside a character
                        stack.append((after, data))
                        continue
                    try:
                        char = data.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    found[char] = after
                    if whole_keys is not None and unit_has_leaf(unit):
                        whole_keys.add(char)
            return True

        first: dict[str, int] = {}
        if not one_char(unit_offset(units[0]), first, keys):
            return None
        second: dict[str, int] = {}
        for block in set(first.values()):
            if block in children and not one_char(block, second):
                return None
        return frozenset(keys), frozenset(second)

    def _children_index(self) -> dict[int, list[tuple[int, int]]]:
        """block base -> [(label, unit index)] for every unit holding a byte label."""
        index: dict[int, list[tuple[int, int]]] = {}
        for i, unit in enumerate(self.units):
            label = unit & 0x800000FF
            if 0 < label < 256:
                index.setdefault(i ^ label, []).append((label, i))
        for kids in index.values():
            kids.sort()
        return index


# ----------------------------------------------------------------------------- the normaliser


def _one_char_length(data: bytes, pos: int) -> int:
    """Length of the valid UTF-8 character at ``pos``, or 0 when the bytes are malformed
    (sentencepiece's ``IsValidDecodeUTF8``: no overlongs, no surrogates, <= U+10FFFF)."""
    lead = data[pos]
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        length = 2
    elif 0xE0 <= lead <= 0xEF:
        length = 3
    elif 0xF0 <= lead <= 0xF4:
        length = 4
    else:
        return 0
    try:
        data[pos : pos + length].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return length if pos + length <= len(data) else 0


def decode_bytes_per_byte(data: bytes) -> str:
    """UTF-8 -> str the way sentencepiece decodes byte pieces: each byte of a malformed
    sequence becomes its own U+FFFD (Python's ``errors="replace"`` merges some of them).

    Example:
        >>> from labkit.algorithms.charsmap import decode_bytes_per_byte
        >>> decode_bytes_per_byte(b"\\xe3\\x99a")
        '��a'
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out = []
    pos = 0
    while pos < len(data):
        length = _one_char_length(data, pos)
        if length:
            out.append(data[pos : pos + length].decode("utf-8"))
            pos += length
        else:
            out.append(REPLACEMENT_CHAR)
            pos += 1
    return "".join(out)


class SpmNormalizer:
    """Normalise text exactly as a SentencePiece model does before it is tokenised.

    ``charsmap`` is the model's ``precompiled_charsmap`` blob (None or b"" for identity),
    ``user_defined`` the model's user-defined symbols (copied verbatim, never normalised).

    Example:
        >>> from labkit.algorithms.charsmap import SpmNormalizer
        >>> SpmNormalizer(None).normalize("Hello world")
        '▁Hello▁world'

    (introduced in notebook ``06_normalization_charsmap``)
    """

    def __init__(
        self,
        charsmap: bytes | CharsMap | None = None,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined: Iterable[str] = (),
        compat: str = "sentencepiece",
    ):
        if compat not in ("sentencepiece", "llama.cpp"):
            raise LabkitError(f"SpmNormalizer: compat must be 'sentencepiece' or 'llama.cpp', got {compat!r}")
        self.compat = compat
        if isinstance(charsmap, CharsMap):
            self.charsmap: CharsMap | None = charsmap
        elif charsmap:
            self.charsmap = CharsMap(charsmap)
        else:
            self.charsmap = None
        self.add_dummy_prefix = bool(add_dummy_prefix)
        self.remove_extra_whitespaces = bool(remove_extra_whitespaces)
        self.escape_whitespaces = bool(escape_whitespaces)
        self.treat_whitespace_as_suffix = bool(treat_whitespace_as_suffix)
        symbols = []
        for symbol in user_defined:
            if not isinstance(symbol, str):
                raise LabkitError(f"SpmNormalizer: user-defined symbols must be str, got {symbol!r}")
            if symbol:
                symbols.append(symbol)
        self.user_defined: tuple[str, ...] = tuple(sorted(set(symbols)))
        # first char -> symbols starting with it, longest first (the longest match wins)
        self._user_by_first: dict[str, list[str]] = {}
        for symbol in sorted(self.user_defined, key=lambda s: (-len(s), s)):
            self._user_by_first.setdefault(symbol[0], []).append(symbol)
        self._user_bytes = sorted((s.encode("utf-8") for s in self.user_defined), key=len, reverse=True)
        # llama.cpp's t5 normaliser walks a byte trie of these symbols as deep as the text lets
        # it and copies that many bytes as they are, a whole symbol or not (a "partial match")
        self._user_trie: dict[int, dict] = {}
        self._user_longest = max(map(len, self._user_bytes), default=0)
        for raw in self._user_bytes:
            node = self._user_trie
            for byte in raw:
                node = node.setdefault(byte, {})
        # lead byte -> the non-ASCII chars of the symbols that start with it: a text char with
        # that lead byte but another char can stop the trie walk inside itself
        self._split_leads: dict[int, frozenset[str]] = {}
        if compat == "llama.cpp":
            by_lead: dict[int, set[str]] = {}
            for ch in {ch for symbol in self.user_defined for ch in symbol if ch > "\x7f"}:
                by_lead.setdefault(ch.encode("utf-8", "surrogatepass")[0], set()).add(ch)
            self._split_leads = {lead: frozenset(chars) for lead, chars in by_lead.items()}
        self._space = SPACE_SYMBOL if self.escape_whitespaces else " "
        self._prepare_fast_path()

    @classmethod
    def from_vocab(cls, vocab, *, compat: str = "sentencepiece") -> "SpmNormalizer":
        """The normaliser a VocabData's ``normalizer`` dict describes (user-defined pieces
        from its token types); ``compat`` as for the constructor.

        Example:
            >>> from labkit.paths import data_path
            >>> from labkit.formats.spm_model import read_spm_model
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> SpmNormalizer.from_vocab(read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))).normalize("Ｈｉ")
            '▁Hi'
        """
        norm = vocab.normalizer or {}
        # a t5 GGUF: llama.cpp builds its normaliser's trie before its load-time rules retype tokens
        types = vocab.options.get("lattice_token_types", vocab.token_types)
        user = [t for t, kind in zip(vocab.tokens, types) if kind == TOKEN_USER_DEFINED]
        return cls(
            norm.get("charsmap"),
            add_dummy_prefix=norm.get("add_dummy_prefix", True),
            remove_extra_whitespaces=norm.get("remove_extra_whitespaces", True),
            escape_whitespaces=norm.get("escape_whitespaces", True),
            treat_whitespace_as_suffix=norm.get("treat_whitespace_as_suffix", False),
            user_defined=user,
            compat=compat,
        )

    def __repr__(self) -> str:
        cmap = f"{self.charsmap.num_units} units" if self.charsmap else "None"
        return (
            f"SpmNormalizer(charsmap={cmap}, add_dummy_prefix={self.add_dummy_prefix}, "
            f"remove_extra_whitespaces={self.remove_extra_whitespaces}, escape_whitespaces={self.escape_whitespaces}, "
            f"treat_whitespace_as_suffix={self.treat_whitespace_as_suffix}, user_defined={len(self.user_defined)})"
        )

    # -- public ----------------------------------------------------------------
    def normalize(self, text: str) -> str:
        """The normalised string sentencepiece's model sees.

        Example:
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> SpmNormalizer(None).normalize(" a  b ")
            '▁a▁b'
        """
        if self.compat == "sentencepiece" and self.remove_extra_whitespaces and isinstance(text, str):
            if not self.needs_lookup(text):
                # nothing to look up: only the whitespace rules apply (the common case)
                return self._squeezed(text)
            joined = self._translated(text)
            if joined is not None and not (self.treat_whitespace_as_suffix and self.add_dummy_prefix and not joined.strip(" ")):
                # every replacement spelled one char and held no run of spaces: the plain-text rules apply
                return self._squeezed(joined)
            chunks = self._chunks(text)
            joined = "".join([piece for piece, _, _, _ in chunks])
            # a suffix space still follows text that normalises to nothing (a lone U+000B): only _finish knows
            suffix_after_nothing = self.treat_whitespace_as_suffix and self.add_dummy_prefix and not joined.strip(" ")
            if not suffix_after_nothing and not any("  " in piece for piece, _, _, verbatim in chunks if not verbatim):
                # sentencepiece keeps a run of spaces only inside one replacement; with none,
                # its whitespace rules are those of the plain text the chunks spell
                return self._squeezed(joined)
            return self._finish(chunks, len(text))[0]
        return self.normalize_with_alignment(text)[0]

    def _squeezed(self, text: str) -> str:
        """The whitespace rules on text with no rules to look up: squeeze and strip spaces,
        escape them, add the dummy prefix, drop trailing space symbols."""
        words = " ".join(filter(None, text.split(" ")))
        if not words:
            return ""
        if self.escape_whitespaces:
            words = words.replace(" ", SPACE_SYMBOL)
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            words = self._space + words
        words = words.rstrip(self._space)
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            words += self._space
        return words

    def normalize_with_alignment(self, text: str) -> tuple[str, list[int]]:
        """(normalised, alignment): ``alignment[k]`` is the char offset in ``text`` that the
        k-th normalised char came from; one extra final entry holds the end offset, so a span
        [a, b) of the normalised string came from ``text[alignment[a]:alignment[b]]``.

        Example:
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> SpmNormalizer(None).normalize_with_alignment(" ab")
            ('▁ab', [1, 1, 2, 3])
        """
        if not isinstance(text, str):
            raise LabkitError(f"SpmNormalizer.normalize: expected str, got {type(text).__name__}")
        if not text:
            return "", [0]
        if self.compat == "llama.cpp":
            return self._finish_llama(self._chunks(text))
        return self._finish(self._chunks(text), len(text))

    def normalize_bytes(self, data: bytes) -> tuple[bytes, list[int]]:
        """The byte-level algorithm, literally as sentencepiece runs it: (normalised UTF-8,
        ``norm_to_orig`` with one input byte offset per output byte plus the end offset).
        Malformed UTF-8 becomes U+FFFD, one byte at a time.

        Example:
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> SpmNormalizer(None).normalize_bytes(b"a\\xffb")[0].decode()
            '▁a�b'
        """
        if not isinstance(data, (bytes, bytearray)):
            raise LabkitError(f"SpmNormalizer.normalize_bytes: expected bytes, got {type(data).__name__}")
        data = bytes(data)
        if not data:
            return b"", [0]
        if self.compat == "llama.cpp":
            return self._normalize_bytes_llama(data)
        chunks = []
        pos = 0
        while pos < len(data):
            piece, consumed = self._normalize_prefix_bytes(data, pos)
            chunks.append((piece.decode("utf-8", errors="replace"), pos, consumed, piece))
            pos += consumed
        # run the whitespace rules on bytes, as sentencepiece does
        space = self._space.encode("utf-8")
        out = bytearray()
        n2o: list[int] = []
        consumed = 0
        index = 0
        if self.remove_extra_whitespaces:
            while index < len(chunks) and chunks[index][3] == b" ":
                consumed += chunks[index][2]
                index += 1
        if index == len(chunks):
            return b"", [consumed]

        def add_ws():
            out.extend(space)
            n2o.extend([consumed] * len(space))

        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            add_ws()
        is_prev_space = self.remove_extra_whitespaces
        for _, start, length, piece in chunks[index:]:
            if is_prev_space:
                piece = piece.lstrip(b" ")
            if piece:
                for byte in piece:
                    if self.escape_whitespaces and byte == 0x20:
                        out.extend(space)
                        n2o.extend([consumed] * len(space))
                    else:
                        out.append(byte)
                        n2o.append(consumed)
                is_prev_space = piece.endswith(b" ")
            consumed += length
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        if self.remove_extra_whitespaces:
            while out.endswith(space):
                length = len(out) - len(space)
                consumed = n2o[length]
                del out[length:]
                del n2o[length:]
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            add_ws()
        n2o.append(consumed)
        return bytes(out), n2o

    def _normalize_bytes_llama(self, data: bytes) -> tuple[bytes, array]:
        """llama.cpp's ``llm_tokenizer_ugm_session::normalize``, byte by byte as it runs, each
        step's piece used at once (nothing kept per step: the offsets are one machine int per
        output byte): a space is dropped (merging) or escaped, and the first non-space of each
        run gets a space before it when merging (or the first one of all, for the prefix)."""
        space = self._space.encode("utf-8")
        prepend = self.add_dummy_prefix and not self.treat_whitespace_as_suffix
        merge = self.remove_extra_whitespaces
        out = bytearray()
        n2o = array("q")
        prepended = in_word = False
        start = 0
        while start < len(data):
            piece, consumed = self._normalize_prefix_bytes(data, start)
            for byte in piece:
                if byte != 0x20:
                    if not in_word:
                        in_word = True
                        if (prepend and not prepended) or merge:
                            out += space
                            n2o.extend([start] * len(space))
                            prepended = True
                    out.append(byte)
                    n2o.append(start)
                else:
                    in_word = False
                    if not merge:
                        out += space
                        n2o.extend([start] * len(space))
            start += consumed
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            out += space
            n2o.extend([len(data)] * len(space))
        n2o.append(len(data))
        return bytes(out), n2o

    @property
    def can_split_chars(self) -> bool:
        """llama.cpp only: whether some text can make the user-defined symbols' byte trie stop
        inside a character (a symbol holds a non-ASCII char); :meth:`may_split_chars` asks of one text.

        Example:
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> [SpmNormalizer(None, user_defined=[s], compat="llama.cpp").can_split_chars for s in ("<x>", "café")]
            [False, True]
        """
        return bool(self._split_leads)

    def may_split_chars(self, text: str) -> bool:
        """llama.cpp only: can the user-defined symbols' byte trie stop inside one of
        ``text``'s characters (a char that shares its lead byte with a different char of some
        symbol)? Then only :meth:`normalize_bytes` says what llama.cpp's normaliser writes.

        Example:
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> n = SpmNormalizer(None, user_defined=["café"], compat="llama.cpp")
            >>> n.may_split_chars("cafè"), n.may_split_chars("café au lait")
            (True, False)
            >>> n.normalize_bytes("cafè".encode())[0]
            b'\\xe2\\x96\\x81caf\\xc3\\xef\\xbf\\xbd'
        """
        leads = self._split_leads
        if not leads:
            return False
        for ch in set(text):
            if ch > "\x7f":
                others = leads.get(ch.encode("utf-8", "surrogatepass")[0])
                if others and (len(others) > 1 or ch not in others):
                    return True
        return False

    def normalize_prefix_bytes(self, data: bytes, pos: int = 0) -> tuple[bytes, int]:
        """One step of the walk: (replacement bytes, bytes consumed) at ``data[pos:]``.

        Example:
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> SpmNormalizer(None).normalize_prefix_bytes(b"\\xff")
            (b'\\xef\\xbf\\xbd', 1)
        """
        return self._normalize_prefix_bytes(bytes(data), pos)

    # -- the byte-level step (sentencepiece's NormalizePrefix) -------------------
    def _normalize_prefix_bytes(self, data: bytes, pos: int) -> tuple[bytes, int]:
        if self.compat == "llama.cpp":
            depth = self._user_path_bytes(data, pos)
            if depth:
                return data[pos:pos + depth], depth
        for symbol in self._user_bytes:
            if data.startswith(symbol, pos):
                return symbol, len(symbol)
        if self.charsmap is not None:
            match = self.charsmap.longest_match(data, pos)
            if match is not None:
                end = self.charsmap.pool.find(b"\0", match.value)
                raw = self.charsmap.pool[match.value : end if end >= 0 else len(self.charsmap.pool)]
                return raw, match.length
        length = _one_char_length(data, pos)
        if length == 0:
            return REPLACEMENT_CHAR.encode("utf-8"), 1
        return data[pos : pos + length], length

    # -- the str fast path -------------------------------------------------------
    def _prepare_fast_path(self) -> None:
        """Decide, per character and lazily, whether a rule can start there ('hot').

        A rule starts at a char when a user-defined symbol starts with it, when a charsmap
        key ends within its UTF-8 bytes (one-char keys), or one char before a char that is the
        second char of a longer key. Text with no hot char needs no trie walk. The set of
        second chars is found on first use (once per charsmap and process), with a walk
        bounded by the number of units (:meth:`CharsMap.second_chars`); each char is then
        decided once with a walk of at most 4 bytes. Nothing here lists the trie's keys, so the
        work never grows with how many paths the trie holds.
        """
        self._user_first = frozenset(symbol[0] for symbol in self.user_defined)
        self._hot_memo: dict[str, bool] = {}
        self._class_memo: dict[frozenset, re.Pattern] = {}
        self._second: frozenset | None = None
        self._bytes_only = False  # True: a key ends inside a char (or the trie is too tangled)
        self._ascii_hot = None
        self._shape_ready = False
        self._last_text: str | None = None
        self._last_search = None
        self._one_char_memo: dict[str, str | None] = {}

    def _ensure_shape(self) -> None:
        """Find the second chars of longer keys and the hot ASCII chars (once, on first use)."""
        if self._shape_ready:
            return
        keys: frozenset = frozenset()
        self._second = frozenset()
        if self.charsmap is not None:
            shape = self.charsmap.char_shape()
            if shape is None:
                self._bytes_only = True
            else:
                keys, self._second = shape
        self._shape_ready = True
        ascii_hot = [chr(c) for c in range(128) if self._is_hot(chr(c))]
        self._ascii_hot = re.compile(f"[{_char_class(ascii_hot)}]").search if ascii_hot else None
        # every hot char below U+10000, lone surrogates, and every char above (decided one by
        # one): one class of BMP chars and one range keep the regex a bitmap test per char
        bmp_hot = [ch for ch in keys | self._second | self._user_first if ch <= "\uffff"]
        self._candidate_search, self._candidate_findall = _search_and_findall(f"[{_char_class(bmp_hot)}\\ud800-\\udfff\\U00010000-\\U0010ffff]")

    def _is_hot(self, ch: str) -> bool:
        """True when a rule can start at ``ch`` or one char before it (memoised)."""
        hot = self._hot_memo.get(ch)
        if hot is None:
            hot = ch in self._user_first or "\ud800" <= ch <= "\udfff" or ch in self._second
            if not hot and self.charsmap is not None:
                hot = self.charsmap.key_ends_within(ch.encode("utf-8"))
            self._hot_memo[ch] = hot
        return hot

    def needs_lookup(self, text: str) -> bool:
        """True when some char of ``text`` could start a user-defined symbol or a charsmap
        rule (or is a lone surrogate); False means normalising only applies whitespace rules.

        Example:
            >>> import labkit
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> SpmNormalizer.from_vocab(labkit.load("botchan-unigram").vocab).needs_lookup("plain ascii")
            False
        """
        self._ensure_shape()
        if self._bytes_only:
            return True
        if text.isascii():
            return self._ascii_hot is not None and self._ascii_hot(text) is not None
        search = self._candidate_search
        match = search(text)
        while match is not None:
            if self._is_hot(match.group()):
                return True
            match = search(text, match.end())
        return False

    def _hot_search(self, text: str):
        """A regex search for the hot chars of ``text`` (None when it has none); the last
        text's answer is kept, since an engine asks first whether to normalise, then does."""
        if text is self._last_text:
            return self._last_search
        self._last_text, self._last_search = text, self._hot_search_of(text)
        return self._last_search

    def _hot_search_of(self, text: str):
        is_hot = self._is_hot
        hot = frozenset(ch for ch in set(text) if is_hot(ch))
        if not hot:
            return None
        pattern = self._class_memo.get(hot)
        if pattern is None:
            if len(self._class_memo) > 256:
                self._class_memo.clear()
            pattern = self._class_memo[hot] = re.compile(f"[{_char_class(hot)}]")
        return pattern.search

    def _one_char_rule(self, ch: str) -> str | None:
        """What ``ch`` becomes when that does not depend on its neighbours: its replacement
        when a rule covers exactly it (itself when none starts there), provided it is no
        key's second char, starts no user-defined symbol and the replacement holds no run of
        spaces. None otherwise (memoised). A key starting at ``ch`` and going on is excluded
        by the caller, which walks any char followed by a second char."""
        memo = self._one_char_memo
        if ch in memo:
            return memo[ch]
        rule = None
        if ch not in self._user_first and not "\ud800" <= ch <= "\udfff" and ch not in self._second:
            step = self._normalize_prefix_str(ch, 0)
            if step is not None and step[1] == 1 and "  " not in step[0]:
                rule = step[0]
        memo[ch] = rule
        return rule

    def _translated(self, text: str) -> str | None:
        """The chunks' replacements of ``text`` joined (what :meth:`normalize` squeezes): one
        regex search per candidate char, a memo for chars that map alike everywhere, the trie
        walk where a longer rule may start. None when a step needs the byte walk or spells a
        run of spaces (the chunk path handles those).

        Example:
            >>> import labkit
            >>> labkit.load("botchan-unigram", engine="labkit").normalizer._translated("Ａ，b")
            'A,b'
        """
        self._ensure_shape()
        if self._bytes_only:
            return None
        search = self._candidate_search
        second = self._second
        found = set(self._candidate_findall(text))
        if len(found) <= _FEW_CHARS and not found & second:
            # a few distinct chars, none next to a second char: one str.replace per char
            rules = [(ch, self._one_char_rule(ch)) for ch in found]
            if all(rule is not None and not found.intersection(rule) for _, rule in rules):
                for ch, rule in rules:
                    if rule != ch:
                        text = text.replace(ch, rule)
                return text
        parts: list[str] = []
        append = parts.append
        pos = 0
        n = len(text)
        while pos < n:
            match = search(text, pos)
            if match is None:
                append(text[pos:])
                break
            hot = match.start()
            follows = text[hot + 1 : hot + 2]
            if follows not in second:
                rule = self._one_char_rule(match.group())
                if rule is not None:
                    if hot > pos:
                        append(text[pos:hot])
                    append(rule)
                    pos = hot + 1
                    continue
            if hot > pos and text[hot] in second:
                hot -= 1  # a longer key may start on the char before its second char
            if hot > pos:
                append(text[pos:hot])
            step = self._normalize_prefix_str(text, hot)
            if step is None or "  " in step[0]:
                return None
            append(step[0])
            pos = hot + step[1]
        return "".join(parts)

    def _chunks(self, text: str) -> list[tuple[str, int, int, bool]]:
        """Split ``text`` into (replacement, start, consumed chars, verbatim) chunks; a
        verbatim chunk stands for one chunk per char, each copied as is."""
        self._ensure_shape()
        if self._bytes_only:
            return self._chunks_via_bytes(text)
        search = self._hot_search(text)
        second = self._second
        n = len(text)
        if search is None:
            return [(text, 0, n, True)] if text else []
        chunks = []
        append = chunks.append
        pos = 0
        while pos < n:
            match = search(text, pos)
            if match is None:
                append((text[pos:], pos, n - pos, True))
                break
            hot = match.start()
            if hot > pos and text[hot] in second:
                hot -= 1  # a longer key may start on the char before its second char
            if hot > pos:
                append((text[pos:hot], pos, hot - pos, True))
            pos = hot
            step = self._normalize_prefix_str(text, pos)
            if step is None:
                # a key ends inside a character: only the byte-level walk is exact here
                return self._chunks_via_bytes(text)
            piece, consumed = step
            append((piece, pos, consumed, False))
            pos += consumed
        return chunks

    def _user_path_bytes(self, data: bytes, pos: int) -> int:
        """How many bytes from ``pos`` walk down the user-defined symbols' trie (llama.cpp's
        ``naive_trie::get_longest_prefix``: the deepest path, whether or not a symbol ends there).

        Example:
            >>> from labkit.algorithms.charsmap import SpmNormalizer
            >>> SpmNormalizer(None, user_defined=["<extra_id_0>"], compat="llama.cpp")._user_path_bytes(b"a<ext!", 1)
            4
        """
        node, depth = self._user_trie, 0
        while pos + depth < len(data):
            node = node.get(data[pos + depth])
            if node is None:
                break
            depth += 1
        return depth

    def _normalize_prefix_str(self, text: str, pos: int) -> tuple[str, int] | None:
        """One step of the walk at char ``pos``: (replacement, chars consumed), or None when
        the longest key ends inside a character."""
        first = text[pos]
        if self.compat == "llama.cpp" and first in self._user_first:
            head = text[pos:pos + self._user_longest].encode("utf-8", "surrogatepass")
            depth = self._user_path_bytes(head, 0)
            if depth:
                try:
                    copied = head[:depth].decode("utf-8")
                except UnicodeDecodeError:
                    return None  # the walk stopped inside a character: only bytes can hold that
                return copied, len(copied)
        for symbol in self._user_by_first.get(first, ()):
            if text.startswith(symbol, pos):
                return symbol, len(symbol)
        if "\ud800" <= first <= "\udfff":
            # a lone surrogate is 3 malformed UTF-8 bytes: sentencepiece writes U+FFFD per byte
            return REPLACEMENT_CHAR * 3, 1
        if self.charsmap is not None:
            found = self.charsmap.longest_match_chars(text, pos)
            if found is not None:
                chars, value = found
                if chars < 0:
                    return None
                return self.charsmap.replacement(value), chars
        return first, 1

    def _chunks_via_bytes(self, text: str) -> list[tuple[str, int, int, bool]]:
        """Chunks from the byte-level walk, with byte offsets turned into char offsets."""
        data = text.encode("utf-8", errors="surrogatepass")
        char_at = []  # byte offset -> char offset of the char containing it
        for index, ch in enumerate(text):
            char_at.extend([index] * len(ch.encode("utf-8", errors="surrogatepass")))
        char_at.append(len(text))
        chunks = []
        pos = 0
        while pos < len(data):
            piece, consumed = self._normalize_prefix_bytes(data, pos)
            start = char_at[pos]
            end = char_at[pos + consumed] if pos + consumed < len(data) else len(text)
            chunks.append((piece.decode("utf-8", errors="replace"), start, end - start, False))
            pos += consumed
        return chunks

    # -- the whitespace rules over chunks ---------------------------------------
    def _finish_llama(self, chunks) -> tuple[str, list[int]]:
        """llama.cpp's ``llm_tokenizer_ugm`` whitespace rules: with merging, every run of
        non-spaces gets one space before it (even without the dummy prefix); without, each
        space is kept and the dummy prefix goes before the first non-space."""
        stream, stream_align = _llama_stream(chunks)
        space = self._space
        out: list[str] = []
        align: list[int] = []
        if self.remove_extra_whitespaces:
            for match in re.finditer(r"[^ ]+", stream):
                out.append(space + match.group())
                align.append(stream_align[match.start()])
                align.extend(stream_align[match.start() : match.end()])
        else:
            prepend = self.add_dummy_prefix and not self.treat_whitespace_as_suffix
            for k, ch in enumerate(stream):
                if ch == " ":
                    out.append(space)
                else:
                    if prepend:
                        out.append(space)
                        align.append(stream_align[k])
                        prepend = False
                    out.append(ch)
                align.append(stream_align[k])
        end = chunks[-1][1] + chunks[-1][2] if chunks else 0
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            out.append(space)
            align.append(end)
        align.append(end)
        return "".join(out), align

    def _finish(self, chunks: list[tuple[str, int, int, bool]], total: int) -> tuple[str, list[int]]:
        remove = self.remove_extra_whitespaces
        escape = self.escape_whitespaces
        out: list[str] = []
        align: list[int] = []
        consumed = 0
        index = 0
        if remove:
            # drop leading chunks that normalise to exactly one space
            while index < len(chunks):
                piece, start, length, verbatim = chunks[index]
                if verbatim:
                    stripped = piece.lstrip(" ")
                    if not stripped:
                        consumed = start + length
                        index += 1
                        continue
                    skip = len(piece) - len(stripped)
                    if skip:
                        chunks[index] = (stripped, start + skip, length - skip, True)
                        consumed = start + skip
                    break
                if piece == " ":
                    consumed = start + length
                    index += 1
                    continue
                break
            if index == len(chunks):
                return "", [consumed]
            consumed = chunks[index][1]
        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out.append(self._space)
            align.append(consumed)
        is_prev_space = remove
        for piece, start, length, verbatim in chunks[index:]:
            if verbatim:
                if remove:
                    if is_prev_space:
                        stripped = piece.lstrip(" ")
                        offset = start + len(piece) - len(stripped)
                    else:
                        stripped, offset = piece, start
                    if "  " in stripped:
                        _squeeze_spaces(stripped, offset, out, align)
                    elif stripped:
                        out.append(stripped)
                        align.extend(range(offset, offset + len(stripped)))
                    is_prev_space = piece.endswith(" ")
                else:
                    out.append(piece)
                    align.extend(range(start, start + length))
                continue
            if is_prev_space:
                piece = piece.lstrip(" ")
            if piece:
                out.append(piece)
                align.extend([start] * len(piece))
                is_prev_space = piece.endswith(" ")
            if not remove:
                is_prev_space = False
        normalized = "".join(out)
        if escape:
            normalized = normalized.replace(" ", SPACE_SYMBOL)
        consumed = total
        if remove:
            stripped = normalized.rstrip(self._space)
            if len(stripped) < len(normalized):
                consumed = align[len(stripped)]
                del align[len(stripped) :]
                normalized = stripped
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            normalized += self._space
            align.append(consumed)
        align.append(consumed)
        return normalized, align


def _search_and_findall(pattern: str):
    """The ``search`` and ``findall`` of one compiled regex."""
    compiled = re.compile(pattern)
    return compiled.search, compiled.findall


def _llama_stream(chunks) -> tuple[str, list[int]]:
    """Concatenate chunk replacements with the input offset of each output char."""
    parts: list[str] = []
    align: list[int] = []
    for piece, start, length, verbatim in chunks:
        parts.append(piece)
        if verbatim:
            align.extend(range(start, start + length))
        else:
            align.extend([start] * len(piece))
    return "".join(parts), align


def _squeeze_spaces(piece: str, offset: int, out: list[str], align: list[int]) -> None:
    """Append ``piece`` with each run of spaces cut to its first space, keeping alignment."""
    cursor = 0
    for match in re.finditer(" {2,}", piece):
        keep_end = match.start() + 1
        out.append(piece[cursor:keep_end])
        align.extend(range(offset + cursor, offset + keep_end))
        cursor = match.end()
    out.append(piece[cursor:])
    align.extend(range(offset + cursor, offset + len(piece)))


def _char_class(chars: Iterable[str]) -> str:
    """A regex character class body matching exactly ``chars`` (as compact ranges)."""
    points = sorted({ord(c) for c in chars})
    parts = []
    i = 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        lo, hi = points[i], points[j]
        parts.append(_escape_class_char(lo) if lo == hi else f"{_escape_class_char(lo)}-{_escape_class_char(hi)}")
        i = j + 1
    return "".join(parts)


def _escape_class_char(point: int) -> str:
    return f"\\U{point:08x}" if point > 0xFFFF else f"\\u{point:04x}"
