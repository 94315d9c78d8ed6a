"""The ``labkit`` command: encode, decode, inspect, lattice, bench.

Example: ``labkit encode qwen2 "Hello world"`` prints ``9707 1879``
"""
from __future__ import annotations

import argparse
import json
import sys

from labkit.core import LabkitError


def _load(args):
    import labkit

    return labkit.load(args.name, engine=args.engine, pre=getattr(args, "pre", None))


def cmd_encode(args) -> int:
    tok = _load(args)
    enc = tok.encode(args.text, add_special_tokens=args.add_special_tokens, parse_special=not args.no_parse_special)
    if args.json:
        print(json.dumps({"ids": enc.ids, "tokens": enc.tokens, "offsets": enc.offsets, "engine": tok.engine},
                         ensure_ascii=False))
    elif args.tokens:
        for i, token, (start, end) in zip(enc.ids, enc.tokens, enc.offsets):
            print(f"{i}\t{token!r}\t{start}:{end}")
    else:
        print(" ".join(map(str, enc.ids)))
    return 0


def cmd_decode(args) -> int:
    tok = _load(args)
    try:
        ids = [int(x) for x in " ".join(args.ids).replace(",", " ").split()]
    except ValueError as exc:
        raise LabkitError(f"decode: ids must be integers ({exc})") from None
    sys.stdout.write(tok.decode(ids, skip_special_tokens=args.skip_special_tokens) + "\n")
    return 0


def describe(path, pre=None) -> dict:
    """What ``labkit inspect`` prints: format, model, pre, vocab size, specials, template."""
    from labkit.factory import resolve_source
    from labkit.formats.detect import read_vocab, sniff

    resolved = resolve_source(path)
    vocab = read_vocab(resolved, pre=pre)
    named = vocab.specials.named()
    return {
        "file": str(resolved),
        "sniffed": sniff(resolved) if resolved.is_file() else "folder",
        "format": vocab.format,
        "model": vocab.model,
        "pre": vocab.pre,
        "vocab_size": len(vocab.tokens),
        "merges": len(vocab.merges) if vocab.merges is not None else None,
        "specials": named,
        "eos_ids": list(vocab.specials.eos_ids),
        "add_bos": vocab.specials.add_bos,
        "add_eos": vocab.specials.add_eos,
        "added_tokens": len(vocab.added_tokens),
        "normalizer": sorted(k for k, v in vocab.normalizer.items() if v),
        "chat_template": vocab.chat_template is not None,
    }


def cmd_inspect(args) -> int:
    info = describe(args.file, args.pre)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        width = max(map(len, info))
        for key, value in info.items():
            print(f"{key.ljust(width)}  {value}")
    return 0


def cmd_lattice(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from labkit.viz.lattice import lattice_figure

    tok = _load(args)
    figure = lattice_figure(tok, args.text)
    figure.savefig(args.png, dpi=args.dpi, bbox_inches="tight")
    print(f"wrote {args.png}")
    return 0


def cmd_bench(args) -> int:
    from labkit.bench import main as bench_main

    return bench_main([args.suite, *args.rest])


def build_parser() -> argparse.ArgumentParser:
    from labkit.bench import SUITES

    parser = argparse.ArgumentParser(prog="labkit", description="Tokenizers, exactly: encode, decode, inspect, draw, measure.")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_name(p):
        p.add_argument("name", help="bundled name (gpt2, qwen2, ...), file, folder, OpenAI model name or Hub id")
        p.add_argument("--engine", choices=["labkit", "hf", "tiktoken", "sentencepiece"], default=None,
                       help="who tokenizes (default: labkit where it can)")
        p.add_argument("--pre", default=None, help="override the GGUF pre-tokenizer name")

    p = sub.add_parser("encode", help="text -> ids", description="Encode TEXT and print its ids.")
    with_name(p)
    p.add_argument("text")
    p.add_argument("--add-special-tokens", action="store_true", help="add BOS/EOS as the model says")
    p.add_argument("--no-parse-special", action="store_true", help="treat special-token spellings as text")
    p.add_argument("--tokens", action="store_true", help="one line per token: id, token, offsets")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="ids -> text", description="Decode IDS (space or comma separated).")
    with_name(p)
    p.add_argument("ids", nargs="+")
    p.add_argument("--skip-special-tokens", action="store_true")
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser("inspect", help="what a tokenizer file holds",
                       description="Print a file's format, model, pre-tokenizer, vocab size, specials, template.")
    p.add_argument("file")
    p.add_argument("--pre", default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("lattice", help="draw a Unigram lattice to a PNG",
                       description="Draw the Viterbi lattice of TEXT (a Unigram tokenizer) to --png.")
    with_name(p)
    p.add_argument("text")
    p.add_argument("--png", required=True)
    p.add_argument("--dpi", type=int, default=120)
    p.set_defaults(func=cmd_lattice)

    p = sub.add_parser("bench", help="run a benchmark suite", description="Same suites as python -m labkit.bench.")
    p.add_argument("suite", choices=[*SUITES, "all"])
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except LabkitError as exc:
        print(f"labkit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
