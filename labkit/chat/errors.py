"""The errors and warnings of chat templates, all :class:`labkit.LabkitError` subclasses.

Example: ``except labkit.chat.TemplateRefused as exc: print(exc)``
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

    Example: gemma-2 with a system message raises ``TemplateRaised('System role not supported')``
    """


class TemplateRefused(ChatTemplateError):
    """The sandbox refused the template: unsafe attribute, mutation, or a resource limit.

    Example: ``{{ cycler.__init__.__globals__ }}`` -> ``TemplateRefused("... '__init__' ... refused")``
    """


class DuplicateSpecialTokenWarning(UserWarning):
    """The encoded prompt starts with two BOS (or ends with two EOS) ids, as llama.cpp warns."""


