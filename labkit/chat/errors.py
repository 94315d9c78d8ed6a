"""The errors and warnings of chat templates, all :class:`labkit.LabkitError` subclasses.

Example:
    >>> import labkit
    >>> from labkit.chat.errors import TemplateRefused
    >>> issubclass(TemplateRefused, labkit.LabkitError)
    True

Introduced in notebook ``07_special_tokens_chat_templates``.
"""
from __future__ import annotations

from labkit.core import LabkitError


class ChatTemplateError(LabkitError):
    """A chat template could not be found, compiled or rendered (the message says where).

    Example:
        >>> from labkit.chat.errors import ChatTemplateError
        >>> ChatTemplateError("chat template line 3: 'dict object' has no attribute 'x'")
        ChatTemplateError("chat template line 3: 'dict object' has no attribute 'x'")
    """

    template_line: int | None = None


class TemplateRaised(ChatTemplateError):
    """The template called ``raise_exception(message)``; ``str(error)`` is that message.

    Example (gemma-2's template has no system role):
        >>> from labkit.chat.render import render_chat_template
        >>> from labkit.paths import data_path
        >>> gemma = data_path("templates/google-gemma-2-2b-it.jinja").read_text()
        >>> render_chat_template(gemma, [{"role": "system", "content": "Be brief."}])
        Traceback (most recent call last):
        labkit.chat.errors.TemplateRaised: System role not supported
    """


class TemplateRefused(ChatTemplateError):
    """The sandbox refused the template: unsafe attribute, mutation, or a resource limit.

    Example:
        >>> from labkit.chat.render import render_chat_template
        >>> render_chat_template("{{ cycler.__init__.__globals__ }}", [])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        labkit.chat.errors.TemplateRefused: chat template line 1: template refused: access to attribute '__init__' ...
    """


class DuplicateSpecialTokenWarning(UserWarning):
    """The encoded prompt starts with two BOS (or ends with two EOS) ids, as llama.cpp warns."""


