"""Which chat template a render uses: the tokenizer's named templates, an override, a fallback.

The templates themselves are found by the readers when a vocabulary is loaded
(``labkit/formats/hf_config.py``, in transformers' order of priority) and stored on the
vocabulary; this module only chooses among them, as transformers does: a name asked for,
else ``tool_use`` when tools are given, else ``default``. When a tokenizer has no template,
labkit refuses with :class:`ChatTemplateError`; a generic format is used only when asked for
by name with ``fallback="chatml"``.
Introduced in notebook ``07_special_tokens_chat_templates``.

Example:
    >>> from labkit.chat.select import find_chat_templates
    >>> import labkit
    >>> find_chat_templates(labkit.load("qwen2")).pick()[:17]
    '{% for message in'
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from labkit.chat.errors import ChatTemplateError
from labkit.core import LabkitError, VocabData

# where the readers look, for the message when nothing is found
SEARCHED = ("chat_template.jinja", "chat_template.json", "tokenizer_config.json 'chat_template'",
            "GGUF 'tokenizer.chat_template'")


@dataclass(frozen=True)
class TemplateSet:
    """The chat templates of a tokenizer: name -> source, and where they came from.

    Example:
        >>> from labkit.chat.select import find_chat_templates
        >>> import labkit
        >>> find_chat_templates(labkit.load("qwen2")).origin  # doctest: +ELLIPSIS
        '...gguf: tokenizer.chat_template'
    """

    templates: dict[str, str]
    origin: str

    def pick(self, name: str | None = None, *, tools=None) -> str:
        """transformers' choice: the named one; else ``tool_use`` when tools are given; else ``default``."""
        if name is not None:
            if name in self.templates:
                return self.templates[name]
            raise ChatTemplateError(f"{self.origin}: no chat template named {name!r}; have {', '.join(sorted(self.templates))}")
        if tools is not None and "tool_use" in self.templates:
            return self.templates["tool_use"]
        if "default" in self.templates:
            return self.templates["default"]
        raise ChatTemplateError(
            f"{self.origin}: several chat templates ({', '.join(sorted(self.templates))}) and none is 'default'; "
            "pass chat_template=<name>"
        )


def _no_template(where: str) -> ChatTemplateError:
    return ChatTemplateError(
        f"{where}: no chat template found (looked for {', '.join(SEARCHED)}); "
        "pass chat_template=... or fallback='chatml' to use a generic format on purpose"
    )


def templates_of(vocab: VocabData) -> TemplateSet:
    """The templates the reader stored on ``vocab``; ChatTemplateError when it found none.

    Example:
        >>> from labkit.chat.select import templates_of
        >>> import labkit
        >>> templates_of(labkit.load("qwen2").vocab).pick()[:2]
        '{%'
    """
    named = dict(vocab.chat_templates)
    if vocab.chat_template is not None:
        named["default"] = vocab.chat_template  # a caller may have set the field directly
    if not named:
        raise _no_template(str(vocab.source))
    return TemplateSet(named, vocab.chat_template_origin or str(vocab.source))


def _explicit(explicit) -> TemplateSet:
    from labkit.formats.hf_config import read_template_file

    if isinstance(explicit, os.PathLike) or (isinstance(explicit, str) and explicit.endswith(".jinja") and "\n" not in explicit):
        path = Path(explicit)
        if not path.exists():
            raise ChatTemplateError(f"{path}: explicit chat template file not found")
        return TemplateSet({"default": read_template_file(path)}, str(path))
    if isinstance(explicit, str):
        return TemplateSet({"default": explicit}, "explicit template text")
    raise ChatTemplateError(f"chat: explicit template must be a .jinja path or template text, got {type(explicit).__name__}")


def find_chat_templates(source, explicit=None) -> TemplateSet:
    """The chat templates of ``source``: a Tokenizer or VocabData (what its reader found), or a
    path (a folder, or a file whose folder is searched; a ``.gguf`` file is read for its keys).
    ``explicit`` (a ``.jinja`` path or template text) wins over everything.

    Example (a folder with a default and a ``tool_use`` template):
        >>> import tempfile
        >>> from pathlib import Path
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "additional_chat_templates").mkdir()
        >>> _ = (folder / "chat_template.jinja").write_text("{{ messages }}")
        >>> _ = (folder / "additional_chat_templates" / "tool_use.jinja").write_text("{{ tools }}")
        >>> found = find_chat_templates(folder)
        >>> found.pick(), found.pick(tools=[{"name": "search"}])
        ('{{ messages }}', '{{ tools }}')
    """
    if explicit is not None:
        return _explicit(explicit)
    vocab = getattr(source, "vocab", source)
    if isinstance(vocab, VocabData):
        return templates_of(vocab)
    if not isinstance(source, (str, os.PathLike)):
        raise ChatTemplateError(f"chat: find_chat_templates() takes a tokenizer, a VocabData or a path, got {type(source).__name__}")
    from labkit.formats.detect import read_vocab
    from labkit.formats.hf_config import folder_templates

    path = Path(source)
    if path.is_file() and path.suffix == ".gguf":
        return templates_of(read_vocab(path))
    folder = path if path.is_dir() else path.parent
    if not folder.is_dir():
        raise LabkitError(f"{path}: no such file or folder")
    found = folder_templates(folder)
    if found is None:
        raise _no_template(str(path))
    return TemplateSet(*found)


def load_chat_template(source, explicit=None, *, name: str | None = None, tools=None) -> str:
    """The chat template text a tokenizer would use (see :func:`find_chat_templates`).

    Example:
        >>> from labkit.chat.select import load_chat_template
        >>> load_chat_template("data/gguf/ggml-vocab-qwen2.gguf").startswith("{%")
        True
    """
    return find_chat_templates(source, explicit).pick(name, tools=tools)


# A generic format, used only when a caller asks for it by name (never silently).
FALLBACK_TEMPLATES = {
    "chatml": (
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
}


def _looks_like_template(text: str) -> bool:
    return "{%" in text or "{{" in text


def select_chat_template(tok, chat_template=None, *, tools=None, fallback: str | None = None) -> str:
    """The template text for ``tok.apply_chat_template``: a template (text or ``.jinja`` path)
    passed in, else the one named by ``chat_template``, else ``tok.chat_template`` set by the
    caller, else the tokenizer's own; ``fallback`` names a generic format for a tokenizer without one.

    Example:
        >>> from labkit.chat.select import select_chat_template
        >>> import labkit
        >>> select_chat_template(labkit.load("qwen2"))[:2]
        '{%'
    """
    if chat_template is not None and (isinstance(chat_template, os.PathLike) or (
            isinstance(chat_template, str) and (_looks_like_template(chat_template) or (
                chat_template.endswith(".jinja") and Path(chat_template).is_file())))):
        return _explicit(chat_template).pick()
    override = getattr(tok, "_chat_template_override", None)
    try:
        if override is not None:  # tok.chat_template = "..." (template text)
            found = TemplateSet({"default": override}, f"{getattr(tok, 'name', 'tokenizer')}: chat_template set by the caller")
        else:
            found = find_chat_templates(tok)
    except ChatTemplateError:
        if fallback is None:
            raise
        if fallback not in FALLBACK_TEMPLATES:
            raise ChatTemplateError(f"chat: unknown fallback {fallback!r}; have {', '.join(FALLBACK_TEMPLATES)}") from None
        return FALLBACK_TEMPLATES[fallback]
    return found.pick(chat_template, tools=tools)
