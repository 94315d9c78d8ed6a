"""Random GPT-2 ``vocab.json`` + ``merges.txt`` and BERT ``vocab.txt`` files, compared with ``tokenizers``.

Before ``tokenizer.json``, a vocabulary shipped as GPT-2's pair of files or as BERT's one
token per line, and users still bring both. Real files are not tidy: a merges.txt with or
without its ``#version`` line, CRLF line ends, no final newline, a blank line, a merge listed
twice or naming a token the vocabulary lacks, ids with gaps; a vocab.txt with trailing spaces
or CRs, a BOM, duplicate or empty lines, some BERT specials missing. From a seed this module
draws one such vocabulary (the base from :mod:`labkit.conformance.random_vocab`), writes its
files with some of those irregularities (and, beside a vocab.txt, sometimes a
``tokenizer_config.json`` with BERT's switches), draws texts (the mixed corpus, random strings
over the vocabulary's alphabet, its own tokens as words, long words) and compares each engine
with the reference built directly from the same files:

* GPT-2: ``tokenizers.models.BPE.read_file`` (what ``BPE.from_file`` and
  ``ByteLevelBPETokenizer(vocab, merges)`` read) with a ByteLevel pre-tokenizer and decoder,
  and ``<|endoftext|>`` a special token when the vocabulary has it (GPT-2's BOS/EOS, as
  transformers registers it);
* BERT: ``models.WordPiece.read_file`` in ``BertWordPieceTokenizer`` with the config's
  ``do_lower_case`` / ``strip_accents`` / ``tokenize_chinese_chars``; the same pipeline built
  by hand (no CLS/SEP framing) where the file lacks ``[CLS]`` or ``[SEP]``, which
  ``BertWordPieceTokenizer`` refuses.

Each engine must give the same ids (``add_special_tokens`` both ways, ``parse_special=False``
where a special spelling is in the text) and decode (``skip_special_tokens`` both ways, also on
random id lists), or refuse the files at load with a LabkitError; where ``tokenizers`` refuses
the files, the engine must refuse them too, and where it fails on one text (a WordPiece word
with no ``[UNK]`` to fall back on), the engine must raise LabkitError on it.

From a shell: ``python -m labkit.conformance.random_legacy --seeds 0:500``
(one line per seed, then the totals; exit status 1 when any engine differs).

Example (a seed is one set of files; seed 1 is a BERT vocab.txt):
    >>> from labkit.conformance.random_legacy import draw_files
    >>> drawn = draw_files(1)
    >>> drawn.kind, sorted(drawn.files) == sorted(draw_files(1).files)
    ('bert', True)
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from labkit.conformance.corpus import mixed_corpus, special_lookalikes
from labkit.conformance.random_hf import long_words
from labkit.conformance.random_tiktoken import _quiet_panics
from labkit.conformance.random_vocab import random_vocabulary
from labkit.conformance.runner import parse_seeds

ENGINES = ("labkit", "hf")
KINDS = ("gpt2", "bert")
EOT = "<|endoftext|>"
BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
UTF8_BOM = b"\xef\xbb\xbf"
# what a drawn pair of GPT-2 files may hold (the last five make tokenizers refuse the pair)
GPT2_IRREGULARITIES = (
    "no_version_line", "version_line_inside", "crlf", "no_final_newline", "merge_twice", "endoftext",
    "endoftext_inside", "id_gaps", "pretty_json", "ascii_json", "shuffled_keys", "string_id",
    "blank_line", "merge_part_missing", "merge_result_missing", "cr_at_end", "bom_vocab", "bom_merges",
)
# what a drawn vocab.txt may hold (a config is a tokenizer_config.json beside it)
BERT_IRREGULARITIES = (
    "all_specials", "some_specials", "no_specials", "no_unk", "non_ascii", "continuations", "uppercase",
    "trailing_space", "trailing_tab", "trailing_cr", "crlf", "unicode_space_end", "no_final_newline",
    "bom", "duplicate_line", "empty_line", "blank_last_line", "config", "long_token",
)
NON_ASCII = "éàüßñç我爱東京한국🙂👍ﬁÅ\u0301"


@dataclass
class DrawnFiles:
    """One drawn vocabulary: its files (name -> bytes), the name ``labkit.load`` is given
    (``""``: the folder), the alphabet, the irregularities written into the files, the words
    texts are made of, and the tokenizer_config.json dict (None when there is none)."""

    seed: int
    kind: str
    files: dict[str, bytes]
    load_name: str
    alphabet: str
    irregularities: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    config: dict | None = None

    def describe(self) -> str:
        """One line: the kind, file sizes and irregularities."""
        sizes = " ".join(f"{name}={len(data)}B" for name, data in sorted(self.files.items()))
        return f"{self.kind} {sizes} load={self.load_name or 'folder'} {','.join(self.irregularities) or 'none'}"


# ----------------------------------------------------------------------------- GPT-2 pair


def _merge_pairs(model: dict) -> list[tuple[str, str]]:
    """tokenizer.json merges (``["a", "b"]`` or ``"a b"``) as pairs."""
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in model["merges"]]


def _gpt2_words(tokens) -> list[str]:
    """The text of each byte-level token that is whole UTF-8."""
    from labkit.algorithms.bytes_unicode import try_gpt2_to_bytes

    words = []
    for token in tokens:
        raw = try_gpt2_to_bytes(token)
        if raw:
            try:
                words.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                continue
    return words


def _draw_gpt2(seed: int, rng: random.Random) -> DrawnFiles:
    text, alphabet = random_vocabulary("byte", seed)
    model = json.loads(text)["model"]
    tokens = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1])]
    merges = [f"{left} {right}" for left, right in _merge_pairs(model)]
    roll = {name: rng.random() for name in GPT2_IRREGULARITIES}
    # the irregularities tokenizers refuses are rarer, so most seeds compare texts
    chance = {"blank_line": 0.06, "merge_part_missing": 0.05, "merge_result_missing": 0.05, "cr_at_end": 0.04,
              "bom_vocab": 0.04, "bom_merges": 0.04, "string_id": 0.05}
    found = [name for name in GPT2_IRREGULARITIES if roll[name] < chance.get(name, 0.3)]
    if "endoftext" in found:
        tokens.append(EOT)  # GPT-2 keeps it last
    elif "endoftext_inside" in found:
        tokens.insert(rng.randrange(len(tokens) + 1), EOT)
    ids, next_id = {}, 0
    for token in tokens:
        ids[token] = next_id
        next_id += rng.choice((2, 3, 9)) if "id_gaps" in found and rng.random() < 0.05 else 1
    if "merge_twice" in found and merges:
        for _ in range(rng.randint(1, 4)):
            merges.insert(rng.randrange(len(merges) + 1), rng.choice(merges))
    if "merge_part_missing" in found:
        merges.insert(rng.randrange(len(merges) + 1), f"{rng.choice(tokens)} \u0100\u0100zz")
    if "merge_result_missing" in found:
        for _ in range(50):  # two tokens whose join is not a token (long joins make tokenizers panic)
            left, right = rng.choice(tokens), rng.choice(tokens)
            if left + right not in ids and " " not in left + right:
                merges.insert(rng.randrange(len(merges) + 1), f"{left} {right}")
                break
    lines = list(merges)
    if "version_line_inside" in found:
        lines.insert(rng.randrange(len(lines) + 1), "#version: 0.2")
    if "no_version_line" not in found:
        lines.insert(0, rng.choice(("#version: 0.2", "#version: 0.2 - Trained by huggingface/tokenizers")))
    if "blank_line" in found:
        lines.insert(rng.randrange(len(lines) + 1), "")
    end = "\r\n" if "crlf" in found else "\n"
    merges_text = end.join(lines) + ("" if "no_final_newline" in found else end)
    if "cr_at_end" in found:
        merges_text = merges_text.rstrip("\r\n") + "\r"
    mapping = dict(ids)
    if "shuffled_keys" in found:
        items = list(mapping.items())
        rng.shuffle(items)
        mapping = dict(items)
    if "string_id" in found:
        mapping["\u0120zzq"] = str(next_id)  # tokenizers skips a value that is not a number
    vocab_text = json.dumps(mapping, ensure_ascii="ascii_json" in found, indent=2 if "pretty_json" in found else None)
    files = {
        "vocab.json": (UTF8_BOM if "bom_vocab" in found else b"") + vocab_text.encode("utf-8"),
        "merges.txt": (UTF8_BOM if "bom_merges" in found else b"") + merges_text.encode("utf-8"),
    }
    load_name = rng.choice(("", "vocab.json", "merges.txt"))
    return DrawnFiles(seed, "gpt2", files, load_name, alphabet, found, _gpt2_words(tokens))


# ----------------------------------------------------------------------------- BERT vocab.txt


def _draw_bert(seed: int, rng: random.Random) -> DrawnFiles:
    text, alphabet = random_vocabulary("wordpiece", seed)
    model = json.loads(text)["model"]
    base = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1]) if t not in BERT_SPECIALS]
    found = []
    style = rng.choice(("all_specials", "all_specials", "some_specials", "no_specials"))
    found.append(style)
    if style == "all_specials":
        specials = list(BERT_SPECIALS)
    elif style == "some_specials":
        specials = [s for s in BERT_SPECIALS if rng.random() < 0.6]
    else:
        specials = []
    if "[UNK]" not in specials and rng.random() < 0.8:
        specials.append("[UNK]")  # most files that lack the others still have [UNK]
    if "[UNK]" not in specials:
        found.append("no_unk")
    extra = []
    if rng.random() < 0.4:
        found.append("non_ascii")
        extra += [ch for ch in NON_ASCII if rng.random() < 0.5] + ["##" + ch for ch in NON_ASCII if rng.random() < 0.3]
    if rng.random() < 0.5:
        found.append("continuations")
        extra += ["##" + t for t in base if not t.startswith("##") and rng.random() < 0.3]
    if rng.random() < 0.25:
        found.append("uppercase")  # a lowercasing normaliser never reaches these
        extra += [t.upper() for t in base if t.upper() != t and rng.random() < 0.3]
    if rng.random() < 0.1:
        found.append("long_token")  # longer than a word may be (100 characters)
        extra.append("".join(rng.choices(alphabet, k=rng.randint(95, 110))))
    tokens = list(dict.fromkeys(base + extra))
    if style == "all_specials" and rng.random() < 0.6:  # BERT's own layout: [PAD], unused slots, then the rest
        unused = [f"[unused{i}]" for i in range(rng.randint(0, 5))]
        tokens = ["[PAD]", *unused, "[UNK]", "[CLS]", "[SEP]", "[MASK]", *tokens]
    else:
        for special in specials:
            tokens.insert(rng.randrange(len(tokens) + 1), special)
    lines = list(tokens)
    for name, chance in (("duplicate_line", 0.08), ("empty_line", 0.05)):
        if rng.random() < chance:
            found.append(name)
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines) if name == "duplicate_line" else "")
    ends = {"trailing_space": " ", "trailing_tab": "\t", "trailing_cr": "\r", "unicode_space_end": "\u3000"}
    for name, suffix in ends.items():
        if rng.random() < 0.12:
            found.append(name)
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(lines))
                lines[at] += rng.choice((suffix, suffix * 2, "\u00a0" if name == "unicode_space_end" else suffix))
    end = "\n"
    if rng.random() < 0.15:
        found.append("crlf")
        end = "\r\n"
    body = end.join(lines)
    if rng.random() < 0.2:
        found.append("no_final_newline")
    elif rng.random() < 0.05:
        found.append("blank_last_line")
        body += end + end
    else:
        body += end
    data = body.encode("utf-8")
    if rng.random() < 0.06:
        found.append("bom")
        data = UTF8_BOM + data
    files = {"vocab.txt": data}
    config = None
    if rng.random() < 0.5:
        found.append("config")
        config = {"tokenizer_class": "BertTokenizer", "model_max_length": 512}
        for key, values in (("do_lower_case", (True, False)), ("strip_accents", (None, True, False)),
                            ("tokenize_chinese_chars", (True, False))):
            if rng.random() < 0.7:
                config[key] = rng.choice(values)
        if rng.random() < 0.3:  # what transformers writes: the default names
            config.update(unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]", mask_token="[MASK]")
        files["tokenizer_config.json"] = json.dumps(config, indent=2).encode("utf-8")
    words = [t[2:] if t.startswith("##") else t for t in tokens if t not in BERT_SPECIALS]
    return DrawnFiles(seed, "bert", files, rng.choice(("", "vocab.txt")), alphabet, found, words, config)


def draw_files(seed: int) -> DrawnFiles:
    """The files of one seed: a GPT-2 pair or a BERT vocab.txt, irregularities included.

    Example:
        >>> from labkit.conformance.random_legacy import draw_files
        >>> sorted(draw_files(0).files)
        ['merges.txt', 'vocab.json']
    """
    rng = random.Random(f"legacy-{seed}")
    kind = rng.choice(KINDS)
    return _draw_gpt2(seed, rng) if kind == "gpt2" else _draw_bert(seed, rng)


def files_folder(drawn: DrawnFiles, folder: Path) -> Path:
    """The folder of its own, under ``folder``, that a drawn vocabulary's files are written to."""
    return Path(folder) / f"legacy{drawn.seed}"


def write_files(drawn: DrawnFiles, folder: Path) -> Path:
    """Write the drawn files into their folder (:func:`files_folder`); the path ``labkit.load`` is given."""
    where = files_folder(drawn, folder)
    where.mkdir(parents=True, exist_ok=True)
    for old in where.iterdir():
        old.unlink()
    for name, data in drawn.files.items():
        (where / name).write_bytes(data)
    return where / drawn.load_name if drawn.load_name else where


# ----------------------------------------------------------------------------- the reference


def reference_tokenizer(drawn: DrawnFiles, where: Path):
    """``tokenizers`` reading the files written to ``where`` directly (raises where it refuses them).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from labkit.conformance.random_legacy import draw_files, files_folder, reference_tokenizer, write_files
        >>> drawn, folder = draw_files(2), Path(tempfile.mkdtemp())
        >>> _ = write_files(drawn, folder)
        >>> reference_tokenizer(drawn, files_folder(drawn, folder)).get_vocab_size() > 256
        True
    """
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers

    if drawn.kind == "gpt2":
        vocab, merges = models.BPE.read_file(str(where / "vocab.json"), str(where / "merges.txt"))
        backend = tokenizers.Tokenizer(models.BPE(vocab, merges))
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        backend.decoder = decoders.ByteLevel()
        if EOT in vocab:  # GPT-2's BOS/EOS: transformers registers it as a special token
            backend.add_special_tokens([tokenizers.AddedToken(EOT, special=True)])
        return backend
    config = drawn.config or {}
    flags = dict(lowercase=config.get("do_lower_case", True), strip_accents=config.get("strip_accents"),
                 handle_chinese_chars=config.get("tokenize_chinese_chars", True))
    vocab = models.WordPiece.read_file(str(where / "vocab.txt"))
    if "[CLS]" in vocab and "[SEP]" in vocab:
        from tokenizers.implementations import BertWordPieceTokenizer

        return BertWordPieceTokenizer(vocab, **flags)._tokenizer
    return bert_by_hand(vocab, **flags)


def bert_by_hand(vocab: dict[str, int], *, lowercase: bool, strip_accents, handle_chinese_chars: bool):
    """BertWordPieceTokenizer's pipeline without its CLS/SEP framing (which needs both tokens).

    Example:
        >>> from labkit.conformance.random_legacy import bert_by_hand
        >>> tok = bert_by_hand({"[UNK]": 0, "hi": 1}, lowercase=True, strip_accents=None, handle_chinese_chars=True)
        >>> tok.encode("Hi there").ids
        [1, 0]
    """
    import tokenizers
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    backend = tokenizers.Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    for name in ("[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]"):  # BertWordPieceTokenizer's order
        if backend.token_to_id(name) is not None:
            backend.add_special_tokens([name])
    backend.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=handle_chinese_chars,
                                                    strip_accents=strip_accents, lowercase=lowercase)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece(prefix="##")
    return backend


# ----------------------------------------------------------------------------- texts


def random_texts(drawn: DrawnFiles, count: int = 40) -> list[str]:
    """Seeded texts: random strings over the alphabet (upper case and accents too), the
    vocabulary's own tokens as words, its specials glued to them, and long words (a WordPiece
    word of 99-101 characters sits at max_input_chars_per_word; byte-level words run long).

    Example:
        >>> from labkit.conformance.random_legacy import draw_files, random_texts
        >>> random_texts(draw_files(3)) == random_texts(draw_files(3))
        True
    """
    rng = random.Random(f"legacy-texts-{drawn.seed}")
    chars = drawn.alphabet + drawn.alphabet.upper() + "Zé中🙂\t  \r\n!?'s#"
    texts = ["".join(rng.choice(chars) for _ in range(rng.randint(1, 60))) for _ in range(count)]
    words = drawn.words or ["a"]
    specials = [EOT] if drawn.kind == "gpt2" else list(BERT_SPECIALS)
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            word = rng.choice(specials) if rng.random() < 0.08 else rng.choice(words)
            parts.append(rng.choice(("", " ", "  ", "\n", "-")) + (word.upper() if rng.random() < 0.1 else word))
        texts.append("".join(parts))
    letters = "".join(ch for ch in drawn.alphabet if not ch.isspace()) or "ab"
    for length in (99, 100, 101):
        texts.append("".join(rng.choice(letters) for _ in range(length)))
    texts += long_words(drawn.seed, drawn.alphabet, 3)
    return texts


def random_id_lists(size: int, seed: int, count: int = 20) -> list[list[int]]:
    """Seeded id sequences below ``size`` (gaps in the ids and specials included).

    Example:
        >>> from labkit.conformance.random_legacy import random_id_lists
        >>> all(0 <= i < 5 for ids in random_id_lists(5, 0) for i in ids)
        True
    """
    rng = random.Random(f"legacy-ids-{seed}")
    return [[rng.randrange(size) for _ in range(rng.randint(1, 12))] for _ in range(count)] if size else []


# ----------------------------------------------------------------------------- comparing


def _reference_ids(reference, text: str, add: bool, parse: bool) -> list[int]:
    reference.encode_special_tokens = not parse
    try:
        return reference.encode(text, add_special_tokens=add).ids
    finally:
        reference.encode_special_tokens = False


def _first_difference(tok, reference, texts, id_lists, spellings=()) -> str | None:
    """The first place ``tok`` and the reference disagree, described; None if none. Where the
    reference fails on a text, ``tok`` must raise LabkitError on it."""
    from labkit.core import LabkitError

    for text in texts:
        modes = [(False, True), (True, True)]
        if any(s in text for s in spellings):
            modes += [(False, False), (True, False)]
        for add, parse in modes:
            how = f"add_special_tokens={add}" + ("" if parse else " parse_special=False")
            try:
                want = _reference_ids(reference, text, add, parse)
            except Exception as exc:  # tokenizers fails on this text (WordPiece without [UNK])
                try:
                    got = tok.encode(text, add_special_tokens=add, parse_special=parse).ids
                except LabkitError:
                    continue  # both refuse this text, labkit with a clear error
                return f"encode {text[:40]!r} {how}: labkit {got[:8]} where tokenizers fails ({exc})"
            got = tok.encode(text, add_special_tokens=add, parse_special=parse).ids
            if got != want:
                at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                return f"encode {text[:40]!r} {how}: from token {at}, labkit {got[at:at + 6]} tokenizers {want[at:at + 6]}"
            if add:
                for skip in (False, True):
                    if tok.decode(want, skip_special_tokens=skip) != reference.decode(want, skip_special_tokens=skip):
                        return f"decode of encode {text[:40]!r} skip_special_tokens={skip}"
    for ids in id_lists:
        for skip in (False, True):
            got, want = tok.decode(ids, skip_special_tokens=skip), reference.decode(ids, skip_special_tokens=skip)
            if got != want:
                return f"decode {ids} skip_special_tokens={skip}: labkit {got[:60]!r} tokenizers {want[:60]!r}"
    return None


def check_seed(seed: int, folder: Path, engines=ENGINES, corpus: list[str] | None = None) -> dict[str, str]:
    """Per engine: ``exact``, ``refused: <why>`` or ``differs: <where>``. Where tokenizers
    refuses the files, an engine that refuses them too is ``refused`` and one that serves them
    ``differs``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from labkit.conformance.random_legacy import check_seed
        >>> check_seed(2, Path(tempfile.mkdtemp()), engines=("labkit",), corpus=["Hello world"])
        {'labkit': 'exact'}
    """
    import labkit
    from labkit.core import LabkitError

    drawn = draw_files(seed)
    path = write_files(drawn, folder)
    try:
        with _quiet_panics():  # a merge longer than every token makes tokenizers panic
            reference = reference_tokenizer(drawn, files_folder(drawn, folder))
    except BaseException as exc:  # a Rust panic is a BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        reference, refusal = None, f"{type(exc).__name__}: {str(exc)[:120]}"
    out = {}
    for engine in engines:
        try:
            tok = labkit.load(path, engine=engine)
        except LabkitError as exc:
            out[engine] = f"refused: {exc}" + (f" [tokenizers refuses too: {refusal}]" if reference is None else "")
            continue
        if reference is None:
            out[engine] = f"differs: served files tokenizers refuses ({refusal})"
            continue
        texts = (corpus if corpus is not None else mixed_corpus(botchan=10)) + random_texts(drawn)
        spellings = [t.content for t in reference.get_added_tokens_decoder().values() if t.special]
        texts += special_lookalikes(spellings)
        # the highest id + 1, not get_vocab_size(): that counts tokens, and ids may have holes
        id_lists = random_id_lists(max(reference.get_vocab(with_added_tokens=True).values(), default=-1) + 1, seed)
        try:
            difference = _first_difference(tok, reference, texts, id_lists, spellings)
        except Exception as exc:  # tokenizers answered where the engine raised: a difference too
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
            print(f"seed {seed}: {shown}  ({draw_files(seed).describe()})", file=out, flush=True)
            for engine, result in results.items():
                if result.startswith("differs"):
                    print(f"    {engine}: {result}", file=out)
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.random_legacy", description=__doc__,
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
