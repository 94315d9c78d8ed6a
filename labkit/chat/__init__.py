"""Chat templates: render a conversation with a model's Jinja template exactly as
``transformers`` does, inside a sandbox that refuses hostile templates loudly.

One idea a module:

- ``errors``  ChatTemplateError, TemplateRaised, TemplateRefused (all LabkitError)
- ``budget``  RenderLimits and the per-render Budget (steps, sizes, depth, wall clock)
- ``checks``  size checks made before an operation or filter runs
- ``sandbox`` the guarded jinja2 environment and the compile step
- ``render``  ChatTemplate and ``render_chat_template`` (transformers' rules around a render)
- ``select``  which of a tokenizer's templates to use (the readers find them at load,
  ``labkit/formats/hf_config.py``)
- ``encode``  ``apply_chat_template``, encoding a render, end-of-generation ids

Introduced in notebook ``07_special_tokens_chat_templates``.

Example:
    >>> import labkit.chat
    >>> src = "{% for m in messages %}{{ m.role }}: {{ m.content }}\\n{% endfor %}"
    >>> labkit.chat.render_chat_template(src, [{"role": "user", "content": "hi"}], add_generation_prompt=True)
    'user: hi\\n'
"""
from __future__ import annotations

from labkit.chat.budget import DEFAULT_LIMITS, RenderLimits
from labkit.chat.encode import (
    END_OF_TURN_SPELLINGS,
    apply_chat_template,
    duplicate_special_warnings,
    encode_chat,
    encode_rendered,
    end_of_generation_ids,
)
from labkit.chat.errors import ChatTemplateError, DuplicateSpecialTokenWarning, TemplateRaised, TemplateRefused
from labkit.chat.render import ChatTemplate, render_chat_template
from labkit.chat.sandbox import GuardedEnvironment
from labkit.chat.select import (
    FALLBACK_TEMPLATES,
    TemplateSet,
    find_chat_templates,
    load_chat_template,
    select_chat_template,
    templates_of,
)

__all__ = [
    "DEFAULT_LIMITS", "END_OF_TURN_SPELLINGS", "FALLBACK_TEMPLATES", "ChatTemplate", "ChatTemplateError",
    "DuplicateSpecialTokenWarning", "GuardedEnvironment", "RenderLimits", "TemplateRaised", "TemplateRefused",
    "TemplateSet", "apply_chat_template", "duplicate_special_warnings", "encode_chat", "encode_rendered",
    "end_of_generation_ids", "find_chat_templates", "load_chat_template", "render_chat_template",
    "select_chat_template", "templates_of",
]
