"""Tokens drawn as coloured spans over the text they came from.

Each token's slice of the original text (its offsets) gets a background colour that
alternates through a fixed palette, its id and spelling on hover (``title``). Spaces,
tabs and newlines are drawn visibly (``·``, ``→``, ``↵``) so whitespace tokens can be seen;
tokens that cover no text (BOS, ``[CLS]``) show their own spelling in a dashed box (``«<s>»``
in plain text), text no token covers is grey (``(··)``), and
several tokens that share one character (the bytes of an emoji) share one span. The HTML is
deterministic (no random ids) and ``repr()`` gives a readable plain-text version.
Introduced in notebook ``00_tour``.

Example:
    >>> from labkit.viz.spans import token_spans
    >>> import labkit
    >>> token_spans(labkit.load("gpt2"), "Hello world")
    Hello|·world
"""
from __future__ import annotations

import html
from dataclasses import dataclass

from labkit.core import Encoding, LabkitError

# soft pastel backgrounds that keep black text readable; cycled by token position
PALETTE = ("#ffd6a5", "#caffbf", "#9bf6ff", "#bdb2ff", "#ffc6ff", "#fdffb6", "#a0c4ff", "#ffadad")
VISIBLE = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}


@dataclass(frozen=True)
class Span:
    """One drawn span: the text it shows, the token ids and spellings behind it, and whether
    it covers original text (False for added framing such as BOS).

    Example:
        >>> from labkit.viz.spans import Span
        >>> Span("Hello", (15496,), ("Hello",), True)
        Span(text='Hello', ids=(15496,), tokens=('Hello',), covers_text=True)

    Introduced in notebook ``00_tour``.
    """

    text: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    covers_text: bool = True


def visible(text: str) -> str:
    """Whitespace and control characters made visible (space -> ·, tab -> →, newline -> ↵).

    Example:
        >>> from labkit.viz.spans import visible
        >>> visible("a b\\n"), visible("\\tx\\r")
        ('a·b↵', '→x␍')

    Introduced in notebook ``00_tour``.
    """
    out = []
    for ch in text:
        if ch in VISIBLE:
            out.append(VISIBLE[ch])
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def _html_visible(text: str) -> str:
    # a newline shows its mark and also breaks the line, so the layout follows the text
    return "".join(html.escape(visible(ch)) + ("<br>" if ch == "\n" else "") for ch in text)


class TokenSpans:
    """A drawing of tokens over text: ``_repr_html_`` for notebooks, ``repr`` for a terminal.

    Example:
        >>> import labkit
        >>> from labkit.viz.spans import TokenSpans
        >>> enc = labkit.load("gpt2").encode("hi")
        >>> TokenSpans.from_encoding(enc, "hi")._repr_html_()[:5]
        '<div '
    """

    def __init__(self, spans: list[Span], *, title: str | None = None):
        self.spans = list(spans)
        self.title = title

    @classmethod
    def from_encoding(cls, encoding: Encoding, text: str, *, title: str | None = None) -> "TokenSpans":
        """Group an Encoding's tokens into spans of ``text`` using their offsets.

        Example:
            >>> from labkit.viz.spans import TokenSpans
            >>> import labkit
            >>> tok = labkit.load("gpt2")
            >>> TokenSpans.from_encoding(tok.encode("hi"), "hi").spans[0].text
            'hi'
        """
        if not isinstance(encoding, Encoding):
            raise LabkitError(f"token spans need a labkit Encoding, got {type(encoding).__name__}")
        if not isinstance(text, str):
            raise LabkitError(f"token spans need the encoded str, got {type(text).__name__}")
        spans: list[Span] = []
        cursor = 0
        previous: tuple[int, int] | None = None
        for index, (token_id, token, (start, end)) in enumerate(zip(encoding.ids, encoding.tokens, encoding.offsets)):
            if not (0 <= start <= end <= len(text)):
                raise LabkitError(f"token #{index} {token!r} has offsets ({start}, {end}) outside a text of {len(text)} chars")
            if start < end and spans and spans[-1].ids and (previous == (start, end) or end <= cursor):
                # more tokens over characters already drawn (bytes of one emoji): one span, all ids
                last = spans[-1]
                spans[-1] = Span(last.text, (*last.ids, token_id), (*last.tokens, token), last.covers_text)
                continue
            previous = (start, end)
            if start > cursor:
                spans.append(Span(text[cursor:start], (), (), True))  # text no token covers (BERT's spaces)
            shown = text[max(start, cursor):end]
            if shown:
                spans.append(Span(shown, (token_id,), (token,), True))
            else:
                spans.append(Span(token, (token_id,), (token,), False))
            cursor = max(cursor, end)
        if cursor < len(text):
            spans.append(Span(text[cursor:], (), (), True))
        return cls(spans, title=title)

    @property
    def n_tokens(self) -> int:
        return sum(len(span.ids) for span in self.spans)

    def _repr_html_(self) -> str:
        parts = ['<div class="labkit-spans" style="font-family: monospace; line-height: 2em; white-space: pre-wrap;">']
        if self.title is not None:
            parts.append(f'<div style="font-weight: bold;">{html.escape(self.title)} ({self.n_tokens} tokens)</div>')
        colour = 0
        for span in self.spans:
            if not span.ids:
                parts.append(f'<span style="color: #888;">{_html_visible(span.text)}</span>')
                continue
            hover = " ".join(f"{i}:{t}" for i, t in zip(span.ids, span.tokens))
            style = f"background: {PALETTE[colour % len(PALETTE)]}; padding: 1px 0; border-radius: 3px;"
            if not span.covers_text:
                style += " border: 1px dashed #666;"
            colour += 1
            shown = _html_visible(span.text)
            parts.append(f'<span title="{html.escape(hover, quote=True)}" style="{style}">{shown}</span>')
        parts.append("</div>")
        return "".join(parts)

    def __repr__(self) -> str:
        pieces = []
        for span in self.spans:
            shown = visible(span.text)
            if not span.ids:
                shown = f"({shown})"  # text no token covers
            elif not span.covers_text:
                shown = f"«{shown}»"  # a token with no text of its own (BOS, [CLS])
            pieces.append(shown)
        body = "|".join(pieces)
        return body if self.title is None else f"{self.title} ({self.n_tokens} tokens): {body}"

    def __len__(self) -> int:
        return len(self.spans)


def token_spans(tokenizer, text: str, *, title: str | None = None, **encode_kwargs) -> TokenSpans:
    """Encode ``text`` with ``tokenizer`` and draw the tokens as coloured spans.

    Example:
        >>> from labkit.viz.spans import token_spans
        >>> import labkit
        >>> token_spans(labkit.load("gpt2"), "Hello world")
        Hello|·world

    Introduced in notebook ``00_tour``.
    """
    return TokenSpans.from_encoding(tokenizer.encode(text, **encode_kwargs), text, title=title)
