"""Render a conversation with a chat template exactly as ``transformers`` does.

:class:`ChatTemplate` compiles a template once in the sandbox (``labkit/chat/sandbox.py``) and
renders it many times; around each render it applies transformers' rules
(``render_jinja_template``): batched conversations, ``continue_final_message``, ``tools`` and
``documents`` checks, ``reasoning_content`` shown as ``thinking``. Errors name the template line.
Introduced in notebook ``07_special_tokens_chat_templates``.

Example:
    >>> from labkit.chat.render import render_chat_template
    >>> src = "{% for m in messages %}{{ m.role }}: {{ m.content }}\\n{% endfor %}"
    >>> render_chat_template(src, [{"role": "user", "content": "hi"}], add_generation_prompt=True)
    'user: hi\\n'
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError

from labkit.chat.budget import CURRENT, DEFAULT_LIMITS, Budget, RenderLimits
from labkit.chat.errors import ChatTemplateError, TemplateRaised, TemplateRefused
from labkit.chat.sandbox import compiled_template


class ChatTemplate:
    """A compiled chat template with its limits; render it many times.

    Example:
        >>> from labkit.chat.render import ChatTemplate
        >>> src = "{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}"
        >>> ChatTemplate(src).render([{"role": "user", "content": "hi"}], add_generation_prompt=True, eos_token="</s>")
        'hi</s>'
    """

    def __init__(self, source: str, *, name: str = "chat template", limits: RenderLimits = DEFAULT_LIMITS):
        self.source = source
        self.name = name
        self.limits = limits
        if not isinstance(source, str):
            raise ChatTemplateError(f"{name}: a chat template is text (str), got {type(source).__name__}")
        try:
            self.template = compiled_template(source)
        except ChatTemplateError as exc:
            message = exc.args[0]
            exc.args = (f"{name} {message}" if message.startswith("line ") else f"{name}: {message}",)
            raise

    def __repr__(self) -> str:
        return f"<labkit.chat.ChatTemplate {self.name} ({len(self.source)} chars)>"

    def render_variables(self, variables: dict[str, Any], *, now=None) -> str:
        """Render with exactly these template variables (no transformers preprocessing)."""
        budget = Budget(self.limits, now)
        token = CURRENT.set(budget)
        pieces: list[str] = []
        try:
            for piece in self.template.generate(variables):
                pieces.append(piece)
        except ChatTemplateError as exc:
            exc.template_line = _template_line(exc)
            if exc.template_line is not None and not isinstance(exc, TemplateRaised):
                exc.args = (f"{self.name} line {exc.template_line}: {exc.args[0]}",)
            raise
        except SecurityError as exc:
            raise self._error(TemplateRefused, f"template refused: {exc}", exc) from None
        except (RecursionError, MemoryError, OverflowError) as exc:
            kind = type(exc).__name__
            raise self._error(TemplateRefused, f"template refused: {kind}: {exc}", exc) from None
        except jinja2.TemplateError as exc:
            raise self._error(ChatTemplateError, f"{type(exc).__name__}: {exc}", exc) from None
        except Exception as exc:  # the template's own bug, e.g. str + None
            raise self._error(ChatTemplateError, f"{type(exc).__name__}: {exc}", exc) from None
        finally:
            CURRENT.reset(token)
        return "".join(pieces)

    def _error(self, cls: type[ChatTemplateError], message: str, exc: BaseException) -> ChatTemplateError:
        line = _template_line(exc)
        where = f"{self.name} line {line}" if line is not None else self.name
        error = cls(f"{where}: {message}")
        error.template_line = line
        return error

    def render(self, messages, *, add_generation_prompt: bool = False, now=None, **variables) -> str | list[str]:
        """transformers' ``render_jinja_template`` rules around one render (see module docs)."""
        return _render(self, messages, add_generation_prompt=add_generation_prompt, now=now, **variables)


def _template_line(exc: BaseException) -> int | None:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<chat template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _check_messages(messages: Any) -> list:
    if hasattr(messages, "messages"):
        messages = messages.messages
    if isinstance(messages, (str, bytes)) or not isinstance(messages, (list, tuple)):
        raise ChatTemplateError(f"chat: messages must be a list of dicts, got {type(messages).__name__}")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ChatTemplateError(f"chat: message {i} must be a dict with 'role' and 'content', got {type(message).__name__}")
    return list(messages)


def _alias_reasoning(messages: list) -> list:
    """transformers 5 shows ``reasoning_content`` to templates under ``thinking`` too (copies, no mutation)."""
    out = []
    for message in messages:
        if "reasoning_content" in message and "thinking" not in message:
            message = {**message, "thinking": message["reasoning_content"]}
        out.append(message)
    return out


def _render(template: ChatTemplate, messages, *, add_generation_prompt=False, now=None,
            tools=None, documents=None, continue_final_message=False, **variables):
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError(
            "chat: continue_final_message and add_generation_prompt are not compatible: use "
            "continue_final_message to continue the last message, add_generation_prompt to start a new one"
        )
    if tools is not None:
        if not isinstance(tools, (list, tuple)) or not all(isinstance(t, Mapping) for t in tools):
            raise ChatTemplateError("chat: tools must be a list of JSON-schema dicts (labkit does not convert Python functions)")
        tools = list(tools)
    if documents is not None:
        if not isinstance(documents, (list, tuple)) or not all(isinstance(d, Mapping) for d in documents):
            raise ChatTemplateError("chat: documents must be a list of dicts with 'title' and 'text' keys")
    batched = isinstance(messages, (list, tuple)) and len(messages) > 0 and (
        isinstance(messages[0], (list, tuple)) or hasattr(messages[0], "messages")
    )
    conversations = messages if batched else [messages]
    rendered = []
    for conversation in conversations:
        chat = _check_messages(conversation)
        final_text = None
        if continue_final_message:
            chat, final_text = _tag_final_message(chat, continue_final_message, template.source)
        text = template.render_variables(
            {**variables, "messages": _alias_reasoning(chat), "tools": tools, "documents": documents,
             "add_generation_prompt": add_generation_prompt},
            now=now,
        )
        if final_text is not None:
            text = _cut_at_tag(text, final_text)
        rendered.append(text)
    return rendered if batched else rendered[0]


def _tag_final_message(chat: list, continue_final_message: Any, source: str) -> tuple[list, str]:
    if not chat:
        raise ChatTemplateError("chat: continue_final_message is set but there are no messages")
    chat = copy.deepcopy(chat)
    key = continue_final_message if isinstance(continue_final_message, str) else "content"
    final = chat[-1].get(key)
    if final is None:
        raise ChatTemplateError(f'chat: continue_final_message is set but the final message has no "{key}" to continue')
    if key not in source:
        raise ChatTemplateError(f'chat: continue_final_message is set to "{key}" but the template never mentions that field')
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if isinstance(block, dict) and "text" in block:
                final_text = block["text"]
                block["text"] = block["text"] + _CONTINUE_TAG
                return chat, final_text
        raise ChatTemplateError("chat: continue_final_message is set but the final message has no text block to continue")
    if not isinstance(final, str):
        raise ChatTemplateError(f"chat: the final message's {key!r} must be a str or a list of blocks, got {type(final).__name__}")
    chat[-1][key] = final + _CONTINUE_TAG
    return chat, final


def _cut_at_tag(text: str, final_text: str) -> str:
    tag = _CONTINUE_TAG.strip()
    if final_text.strip() not in text or tag not in text:
        raise ChatTemplateError(
            "chat: continue_final_message is set but the final message does not appear in the rendered chat "
            "(the template changes or drops it)"
        )
    at = text.rindex(tag)
    if text[at:at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return text[:at]
    return text[:at].rstrip()  # the template trimmed the tag's trailing space


def render_chat_template(template, messages, *, add_generation_prompt: bool = False, now=None, **variables):
    """Render a conversation with a chat template source, exactly as transformers would.

    ``variables`` become template variables (``bos_token``, ``eos_token``, ``tools``,
    ``documents``, ``enable_thinking``, ...); ``continue_final_message`` follows transformers'
    rules; ``now`` (a datetime, or a callable returning one) fixes ``strftime_now``.
    A list of conversations renders to a list of strings.

    Example:
        >>> from labkit.chat.render import render_chat_template
        >>> src = "{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}"
        >>> render_chat_template(src, [{"role": "user", "content": "hi"}], eos_token="<|im_end|>")
        'hi<|im_end|>'
    """
    compiled = template if isinstance(template, ChatTemplate) else ChatTemplate(template)
    return compiled.render(messages, add_generation_prompt=add_generation_prompt, now=now, **variables)


