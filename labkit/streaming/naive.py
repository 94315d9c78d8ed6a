"""Two naive ways to stream text from ids, kept to show why they fail.

* ``PerTokenDecoder`` decodes each id on its own. A character whose UTF-8 bytes are split
  over two ids comes out as two U+FFFD (mojibake), and SentencePiece drops the word-initial
  space of every piece decoded alone ("Hello world" streams as "Helloworld").
* ``FullRedecodeDecoder`` decodes all ids at every step and emits what is new. It is
  correct, but step ``n`` decodes ``n`` ids: O(N^2) for a whole answer.

Both have the same ``step(id) -> str | None`` / ``flush() -> str | None`` shape as
``DecodeStream``. Introduced in notebook ``08_incremental_detokenization``.

Example:
    >>> from labkit.streaming.naive import PerTokenDecoder
    >>> import labkit
    >>> tok = labkit.load("qwen2")
    >>> PerTokenDecoder(tok).step(tok.encode("🫨").ids[0])
    '�'
"""
from __future__ import annotations

from typing import Sequence

from labkit.core import Tokenizer
from labkit.streaming.decode_stream import REPLACEMENT, check_tokenizer


class PerTokenDecoder:
    """Emit ``decode([id])`` for every id: fast, and wrong on split characters and SentencePiece spaces.

    Introduced in notebook ``08_incremental_detokenization``.

    Example (the emoji's four bytes are split over three tokens, each decoded alone):
        >>> import labkit
        >>> from labkit.streaming.naive import PerTokenDecoder
        >>> tok = labkit.load("gpt2")
        >>> [PerTokenDecoder(tok).step(i) for i in tok.encode("n\\u00e9 \\U0001fae8").ids]
        ['n', '\u00e9', ' \ufffd', '\ufffd', '\ufffd']
    """

    def __init__(self, tok: Tokenizer, prompt_ids: Sequence[int] = (), skip_special_tokens: bool = False):
        self.tok = check_tokenizer(tok)
        self.skip_special_tokens = bool(skip_special_tokens)
        self.decoded_ids = 0

    def step(self, token_id: int) -> str | None:
        """Decode this one id alone."""
        token_id = self.tok.check_id(token_id)
        self.decoded_ids += 1
        return self.tok.decode([token_id], skip_special_tokens=self.skip_special_tokens) or None

    def flush(self) -> str | None:
        """Nothing is ever held."""
        return None


class FullRedecodeDecoder:
    """Decode all ids at every step and emit the new tail: correct, but O(N) work per id.

    Like a stream, it waits while the whole text ends in U+FFFD (an unfinished character).

    Introduced in notebook ``08_incremental_detokenization``.

    Example:
        >>> import labkit
        >>> from labkit.streaming.naive import FullRedecodeDecoder
        >>> tok = labkit.load("gpt2")
        >>> d = FullRedecodeDecoder(tok)
        >>> "".join(filter(None, map(d.step, tok.encode("héllo 🫨").ids)))
        'héllo \\U0001fae8'
    """

    def __init__(self, tok: Tokenizer, prompt_ids: Sequence[int] = (), skip_special_tokens: bool = False):
        self.tok = check_tokenizer(tok)
        self.skip_special_tokens = bool(skip_special_tokens)
        self._ids = [tok.check_id(i) for i in prompt_ids]
        self._emitted = len(self._decode())
        self.decoded_ids = 0

    def _decode(self) -> str:
        self.decoded_ids = getattr(self, "decoded_ids", 0) + len(self._ids)
        return self.tok.decode(self._ids, skip_special_tokens=self.skip_special_tokens)

    def step(self, token_id: int) -> str | None:
        """Append the id, decode everything, emit what goes past the text emitted so far."""
        self._ids.append(self.tok.check_id(token_id))
        text = self._decode()
        if text.endswith(REPLACEMENT) or len(text) <= self._emitted:
            return None
        new_text, self._emitted = text[self._emitted:], len(text)
        return new_text

    def flush(self) -> str | None:
        """Emit whatever is left (an unfinished character shows as U+FFFD)."""
        text = self._decode()
        new_text, self._emitted = text[self._emitted:], max(self._emitted, len(text))
        return new_text or None
