"""``python -m labkit.bench wordpiece``: WordPiece throughput, labkit vs tokenizers.

How every suite times (cold and warm, one thread, the same run) is said in
:mod:`labkit.bench.harness`. labkit's ``encode`` builds a full Encoding (ids, tokens,
offsets) like ``tokenizers.Tokenizer.encode`` (called directly), the reference every ratio
is against.
Introduced in notebook ``04_wordpiece``.

From a shell: ``python -m labkit.bench wordpiece --mb 0.5 --repeat 3``
"""
from __future__ import annotations

from labkit.bench.compare import TOKENIZERS, suite_main
from labkit.bench.harness import encoding_ids, vocab_rows

# laid out as bench/spm.py and bench/bpe.py on purpose: one suite module per model family;
# not bert-bge: a bert GGUF's reference is llama.cpp, and tokenizers (which engine="hf" refuses there) reads it otherwise
VOCABS = ("minilm",)
COLUMNS = ["vocab", "engine", "MB/s", "x tokenizers", "exact"]


def measure(name: str, text: str, repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one bundled WordPiece vocab.

    Example:
        >>> from labkit.bench.wordpiece import measure
        >>> from labkit.bench.harness import corpus
        >>> measure("minilm", corpus(0.01), repeat=1)[0]["engine"]
        'labkit cold encode'
    """
    import labkit

    hf = labkit.load(name, engine="hf").backend
    references = [("tokenizers encode", lambda t: hf.encode(t, add_special_tokens=False), encoding_ids)]
    return vocab_rows(name, text, repeat, references, ratio_column="x tokenizers")


def main(argv: list[str] | None = None) -> int:
    """Print labkit vs tokenizers, through labkit's wrapper and called directly, on the
    three texts of :mod:`labkit.bench.texts`; exit status 1 if a reference disagrees with labkit's ids.
    (``measure`` above is the single-text table the notebooks show.)"""
    return suite_main(argv, suite="wordpiece", doc=__doc__, vocabs=VOCABS, references=[TOKENIZERS])
