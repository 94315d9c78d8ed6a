"""A streaming UTF-8 decoder over raw bytes: hold an unfinished character, never emit half of one.

This is what llama.cpp does with the bytes of each token piece: keep the bytes of a
character that is not complete yet, emit every complete character at once, and turn bytes
that can never become a character into U+FFFD. Invalid input is replaced the way Python's
``bytes.decode("utf-8", "replace")`` and Rust's ``from_utf8_lossy`` do it (the Unicode
"maximal subpart" practice): a broken sequence that started well becomes one U+FFFD, an
orphan continuation byte becomes one U+FFFD, and the byte that broke a sequence is read
again as the start of a new one.

Introduced in notebook ``08_incremental_detokenization``.

Example:
    >>> from labkit.streaming.utf8 import Utf8StreamDecoder
    >>> d = Utf8StreamDecoder()
    >>> d.step(b"\\xf0\\x9f"), d.step(b"\\xab\\xa8")
    (None, '\\U0001fae8')
"""
from __future__ import annotations

from labkit.algorithms.bytes_unicode import utf8_sequence_length
from labkit.core import LabkitError

REPLACEMENT = "\ufffd"


def continuation_range(lead: int, position: int) -> tuple[int, int]:
    """The allowed range of the byte at ``position`` (1, 2 or 3) after ``lead``.

    The second byte is narrowed to rule out overlong forms (E0, F0), surrogates (ED) and
    code points past U+10FFFF (F4); every other continuation byte is 80-BF.

    Example:
        >>> from labkit.streaming.utf8 import continuation_range
        >>> continuation_range(0xE0, 1)
        (160, 191)
    """
    if position == 1:
        special = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}
        if lead in special:
            return special[lead]
    return 0x80, 0xBF


class Utf8StreamDecoder:
    """Bytes in, complete characters out: ``step(data) -> str | None``, ``flush() -> str | None``.

    Joined, the outputs equal ``b"".join(all data).decode("utf-8", "replace")``.

    Introduced in notebook ``08_incremental_detokenization``.

    Example:
        >>> from labkit.streaming.utf8 import Utf8StreamDecoder
        >>> Utf8StreamDecoder().step(b"\\x80")
        '�'
    """

    def __init__(self):
        self._pending = bytearray()  # the bytes of an unfinished character
        self._need = 0  # its full length

    @property
    def pending(self) -> bytes:
        """The bytes held back: the start of a character whose last bytes have not come yet."""
        return bytes(self._pending)

    def step(self, data: bytes) -> str | None:
        """Feed bytes; return the complete characters they finish (None if none)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise LabkitError(f"Utf8StreamDecoder.step() takes bytes, got {type(data).__name__}")
        out: list[str] = []
        for byte in bytes(data):
            self._feed(byte, out)
        return "".join(out) or None

    def _feed(self, byte: int, out: list[str]) -> None:
        if self._pending:
            low, high = continuation_range(self._pending[0], len(self._pending))
            if low <= byte <= high:
                self._pending.append(byte)
                if len(self._pending) == self._need:
                    out.append(self._pending.decode("utf-8"))
                    self._pending.clear()
                return
            # the sequence broke: its bytes so far are one U+FFFD; read this byte afresh
            out.append(REPLACEMENT)
            self._pending.clear()
        need = utf8_sequence_length(byte)
        if need == 1:
            out.append(chr(byte))
        elif need == 0:
            out.append(REPLACEMENT)  # a byte that cannot start a character
        else:
            self._pending.append(byte)
            self._need = need

    def flush(self) -> str | None:
        """End of input: an unfinished character becomes one U+FFFD."""
        if not self._pending:
            return None
        self._pending.clear()
        return REPLACEMENT


# ----------------------------------------------------------------------------- bytes of tokens


def byte_token_ids(tok) -> dict[int, int]:
    """Map each byte value to the id of a token that is exactly that one byte, where the vocab has one.

    Byte-level BPE spells byte ``b`` with the GPT-2 byte-to-unicode map (``Ġ`` is 0x20);
    SentencePiece byte fallback spells it ``<0xNN>``. Found through ``token_to_id`` alone.

    Example:
        >>> from labkit.streaming.utf8 import byte_token_ids
        >>> import labkit
        >>> byte_token_ids(labkit.load("llama-spm"))[0xF0]
        243
    """
    from labkit.algorithms.bytes_unicode import bytes_to_gpt2

    out: dict[int, int] = {}
    for value in range(256):
        for spelling in (f"<0x{value:02X}>", bytes_to_gpt2(bytes([value]))):
            found = tok.token_to_id(spelling)
            if isinstance(found, int):
                out[value] = found
                break
    return out


def token_bytes(tok, token_id: int) -> bytes:
    """The raw bytes one token stands for: ``<0xNN>`` pieces, GPT-2 spelled tokens, else its text.

    Example:
        >>> from labkit.streaming.utf8 import token_bytes
        >>> import labkit
        >>> token_bytes(labkit.load("qwen2"), 11162)
        b' \\xf0\\x9f'
    """
    from labkit.algorithms.bytes_unicode import try_gpt2_to_bytes

    spelling = tok.id_to_token(token_id)
    if len(spelling) == 6 and spelling.startswith("<0x") and spelling.endswith(">"):
        try:
            return bytes([int(spelling[3:5], 16)])
        except ValueError:
            pass
    if tok.vocab.model == "bpe_byte":
        raw = try_gpt2_to_bytes(spelling)
        if raw is not None:
            return raw
    return spelling.replace("\u2581", " ").encode("utf-8")
