"""The GPT-2 byte <-> unicode map: how byte-level BPE vocabularies spell raw bytes as text.

A byte-level BPE works on the UTF-8 *bytes* of the text, but its vocabulary files
(``vocab.json``, ``merges.txt``, GGUF ``tokenizer.ggml.tokens``) store tokens as strings.
GPT-2 therefore gives each of the 256 byte values one printable Unicode character:

* the 188 bytes that are already visible, non-space Latin-1 characters keep their own code
  point: ``!``..``~`` (0x21-0x7E), ``¡``..``¬`` (0xA1-0xAC) and ``®``..``ÿ`` (0xAE-0xFF);
* the other 68 bytes are control characters (0x00-0x1F, 0x7F-0x9F), spaces (0x20 space,
  0xA0 no-break space) or the invisible soft hyphen (0xAD). Written as themselves they would
  vanish or be split on in a vocab file, so they move, in byte order, to U+0100, U+0101, ...
  (``Ā``, ``ā``, ...). That is why a leading space shows up as ``Ġ`` (U+0120 = 0x100 + 32:
  the space is the 33rd moved byte) and a newline as ``Ċ`` (U+010A).

Introduced in notebook ``01_bytes_and_unicode``.

Example:
    >>> from labkit.algorithms.bytes_unicode import bytes_to_gpt2
    >>> bytes_to_gpt2(" hello".encode())
    'Ġhello'
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from labkit.core import LabkitError

# Byte ranges whose Latin-1 character is printable and not a space: they map to themselves.
PRINTABLE_RANGES = ((0x21, 0x7E), (0xA1, 0xAC), (0xAE, 0xFF))
# Where the moved bytes start.
SHIFT_BASE = 0x100


def is_printable_byte(value: int) -> bool:
    """True when byte ``value`` keeps its own Latin-1 character in the GPT-2 map.

    Example:
        >>> from labkit.algorithms.bytes_unicode import is_printable_byte
        >>> is_printable_byte(ord("A"))
        True
        >>> is_printable_byte(0x20)
        False

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    return any(lo <= value <= hi for lo, hi in PRINTABLE_RANGES)


@lru_cache(maxsize=None)
def _byte_table() -> tuple[str, ...]:
    table = []
    moved = 0
    for value in range(256):
        if is_printable_byte(value):
            table.append(chr(value))
        else:
            # moved bytes take U+0100, U+0101, ... in increasing byte order
            table.append(chr(SHIFT_BASE + moved))
            moved += 1
    return tuple(table)


def bytes_to_unicode() -> dict[int, str]:
    """The 256-entry map byte value -> its GPT-2 character (a fresh dict each call).

    Example:
        >>> from labkit.algorithms.bytes_unicode import bytes_to_unicode
        >>> bytes_to_unicode()[0x20]
        'Ġ'

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    return dict(enumerate(_byte_table()))


@lru_cache(maxsize=None)
def _char_table() -> dict[str, int]:
    return {ch: value for value, ch in enumerate(_byte_table())}


def unicode_to_bytes() -> dict[str, int]:
    """The inverse map: GPT-2 character -> byte value (a fresh dict each call).

    Example:
        >>> from labkit.algorithms.bytes_unicode import unicode_to_bytes
        >>> unicode_to_bytes()['Ċ']
        10

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    return dict(_char_table())


# str.translate table: byte value (as a code point) -> GPT-2 character
_TRANSLATE = {value: ch for value, ch in enumerate(_byte_table())}


def bytes_to_gpt2(data: bytes) -> str:
    """Spell raw bytes as a GPT-2 token string.

    Example:
        >>> from labkit.algorithms.bytes_unicode import bytes_to_gpt2
        >>> bytes_to_gpt2("é".encode())
        'Ã©'

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise LabkitError(f"bytes_to_gpt2() takes bytes, got {type(data).__name__}")
    # latin-1 turns each byte into the code point of the same value; translate remaps it
    return bytes(data).decode("latin-1").translate(_TRANSLATE)


def text_to_gpt2(text: str) -> str:
    """Spell a text's UTF-8 bytes as a GPT-2 string (what byte-level BPE starts from).

    Example:
        >>> from labkit.algorithms.bytes_unicode import text_to_gpt2
        >>> text_to_gpt2(" hi\\n")
        'ĠhiĊ'

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    if not isinstance(text, str):
        raise LabkitError(f"text_to_gpt2() takes str, got {type(text).__name__}")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # a lone surrogate has no UTF-8 form, so no byte-level spelling either
        raise LabkitError(f"text_to_gpt2(): text has no UTF-8 form at char {exc.start} ({exc.reason})") from None
    return bytes_to_gpt2(data)


@lru_cache(maxsize=None)
def _untranslate() -> dict[int, int]:
    # GPT-2 char -> the code point equal to its byte value (so latin-1 encodes it back);
    # the moved bytes' own characters (space, controls) are not GPT-2 chars: send them
    # out of latin-1's range so that encoding fails on them
    table = {ord(ch): value for value, ch in enumerate(_byte_table())}
    for value in moved_bytes():
        table[value] = 0xFFFF
    return table


def gpt2_to_bytes(token: str, *, where: str = "") -> bytes:
    """The raw bytes behind a GPT-2 token string; characters outside the map raise LabkitError.

    Example:
        >>> from labkit.algorithms.bytes_unicode import gpt2_to_bytes
        >>> gpt2_to_bytes('Ġhello')
        b' hello'

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    if not isinstance(token, str):
        raise LabkitError(f"gpt2_to_bytes() takes str, got {type(token).__name__}")
    data = try_gpt2_to_bytes(token)
    if data is None:
        table = _char_table()
        bad = next(ch for ch in token if ch not in table)
        place = f" ({where})" if where else ""
        raise LabkitError(
            f"token {token!r}{place}: character {bad!r} (U+{ord(bad):04X}) is not in the GPT-2 byte map"
        )
    return data


def try_gpt2_to_bytes(token: str) -> bytes | None:
    """Like :func:`gpt2_to_bytes` but None when the string is not a GPT-2 byte spelling
    (``<|endoftext|>`` is one, since it is all printable ASCII; ``日本`` is not).

    Example:
        >>> from labkit.algorithms.bytes_unicode import try_gpt2_to_bytes
        >>> print(try_gpt2_to_bytes('日本'))
        None
    """
    try:
        # one C-level pass: map each char back to its byte's code point, then latin-1
        return token.translate(_untranslate()).encode("latin-1")
    except UnicodeEncodeError:
        return None


def decode_like_byte_level(token: str) -> bytes:
    """The bytes ``tokenizers``' ByteLevel decoder makes of any token, added ones included:
    a token all of whose chars are in the byte alphabet is those bytes, any other token its
    UTF-8, whole (a space, not in the alphabet, keeps even a ``Ġ`` beside it as it is). So an
    added token spelled ``'über'`` decodes to byte 0xFC + ``b'ber'`` (invalid UTF-8, shown as
    U+FFFD), and ``'<s> naïve'`` to its own text.

    Example:
        >>> from labkit.algorithms.bytes_unicode import decode_like_byte_level
        >>> decode_like_byte_level("ĠHi"), decode_like_byte_level("ĠHi <x>")
        (b' Hi', b'\\xc4\\xa0Hi <x>')
        >>> decode_like_byte_level("über"), decode_like_byte_level("<s> naïve").decode()
        (b'\\xfcber', '<s> naïve')

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    table = _char_table()
    out = bytearray()
    for ch in token:
        value = table.get(ch)
        if value is None:  # tokenizers' decoder keeps the whole token's UTF-8 then
            return token.encode("utf-8", "replace")
        out.append(value)
    return bytes(out)


def decode_like_llama_cpp(token: str) -> bytes:
    """The bytes llama.cpp makes of an ordinary byte-level token (``llama_decode_text``):
    each char in the byte alphabet is its byte; any other char becomes the marker
    ``[UNK_BYTE_0x<its UTF-8 in hex>`` followed by the whole token's text and ``]``.

    Example:
        >>> from labkit.algorithms.bytes_unicode import decode_like_llama_cpp
        >>> decode_like_llama_cpp("ĠHi"), decode_like_llama_cpp("a▁")
        (b' Hi', b'a[UNK_BYTE_0xe29681a\xe2\x96\x81]')

    Introduced in notebook ``11_factory_formats_hub``.
    """
    table = _char_table()
    out = bytearray()
    for ch in token:
        value = table.get(ch)
        if value is None:
            out += b"[UNK_BYTE_0x" + ch.encode("utf-8", "replace").hex().encode() + token.encode("utf-8", "replace") + b"]"
        else:
            out.append(value)
    return bytes(out)


def gpt2_to_text(token: str, errors: str = "replace") -> str:
    """Decode a GPT-2 token string back to text (invalid UTF-8 -> U+FFFD by default).

    Example:
        >>> from labkit.algorithms.bytes_unicode import gpt2_to_text
        >>> gpt2_to_text('ĠhiĊ')
        ' hi\\n'

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    return gpt2_to_bytes(token).decode("utf-8", errors)


def byte_fallback_piece(value: int) -> str:
    """SentencePiece's spelling of a raw byte, ``<0xNN>`` (for comparison with GPT-2's map).

    Example:
        >>> from labkit.algorithms.bytes_unicode import byte_fallback_piece
        >>> byte_fallback_piece(0x0A)
        '<0x0A>'

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    if not isinstance(value, int) or not 0 <= value <= 255:
        raise LabkitError(f"byte_fallback_piece() takes a byte value 0..255, got {value!r}")
    return f"<0x{value:02X}>"


def char_spans(text: str, widths: Iterable[int]) -> list[tuple[int, int]]:
    """Char (start, end) of consecutive runs of ``text``'s UTF-8 bytes, ``widths`` bytes each
    (a token's bytes): a run holding part of a character gets all of it, and a run of width 0
    is an empty span where it stands.

    Example:
        >>> from labkit.algorithms.bytes_unicode import char_spans
        >>> char_spans("hé!", [1, 1, 1, 1])
        [(0, 1), (1, 2), (1, 2), (2, 3)]

    Introduced in notebook ``02_bpe_byte_level``.
    """
    spans = []
    pos = 0
    if text.isascii():  # bytes are chars
        for width in widths:
            spans.append((pos, pos + width))
            pos += width
        return spans
    char_at_byte = []
    for index, ch in enumerate(text):
        char_at_byte.extend([index] * len(ch.encode("utf-8")))
    for width in widths:
        if width == 0:
            point = char_at_byte[pos] if pos < len(char_at_byte) else len(text)
            spans.append((point, point))
            continue
        spans.append((char_at_byte[pos], char_at_byte[pos + width - 1] + 1))
        pos += width
    return spans


def parse_byte_piece(piece: str) -> int | None:
    """The byte a ``<0xNN>`` piece stands for, else None (the inverse of :func:`byte_fallback_piece`).

    Example:
        >>> from labkit.algorithms.bytes_unicode import parse_byte_piece
        >>> parse_byte_piece('<0xE2>')
        226
        >>> print(parse_byte_piece('▁a'))
        None

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        try:
            return int(piece[3:5], 16)
        except ValueError:
            return None
    return None


def moved_bytes() -> list[int]:
    """The 68 byte values that the GPT-2 map moves to U+0100 and up, in order.

    Example:
        >>> from labkit.algorithms.bytes_unicode import moved_bytes
        >>> moved_bytes()[:3]
        [0, 1, 2]
    """
    return [value for value in range(256) if not is_printable_byte(value)]


def utf8_sequence_length(lead: int) -> int:
    """How many bytes a UTF-8 character starting with byte ``lead`` has; 0 if ``lead``
    cannot start one (80-BF continuation, C0/C1 overlong, F5-FF beyond U+10FFFF).

    Example:
        >>> from labkit.algorithms.bytes_unicode import utf8_sequence_length
        >>> [utf8_sequence_length(lead) for lead in b"a\\xc3\\xe6\\xf0\\x80\\xc0\\xf5"]
        [1, 2, 3, 4, 0, 0, 0]

    Introduced in notebook ``01_bytes_and_unicode``.
    """
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0
