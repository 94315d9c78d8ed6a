"""Views for chat prompts: an encoded prompt with its special tokens highlighted, and the
same conversation rendered by several templates side by side.

Both return deterministic HTML (no random ids) for notebooks and a readable ``repr`` for a
terminal. They only read what the tokenizer and the renderer return.
Introduced in notebook ``07_special_tokens_chat_templates``.

Example:
    >>> from labkit.viz.chat import prompt_view
    >>> import labkit
    >>> prompt_view(labkit.load("qwen2"), "<|im_start|>user\\nhi<|im_end|>")
    [<|im_start|>]|user|↵|hi|[<|im_end|>]
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Mapping

from labkit.core import Encoding, LabkitError
from labkit.viz.spans import PALETTE, visible

SPECIAL_STYLE = "background: #2d3142; color: #ffffff; font-weight: bold; padding: 1px 2px; border-radius: 3px;"


def _html_text(text: str) -> str:
    # newlines show their mark and also break the line, so the layout follows the prompt
    return "".join(html.escape(visible(ch)) + ("<br>" if ch == "\n" else "") for ch in text)


@dataclass(frozen=True)
class PromptToken:
    """One token of an encoded prompt: the text it covers, its id and spelling, and whether
    it is a special (control) token.

    Example:
        >>> from labkit.viz.chat import PromptToken
        >>> PromptToken("<|im_end|>", 151645, "<|im_end|>", True)
        PromptToken(text='<|im_end|>', id=151645, token='<|im_end|>', special=True)
    """

    text: str
    id: int
    token: str
    special: bool


class PromptView:
    """An encoded prompt drawn token by token, special tokens dark, the others pastel.

    Example:
        >>> import labkit
        >>> from labkit.viz.chat import PromptView
        >>> tok = labkit.load("qwen2")
        >>> text = "<|im_start|>user\\nhi<|im_end|>"
        >>> PromptView.from_encoding(tok, text, tok.encode(text))
        [<|im_start|>]|user|↵|hi|[<|im_end|>]
    """

    def __init__(self, tokens: list[PromptToken], *, title: str | None = None):
        self.tokens = list(tokens)
        self.title = title

    @classmethod
    def from_encoding(cls, tok, text: str, encoding: Encoding, *, title: str | None = None) -> "PromptView":
        """Pair each id with the slice of ``text`` its offsets cover (its spelling if none).

        Example:
            >>> from labkit.viz.chat import PromptView
            >>> import labkit
            >>> tok = labkit.load("qwen2")
            >>> PromptView.from_encoding(tok, "hi", tok.encode("hi")).tokens[0].text
            'hi'
        """
        if not isinstance(encoding, Encoding) or not isinstance(text, str):
            raise LabkitError("prompt view needs the encoded str and its labkit Encoding")
        out = []
        cursor = 0
        for token_id, token, (start, end) in zip(encoding.ids, encoding.tokens, encoding.offsets):
            shown = text[max(start, cursor):end] if 0 <= start <= end <= len(text) else ""
            cursor = max(cursor, end)
            out.append(PromptToken(shown or token, token_id, token, bool(tok.is_special_id(token_id))))
        return cls(out, title=title)

    @property
    def n_special(self) -> int:
        return sum(1 for t in self.tokens if t.special)

    def _repr_html_(self) -> str:
        parts = ['<div class="labkit-prompt" style="font-family: monospace; line-height: 2em; white-space: pre-wrap;">']
        if self.title is not None:
            parts.append(f'<div style="font-weight: bold;">{html.escape(self.title)} '
                         f'({len(self.tokens)} tokens, {self.n_special} special)</div>')
        colour = 0
        for t in self.tokens:
            hover = html.escape(f"{t.id}: {t.token}", quote=True)
            if t.special:
                style = SPECIAL_STYLE
            else:
                style = f"background: {PALETTE[colour % len(PALETTE)]}; padding: 1px 0; border-radius: 3px;"
                colour += 1
            parts.append(f'<span title="{hover}" style="{style}">{_html_text(t.text)}</span>')
        parts.append("</div>")
        return "".join(parts)

    def __repr__(self) -> str:
        body = "|".join(f"[{t.text}]" if t.special else visible(t.text) for t in self.tokens)
        if self.title is None:
            return body
        return f"{self.title} ({len(self.tokens)} tokens, {self.n_special} special): {body}"


def prompt_view(tok, text: str, *, title: str | None = None, add_special_tokens: bool = False) -> PromptView:
    """Encode a rendered prompt (special tokens parsed) and draw it.

    Example:
        >>> from labkit.viz.chat import prompt_view
        >>> import labkit
        >>> prompt_view(labkit.load("qwen2"), "<|im_start|>user\\nhi<|im_end|>")
        [<|im_start|>]|user|↵|hi|[<|im_end|>]
    """
    encoding = tok.encode(text, add_special_tokens=add_special_tokens, parse_special=True)
    return PromptView.from_encoding(tok, text, encoding, title=title)


class TemplateTable:
    """Several templates' renders of one conversation, side by side (an error shows as such).

    Example:
        >>> from labkit.viz.chat import TemplateTable
        >>> TemplateTable({"phi": "<|user|>\\nhi<|end|>\\n", "gemma": ValueError("no system")})
        == phi ==
        <|user|>
        hi<|end|>
        <BLANKLINE>
        == gemma ==
        ValueError: no system
    """

    def __init__(self, renders: Mapping[str, str | BaseException]):
        self.renders = dict(renders)

    def _repr_html_(self) -> str:
        head = "".join(f'<th style="text-align: left; vertical-align: top;">{html.escape(name)}</th>'
                       for name in self.renders)
        cells = []
        for value in self.renders.values():
            if isinstance(value, BaseException):
                body = f'<span style="color: #b00020;">{html.escape(type(value).__name__)}: {html.escape(str(value))}</span>'
            else:
                body = _html_text(value)
            cells.append(f'<td style="text-align: left; vertical-align: top; font-family: monospace; '
                         f'font-size: 85%; white-space: pre-wrap;">{body}</td>')
        return (f'<table class="labkit-templates"><tr>{head}</tr><tr>{"".join(cells)}</tr></table>')

    def __repr__(self) -> str:
        blocks = []
        for name, value in self.renders.items():
            shown = f"{type(value).__name__}: {value}" if isinstance(value, BaseException) else value
            blocks.append(f"== {name} ==\n{shown}")
        return "\n".join(blocks)


def compare_templates(templates: Mapping[str, str], messages, **variables) -> TemplateTable:
    """Render one conversation with each template; a template that refuses it shows its error.

    ``variables`` may map a template name to its own variables under ``per_template``.
    Example:
        >>> from labkit.viz.chat import compare_templates
        >>> src = "{% for m in messages %}<|im_start|>{{ m.role }}\\n{{ m.content }}<|im_end|>\\n{% endfor %}"
        >>> compare_templates({"chatml": src}, [{"role": "user", "content": "hi"}])
        == chatml ==
        <|im_start|>user
        hi<|im_end|>
        <BLANKLINE>
    """
    from labkit.chat import ChatTemplateError, render_chat_template

    per_template = variables.pop("per_template", {})
    renders: dict[str, str | BaseException] = {}
    for name, source in templates.items():
        try:
            renders[name] = render_chat_template(source, messages, **{**variables, **per_template.get(name, {})})
        except ChatTemplateError as exc:
            renders[name] = exc
    return TemplateTable(renders)
