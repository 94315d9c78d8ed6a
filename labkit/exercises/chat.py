"""Checkers for the "Try it" exercises of notebook 07 (special tokens and chat templates).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint, and returns True/False.
Introduced in notebook ``07_special_tokens_chat_templates``.

Example:
    >>> from labkit.exercises.chat import check_token_count
    >>> import labkit
    >>> check_token_count(labkit.load("qwen2"), "<|im_start|>user", 2)
    right
    True
"""
from __future__ import annotations

from labkit.chat import ChatTemplateError, end_of_generation_ids, render_chat_template
from labkit.core import LabkitError
from labkit.exercises import answerable, verdict as _verdict


@answerable
def check_token_count(tok, text: str, answer: int, *, parse_special: bool = True) -> bool:
    """How many ids does ``text`` encode to (special tokens parsed or not)?

    Example:
        >>> from labkit.exercises.chat import check_token_count
        >>> import labkit
        >>> check_token_count(labkit.load("qwen2"), "<|im_end|>", 1)
        right
        True
    """
    ids = tok.encode(text, parse_special=parse_special).ids
    other = len(tok.encode(text, parse_special=not parse_special).ids)
    if answer == other and other != len(ids):
        how = ("that is the count with the special spelling cut by BPE as plain text; parsed, it is one id"
               if parse_special else "that is the count with special spellings parsed; as plain text BPE cuts them")
    else:
        how = "each special spelling is one id" if parse_special else "special spellings are plain text, cut by BPE"
    return _verdict(answer == len(ids), f"{how}; encode it and count")


# Conversations the template exercise is checked on, and the format it asks for.
EXERCISE_CONVERSATIONS = (
    [{"role": "user", "content": "Hi"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
    [{"role": "user", "content": "a\nb"}, {"role": "assistant", "content": ""}, {"role": "user", "content": "é"}],
)


def _expected_plain_format(messages, add_generation_prompt: bool) -> str:
    lines = "".join(f"{m['role']}: {m['content']}\n" for m in messages)
    return lines + ("assistant:" if add_generation_prompt else "")


@answerable
def check_plain_template(source: str) -> bool:
    """Does ``source`` render each message as ``role: content`` plus a newline, and end with
    ``assistant:`` only when ``add_generation_prompt`` is true?

    Example:
        >>> from labkit.exercises.chat import check_plain_template
        >>> check_plain_template("{% for m in messages %}...{% endfor %}...")
        wrong: the message lines: for [{'role': 'user', 'content': 'Hi'}] with add_generation_prompt=False expected 'user: Hi\\n', got '......' (trim_blocks removes the newline after a tag)
        False
    """
    if not isinstance(source, str):
        return _verdict(False, f"give the template as a str, got {type(source).__name__}")
    for gen in (False, True):
        # the message lines first (no generation prompt), then the generation prompt
        part = "the generation prompt" if gen else "the message lines"
        for messages in EXERCISE_CONVERSATIONS:
            expected = _expected_plain_format(messages, gen)
            try:
                got = render_chat_template(source, messages, add_generation_prompt=gen)
            except ChatTemplateError as exc:
                return _verdict(False, f"the template failed: {exc}")
            if got != expected:
                return _verdict(False, f"{part}: for {messages!r} with add_generation_prompt={gen} expected "
                                       f"{expected!r}, got {got!r} (trim_blocks removes the newline after a tag)")
    return _verdict(True, "")


@answerable
def check_stop_ids(tok, answer) -> bool:
    """Which ids end generation for ``tok`` (its EOS ids plus llama.cpp's end-of-turn spellings)?

    Example:
        >>> from labkit.exercises.chat import check_stop_ids
        >>> import labkit
        >>> check_stop_ids(labkit.load("gpt2"), {50256})
        right
        True
    """
    try:
        given = {int(i) for i in answer}
    except (TypeError, ValueError):
        raise LabkitError(f"check_stop_ids: answer must be a set of ids, got {answer!r}") from None
    right = set(end_of_generation_ids(tok))
    missing = sorted(right - given)
    extra = sorted(given - right)
    return _verdict(given == right, f"missing {missing}, not stop ids {extra}: look at eos_ids and at "
                                    "labkit.chat.END_OF_TURN_SPELLINGS in the vocabulary")
