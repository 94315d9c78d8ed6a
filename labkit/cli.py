"""The ``labkit`` command: encode, decode, inspect, lattice, bench.

From a shell: ``labkit encode qwen2 "Hello world"`` prints ``9707 1879``
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import tempfile
from pathlib import Path

from labkit.core import LabkitError


def _load(args):
    import labkit

    return labkit.load(args.name, engine=args.engine, pre=getattr(args, "pre", None))


def _text(value: str) -> str:
    """The text argument, or standard input when it is ``-``."""
    if value != "-":
        return value
    try:
        return sys.stdin.read()
    except UnicodeDecodeError as exc:
        raise LabkitError(f"standard input is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def cmd_encode(args) -> int:
    tok = _load(args)
    enc = tok.encode(_text(args.text), add_special_tokens=args.add_special_tokens, parse_special=not args.no_parse_special)
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
        words = _text(" ".join(args.ids)) if args.ids == ["-"] else " ".join(args.ids)
        ids = [int(x) for x in words.replace(",", " ").split()]
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
        "normalizer": normalizer_summary(vocab),
        "chat_template": vocab.chat_template is not None,
    }


def normalizer_summary(vocab) -> str:
    """The normaliser as the engines apply it: its kind, then each setting and its value
    (a precompiled charsmap by its size), or ``none`` and where that comes from."""
    settings = dict(vocab.normalizer)
    kind = settings.pop("name", None)
    if vocab.model == "bpe_byte" and not kind:
        from labkit.algorithms.pretokenize import get_pre_tokenizer

        try:  # byte-level models that NFC-normalise say so through their pre-tokenizer name
            if get_pre_tokenizer(vocab.pre).nfc:
                kind = f"nfc (from pre-tokenizer {vocab.pre!r})"
        except LabkitError:
            pass
    if not settings:
        return kind or "none"
    parts = []
    for key, value in settings.items():
        if isinstance(value, (bytes, bytearray)):
            value = f"<{len(value):,} bytes>"
        parts.append(f"{key}={value}")
    return (f"{kind}: " if kind else "") + ", ".join(parts)


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

    target = _png_target(args.png)
    tok = _load(args)
    figure = lattice_figure(tok, _text(args.text))
    # write beside the target, then rename: a failure never leaves a half-written file
    try:
        handle, temporary = tempfile.mkstemp(prefix=".labkit-", suffix=".png", dir=target.parent)
    except OSError as exc:
        raise LabkitError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(handle)
    try:
        figure.savefig(temporary, dpi=args.dpi, bbox_inches="tight", format="png")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # the permissions a plain open() would give
        os.replace(temporary, target)
    except OSError as exc:
        raise LabkitError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    print(f"wrote {target}")
    return 0


def _png_target(value: str) -> Path:
    """Where ``--png`` writes: the path itself (ending in .png), or ``lattice.png`` inside an
    existing folder; checked before any work."""
    path = Path(value).expanduser()
    if path.is_dir():
        path = path / "lattice.png"
    if path.suffix.lower() != ".png":
        raise LabkitError(f"--png {value}: the file name must end in .png (or name an existing folder)")
    if path.is_dir():
        raise LabkitError(f"--png {value}: {path} is a folder")
    parent = path.parent
    if not parent.is_dir():
        raise LabkitError(f"--png {value}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise LabkitError(f"--png {value}: {path} is not writable")
    return path


def _dpi(value: str) -> int:
    """--dpi: an integer from 10 to 1200 (larger figures would take gigabytes)."""
    try:
        dpi = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if not 10 <= dpi <= 1200:
        raise argparse.ArgumentTypeError(f"{dpi} is outside 10..1200")
    return dpi


def cmd_bench(args) -> int:
    from labkit.bench import main as bench_main

    return bench_main(args.rest, prog="labkit bench")


class _Parser(argparse.ArgumentParser):
    """argparse, with every usage error said as ``labkit: error: ...`` (exit status 2)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"labkit: error: {self.prog.split(' ', 1)[-1]}: {message}\n" if " " in self.prog
                  else f"labkit: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from labkit.bench import SUITES

    parser = _Parser(prog="labkit", description="Tokenizers, exactly: encode, decode, inspect, draw, measure.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def with_name(p):
        p.add_argument("name", help="bundled name (gpt2, qwen2, ...), file, folder, OpenAI model name or Hub id")
        p.add_argument("--engine", choices=["labkit", "hf", "tiktoken", "sentencepiece"], default=None,
                       help="who tokenizes (default: labkit where it can)")
        p.add_argument("--pre", default=None, help="override the GGUF pre-tokenizer name")

    p = sub.add_parser("encode", help="text -> ids", description="Encode TEXT and print its ids.")
    with_name(p)
    p.add_argument("text", help="the text; - reads it from standard input")
    p.add_argument("--add-special-tokens", action="store_true", help="add BOS/EOS as the model says")
    p.add_argument("--no-parse-special", action="store_true", help="treat special-token spellings as text")
    p.add_argument("--tokens", action="store_true", help="one line per token: id, token, offsets")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="ids -> text", description="Decode IDS (space or comma separated).")
    with_name(p)
    p.add_argument("ids", nargs="+", help="ids; - reads them from standard input")
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
    p.add_argument("text", help="the text; - reads it from standard input")
    p.add_argument("--png", required=True, help="a .png file to write, or an existing folder (lattice.png in it)")
    p.add_argument("--dpi", type=_dpi, default=120, help="resolution, 10..1200 (default 120)")
    p.set_defaults(func=cmd_lattice)

    p = sub.add_parser("bench", help="run a benchmark suite", add_help=False,
                       description=f"Same suites and flags as python -m labkit.bench: {', '.join([*SUITES, 'all'])}.")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="suite and options, in any order (--help for the list)")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # everything after `bench` belongs to the bench dispatcher
        args = argparse.Namespace(func=cmd_bench, rest=argv[1:])
    else:
        args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except LabkitError as exc:
        print(f"labkit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _closed_pipe()
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            return _closed_pipe()
        print(f"labkit: error: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""), file=sys.stderr)
        return 2


def _closed_pipe() -> int:
    """The reader went away (``| head -c1``): stop quietly; send what Python would still flush
    at exit to /dev/null so no second BrokenPipeError is printed."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141  # 128 + SIGPIPE, what a shell reports for a command stopped by a closed pipe


if __name__ == "__main__":
    sys.exit(main())
