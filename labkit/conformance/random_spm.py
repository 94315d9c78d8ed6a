"""Random SentencePiece configurations: trainer options drawn together, and trained models'
protos edited, each compared engine by engine with ``sentencepiece`` called directly.

The fixed matrix (:mod:`labkit.conformance.spm_matrix`) changes one trainer option at a
time. Here a seed draws a whole combination: model type, byte fallback, the digit, number,
script and whitespace splits, whitespace as suffix, whitespace-only pieces, the dummy
prefix, extra-whitespace removal, a normalisation rule (by name or a random rule TSV),
user-defined and control symbols with awkward spellings (overlapping each other, holding
spaces or digits, parts of frequent words), moved or disabled unk/bos/eos/pad ids and
renamed pieces, a maximum piece length, a vocabulary size from the smallest sentencepiece
accepts to 6,000 and a training corpus (botchan, or generated CJK-heavy, Latin with
diacritics, digits, code, repetitive or space-heavy text, :func:`draw_corpus`); then sometimes edits the
trained ``ModelProto`` into what a user's file may hold and training never writes (UNUSED
pieces, tied scores, CONTROL or USER_DEFINED types on ordinary pieces, a denormaliser, flags
flipped in the normaliser spec). Models ``sentencepiece`` refuses to train or to load are
*skipped*. Each case runs through :func:`labkit.conformance.runner.run_case` on the mixed
corpus plus random strings from a seeded alphabet and long inputs (whole texts of thousands
of characters, runs without whitespace, text outside the trained alphabet:
:mod:`labkit.conformance.random_spm_corpora`).

This module's name starts with none of the provider prefixes on purpose: its cases are not
part of the fixed matrix.

From a shell: ``python -m labkit.conformance.random_spm --seeds 0:100 --engines labkit,hf,default``
(prints one line per seed and the totals; exit status 1 when any cell differs).

Example (seed 5's model type and vocabulary size, without training):
    >>> from labkit.conformance.random_spm import draw_options
    >>> options, edits = draw_options(5)
    >>> options["model_type"], options["vocab_size"]
    ('bpe', 800)
"""
from __future__ import annotations

import argparse
import io
import math
import random
import re
import struct
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import sentencepiece

from labkit.conformance.cases import ConfigCase
from labkit.conformance.random_spm_corpora import CORPUS_KINDS, FOREIGN_CHARACTERS, corpus_lines, long_texts
from labkit.conformance.runner import parse_seeds, run_case
from labkit.conformance.spm_matrix import _BASE, SentencePieceReference
from labkit.paths import data_path

RULE_NAMES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
# pieces of spellings for user-defined and control symbols: brackets, words' insides,
# digits, spaces, accents, CJK, the visible space itself
_SPELLING_PARTS = ("<", ">", "[", "]", "|", "sep", "mask", "th", "the", "ing", "he", "an", "e", "o",
                   "42", "1", "0", "7", " ", "é", "語", "▁", "-", "_", "##", "s", "A", "\u0301")
# the random texts' alphabet, by kind
_ALPHABET = {
    "ascii": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,;:!?'\"()<>[]{}-_/\\|#@$%&*+=~`^",
    "latin": "éèêëàâäïîôöùûüçñÉÀÇÑßøåæœ",
    "combining": "\u0300\u0301\u0302\u0308\u0323\u0327\u20dd",
    "cjk": "語本日東京の首都ですは我爱自然处理。、「」",
    "emoji": "🙂👍🏽🎉\u200d\ufe0f",
    "space": (" ", " ", " ", "  ", "   ", "\t", "\n", "\u00a0", "\u3000", "\r\n", "\u2003", "\u200b"),
    "digit": "0123456789٠١٢٣۴५৬๗１２①½",
    "other": "ﬁ㎏Ⅻｶﾀ\u212b\u00c5ＡＢ▁\u2047\ufffd",
}


def _spelling(rng: random.Random) -> str:
    """A random symbol spelling of one to four parts (never empty)."""
    return "".join(rng.choice(_SPELLING_PARTS) for _ in range(rng.randint(1, 4)))


def _symbols(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    for _ in range(count):
        spelling = _spelling(rng)
        if out and rng.random() < 0.3:  # overlap an earlier one: a prefix, suffix or extension
            other = rng.choice(out)
            spelling = rng.choice([other[: max(1, len(other) - 1)], other[1:] or other + "x", other + spelling, spelling + other])
        if spelling not in out:
            out.append(spelling)
    return out


def _custom_rules(rng: random.Random) -> str:
    """A random normalisation rule TSV: source code points -> target code points (hex)."""
    sources = "abcdefghijklmnopqrstuvwxyzABTHE0123456789éÅ\u00a0\u3000 .,!?-語①ﬁ"
    targets = "abcxyzAB0 é\u0301語-"
    lines = {}
    for _ in range(rng.randint(1, 8)):
        src = "".join(rng.choice(sources) for _ in range(rng.choice((1, 1, 1, 2, 3))))
        dst = "".join(rng.choice(targets) for _ in range(rng.choice((1, 1, 2, 3))))
        lines[src] = dst
    return "".join(" ".join(f"{ord(c):X}" for c in s) + "\t" + " ".join(f"{ord(c):X}" for c in d) + "\n"
                   for s, d in lines.items())


def _special_ids(rng: random.Random, options: dict) -> None:
    """Move, rename or disable unk/bos/eos/pad (unk always stays: sentencepiece requires it)."""
    if rng.random() < 0.5:
        return
    slots = list(range(4))
    rng.shuffle(slots)
    options["unk_id"] = slots[0]
    for name, slot in zip(("bos", "eos", "pad"), slots[1:]):
        options[f"{name}_id"] = -1 if rng.random() < 0.35 else slot
    if rng.random() < 0.5:
        names = {"unk": ["<UNK>", "[UNK]", "<unk>", "??"], "bos": ["[CLS]", "<BOS>", "<|s|>"],
                 "eos": ["[SEP]", "<EOS>", "</s>", "<|e|>"], "pad": ["[PAD]", "<pad>", "<p>"]}
        for name, spellings in names.items():
            if rng.random() < 0.5:
                options[f"{name}_piece"] = rng.choice(spellings)
    if rng.random() < 0.2:
        options["unk_surface"] = rng.choice(["<?>", "", " ", "UNK", "\u2047"])


def draw_options(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Seed -> (trainer options on top of the matrix's base, proto edits to make after training).

    Example:
        >>> a, _ = draw_options(3)
        >>> a == draw_options(3)[0]
        True
    """
    rng = random.Random(seed)
    model_type = rng.choices(["unigram", "bpe", "char", "word"], weights=[10, 10, 2, 2])[0]
    options: dict[str, Any] = dict(model_type=model_type)
    options["vocab_size"] = rng.choice([200, 350, 400, 500, 600, 800])
    for flag, p in (("byte_fallback", 0.4), ("split_digits", 0.3), ("treat_whitespace_as_suffix", 0.25),
                    ("allow_whitespace_only_pieces", 0.3)):
        options[flag] = rng.random() < p
    for flag, p in (("split_by_whitespace", 0.25), ("split_by_unicode_script", 0.25), ("split_by_number", 0.25),
                    ("add_dummy_prefix", 0.25), ("remove_extra_whitespaces", 0.25)):
        options[flag] = not rng.random() < p  # on by default, off with probability p
    rule = rng.random()
    if rule < 0.2:
        options["normalization_rule_tsv"] = _custom_rules(rng)
    else:
        options["normalization_rule_name"] = rng.choice(RULE_NAMES)
    if rng.random() < 0.5:
        options["user_defined_symbols"] = _symbols(rng, rng.randint(1, 5))
    if rng.random() < 0.4:
        options["control_symbols"] = _symbols(rng, rng.randint(1, 4))
    if rng.random() < 0.3:
        options["max_sentencepiece_length"] = rng.randint(1, 8)
    if rng.random() < 0.1:
        options["denormalization_rule_tsv"] = _custom_rules(rng)
    _special_ids(rng, options)
    edits: dict[str, Any] = {}
    if rng.random() < 0.35:
        edit_rng = random.Random(seed * 7919 + 1)
        kinds = ["unused", "ties", "control", "user_defined", "escape_whitespaces", "dummy_prefix", "extra_ws"]
        for kind in edit_rng.sample(kinds, edit_rng.randint(1, 3)):
            edits[kind] = edit_rng.randint(0, 2**31)
    # a second family of edits, drawn apart so that the seeds above keep their meaning
    more_rng = random.Random(seed * 104729 + 3)
    if more_rng.random() < 0.4:
        for kind in more_rng.sample(MORE_EDITS, more_rng.randint(1, 3)):
            edits[kind] = more_rng.randint(0, 2**31)
    vocab_size, kind = draw_corpus(seed)
    if vocab_size is not None:
        options["vocab_size"] = vocab_size
    coverage_rng = random.Random(seed * 7727 + 13)
    if kind != "botchan" and coverage_rng.random() < 0.3:  # rare characters of a drawn corpus left out: <unk> or bytes
        options["character_coverage"] = coverage_rng.choice((0.98, 0.995, 0.9995))
    return options, edits


# room for the four special ids only: training is then retried at the smallest size sentencepiece accepts
SMALLEST_VOCAB = 4
# the seeds notebook 14 runs and prints (its stored output names seed 1's options): they keep
# the botchan corpus and their first vocabulary size
NOTEBOOK_SEEDS = range(6)


def draw_corpus(seed: int) -> tuple[int | None, str]:
    """Seed -> (a vocabulary size over a wide range, or None to keep draw_options' own; the
    training corpus kind, one of :data:`~labkit.conformance.random_spm_corpora.CORPUS_KINDS`).

    Drawn from a stream of their own, so that the other options keep each seed's meaning.
    Sizes run log-uniformly from 60 to 6,000 (training takes well under a second), or are
    :data:`SMALLEST_VOCAB` (then the smallest size sentencepiece accepts for the corpus, see
    :func:`train_random`).

    Example:
        >>> sizes = [draw_corpus(seed)[0] for seed in range(200)]
        >>> min(s for s in sizes if s) == SMALLEST_VOCAB, max(s for s in sizes if s) > 3000
        (True, True)
    """
    rng = random.Random(seed * 15485863 + 11)
    if rng.random() < 0.4 or seed in NOTEBOOK_SEEDS:
        return None, "botchan"
    kind = rng.choice(CORPUS_KINDS)
    if rng.random() < 0.15:
        return SMALLEST_VOCAB, kind
    return int(math.exp(rng.uniform(math.log(60), math.log(6000)))), kind


# edits a user's file may hold that training does not write (see edit_proto)
MORE_EDITS = ["add_pieces", "shuffle_scores", "suffix", "ws_only", "drop_charsmap", "denorm_flags", "unk_surface",
              "model_type", "duplicate", "flat_scores", "special_ids"]
# spellings of pieces appended to a trained model: words, runs of '▁', '▁' inside, digits,
# CJK, a character that training saw, text that collides with byte and special spellings
_ADDED_PIECES = ("▁the▁", "▁▁", "▁▁▁", "of▁the", "e▁t", "語語", "日本", "123", "4", "▁1", "the", "ing▁",
                 "<0x41>", "<s>x", "x</s>", "\u2047", "\t", "\u00a0", "a\u0301", "é", "▁é", "⁇", "🙂", "▁🙂🙂")


# ----------------------------------------------------------------------------- proto editing
# a minimal protobuf wire reader/writer for the few ModelProto fields edited here
# (pieces = 1 {piece = 1, score = 2, type = 3}, normalizer_spec = 3 {add_dummy_prefix = 3,
# remove_extra_whitespaces = 4, escape_whitespaces = 5})


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _records(data: bytes) -> list[tuple[int, int, Any]]:
    """Top-level (field, wire type, value) records of a message."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            n, pos = _read_varint(data, pos)
            value, pos = data[pos:pos + n], pos + n
        out.append((field, wire, value))
    return out


def _write(records: list[tuple[int, int, Any]]) -> bytes:
    out = bytearray()
    for field, wire, value in records:
        out += _varint(field << 3 | wire)
        if wire == 0:
            out += _varint(value)
        elif wire == 2:
            out += _varint(len(value)) + value
        else:
            out += value
    return bytes(out)


def _set_field(records: list, field: int, wire: int, value: Any) -> list:
    kept = [r for r in records if r[0] != field]
    return kept + [(field, wire, value)]


def edit_proto(blob: bytes, edits: dict[str, int]) -> bytes:
    """Apply proto edits (kind -> seed) to a serialised ModelProto.

    Kinds: ``unused`` / ``control`` / ``user_defined`` retype a few ordinary pieces,
    ``ties`` gives runs of pieces one score, ``shuffle_scores`` permutes the scores of some,
    ``add_pieces`` appends pieces of any type (:data:`_ADDED_PIECES`), ``escape_whitespaces``
    / ``dummy_prefix`` / ``extra_ws`` flip that normaliser flag (``denorm_flags`` one of the
    denormaliser's), ``suffix`` / ``ws_only`` flip the trainer spec's
    treat_whitespace_as_suffix / allow_whitespace_only_pieces, ``unk_surface`` sets it,
    ``drop_charsmap`` removes the normaliser's precompiled charsmap, ``model_type`` serves a
    unigram vocabulary as BPE or a BPE one as unigram, ``duplicate`` appends an ordinary copy
    of a control/unknown piece's spelling or a control copy of an ordinary one,
    ``flat_scores`` gives every (or every n-th) ordinary piece one score, ``special_ids``
    rewrites trainer_spec's unk/bos/eos/pad ids.

    Example:
        >>> from labkit.paths import data_path
        >>> blob = data_path("sentencepiece/botchan_en_unigram_1000.model").read_bytes()
        >>> len(edit_proto(blob, {})) == len(blob)
        True
    """
    top = _records(blob)
    pieces = [i for i, r in enumerate(top) if r[0] == 1]
    parsed = {i: _records(top[i][2]) for i in pieces}

    def ptype(i):
        return next((v for f, w, v in parsed[i] if f == 3), 1)

    normal = [i for i in pieces if ptype(i) == 1]
    for kind, seed in edits.items():
        rng = random.Random(seed)
        if kind in ("unused", "control", "user_defined") and normal:
            code = {"unused": 5, "control": 3, "user_defined": 4}[kind]
            for i in rng.sample(normal, min(len(normal), rng.randint(1, 6))):
                parsed[i] = _set_field(parsed[i], 3, 0, code)
                if kind == "user_defined":  # sentencepiece gives user-defined pieces score 0
                    parsed[i] = _set_field(parsed[i], 2, 5, struct.pack("<f", 0.0))
        elif kind == "ties" and normal:
            for _ in range(rng.randint(1, 5)):
                start = rng.randrange(len(normal))
                run = normal[start:start + rng.randint(2, 12)]
                score = next((v for f, w, v in parsed[run[0]] if f == 2), struct.pack("<f", 0.0))
                for i in run:
                    parsed[i] = _set_field(parsed[i], 2, 5, score)
        elif kind in ("escape_whitespaces", "dummy_prefix", "extra_ws", "denorm_flags"):
            field = {"dummy_prefix": 3, "extra_ws": 4, "escape_whitespaces": 5}.get(kind) or rng.choice((3, 4, 5))
            spec_field = 5 if kind == "denorm_flags" else 3
            for index, (f, w, v) in enumerate(top):
                if f == spec_field and w == 2:
                    spec = _records(v)
                    current = next((val for fld, _, val in spec if fld == field), 1)
                    top[index] = (spec_field, 2, _write(_set_field(spec, field, 0, 0 if current else 1)))
        elif kind in ("suffix", "ws_only", "unk_surface"):
            for index, (f, w, v) in enumerate(top):
                if f == 2 and w == 2:
                    spec = _records(v)
                    if kind == "unk_surface":
                        surface = rng.choice(["", " ", "<?>", "\u2047", "▁x▁", "UNK "])
                        spec = _set_field(spec, 44, 2, surface.encode("utf-8"))
                    else:
                        field = 24 if kind == "suffix" else 26
                        current = next((val for fld, _, val in spec if fld == field), 0)
                        spec = _set_field(spec, field, 0, 0 if current else 1)
                    top[index] = (2, 2, _write(spec))
        elif kind == "model_type":
            # a unigram vocabulary served as BPE or the other way round (scores read as they are)
            for index, (f, w, v) in enumerate(top):
                if f == 2 and w == 2:
                    spec = _records(v)
                    current = next((val for fld, _, val in spec if fld == 3), 1)
                    if current in (1, 2):
                        top[index] = (2, 2, _write(_set_field(spec, 3, 0, 3 - current)))
        elif kind == "duplicate":
            # one spelling twice, once ordinary and once reserved (sentencepiece's unigram, char
            # and word models load that; its BPE model refuses it, and the seed is skipped)
            reserved = [i for i in pieces if ptype(i) in (2, 3)]
            appended = []
            for _ in range(rng.randint(1, 4)):
                if reserved and rng.random() < 0.5:
                    source, code = rng.choice(reserved), rng.choice((1, 1, 5))
                elif normal:
                    source, code = rng.choice(normal), 3
                else:
                    continue
                spelling = next((v for f, w, v in parsed[source] if f == 1), b"")
                appended.append([(1, 2, spelling), (2, 5, struct.pack("<f", rng.uniform(-12.0, 0.0)))]
                                + ([(3, 0, code)] if code != 1 else []))
            seen = set()
            appended = [r for r in appended if (r[0][2], len(r)) not in seen and not seen.add((r[0][2], len(r)))]
            last = max(pieces) if pieces else -1
            for offset, record in enumerate(appended, 1):
                top.insert(last + offset, (1, 2, _write(record)))
        elif kind == "flat_scores" and normal:
            # one score for every ordinary piece (or every n-th): ties everywhere
            value, step = rng.choice((0.0, -1.0, -5.0, 2.0)), rng.choice((1, 2, 3))
            for i in normal[::step]:
                parsed[i] = _set_field(parsed[i], 2, 5, struct.pack("<f", value))
        elif kind == "special_ids":
            # trainer_spec's unk/bos/eos/pad ids rewritten (sentencepiece ignores them at load)
            for index, (f, w, v) in enumerate(top):
                if f == 2 and w == 2:
                    spec = _records(v)
                    for field in rng.sample((40, 41, 42, 43), rng.randint(1, 4)):
                        spec = _set_field(spec, field, 0, rng.choice((-1, 0, 1, 2, 3, 7, 99999)) & (1 << 64) - 1)
                    top[index] = (2, 2, _write(spec))
        elif kind == "drop_charsmap":
            for index, (f, w, v) in enumerate(top):
                if f == 3 and w == 2:
                    top[index] = (3, 2, _write([r for r in _records(v) if r[0] != 2]))
        elif kind == "shuffle_scores" and normal:
            chosen = rng.sample(normal, min(len(normal), rng.randint(2, 40)))
            scores = [next((v for f, w, v in parsed[i] if f == 2), struct.pack("<f", 0.0)) for i in chosen]
            rng.shuffle(scores)
            for i, score in zip(chosen, scores):
                parsed[i] = _set_field(parsed[i], 2, 5, score)
        elif kind == "add_pieces":
            existing = {next((v for f, w, v in parsed[i] if f == 1), b"").decode("utf-8") for i in pieces}
            added = []
            for spelling in rng.sample(_ADDED_PIECES, rng.randint(1, 6)):
                if spelling in existing:
                    continue
                existing.add(spelling)
                code = rng.choice((1, 1, 1, 3, 4, 5))
                score = 0.0 if code == 4 else rng.uniform(-12.0, 0.0)
                added.append([(1, 2, spelling.encode("utf-8")), (2, 5, struct.pack("<f", score))]
                             + ([(3, 0, code)] if code != 1 else []))
            last = max(pieces) if pieces else -1
            for offset, record in enumerate(added, 1):
                top.insert(last + offset, (1, 2, _write(record)))
    for i in pieces:
        top[i] = (1, 2, _write(parsed[i]))
    return _write(top)


def set_piece_types(blob: bytes, types: dict[str, int]) -> bytes:
    """Give the named pieces of a serialised ModelProto new types (1 NORMAL, 2 UNKNOWN,
    3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE): the regression tests' edits.

    Example:
        >>> import sentencepiece
        >>> from labkit.paths import data_path
        >>> blob = set_piece_types(data_path("sentencepiece/botchan_en_bpe_1000.model").read_bytes(), {"e": 5})
        >>> sp = sentencepiece.SentencePieceProcessor(model_proto=blob)
        >>> sp.is_unused(sp.piece_to_id("e"))
        True
    """
    top = _records(blob)
    found = set()
    for index, (field, wire, value) in enumerate(top):
        if field != 1:
            continue
        piece = _records(value)
        text = next((v for f, w, v in piece if f == 1), b"").decode("utf-8")
        if text in types:
            found.add(text)
            top[index] = (1, 2, _write(_set_field(piece, 3, 0, types[text])))
    missing = set(types) - found
    if missing:
        raise KeyError(f"no such pieces: {sorted(missing)}")
    return _write(top)


def piece_types(blob: bytes) -> list[int]:
    """Every piece's type in a serialised ModelProto (1 NORMAL ... 6 BYTE, as in set_piece_types).

    Example:
        >>> from labkit.paths import data_path
        >>> piece_types(data_path("sentencepiece/botchan_en_bpe_1000.model").read_bytes())[:4]
        [2, 3, 3, 1]
    """
    return [next((v for f, w, v in _records(value) if f == 3), 1) for field, wire, value in _records(blob) if field == 1]


def append_pieces(blob: bytes, pieces: list[tuple[str, float, int]]) -> bytes:
    """Append (piece, score, type) records after a serialised ModelProto's last piece.

    Example:
        >>> import sentencepiece
        >>> from labkit.paths import data_path
        >>> blob = append_pieces(data_path("sentencepiece/botchan_en_unigram_1000.model").read_bytes(), [("<s>", -1.0, 1)])
        >>> sp = sentencepiece.SentencePieceProcessor(model_proto=blob)
        >>> sp.get_piece_size(), sp.id_to_piece(1000)
        (1001, '<s>')
    """
    top = _records(blob)
    last = max((i for i, r in enumerate(top) if r[0] == 1), default=-1)
    records = [(1, 2, _write([(1, 2, piece.encode("utf-8")), (2, 5, struct.pack("<f", score))]
                             + ([(3, 0, kind)] if kind != 1 else []))) for piece, score, kind in pieces]
    return _write(top[:last + 1] + records + top[last + 1:])


# ----------------------------------------------------------------------------- cases


class Skipped(Exception):
    """sentencepiece refused to train or to load this combination."""


def train_random(seed: int, folder: Path) -> Path:
    """Train (and edit) seed ``seed``'s model into ``folder``; Skipped when sentencepiece refuses.

    Example:
        >>> import tempfile
        >>> train_random(3, Path(tempfile.mkdtemp())).suffix
        '.model'
    """
    options, edits = draw_options(seed)
    options = {**_BASE, **options}
    for key in ("normalization_rule_tsv", "denormalization_rule_tsv"):
        if key in options:
            # sentencepiece refuses a rule that maps text to itself ("Identity conversion")
            lines = [line for line in options[key].splitlines() if line.split("\t")[0] != line.split("\t")[-1]]
            rules = folder / f"{key}.tsv"
            rules.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            options[key] = str(rules)
    _, kind = draw_corpus(seed)
    corpus = data_path("corpus/botchan.txt")
    if kind != "botchan":
        corpus = folder / f"corpus_{kind}_{seed}.txt"
        corpus.write_text("".join(line + "\n" for line in corpus_lines(kind, seed)), encoding="utf-8")
    data = None
    for attempt in range(2):
        blob = io.BytesIO()
        try:
            sentencepiece.SentencePieceTrainer.train(input=str(corpus), model_writer=blob, **options)
        except (RuntimeError, ValueError, OSError) as exc:
            message = str(exc)
            required = re.search(r"smaller than required_chars\. \d+ vs (\d+)", message)
            if attempt == 0 and required:
                options["vocab_size"] = int(required.group(1))  # the smallest size it accepts for this corpus
                continue
            raise Skipped(f"training refused: {message.splitlines()[0][:200]}") from None
        data = blob.getvalue()
        break
    if edits:
        data = edit_proto(data, edits)
    try:
        sentencepiece.SentencePieceProcessor(model_proto=data)
    except (RuntimeError, ValueError, OSError) as exc:
        raise Skipped(f"sentencepiece refuses the edited model: {str(exc).splitlines()[0][:200]}") from None
    path = folder / f"random_{seed}.model"
    path.write_bytes(data)
    return path


def random_texts(seed: int, symbols: list[str], count: int = 60) -> tuple[str, ...]:
    """Random strings from the seeded alphabet, with the symbols glued to their neighbours.

    Example:
        >>> random_texts(0, ["<sep>"]) == random_texts(0, ["<sep>"])
        True
    """
    rng = random.Random(seed * 31 + 17)
    kinds = list(_ALPHABET)
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            kind = rng.choice(kinds + (["symbol"] * 3 if symbols else []))
            if kind == "symbol":
                parts.append(rng.choice(symbols))
            else:
                alphabet = _ALPHABET[kind]
                parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))))
        out.append("".join(parts))
    for symbol in symbols:
        out += [symbol, f"a{symbol}b", f" {symbol} ", f"{symbol}{symbol}", f"1{symbol}2", f"\t{symbol}\n",
                f"  {symbol}", f"{symbol}  ", f"▁{symbol}▁", f"{symbol}\u3000x", f"x {symbol}  {symbol} y"]
    return tuple(dict.fromkeys(out))


def describe(seed: int) -> str:
    """One line of the options that differ from sentencepiece's defaults, and the edits.

    Example:
        >>> describe(0).startswith("seed 0:")
        True
    """
    options, edits = draw_options(seed)
    defaults = dict(byte_fallback=False, split_digits=False, treat_whitespace_as_suffix=False,
                    allow_whitespace_only_pieces=False, split_by_whitespace=True, split_by_unicode_script=True,
                    split_by_number=True, add_dummy_prefix=True, remove_extra_whitespaces=True)
    shown = {k: v for k, v in options.items() if defaults.get(k, object()) != v}
    if "normalization_rule_tsv" in shown:
        shown["normalization_rule_tsv"] = shown["normalization_rule_tsv"].replace("\n", ";")
    if "denormalization_rule_tsv" in shown:
        shown["denormalization_rule_tsv"] = shown["denormalization_rule_tsv"].replace("\n", ";")
    text = ", ".join(f"{k}={v!r}" for k, v in shown.items())
    kind = draw_corpus(seed)[1]
    return (f"seed {seed}: {text}" + (f"; edits {sorted(edits)}" if edits else "")
            + (f"; trained on a {kind} corpus" if kind != "botchan" else ""))


def random_spm_case(seed: int, long_inputs: bool = True) -> ConfigCase:
    """Seed -> a ConfigCase whose build trains the random model (raises Skipped when
    sentencepiece refuses it); its texts are the random strings and, with ``long_inputs``,
    the seed's long inputs (:func:`~labkit.conformance.random_spm_corpora.long_texts`).

    Example:
        >>> random_spm_case(5).name
        'spm-random/5'
    """
    options, edits = draw_options(seed)
    symbols = [*options.get("user_defined_symbols", ()), *options.get("control_symbols", ())]
    specials = ("<s>", "</s>", "<unk>", *symbols)
    if "add_pieces" in edits:  # the spellings an edit may append, in context too
        symbols += [p for p in _ADDED_PIECES if p not in symbols]
    components = (("model_type", options["model_type"]), ("seed", str(seed)))
    return ConfigCase(
        name=f"spm-random/{seed}", family="spm-random", components=components,
        build=lambda folder, seed=seed: train_random(seed, folder),
        reference=SentencePieceReference, specials=specials,
        texts=random_texts(seed, symbols) + (_long_inputs(seed, options["model_type"]) if long_inputs else ()),
        notes=describe(seed), extra={"options": options, "edits": edits},
    )


def _long_inputs(seed: int, model_type: str) -> tuple[str, ...]:
    # Unigram's longest text must pass sentencepiece's rebase (a total of 1e5, about 50,000 characters)
    longest = (50000, 90000) if model_type == "unigram" else (20000, 40000)
    return long_texts(seed, draw_corpus(seed)[1], longest)


RANDOM_ID_SEQUENCES = 100  # random id sequences decoded per seed and engine


def random_id_differences(path: Path, seed: int, tok, count: int = RANDOM_ID_SEQUENCES) -> list[str]:
    """Decode ``count`` random id sequences (control, byte, unknown, unused, user-defined and
    ordinary pieces mixed, byte pieces spelling a whole character now and then, one sequence
    in ten up to 300 ids long) with ``tok`` (``skip_special_tokens=True``) and with
    sentencepiece; the differences.

    The corpus only decodes what sentencepiece's encode gives; these ids are any a caller
    may pass (a control piece between two words, byte pieces that are not UTF-8).

    Example:
        >>> import labkit, tempfile
        >>> path = train_random(3, Path(tempfile.mkdtemp()))
        >>> random_id_differences(path, 3, labkit.load(path, engine="labkit"))
        []
    """
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    types = piece_types(path.read_bytes())
    groups = [[i for i, kind in enumerate(types) if kind == want] for want in (3, 6, 2, 5, 4)]
    everything = list(range(len(types)))
    rng = random.Random(seed * 13 + 5)
    found = []
    byte_ids = {int(sp.id_to_piece(i)[3:5], 16): i for i in groups[1]}
    for _ in range(count):
        ids = []
        for _ in range(rng.randint(1, 300 if rng.random() < 0.1 else 12)):
            if len(byte_ids) == 256 and rng.random() < 0.1:  # a character in bytes, amid control pieces or not
                ids += [byte_ids[b] for b in rng.choice(FOREIGN_CHARACTERS).encode("utf-8")]
                continue
            group = rng.choice(groups + [everything] * 3)
            ids.append(rng.choice(group or everything))
        want, got = sp.decode(ids), tok.decode(ids, skip_special_tokens=True)
        if got != want:
            found.append(f"random ids {ids} {[sp.id_to_piece(i) for i in ids]} decode(skip_special_tokens=True): "
                         f"{got!r} != reference {want!r}")
            if len(found) >= 3:
                break
    return found


def _check_random_ids(case: ConfigCase, cells, workdir: Path, seed: int) -> None:
    """Add the random-id decodes to each served cell (a difference makes it differ)."""
    import labkit
    from labkit.conformance.runner import _folder_name

    path = Path(workdir) / _folder_name(case.name) / f"random_{seed}.model"
    for cell in cells:
        if cell.status != "exact":
            continue
        tok = labkit.load(path, engine=None if cell.engine == "default" else cell.engine)
        found = random_id_differences(path, seed, tok)
        cell.comparisons += RANDOM_ID_SEQUENCES
        if found:
            cell.status, cell.message = "differs", "\n".join(found)


def run_seeds(seeds, workdir: Path, engines=("labkit", "hf", "default"), *, botchan: int = 10, out=None,
              random_ids: bool = True, long_inputs: bool = True):
    """Run every seed; returns (status counter, {seed: [cells]}, {seed: skip reason}).

    ``long_inputs=False`` leaves out the long texts (several thousand characters each, most
    of a seed's time in labkit's pure-Python engines).

    Each served cell also decodes random id sequences (:func:`random_id_differences`, with
    ``random_ids``). A seed's status is ``skipped``, ``differs`` (any cell), ``refused``
    (labkit's engine refused, no cell differs) or ``exact``; the counter also holds per-cell counts under ``cell:<status>``.

    Example:
        >>> import tempfile
        >>> counts, _, _ = run_seeds([1], Path(tempfile.mkdtemp()), engines=("labkit",), botchan=0, out=io.StringIO())
        >>> sum(counts[k] for k in ("exact", "refused", "differs", "skipped"))
        1
    """
    out = out or sys.stdout
    counts: Counter = Counter()
    results, skipped = {}, {}
    for seed in seeds:
        case = random_spm_case(seed, long_inputs)
        started = time.perf_counter()
        try:
            cells = run_case(case, workdir, engines, botchan=botchan)
        except Skipped as exc:
            counts["skipped"] += 1
            skipped[seed] = str(exc)
            print(f"seed {seed:5}: skipped ({exc})", file=out)
            continue
        if random_ids:
            _check_random_ids(case, cells, workdir, seed)
        results[seed] = cells
        statuses = [c.status for c in cells]
        for status in statuses:
            counts[f"cell:{status}"] += 1
        # hf refuses every .model: a seed is "refused" when labkit's own engine refuses it
        labkit_status = next((c.status for c in cells if c.engine == "labkit"), "exact")
        status = "differs" if "differs" in statuses else "refused" if labkit_status == "refused" else "exact"
        counts[status] += 1
        cells_text = " ".join(f"{c.engine}={c.status}" + (f"({c.served_by})" if c.engine == "default" else "") for c in cells)
        print(f"seed {seed:5}: {status:8} {cells_text} [{time.perf_counter() - started:.1f}s]", file=out)
        if status != "exact":
            print(f"    {case.notes}", file=out)
        for cell in cells:
            if cell.status == "differs":
                for line in cell.message.splitlines()[:3]:
                    print(f"    {cell.engine}: {line[:300]}", file=out)
            elif cell.status == "refused" and cell.engine == "labkit":
                print(f"    {cell.engine} refused: {cell.message.splitlines()[0][-200:]}", file=out)
    return counts, results, skipped


def main(argv: list[str] | None = None) -> int:
    """Run the seeds, print per-seed status and the summary; 1 if any cell differs."""
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.random_spm",
                                     description="random SentencePiece configurations vs sentencepiece")
    parser.add_argument("--seeds", default="0:100", help="a range a:b or a comma list (default: %(default)s)")
    parser.add_argument("--engines", default="labkit,hf,default", help="comma-separated (default: %(default)s)")
    parser.add_argument("--botchan", type=int, default=10, help="botchan lines in each corpus (default: %(default)s)")
    parser.add_argument("--no-long", action="store_true", help="leave out the long inputs (faster)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="labkit-random-spm-") as folder:
        counts, _, _ = run_seeds(parse_seeds(args.seeds), Path(folder), tuple(args.engines.split(",")), botchan=args.botchan,
                                   long_inputs=not args.no_long)
    print(f"seeds: exact {counts['exact']}, refused {counts['refused']}, differs {counts['differs']}, "
          f"skipped {counts['skipped']}; cells: exact {counts['cell:exact']}, refused {counts['cell:refused']}, "
          f"differs {counts['cell:differs']} ({time.perf_counter() - started:.0f} s)")
    return 1 if counts["differs"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
