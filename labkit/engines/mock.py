"""A tiny deterministic character-level tokenizer for tests and examples.

One id per character of a fixed alphabet (printable ASCII, tab and newline), anything else
becomes ``<unk>``; BOS ``<s>`` / EOS ``</s>`` and two chat markers are special added tokens,
and ``<tool>`` is a user-defined (non-special) added token, so ``parse_special`` and
``add_special_tokens`` behave exactly as they do for a real model. No files, no libraries.
Not shown in a notebook: a helper for tests and docstring examples.

Example:
    >>> from labkit.engines.mock import mock_tokenizer
    >>> mock_tokenizer().encode("hi<|end|>").tokens
    ['h', 'i', '<|end|>']
"""
from __future__ import annotations

from labkit.algorithms.specials import AddedTokenSplitter
from labkit.core import (
    TOKEN_CONTROL,
    TOKEN_NORMAL,
    TOKEN_UNKNOWN,
    TOKEN_USER_DEFINED,
    AddedToken,
    Encoding,
    EngineUnavailable,
    SpecialTokens,
    Tokenizer,
    VocabData,
)

SPECIAL_SPELLINGS = ("<pad>", "<s>", "</s>", "<unk>", "<|user|>", "<|end|>")
USER_DEFINED_SPELLINGS = ("<tool>",)
ALPHABET = "\t\n" + "".join(chr(c) for c in range(0x20, 0x7F))


def mock_vocab(*, add_bos: bool = True, add_eos: bool = False) -> VocabData:
    """The VocabData behind the mock tokenizer: specials, one user-defined token, then characters.

    Example:
        >>> from labkit.engines.mock import mock_vocab
        >>> mock_vocab().tokens[:4]
        ['<pad>', '<s>', '</s>', '<unk>']

    Not shown in a notebook: a helper for tests and docstring examples.
    """
    tokens = [*SPECIAL_SPELLINGS, *USER_DEFINED_SPELLINGS, *ALPHABET]
    types = [TOKEN_CONTROL] * len(SPECIAL_SPELLINGS) + [TOKEN_USER_DEFINED] * len(USER_DEFINED_SPELLINGS)
    types += [TOKEN_NORMAL] * len(ALPHABET)
    types[SPECIAL_SPELLINGS.index("<unk>")] = TOKEN_UNKNOWN
    added = [AddedToken(t, i, special=True) for i, t in enumerate(SPECIAL_SPELLINGS) if t != "<unk>"]
    added += [AddedToken(t, len(SPECIAL_SPELLINGS) + k, special=False) for k, t in enumerate(USER_DEFINED_SPELLINGS)]
    specials = SpecialTokens(
        bos="<s>", eos="</s>", unk="<unk>", pad="<pad>", bos_id=1, eos_id=2, unk_id=3, pad_id=0,
        eos_ids=(2, 5), add_bos=add_bos, add_eos=add_eos,
    )
    return VocabData(
        source="mock", format="mock", model="mock", tokens=tokens, token_types=types,
        specials=specials, added_tokens=added,
    )


class MockTokenizer(Tokenizer):
    """Character-level tokenizer over :func:`mock_vocab`: predictable ids for tests.

    Example:
        >>> from labkit.engines.mock import mock_tokenizer
        >>> mock_tokenizer().encode("ab", add_special_tokens=True).ids
        [1, 74, 75]

    Not shown in a notebook: a helper for tests and docstring examples.
    """

    engine = "mock"

    def __init__(self, vocab: VocabData):
        super().__init__(vocab, backend=None)
        self._ids = {t: i for i, t in enumerate(vocab.tokens) if vocab.token_types[i] == TOKEN_NORMAL}
        self._splitter = AddedTokenSplitter(vocab.added_tokens)

    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        unk = self.vocab.specials.unk_id
        ids, offsets = [], []
        for start, end, added_id in self._splitter.split(text, parse_special=parse_special):
            if added_id is not None:
                ids.append(added_id)
                offsets.append((start, end))
                continue
            for pos in range(start, end):
                ids.append(self._ids.get(text[pos], unk))
                offsets.append((pos, pos + 1))
        sp = self.vocab.specials
        if add_special_tokens and sp.add_bos:
            ids.insert(0, sp.bos_id)
            offsets.insert(0, (0, 0))
        if add_special_tokens and sp.add_eos:
            ids.append(sp.eos_id)
            offsets.append((len(text), len(text)))
        return Encoding(ids, [self.vocab.tokens[i] for i in ids], offsets)

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        out = []
        for i in ids:
            if skip_special_tokens and self.is_special_id(i):
                continue
            out.append(self.vocab.tokens[i])
        return "".join(out)


def build(vocab: VocabData) -> MockTokenizer:
    """Build the mock engine; it serves only vocabularies of format "mock".

    Example:
        >>> from labkit.engines.mock import build, mock_vocab
        >>> build(mock_vocab()).engine
        'mock'

    Not shown in a notebook: a helper for tests and docstring examples.
    """
    if vocab.format != "mock":
        raise EngineUnavailable(f"{vocab.name}: the mock engine serves only mock vocabularies")
    return MockTokenizer(vocab)


def mock_tokenizer(*, add_bos: bool = True, add_eos: bool = False) -> MockTokenizer:
    """A ready mock tokenizer.

    Example:
        >>> mock_tokenizer().decode([74, 75])
        'ab'

    Not shown in a notebook: a helper for tests and docstring examples.
    """
    return build(mock_vocab(add_bos=add_bos, add_eos=add_eos))
