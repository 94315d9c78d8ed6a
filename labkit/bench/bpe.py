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

import argparse
import os

from labkit.bench.harness import corpus, median_seconds, table

VOCABS = ("gpt2", "cl100k_base", "qwen2")


def _single_thread() -> None:
    # tokenizers uses rayon only for batches, but pin it anyway
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


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

    Example: ``measure("gpt2", corpus(0.2), repeat=1)[0]["engine"]`` -> ``'labkit cold'``
    """
    from labkit.engines import hf
    from labkit.engines.labkit_bpe_byte import ByteLevelBPE
    from labkit.formats.gguf import read_gguf
    from labkit.formats.tiktoken_file import read_tiktoken
    from labkit.paths import bundled_path

    path = bundled_path(name)
    vocab = read_tiktoken(path) if str(path).endswith(".tiktoken") else read_gguf(path)
    megabytes = len(text.encode("utf-8")) / 1e6
    tok = ByteLevelBPE(vocab)
    rows = []

    def cold():
        tok.clear_cache()
        return tok.encode(text)

    reference_ids = None
    try:
        ref = hf.build(vocab)
    except Exception as exc:  # the reference may not serve this file; say so in the table
        ref = None
        rows.append(dict(vocab=name, engine="tokenizers encode", note=f"unavailable: {exc}"))
    rows.append(dict(vocab=name, engine="labkit cold encode", seconds=median_seconds(cold, repeat)))
    tok.encode(text)
    labkit_ids = tok.encode(text).ids
    rows.append(dict(vocab=name, engine="labkit warm encode", seconds=median_seconds(lambda: tok.encode(text), repeat)))
    tok.encode_ordinary(text)
    rows.append(dict(vocab=name, engine="labkit warm encode_ordinary",
                     seconds=median_seconds(lambda: tok.encode_ordinary(text), repeat)))
    if ref is not None:
        reference_ids = ref.encode(text).ids
        rows.append(dict(vocab=name, engine="tokenizers encode", seconds=median_seconds(lambda: ref.encode(text), repeat),
                         exact=reference_ids == labkit_ids))
    enc = _tiktoken_for(vocab)
    if enc is not None:
        tk_ids = enc.encode_ordinary(text)
        rows.append(dict(vocab=name, engine="tiktoken encode_ordinary",
                         seconds=median_seconds(lambda: enc.encode_ordinary(text), repeat), exact=tk_ids == labkit_ids))
    base = next((r["seconds"] for r in rows if r["engine"] == "tokenizers encode" and "seconds" in r), None)
    for row in rows:
        if "seconds" in row:
            row["MB/s"] = megabytes / row["seconds"]
            if base:
                row["x tokenizers"] = base / row["seconds"]
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit status 1 if an engine disagrees with labkit's ids."""
    parser = argparse.ArgumentParser(prog="python -m labkit.bench bpe", description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=1.0, help="corpus size in MB (botchan repeated)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine (median)")
    parser.add_argument("--vocab", action="append", choices=VOCABS, help="vocab(s) to run (default: all)")
    args = parser.parse_args(argv or [])
    _single_thread()
    text = corpus(args.mb)
    print(f"corpus: botchan x{round(len(text.encode('utf-8')) / 279_000)} = {len(text.encode('utf-8')) / 1e6:.2f} MB, "
          f"median of {args.repeat}, single thread")
    rows = []
    for name in args.vocab or VOCABS:
        rows.extend(measure(name, text, args.repeat))
    print(table(rows, ["vocab", "engine", "MB/s", "x tokenizers", "exact", "note"]))
    return 1 if any(r.get("exact") is False for r in rows) else 0
