"""Added tokens with lstrip/rstrip/single_word, served by labkit's own engines, against
tokenizers on every character where Python's str tests and tokenizers' differ: lstrip/rstrip
take White_Space (str.isspace also takes U+001C-U+001F), single_word tests Rust regex's
Unicode \\w (str.isalnum also takes numbers such as '\\u00b2'). labkit used Python's tests
before: 34 encodes of 42 probes differed on the matrix's every-flag configuration."""
from __future__ import annotations

import functools
import json

import pytest

import labkit
from labkit.algorithms.bert_basic import is_whitespace
from labkit.algorithms.specials import _is_word_char
from labkit.conformance.cases import all_cases

@functools.cache
def differing_chars() -> tuple[list[str], list[str]]:
    """The characters where Python's isspace / isalnum differ from tokenizers' tables (space,
    word): made when a test asks, not while every worker collects the module."""
    every = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    return ([ch for ch in every if ch.isspace() != is_whitespace(ch)],
            [ch for ch in every if (ch.isalnum() or ch == "_") != _is_word_char(ch)])


@pytest.fixture(scope="module")
def flagged(tmp_path_factory):
    case = {c.name: c for c in all_cases(["hf"])}["hf/bpe-bytelevel-gpt2-added-flags"]
    path = case.build(tmp_path_factory.mktemp("flags"))
    tokens = [a for a in json.loads(open(path, encoding="utf-8").read())["added_tokens"]
              if a.get("lstrip") or a.get("rstrip") or a.get("single_word")]
    return labkit.load(path, engine="labkit"), labkit.load(path, engine="hf"), tokens


def test_the_differences_exist():
    space_diff, word_diff = differing_chars()
    assert len(space_diff) >= 4 and len(word_diff) > 500  # else the test below checks nothing


def test_flags_around_every_character_python_tests_differently(flagged):
    ours, reference, tokens = flagged
    assert type(ours).__name__ == "ByteLevelBPE" and len(tokens) == 4
    differ = []
    space_diff, word_diff = differing_chars()
    for ch in space_diff + word_diff[::3] + list(" \t\na1_"):
        for token in tokens:
            spelling = token["content"]
            for text in (f"x{ch}{spelling}{ch}y", f"{ch}{spelling}", f"{spelling}{ch}"):
                if ours.encode(text).ids != reference.encode(text).ids:
                    differ.append((hex(ord(ch)), spelling))
    assert not differ, (len(differ), differ[:8])
