"""``python -m labkit.bench spm``: SentencePiece BPE throughput, labkit vs sentencepiece vs tokenizers.

How every suite times (cold and warm, one thread, the same run) is said in
:mod:`labkit.bench.harness`. Here the reference is ``SentencePieceProcessor.encode(text)``
(ids only, called directly) and every ratio is against it; ``tokenizers``' ``encode`` is
shown too.
Introduced in notebook ``03_bpe_sentencepiece``.

From a shell: ``python -m labkit.bench spm --mb 0.5 --repeat 3``
"""
from __future__ import annotations

from labkit.bench.compare import SENTENCEPIECE, TOKENIZERS, suite_main
from labkit.bench.harness import encoding_ids, tokenizers_backend, vocab_rows

VOCABS = ("llama-spm", "botchan-bpe")
COLUMNS = ["vocab", "engine", "MB/s", "x sentencepiece", "exact"]


def measure(name: str, text: str, repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one bundled SentencePiece BPE vocab.

    Example:
        >>> from labkit.bench.spm import measure
        >>> from labkit.bench.harness import corpus
        >>> measure("llama-spm", corpus(0.01), repeat=1)[0]["engine"]
        'labkit cold encode'
    """
    import labkit

    sp = labkit.load(name, engine="sentencepiece").backend
    hf = tokenizers_backend(name)
    references = [("sentencepiece encode (ids)", sp.encode, list),
                  ("tokenizers encode", lambda t: hf.encode(t, add_special_tokens=False), encoding_ids)]
    return vocab_rows(name, text, repeat, references, ratio_column="x sentencepiece")


def main(argv: list[str] | None = None) -> int:
    """Print labkit vs sentencepiece (then tokenizers), through labkit's wrapper and called directly, on the
    three texts of :mod:`labkit.bench.texts`; exit status 1 if a reference disagrees with labkit's ids.
    (``measure`` above is the single-text table the notebooks show.)"""
    return suite_main(argv, suite="spm", doc=__doc__, vocabs=VOCABS, references=[SENTENCEPIECE, TOKENIZERS])
