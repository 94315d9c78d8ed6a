"""labkit's own engines give an Encoding whose ids come from the ids-only path and whose token
strings and offsets are worked out when first read (issue 15: an ids-only caller pays for ids
only), equal to the eager pass, which also re-checks the ids."""
from __future__ import annotations

import pytest

import labkit
from labkit.bench.harness import corpus_lines
from labkit.core import LabkitError
from labkit.engines.base import LabkitTokenizer

NAMES = ["botchan-unigram", "bert-bge", "minilm", "gpt2", "llama-spm", "botchan-bpe"]
TEXTS = [*corpus_lines()[:200:9], "", " ", "Ｈｅｌｌｏ  ①\tx", "日本語のテキスト", "a\u0301 ﬁ", "<s> x </s>", "[CLS] y [SEP]"]


@pytest.mark.parametrize("name", NAMES)
def test_encoding_is_lazy_and_equal_to_the_eager_pass(name):
    tok = labkit.load(name, engine="labkit")
    assert type(tok)._segment_ids is not LabkitTokenizer._segment_ids  # an ids-only path of its own
    for text in TEXTS:
        for add_special_tokens in (False, True):
            lazy = tok.encode(text, add_special_tokens=add_special_tokens)
            assert callable(lazy._offsets) and callable(lazy._tokens)
            eager = tok._encode_eagerly(text, add_special_tokens, True)
            assert (lazy.ids, lazy.tokens, lazy.offsets) == (eager.ids, eager.tokens, eager.offsets), (name, text)
            if not add_special_tokens:
                assert lazy.ids == tok.encode_ordinary(text) or any(a.content in text for a in tok.vocab.added_tokens)


def test_offsets_pass_refuses_ids_that_differ_from_the_ids_pass(monkeypatch):
    tok = labkit.load("botchan-unigram", engine="labkit")
    monkeypatch.setattr(type(tok), "_segment_ids", lambda self, text, context: [5])
    encoding = tok.encode("Hello world")
    assert encoding.ids == [5]
    with pytest.raises(LabkitError, match="other ids than the ids pass"):
        encoding.offsets
