"""``python -m labkit.bench bpe``: byte-level BPE throughput, labkit vs tokenizers vs tiktoken.

botchan.txt repeated to about 1 MB, one thread, every engine timed in the same run (median
of ``--repeat`` runs). labkit is timed *cold* (word cache emptied before each run) and
*warm* (cache filled by an untimed run first). ``encode`` builds a full Encoding (ids,
tokens, offsets) for labkit and tokenizers alike; ``encode_ordinary`` is ids only, as
tiktoken's ``encode_ordinary``. Ratios are against tokenizers' ``encode`` on the same vocab.
Introduced in notebook ``02_bpe_byte_level``.

From a shell: ``python -m labkit.bench bpe --mb 0.5 --repeat 3``
"""
from __future__ import annotations

from labkit.bench.compare import TIKTOKEN, TOKENIZERS, suite_main
from labkit.bench.harness import add_rates, encoding_ids, labkit_rows, ordinary_ids, reference_row, workload_megabytes

VOCABS = ("gpt2", "cl100k_base", "qwen2")
COLUMNS = ["vocab", "engine", "MB/s", "x tokenizers", "exact", "note"]


def _reference(vocab, engine: str):
    """The factory's ``engine`` build of ``vocab``, or None with the reason it cannot serve it."""
    from labkit.core import LabkitError
    from labkit.factory import build_engine

    try:
        return build_engine(vocab, engine), None
    except LabkitError as exc:  # the reference may not serve this file; the table says so
        return None, exc


def measure(name: str, text: str, repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one bundled vocab: labkit cold/warm, tokenizers, tiktoken (if it fits).

    Example:
        >>> from labkit.bench.bpe import measure
        >>> from labkit.bench.harness import corpus
        >>> measure("gpt2", corpus(0.01), repeat=1)[0]["engine"]
        'labkit cold encode'
    """
    import labkit

    tok = labkit.load(name, engine="labkit")
    rows = []
    ref, why = _reference(tok.vocab, "hf")
    if ref is None:
        rows.append(dict(vocab=name, engine="tokenizers encode", note=f"unavailable: {why}"))
    rows += labkit_rows(tok, text, repeat, vocab=name)
    expected = ordinary_ids(tok, text)
    if ref is not None:
        rows.append(reference_row(name, "tokenizers encode", ref.encode, text, repeat, expected=expected, ids=encoding_ids))
    tiktoken_engine, why = _reference(tok.vocab, "tiktoken")
    if tiktoken_engine is not None:
        enc = tiktoken_engine.backend  # the library itself, not labkit's wrapper
        rows.append(reference_row(name, "tiktoken encode_ordinary", enc.encode_ordinary, text, repeat, expected=expected))
    return add_rates(rows, workload_megabytes(text), {"x tokenizers": "tokenizers encode"})


def main(argv: list[str] | None = None) -> int:
    """Print labkit vs tiktoken (then tokenizers), through labkit's wrapper and called directly, on the
    three texts of :mod:`labkit.bench.texts`; exit status 1 if a reference disagrees with labkit's ids.
    (``measure`` above is the single-text table the notebooks show.)"""
    return suite_main(argv, suite="bpe", doc=__doc__, vocabs=VOCABS, references=[TIKTOKEN, TOKENIZERS])
