"""Apply a chat template to a tokenizer, encode the result, and know where generation ends.

Example:
    >>> from labkit.chat.encode import encode_chat
    >>> import labkit
    >>> encode_chat(labkit.load("qwen2"), [{"role": "user", "content": "hi"}]).tokens[0]
    '<|im_start|>'

Introduced in notebook ``07_special_tokens_chat_templates``.
"""
from __future__ import annotations

import warnings
from pathlib import Path

from labkit.chat.errors import ChatTemplateError, DuplicateSpecialTokenWarning
from labkit.chat.render import ChatTemplate
from labkit.chat.select import select_chat_template
from labkit.core import Encoding


def apply_chat_template(tok, messages, *, add_generation_prompt: bool = False, chat_template=None,
                        tools=None, documents=None, now=None, fallback: str | None = None,
                        tokenize: bool = False, **kwargs):
    """``tok.apply_chat_template``: the tokenizer's template, its special tokens as variables
    (``bos_token``, ``eos_token``, ... overridable by kwargs), transformers' rules.

    ``tokenize=True`` returns ids instead (special tokens parsed, nothing added), as transformers does.
    Example:
        >>> import labkit
        >>> labkit.load("qwen2").apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True)
        '<|im_start|>system\\nYou are a helpful assistant<|im_end|>\\n<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
    """
    source = select_chat_template(tok, chat_template, tools=tools, fallback=fallback)
    variables = {**tok.special_tokens.named(), **kwargs}
    name = Path(str(tok.vocab.source)).name if hasattr(tok, "vocab") else "chat template"
    text = ChatTemplate(source, name=f"{name} chat template").render(
        messages, add_generation_prompt=add_generation_prompt, now=now, tools=tools, documents=documents, **variables
    )
    if tokenize:
        if isinstance(text, list):
            return [encode_rendered(tok, t).ids for t in text]
        return encode_rendered(tok, text).ids
    return text



def duplicate_special_warnings(tok, ids: list[int]) -> list[str]:
    """llama.cpp's warnings for a prompt that starts with BOS twice or ends with EOS twice.

    Example:
        >>> import labkit
        >>> from labkit.chat.encode import duplicate_special_warnings
        >>> tok = labkit.load("llama-spm")
        >>> duplicate_special_warnings(tok, [1, 1, 15043])
        ["the prompt starts with 2 BOS tokens ('<s>'): the template already writes BOS and add_special_tokens=True added another; render then encode with add_special_tokens=False"]
    """
    specials = tok.special_tokens
    out = []
    if specials.bos_id is not None and len(ids) >= 2 and ids[0] == ids[1] == specials.bos_id:
        out.append(
            f"the prompt starts with 2 BOS tokens ({specials.bos!r}): the template already writes BOS and "
            "add_special_tokens=True added another; render then encode with add_special_tokens=False"
        )
    if specials.add_eos and specials.eos_id is not None and len(ids) >= 2 and ids[-1] == ids[-2] == specials.eos_id:
        out.append(
            f"the prompt ends with 2 EOS tokens ({specials.eos!r}): the template already writes EOS and "
            "add_special_tokens=True added another"
        )
    return out


def encode_rendered(tok, text: str, *, add_special_tokens: bool = False) -> Encoding:
    """Encode a rendered conversation: special-token spellings become single ids.

    Warns (:class:`DuplicateSpecialTokenWarning`) when ``add_special_tokens`` doubles a BOS the
    template already wrote, as llama.cpp does.
    Example:
        >>> from labkit.chat.encode import encode_rendered
        >>> import labkit
        >>> tok = labkit.load("qwen2")
        >>> encode_rendered(tok, "<|im_start|>user\\nhi<|im_end|>\\n").ids[0]
        151644
    """
    encoding = tok.encode(text, add_special_tokens=add_special_tokens, parse_special=True)
    if add_special_tokens:
        for message in duplicate_special_warnings(tok, encoding.ids):
            warnings.warn(message, DuplicateSpecialTokenWarning, stacklevel=2)
    return encoding


def encode_chat(tok, messages, *, add_generation_prompt: bool = False, add_special_tokens: bool = False, **kwargs) -> Encoding:
    """Render with ``tok.apply_chat_template`` and encode the result with :func:`encode_rendered`.

    Example:
        >>> from labkit.chat.encode import encode_chat
        >>> import labkit
        >>> encode_chat(labkit.load("qwen2"), [{"role": "user", "content": "hi"}]).tokens[0]
        '<|im_start|>'
    """
    text = tok.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, **kwargs)
    if not isinstance(text, str):
        raise ChatTemplateError("encode_chat() takes one conversation, not a batch")
    return encode_rendered(tok, text, add_special_tokens=add_special_tokens)


# ----------------------------------------------------------------------------- where generation ends

# Spellings llama.cpp treats as end-of-generation wherever they are in the vocabulary, on top
# of the file's eos/eot/eom ids (src/llama-vocab.cpp, "auto-detect special tokens by text").
END_OF_TURN_SPELLINGS = (
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
)


def end_of_generation_ids(tok) -> tuple[int, ...]:
    """Ids that end generation: the file's EOS ids plus every known end-of-turn spelling the
    vocabulary holds as one token (llama.cpp's rule), in id order.

    Example:
        >>> from labkit.chat.encode import end_of_generation_ids
        >>> import labkit
        >>> end_of_generation_ids(labkit.load("qwen2"))
        (151643, 151645)
    """
    ids = set(tok.special_tokens.eos_ids)
    if tok.special_tokens.eos_id is not None:
        ids.add(tok.special_tokens.eos_id)
    for spelling in END_OF_TURN_SPELLINGS:
        token_id = tok.token_to_id(spelling)
        if token_id is not None:
            ids.add(token_id)
    return tuple(sorted(ids))
