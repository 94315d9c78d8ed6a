"""Predicates for the known classes where tokenizers and sentencepiece disagree on a ``.model``.

The classes are pinned, with the libraries' own answers, in ``test_reference_disagreements.py``;
the agreement tests (``test_conformance.py``) use these predicates to set aside exactly them.
"""
from __future__ import annotations

import functools
import re

import sentencepiece
from tokenizers import normalizers

import labkit
from support.engines import compared

SPACE = "\u2581"


@functools.lru_cache(maxsize=None)
def charsmap_steps(name: str):
    """(tokenizers' Precompiled, sentencepiece's charsmap-only normaliser, added-token regex) or None."""
    hf = compared(name, "hf")
    charsmap = hf.vocab.normalizer.get("charsmap")
    if not charsmap:
        return None
    sp = compared(name, "sentencepiece")
    theirs = sentencepiece.SentencePieceNormalizer(
        model_proto=sp.backend.serialized_model_proto(),
        add_dummy_prefix=False,
        escape_whitespaces=False,
        remove_extra_whitespaces=False,
    )
    spellings = [a.content for a in hf.vocab.added_tokens]
    splitter = re.compile("|".join(map(re.escape, spellings))) if spellings else None
    return normalizers.Precompiled(charsmap), theirs, splitter


def charsmap_step_differs(name: str, text: str) -> bool:
    """Class 1: tokenizers' Precompiled and sentencepiece's own charsmap walk give different
    strings for ``text`` or for one of its stretches between added-token spellings (what
    each engine normalises when ``parse_special=True``). Whitespace rules are not compared,
    so a mistake in labkit's pipeline after the charsmap is never hidden by this."""
    steps = charsmap_steps(name)
    if steps is None:
        return False
    ours, theirs, splitter = steps
    pieces = [text, *(splitter.split(text) if splitter else [])]
    return any(ours.normalize_str(piece) != theirs.normalize(piece) for piece in pieces)


def leading_space_pieces_differ(tok: labkit.Tokenizer, ids: list[int], skip_special_tokens: bool = False) -> bool:
    """Class 2: a run of ids between special ids starts with the piece ``▁`` followed by another
    piece starting with ``▁``, in a file with remove_extra_whitespaces and a dummy prefix:
    sentencepiece then decodes fewer leading spaces than tokenizers. With
    ``skip_special_tokens`` the special ids are dropped where they stand (sentencepiece decodes
    what is left as one run), so the runs are those of the ids without them."""
    norm = tok.vocab.normalizer
    if not (norm.get("remove_extra_whitespaces") and norm.get("add_dummy_prefix", True)) or norm.get("treat_whitespace_as_suffix"):
        return False
    if skip_special_tokens:
        ids = [i for i in ids if not tok.is_special_id(i)]
    tokens = tok.vocab.tokens
    run: list[int] = []
    for i in [*ids, None]:
        if i is None or tok.is_special_id(i):
            if len(run) > 1 and tokens[run[0]] == SPACE and tokens[run[1]].startswith(SPACE):
                return True
            run = []
        else:
            run.append(i)
    return False
