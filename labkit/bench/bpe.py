"""``python -m labkit.bench bpe``: byte-level BPE throughput, labkit vs tokenizers vs tiktoken.

botchan.txt repeated to about 1 MB, one thread, every engine timed in the same run (median
of ``--repeat`` runs). labkit is timed *cold* (word cache emptied before each run) and
*warm* (cache filled by an untimed run first). ``encode`` builds a full Encoding (ids,
tokens, offsets) for labkit and tokenizers alike; ``encode_ordinary`` is ids only, as
tiktoken's ``encode_ordinary``. Ratios are against tokenizers' ``encode`` on the same vocab.
Introduced in notebook ``02_bpe_byte_level``.

Example: ``python -m labkit.bench bpe --mb 0.5 --repeat 3``
"""
from __future__ import annotations

from labkit.bench.harness import add_rates, labkit_rows, ordinary_ids, reference_row, throughput_main, workload_megabytes

VOCABS = ("gpt2", "cl100k_base", "qwen2")
COLUMNS = ["vocab", "engine", "MB/s", "x tokenizers", "exact", "note"]


def _tiktoken_for(vocab):
    """A tiktoken.Encoding over the same ranks (GPT-2 merge i makes id 256+i; cl100k is native)."""
    import tiktoken

    from labkit.algorithms.pretokenize import get_pre_tokenizer
    from labkit.engines.labkit_bpe_byte import ByteLevelBPE

    engine = ByteLevelBPE(vocab)
    if vocab.token_bytes is not None:
        ranks = {b: i for i, b in enumerate(vocab.token_bytes) if b is not None}
        pattern = get_pre_tokenizer(vocab.pre).tiktoken_pattern or get_pre_tokenizer(vocab.pre).pattern
    elif vocab.pre == "gpt-2":
        ranks = {b: i for b, i in engine.bytes_id.items()}
        # the rank table only works for tiktoken when ids are merge order (GPT-2: 256 + merge index)
        if any(engine.bytes_id.get(l + r) != 256 + k for (l, r), k in engine.pair_ranks.items()):
            return None
        pattern = get_pre_tokenizer("r50k").tiktoken_pattern
    else:
        return None
    specials = {a.content: a.id for a in vocab.added_tokens if a.special}
    return tiktoken.Encoding(vocab.name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)


def measure(name: str, text: str, repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one bundled vocab: labkit cold/warm, tokenizers, tiktoken (if it fits).

    Example: ``measure("gpt2", corpus(0.2), repeat=1)[0]["engine"]`` -> ``'labkit cold encode'``
    """
    import labkit
    from labkit.engines import hf

    tok = labkit.load(name, engine="labkit")
    rows = []
    try:
        ref = hf.build(tok.vocab)
    except Exception as exc:  # the reference may not serve this file; say so in the table
        ref = None
        rows.append(dict(vocab=name, engine="tokenizers encode", note=f"unavailable: {exc}"))
    rows += labkit_rows(tok, text, repeat, vocab=name)
    expected = ordinary_ids(tok, text)
    if ref is not None:
        rows.append(reference_row(name, "tokenizers encode", ref.encode, text, repeat, expected=expected, ids=lambda e: e.ids))
    enc = _tiktoken_for(tok.vocab)
    if enc is not None:
        rows.append(reference_row(name, "tiktoken encode_ordinary", enc.encode_ordinary, text, repeat, expected=expected))
    return add_rates(rows, workload_megabytes(text), {"x tokenizers": "tokenizers encode"})


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit status 1 if an engine disagrees with labkit's ids."""
    return throughput_main(argv, suite="bpe", doc=__doc__, vocabs=VOCABS, measure=measure, columns=COLUMNS)
