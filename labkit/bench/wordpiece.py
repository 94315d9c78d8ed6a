"""``python -m labkit.bench wordpiece``: WordPiece throughput, labkit vs tokenizers.

botchan.txt repeated to about 1 MB, one thread, every engine timed in the same run (median
of ``--repeat`` runs). labkit is timed *cold* (word cache emptied before each run) and
*warm* (cache filled by an untimed run first). labkit's ``encode`` builds a full Encoding
(ids, tokens, offsets) like ``tokenizers.Tokenizer.encode`` (called directly), which is
the reference every ratio is against; ``encode_ordinary`` is ids only.
Introduced in notebook ``04_wordpiece``.

From a shell: ``python -m labkit.bench wordpiece --mb 0.5 --repeat 3``
"""
from __future__ import annotations

from labkit.bench.compare import TOKENIZERS, suite_main
from labkit.bench.harness import encoding_ids, vocab_rows

VOCABS = ("bert-bge", "minilm")
COLUMNS = ["vocab", "engine", "MB/s", "x tokenizers", "exact"]


def measure(name: str, text: str, repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one bundled WordPiece vocab.

    Example:
        >>> from labkit.bench.wordpiece import measure
        >>> from labkit.bench.harness import corpus
        >>> measure("bert-bge", corpus(0.01), repeat=1)[0]["engine"]
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
