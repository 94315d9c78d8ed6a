"""``python -m labkit.bench long``: BPE on long inputs without whitespace, labkit vs the references.

Three texts of ``--mb`` MB each (random lowercase letters, random digits, one word repeated:
:func:`labkit.bench.texts.long_texts`), which most pre-tokenizers leave as one huge word, so
the merge loop itself is what is measured. Byte-level vocabularies are compared with tiktoken
(then tokenizers), SentencePiece BPE ones with sentencepiece (then tokenizers); each reference
through labkit's wrapper and called directly, CPU time, A/B interleaved, medians
(:mod:`labkit.bench.compare`). labkit has three rows: *first* (a tokenizer loaded just
before, untimed: nothing learnt yet, what a user's first call costs), *cold* (the word cache
emptied, what the tokenizer learnt of pairs of ids kept) and *warm*.
Introduced in notebook ``02_bpe_byte_level``.

From a shell: ``python -m labkit.bench long --mb 1 --vocab gpt2``
"""
from __future__ import annotations

from labkit.bench.compare import SENTENCEPIECE, TIKTOKEN, TOKENIZERS, suite_main
from labkit.bench.texts import LONG_TEXTS, long_texts

REFERENCES = {
    "gpt2": [TIKTOKEN, TOKENIZERS],
    "cl100k_base": [TIKTOKEN, TOKENIZERS],
    "qwen2": [TIKTOKEN, TOKENIZERS],
    "llama-spm": [SENTENCEPIECE],  # engine="hf" refuses a llama GGUF and a .model
    "botchan-bpe": [SENTENCEPIECE],
}


def main(argv: list[str] | None = None) -> int:
    """Print one table per vocab (labkit cold/warm encode and decode, each reference through
    the wrapper and directly); exit status 1 if a reference's ids differ from labkit's."""
    return suite_main(argv, suite="long", doc=__doc__, vocabs=tuple(REFERENCES), references=REFERENCES,
                      texts=LONG_TEXTS, make_texts=long_texts, default_mb=1.0, first=True)
