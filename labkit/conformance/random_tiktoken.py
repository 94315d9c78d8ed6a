"""Random ``.tiktoken`` files: a user's own rank file, compared with tiktoken called directly.

A ``.tiktoken`` file is only ``base64(token bytes) rank`` lines; a user who trained one (or
edited one) brings it with a split name (``labkit.load(path, pre="cl100k")``). The shipped
cl100k file is consistent: every token is the merge of two tokens ranked before it. A
user's file need not be. From a seed this module draws one file: the 256 single bytes (in
byte order or shuffled), tokens made by joining two earlier ones, and sometimes the edits a
hand-made or converted file can hold: a token ranked *below* one of its parts, tokens no
merge can reach (invalid UTF-8 among them), gaps in the rank numbers, a byte with no rank.
Then it draws a split
(one regex, as tiktoken takes: ``gpt-2``, ``llama3``, ``cl100k``, ``o200k`` ...) and texts:
the mixed corpus, random strings over the file's own alphabet, and long runs without
whitespace (which go through the long-word merge loop, the longest in chunks).

The reference is ``tiktoken.Encoding(pat_str=<the split's regex>, mergeable_ranks=<the
file's ranks>)``: ``encode_ordinary`` for ids, ``decode`` for text (also on random id
sequences). Each engine (labkit's own, its tiktoken wrapper, the hf conversion) must give
the same ids and text, or refuse the file at load; never differ. Where tiktoken itself fails
on a text (a byte with no rank left alone: a Rust panic), the engine must raise LabkitError.

From a shell: ``python -m labkit.conformance.random_tiktoken --seeds 0:100``
(one line per seed, then the totals; exit status 1 when any engine differs).

Example (a seed is one file; seed 3's split and how many ranks it holds):
    >>> from labkit.conformance.random_tiktoken import draw_file
    >>> drawn = draw_file(3)
    >>> drawn.pre, len(drawn.ranks) == len(draw_file(3).ranks)
    ('dbrx', True)
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import os
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from labkit.conformance.corpus import mixed_corpus
from labkit.conformance.runner import parse_seeds

# the splits tiktoken can take: one regex, no NFC before it (tiktoken normalises nothing), and
# matching all of the text (bloom's leaves spaces unmatched: tiktoken drops them, labkit keeps them)
PRES = ("gpt-2", "llama3", "dbrx", "qwen35", "gpt-4o", "r50k", "cl100k", "o200k")
ENGINES = ("labkit", "tiktoken", "hf")
# what the drawn tokens are made of: the bytes of these characters (UTF-8), joined at random
ALPHABETS = {
    "ascii": "abcdefghijklmnopqrstuvwxyz ETAOINSHR0123456789.,'\n",
    "latin": "aeioustnrlàéèêëïôöüçñß ",
    "cjk": "我爱自然语言處理東京日本の首都です、。 ",
    "emoji": "🙂👍🏽😀🌈\u200d ",
    "code": "def (self):\n    return x[i] + 1 # {}=<>;",
}
EDITS = ("part_after_whole", "unreachable", "orphan_words", "gaps", "shuffled_bytes", "missing_byte")


@dataclass
class DrawnFile:
    """One drawn rank file: ``ranks`` {token bytes: rank}, the split name, the alphabet the
    tokens were made from, and which edits were applied."""

    seed: int
    ranks: dict[bytes, int]
    pre: str
    alphabet: str
    edits: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line: the size, split, alphabet and edits."""
        edits = ",".join(self.edits) or "none"
        return f"ranks={len(self.ranks)} pre={self.pre} alphabet={self.alphabet} edits={edits}"


def _joined_tokens(rng: random.Random, alphabet: str, count: int) -> list[bytes]:
    """``count`` new tokens, each two existing ones joined (a consistent BPE vocabulary):
    first the alphabet's characters byte by byte, then random joins of what exists."""
    made: list[bytes] = []
    seen: set[bytes] = {bytes([b]) for b in range(256)}
    pool: list[bytes] = sorted({bytes([b]) for ch in alphabet for b in ch.encode("utf-8")})

    def add(token: bytes) -> None:
        if token not in seen and len(token) <= 24:
            seen.add(token)
            made.append(token)
            pool.append(token)

    for ch in alphabet:  # each character's bytes, left to right, so the alphabet is reachable
        raw = ch.encode("utf-8")
        for end in range(2, len(raw) + 1):
            add(raw[:end])
    tries = 0
    while len(made) < count and tries < count * 20:
        tries += 1
        # short parts are joined more often, as training joins frequent pairs first
        left = pool[min(int(rng.expovariate(1 / max(1, len(pool) / 4))), len(pool) - 1)]
        right = rng.choice(pool)
        add(left + right)
    return made


def draw_file(seed: int) -> DrawnFile:
    """The rank file, split and edits of one seed.

    Example:
        >>> from labkit.conformance.random_tiktoken import draw_file
        >>> sorted(len(t) for t in draw_file(0).ranks)[:3]  # every single byte is a token
        [1, 1, 1]
    """
    rng = random.Random(seed)
    alphabet = rng.choice(sorted(ALPHABETS))
    pre = rng.choice(PRES)
    edits = [edit for edit in EDITS if rng.random() < 0.3]
    singles = [bytes([b]) for b in range(256)]
    if "shuffled_bytes" in edits:
        rng.shuffle(singles)
    size = rng.choice((20, 100, 400, 1500, 4000))
    ordered = singles + _joined_tokens(rng, ALPHABETS[alphabet], size)
    if "part_after_whole" in edits:  # a few tokens ranked below one of their parts
        for _ in range(max(1, size // 50)):
            index = rng.randrange(256, len(ordered))
            token = ordered.pop(index)
            ordered.insert(rng.randrange(256, index + 1) if index > 256 else 256, token)
    if "orphan_words" in edits:  # words of the alphabet added whole: a lookup finds them, merges may not
        letters = ALPHABETS[alphabet]
        for _ in range(max(1, size // 20)):
            token = "".join(rng.choice(letters) for _ in range(rng.randint(2, 7))).encode("utf-8")
            if token not in ordered:
                ordered.insert(rng.randrange(256, len(ordered) + 1), token)
    if "unreachable" in edits:  # tokens no join makes, some of them not UTF-8
        for _ in range(max(1, size // 20)):
            token = bytes(rng.randrange(256) for _ in range(rng.randint(2, 6)))
            if token not in ordered:
                ordered.insert(rng.randrange(256, len(ordered) + 1), token)
    if "missing_byte" in edits:  # a byte with no rank: tiktoken fails where it stays alone
        for value in rng.sample(sorted(set(ALPHABETS[alphabet].encode("utf-8"))), rng.randint(1, 3)):
            ordered.remove(bytes([value]))
    ranks, rank = {}, 0
    for token in ordered:
        ranks[token] = rank
        rank += rng.choice((2, 3, 7)) if "gaps" in edits and rng.random() < 0.05 else 1
    return DrawnFile(seed, ranks, pre, alphabet, edits)


def write_file(drawn: DrawnFile, folder: Path) -> Path:
    """The ``.tiktoken`` file of a drawn encoding (lines in rank order)."""
    path = folder / f"random{drawn.seed}.tiktoken"
    lines = [f"{base64.b64encode(token).decode()} {rank}" for token, rank in sorted(drawn.ranks.items(), key=lambda kv: kv[1])]
    path.write_text("\n".join(lines) + "\n")
    return path


def random_texts(drawn: DrawnFile, count: int = 40) -> list[str]:
    """Seeded texts: random strings over the file's alphabet (plus a few foreign characters),
    the file's own tokens as words (a whole-piece lookup and the merges can disagree on
    them), and long runs without whitespace (letters, digits, one chunk repeated)."""
    rng = random.Random(drawn.seed * 7919 + 1)
    chars = ALPHABETS[drawn.alphabet] + "Zé中🙂\t  \r\n!?'s"
    texts = ["".join(rng.choice(chars) for _ in range(rng.randint(1, 60))) for _ in range(count)]
    words = []
    for token in drawn.ranks:
        try:
            words.append(token.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    for _ in range(count):
        texts.append("".join(rng.choice(("", " ", "  ", "\n")) + rng.choice(words) for _ in range(rng.randint(1, 12))))
    letters = "".join(ch for ch in ALPHABETS[drawn.alphabet] if not ch.isspace()) or "ab"
    for length in (300, 5_000):  # the longer crosses 2 * CHUNK_MIN_PARTS: merged in chunks
        texts.append("".join(rng.choice(letters) for _ in range(length)))
        texts.append("".join(rng.choice("0123456789") for _ in range(length)))
        chunk = "".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))
        texts.append(chunk * (length // len(chunk)))
    return texts


def random_id_lists(drawn: DrawnFile, count: int = 30) -> list[list[int]]:
    """Seeded id sequences over the file's ranks (decoding them may cut characters in half)."""
    rng = random.Random(drawn.seed * 104729 + 3)
    ranks = sorted(drawn.ranks.values())
    return [[rng.choice(ranks) for _ in range(rng.randint(1, 12))] for _ in range(count)]


def reference_encoding(drawn: DrawnFile):
    """tiktoken's own Encoding for the drawn file and split (the library called directly)."""
    import tiktoken

    from labkit.algorithms.pretokenize import get_pre_tokenizer

    return tiktoken.Encoding(name=f"random{drawn.seed}", pat_str=get_pre_tokenizer(drawn.pre).pattern,
                             mergeable_ranks=dict(drawn.ranks), special_tokens={})


@contextlib.contextmanager
def _quiet_panics():
    """File descriptor 2 sent to /dev/null for a while: a Rust panic writes its message (and,
    with RUST_BACKTRACE set, a backtrace) there, past ``sys.stderr``. RUST_BACKTRACE is off
    meanwhile: a backtrace nobody reads cost 37 ms a panic in a Jupyter kernel (1 ms without
    it). Rust reads the variable at a process's first panic only, so this helps when that
    panic is one of these."""
    sys.stderr.flush()
    saved = os.dup(2)
    backtrace = os.environ.get("RUST_BACKTRACE")
    os.environ["RUST_BACKTRACE"] = "0"
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        if backtrace is None:
            os.environ.pop("RUST_BACKTRACE", None)
        else:
            os.environ["RUST_BACKTRACE"] = backtrace




def _first_difference(tok, reference, texts, id_lists, unranked: frozenset[int] = frozenset()) -> str | None:
    """The first text or id list on which ``tok`` and the reference disagree, described; None if
    none. Where tiktoken fails on a text (one of the ``unranked`` bytes left alone), ``tok`` must
    raise LabkitError."""
    from labkit.core import LabkitError

    # a file with a byte that has no rank may make tiktoken panic: quietly, and for all texts at
    # once (each switch flushes stderr, which in a Jupyter kernel is a round trip: 5 s a seed)
    with _quiet_panics() if unranked else contextlib.nullcontext():
        return _first_text_difference(tok, reference, texts, id_lists)


def _first_text_difference(tok, reference, texts, id_lists) -> str | None:
    from labkit.core import LabkitError

    for text in texts:
        try:
            want = reference.encode_ordinary(text)
        except BaseException as exc:  # tiktoken panics on a byte with no rank left alone
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            try:
                got = tok.encode(text).ids
            except LabkitError:
                continue  # both refuse this text: labkit with a clear error
            return f"encode {text[:40]!r}: labkit {got[:8]} where tiktoken fails ({exc})"
        got = tok.encode(text).ids
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            return f"encode {text[:40]!r}: from token {at}, labkit {got[at:at + 6]} tiktoken {want[at:at + 6]}"
        if tok.decode(want) != reference.decode(want):
            return f"decode of encode {text[:40]!r}"
    for ids in id_lists:
        got, want = tok.decode(ids), reference.decode(ids)
        if got != want:
            return f"decode {ids}: labkit {got!r} tiktoken {want!r}"
    return None


def check_seed(seed: int, folder: Path, engines=ENGINES, corpus: list[str] | None = None) -> dict[str, str]:
    """Per engine: ``exact``, ``refused: <why>`` or ``differs: <where>`` (plus ``skipped``
    for all of them when tiktoken itself cannot build the file)."""
    import labkit
    from labkit.core import LabkitError

    drawn = draw_file(seed)
    try:
        reference = reference_encoding(drawn)
    except BaseException as exc:  # a Rust panic is a BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return {engine: f"skipped: tiktoken refuses the file ({exc})" for engine in engines}
    path = write_file(drawn, folder)
    texts = (corpus if corpus is not None else mixed_corpus(botchan=10)) + random_texts(drawn)
    id_lists = random_id_lists(drawn)
    unranked = frozenset(range(256)) - {token[0] for token in drawn.ranks if len(token) == 1}
    out = {}
    for engine in engines:
        try:
            tok = labkit.load(path, engine=engine, pre=drawn.pre)
        except LabkitError as exc:
            out[engine] = f"refused: {exc}"
            continue
        try:
            difference = _first_difference(tok, reference, texts, id_lists, unranked)
        except Exception as exc:  # tiktoken answered where the engine raised: a difference too
            difference = f"raised {type(exc).__name__}: {exc}"
        out[engine] = "exact" if difference is None else f"differs: {difference}"
    return out


def run_seeds(seeds, folder: Path, engines=ENGINES, out=None) -> Counter:
    """Check each seed, print one line per seed to ``out``, return the counts per engine and outcome."""
    totals: Counter = Counter()
    corpus = mixed_corpus(botchan=10)
    for seed in seeds:
        results = check_seed(seed, folder, engines, corpus)
        for engine, result in results.items():
            totals[engine, result.split(":", 1)[0]] += 1
        if out is not None:
            shown = " ".join(f"{engine}={result.split(':', 1)[0]}" for engine, result in results.items())
            print(f"seed {seed}: {shown}  ({draw_file(seed).describe()})", file=out)
            for engine, result in results.items():
                if result.startswith("differs"):
                    print(f"    {engine}: {result}", file=out)
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.random_tiktoken", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0:50", help="seeds: a range A:B, single seeds, or a comma list")
    parser.add_argument("--engines", default=",".join(ENGINES), help="engines to check, comma separated")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        totals = run_seeds(parse_seeds(args.seeds), Path(folder), tuple(args.engines.split(",")), out=sys.stdout)
    for engine in args.engines.split(","):
        counts = {outcome: totals[engine, outcome] for outcome in ("exact", "refused", "skipped", "differs")}
        print(f"{engine}: " + ", ".join(f"{outcome} {n}" for outcome, n in counts.items()))
    print(f"{time.perf_counter() - started:.0f} s")
    return 1 if any(n for (_, outcome), n in totals.items() if outcome == "differs") else 0


if __name__ == "__main__":
    raise SystemExit(main())
