"""``Sequence``: a growing token sequence that knows its text, for a generation loop.

The prompt goes in as text (``append_text``), generated ids come one at a time
(``append_token``, which returns only the text that id adds), and ``text()`` is always
``tok.decode(token_ids)``. Underneath, each ``append_token`` is one ``DecodeStream.step``,
so its cost does not grow with the length of the sequence.

Introduced in notebook ``08_incremental_detokenization``.

Example:
    >>> import labkit
    >>> from labkit.streaming.sequence import Sequence
    >>> seq = Sequence(labkit.load("qwen2"))
    >>> seq.append_text("Hello"), seq.append_token(1879), seq.text()
    ([9707], ' world', 'Hello world')
"""
from __future__ import annotations

from typing import Iterable

from labkit.core import LabkitError, Tokenizer
from labkit.streaming.decode_stream import DecodeStream, check_tokenizer


class Sequence:
    """Token ids plus their text, grown by text (``append_text``) or by ids (``append_token``).

    Introduced in notebook ``08_incremental_detokenization``.

    Example:
        >>> import labkit
        >>> tok = labkit.load("qwen2")
        >>> seq = labkit.Sequence(tok)
        >>> seq.append_text("Hi")
        [13048]
        >>> seq.text()
        'Hi'
    """

    def __init__(self, tok: Tokenizer, *, skip_special_tokens: bool = False):
        self.tok = check_tokenizer(tok)
        self.skip_special_tokens = bool(skip_special_tokens)
        self._ids: list[int] = []
        self._known = ""  # decode(ids) up to what the stream has released
        self._stream = DecodeStream(tok, (), skip_special_tokens=self.skip_special_tokens)

    @property
    def token_ids(self) -> list[int]:
        """All ids so far (a copy)."""
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def append_text(self, text: str, *, add_special_tokens: bool = False, parse_special: bool = True) -> list[int]:
        """Encode ``text`` and append its ids (as a prompt: no text is returned); return the ids."""
        if not isinstance(text, str):
            raise LabkitError(f"{self.tok.name}: append_text() takes str, got {type(text).__name__}")
        new_ids = list(self.tok.encode(text, add_special_tokens=add_special_tokens, parse_special=parse_special).ids)
        self._ids.extend(new_ids)
        # the ids so far become the stream's prompt (its last few ids are the context it decodes)
        self._stream = DecodeStream(self.tok, self._ids[-8:], skip_special_tokens=self.skip_special_tokens)
        self._known = self.tok.decode(self._ids, skip_special_tokens=self.skip_special_tokens)
        return new_ids

    def append_token(self, token_id: int) -> str:
        """Append one id; return only the text it adds ("" while a character is unfinished)."""
        token_id = self.tok.check_id(token_id)
        chunk = self._stream.step(token_id)
        self._ids.append(token_id)
        if chunk:
            self._known += chunk
            return chunk
        return ""

    def append_tokens(self, token_ids: Iterable[int]) -> str:
        """Append several ids; return the text they add together."""
        return "".join([self.append_token(i) for i in self.tok.check_ids(token_ids, "append_tokens()")])

    def text(self) -> str:
        """The text of all ids, exactly ``tok.decode(token_ids)`` (held bytes show as U+FFFD)."""
        if not self._stream.held_ids:
            return self._known
        return self.tok.decode(self._ids, skip_special_tokens=self.skip_special_tokens)

    def __repr__(self) -> str:
        return f"<labkit.Sequence {self.tok.name} ids={len(self._ids)} text={self._known[-40:]!r}>"
