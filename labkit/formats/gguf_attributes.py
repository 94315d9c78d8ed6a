"""What llama.cpp changes about a GGUF's tokens when it loads them, judged by their spellings.

A GGUF stores one type per token (normal, control, user-defined, unknown, unused, byte).
llama.cpp's loader does not stop there: it marks tokens by their text, because converters
often typed them wrongly. Every token spelled like an end of generation (``<|im_end|>``,
``</s>``, ``<|endoftext|>`` ...) becomes a control token; a fill-in-the-middle token
(``<|fim_prefix|>`` ...) does too when the file names no id for it; gpt-oss's
``<|channel|>``-style tokens become user-defined (always matched, even when special tokens
are text); some models' special tokens swallow the spaces next to them (Phi-3, jina-v2's
``<mask>``). A control token is matched in the text only with ``parse_special``; a
user-defined one always.

The rules and spellings are facts transcribed from llama.cpp's ``src/llama-vocab.cpp``
(``llama_vocab::impl::load``), read at commit 0c1e5709 as vendored by llama-cpp-python
0.3.36, and measured against that build (:mod:`labkit.conformance.random_gguf`).
Introduced in notebook ``11_factory_formats_hub``.

Example (a user-defined ``<|im_end|>`` is a control token to llama.cpp):
    >>> from labkit.formats.gguf_attributes import llama_cpp_attributes, CONTROL
    >>> attrs = llama_cpp_attributes({}, ["a", "<|im_end|>"], [1, 4], "gpt2")
    >>> bool(attrs.flags[1] & CONTROL)
    True
"""
from __future__ import annotations

from dataclasses import dataclass

from labkit.core import FormatError

# llama_token_attr bits
UNKNOWN, UNUSED, NORMAL, CONTROL, USER_DEFINED, BYTE = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5
LSTRIP, RSTRIP = 1 << 7, 1 << 8
# GGUF token type -> attribute (sentencepiece's numbering: 1 normal ... 6 byte; anything else undefined)
_FROM_TYPE = {1: NORMAL, 2: UNKNOWN, 3: CONTROL, 4: USER_DEFINED, 5: UNUSED, 6: BYTE}

# spellings that end generation: each such token gains the control bit, whatever its type
EOG_SPELLINGS = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
})
# fill-in-the-middle roles: when the file names no id for a role, a token spelled so gains the control bit
FIM_SPELLINGS = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>",
                "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>",
                "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>",
                "\u2581<MID>", "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
# the GGUF keys that name each role's id (the second is the deprecated spelling of the key)
_FIM_KEYS = {
    "fim_pre": ("tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"),
    "fim_suf": ("tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"),
    "fim_mid": ("tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"),
    "fim_pad": ("tokenizer.ggml.fim_pad_token_id",),
    "fim_rep": ("tokenizer.ggml.fim_rep_token_id",),
    "fim_sep": ("tokenizer.ggml.fim_sep_token_id",),
}
# gpt-oss: these are always rendered and always matched (user-defined), whatever the file says
HARMONY_USER_DEFINED = frozenset({"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})
# every spelling a rule below looks at
_WATCHED = frozenset(EOG_SPELLINGS | {s for v in FIM_SPELLINGS.values() for s in v} | HARMONY_USER_DEFINED
                     | {"<|plamo:eos|>", "<mask>", "[MASK]", "</s>", "<unk>", "<s>", "<|endoftext|>"})
# llama.cpp's default end-of-sequence id per tokenizer model, used when the file names none
_DEFAULT_EOS = {"gpt2": 11, "whitespace": 11, "hybriddna": 11, "llama": 2, "t5": 1, "plamo2": 2}


@dataclass
class TokenAttributes:
    """llama.cpp's attribute bits per token id, after its load-time rules (``changed``: the ids
    whose bits differ from what their stored type alone gives)."""

    flags: list[int]
    changed: frozenset[int] = frozenset()

    def matched(self, index: int) -> bool:
        """True if llama.cpp looks for this token's spelling in the text before the model runs."""
        return bool(self.flags[index] & (CONTROL | USER_DEFINED | UNKNOWN))

    def special(self, index: int) -> bool:
        """True if the token is matched only with parse_special (control or unknown) and hidden by decode(special=False)."""
        return bool(self.flags[index] & (CONTROL | UNKNOWN))


def _given_id(kv: dict, keys, n: int) -> int | None:
    for key in keys:
        value = kv.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            return value
    return None


def llama_cpp_attributes(kv: dict, tokens: list[str], types: list[int], ggml_model: str,
                         source: str = "GGUF") -> TokenAttributes:
    """Each token's attribute bits as llama.cpp's loader leaves them (see the module docstring).

    Raises FormatError where llama.cpp's own load fails (a Phi-3 model without ``</s>``) or
    where its result depends on its hash map's order (two untyped tokens for one FIM role).

    Example (gpt-oss's ``<|channel|>`` is user-defined even when typed control):
        >>> from labkit.formats.gguf_attributes import llama_cpp_attributes, USER_DEFINED
        >>> llama_cpp_attributes({}, ["<|channel|>"], [3], "gpt2").flags == [USER_DEFINED]
        True
    """
    n = len(tokens)
    flags = [_FROM_TYPE.get(t, 0) for t in types]
    # the ids of the few spellings the rules look at (spellings are unique: duplicates are refused before)
    by_text = {t: i for i, t in enumerate(tokens) if t in _WATCHED}
    eog: set[int] = set()
    for role, spellings in FIM_SPELLINGS.items():
        given = _given_id(kv, _FIM_KEYS[role], n)
        if given is None:
            found = [by_text[s] for s in spellings if s in by_text]
            if len(found) > 1 and any(not flags[i] & CONTROL for i in found):
                names = ", ".join(repr(tokens[i]) for i in found)
                raise FormatError(f"{source}: tokens {names} all name the {role} role and the file names none; "
                                  f"llama.cpp would mark one of them a control token in its hash map's order")
            if found:
                flags[found[0]] |= CONTROL
                given = found[0]
        if given is not None and role in ("fim_pad", "fim_rep", "fim_sep"):
            eog.add(given)
    for t, i in by_text.items():
        if t in EOG_SPELLINGS:
            flags[i] |= CONTROL
            eog.add(i)
    for key, default in (("tokenizer.ggml.eos_token_id", _DEFAULT_EOS.get(ggml_model)),
                         ("tokenizer.ggml.eot_token_id", None), ("tokenizer.ggml.eom_token_id", None)):
        given = _given_id(kv, (key,), n)
        if given is None and default is not None and default < n and key not in kv:
            given = default
        if given is not None:
            eog.add(given)
    for t in HARMONY_USER_DEFINED:
        if t in by_text:
            flags[by_text[t]] = USER_DEFINED
    eog_texts = {tokens[i] for i in eog}
    has_call = "<|call|>" in eog_texts or "<|calls|>" in eog_texts
    if "<|end|>" in eog_texts and has_call and ("<|return|>" in eog_texts or "<|flush|>" in eog_texts):
        flags[by_text["<|end|>"]] = USER_DEFINED  # harmony and solar-open: <|end|> is not an end of generation
    if "</s>" in eog_texts and ("<|tool_response>" in eog_texts or "<|plamo:eos|>" in eog_texts):
        flags[by_text["</s>"]] = NORMAL  # gemma4 and plamo: </s> is an ordinary token
    touched = set(by_text.values())
    if _per_model_strips(kv, tokens, flags, by_text, source):
        touched.update(i for i, f in enumerate(flags) if f & RSTRIP)
    return TokenAttributes(flags, frozenset(i for i in touched if flags[i] != _FROM_TYPE.get(types[i], 0)))


def _per_model_strips(kv: dict, tokens: list[str], flags: list[int], by_text: dict, source: str) -> bool:
    """The whitespace-swallowing rules llama.cpp sets by pre type, architecture or model name
    (True when Phi-3's rule, which touches every matched token, applied)."""
    pre = kv.get("tokenizer.ggml.pre") if isinstance(kv.get("tokenizer.ggml.pre"), str) else ""
    arch = kv.get("general.architecture") if isinstance(kv.get("general.architecture"), str) else ""
    name = kv.get("general.name") if isinstance(kv.get("general.name"), str) else ""
    name = name.encode("utf-8").lower().decode("utf-8")  # C tolower: ASCII letters only

    def need(token: str) -> int:
        if token not in by_text:
            raise FormatError(f"{source}: the model is named {kv.get('general.name')!r}, and llama.cpp then needs "
                              f"a token {token!r}, which the vocabulary lacks (its load fails)")
        return by_text[token]

    if any(p in pre for p in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
            a in arch for a in ("nomic-bert-moe", "jina-bert-v3")):
        if "<mask>" in by_text:
            flags[by_text["<mask>"]] |= LSTRIP
    elif "phi-3" in name or "phi3" in name:
        for i, f in enumerate(flags):
            if f & (CONTROL | USER_DEFINED | UNKNOWN):
                flags[i] |= RSTRIP
        flags[need("</s>")] |= RSTRIP
        for token in ("<unk>", "<s>", "<|endoftext|>"):
            flags[need(token)] &= ~RSTRIP
        return True
    elif "modern-bert" in name:
        if "[MASK]" in by_text:
            flags[by_text["[MASK]"]] |= LSTRIP
    return False
