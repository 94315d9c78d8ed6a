"""SentencePiece rows of the conformance matrix: models trained in the run, every engine
compared with ``sentencepiece`` called directly.

Each configuration is one set of ``SentencePieceTrainer`` options (model type, byte
fallback, digit and whitespace splitting, user-defined and control symbols, the normaliser
flags and rules) trained on botchan in well under a second or two. Every engine that loads
the ``.model`` must give the ids, pieces, offsets and decode (with and without
``skip_special_tokens``) of ``sentencepiece`` on :func:`labkit.conformance.spm_corpus.mixed_corpus`;
an engine that cannot must refuse at load with a LabkitError.
Introduced in notebook ``14_conformance_matrix``.

Example: ``run_spm_matrix(tmp_path)[0].cells["sentencepiece"].status`` -> ``'exact'``
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import sentencepiece

from labkit.conformance.spm_corpus import mixed_corpus
from labkit.core import LabkitError
from labkit.paths import data_path

ENGINES = ("labkit", "sentencepiece", "hf")
# a custom normalisation rule TSV: source code points -> target code points (hex)
CUSTOM_RULES = "41\t61\n42\t62\nC4\t41 308\n2460\t31\n3000\t20\n"

_BASE = dict(vocab_size=400, hard_vocab_limit=False, minloglevel=2, num_threads=1,
             input_sentence_size=1500, shuffle_input_sentence=False, character_coverage=1.0)
# name -> trainer options on top of _BASE
SPM_CONFIGS: dict[str, dict] = {
    "unigram": dict(model_type="unigram"),
    "bpe": dict(model_type="bpe"),
    "char": dict(model_type="char", vocab_size=80),
    "word": dict(model_type="word", vocab_size=600),
    "unigram+byte_fallback": dict(model_type="unigram", byte_fallback=True),
    "bpe+byte_fallback": dict(model_type="bpe", byte_fallback=True),
    "unigram+split_digits": dict(model_type="unigram", split_digits=True),
    "bpe+split_digits": dict(model_type="bpe", split_digits=True),
    "unigram-split_by_whitespace": dict(model_type="unigram", split_by_whitespace=False),
    "bpe-split_by_whitespace": dict(model_type="bpe", split_by_whitespace=False),
    "unigram+user_defined": dict(model_type="unigram", user_defined_symbols=["<sep>", "<mask>", "42"]),
    "bpe+user_defined": dict(model_type="bpe", user_defined_symbols=["<sep>", "<mask>", "42"]),
    "unigram+control": dict(model_type="unigram", control_symbols=["<ctl>", "<sep>"]),
    "bpe+control": dict(model_type="bpe", control_symbols=["<ctl>", "<sep>"]),
    "unigram-add_dummy_prefix": dict(model_type="unigram", add_dummy_prefix=False),
    "bpe-add_dummy_prefix": dict(model_type="bpe", add_dummy_prefix=False),
    "unigram-remove_extra_whitespaces": dict(model_type="unigram", remove_extra_whitespaces=False),
    "bpe-remove_extra_whitespaces": dict(model_type="bpe", remove_extra_whitespaces=False),
    "unigram+whitespace_as_suffix": dict(model_type="unigram", treat_whitespace_as_suffix=True),
    "bpe+whitespace_as_suffix": dict(model_type="bpe", treat_whitespace_as_suffix=True),
    "unigram/nfkc": dict(model_type="unigram", normalization_rule_name="nfkc"),
    "unigram/nmt_nfkc_cf": dict(model_type="unigram", normalization_rule_name="nmt_nfkc_cf"),
    "bpe/nfkc_cf": dict(model_type="bpe", normalization_rule_name="nfkc_cf"),
    "unigram/identity": dict(model_type="unigram", normalization_rule_name="identity"),
    "bpe/identity": dict(model_type="bpe", normalization_rule_name="identity"),
    "unigram/custom_tsv": dict(model_type="unigram", normalization_rule_tsv="<custom>"),
}


@dataclass
class Cell:
    """One (configuration, engine) result: 'exact', 'refused' or 'differs', with counts.

    Example: ``Cell("exact", strings=120, comparisons=600)``
    """

    status: str
    strings: int = 0
    comparisons: int = 0
    reason: str = ""
    diffs: list = field(default_factory=list)


@dataclass
class Row:
    """One configuration's cells, by engine. Example: ``row.cells["hf"].status``"""

    name: str
    component: str
    cells: dict[str, Cell]


def train_model(name: str, folder: Path) -> Path:
    """Train configuration ``name`` on botchan into ``folder/name.model``.

    Example: ``train_model("bpe", tmp_path).suffix`` -> ``'.model'``
    """
    options = {**_BASE, **SPM_CONFIGS[name]}
    if options.get("normalization_rule_tsv") == "<custom>":
        rules = folder / "custom_rules.tsv"
        rules.write_text(CUSTOM_RULES, encoding="utf-8")
        options["normalization_rule_tsv"] = str(rules)
    blob = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(input=str(data_path("corpus/botchan.txt")), model_writer=blob, **options)
    path = folder / (name.replace("/", "_") + ".model")
    path.write_bytes(blob.getvalue())
    return path


def reference_results(sp: sentencepiece.SentencePieceProcessor, text: str) -> dict:
    """What ``sentencepiece`` itself gives for ``text``: ids, pieces, offsets, decode."""
    out = sp.encode(text, out_type="offset_mapping", return_bytes=False)
    ids = list(out["ids"])
    # out["pieces"] shows an unknown piece's surface text; the piece itself is id_to_piece
    return {"ids": ids, "tokens": [sp.id_to_piece(i) for i in ids], "offsets": [tuple(o) for o in out["offsets"]],
            "decode": sp.decode(ids)}


def compare_engine(tok, sp, strings: list[str]) -> Cell:
    """Compare one loaded engine with sentencepiece on every string (5 comparisons each).

    Example: ``compare_engine(labkit.load(p), spm.SentencePieceProcessor(model_file=p), ["a"]).status``
    """
    diffs = []
    comparisons = 0
    for text in strings:
        want = reference_results(sp, text)
        enc = tok.encode(text, add_special_tokens=False)
        got = {"ids": list(enc.ids), "tokens": list(enc.tokens), "offsets": [tuple(o) for o in enc.offsets]}
        for key in ("ids", "tokens", "offsets"):
            comparisons += 1
            if got[key] != want[key]:
                diffs.append((text, key, got[key], want[key]))
        for skip in (True, False):
            comparisons += 1
            decoded = tok.decode(want["ids"], skip_special_tokens=skip)
            if decoded != want["decode"]:
                diffs.append((text, f"decode(skip={skip})", decoded, want["decode"]))
    return Cell("exact" if not diffs else "differs", strings=len(strings), comparisons=comparisons, diffs=diffs[:20])


def component_of(name: str) -> str:
    """The trainer option a configuration exercises. Example: ``component_of("bpe+control")`` -> ``'control'``"""
    for sep in ("+", "-", "/"):
        if sep in name:
            return name.split(sep, 1)[1]
    return f"model_type={name}"


def run_spm_row(name: str, folder: Path, strings: list[str] | None = None, engines=ENGINES) -> Row:
    """Train one configuration and measure every engine on it.

    Example: ``run_spm_row("char", tmp_path).cells["sentencepiece"].status`` -> ``'exact'``
    """
    import labkit

    strings = mixed_corpus() if strings is None else strings
    path = train_model(name, folder)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    cells = {}
    for engine in engines:
        try:
            tok = labkit.load(path, engine=engine)
        except LabkitError as exc:
            cells[engine] = Cell("refused", reason=str(exc))
            continue
        cells[engine] = compare_engine(tok, sp, strings)
    return Row(name, component_of(name), cells)


def run_spm_matrix(folder: Path, names=None, strings: list[str] | None = None) -> list[Row]:
    """Every SentencePiece configuration (or ``names``) against every engine.

    Example: ``[r.name for r in run_spm_matrix(tmp_path, ["bpe"])]`` -> ``['bpe']``
    """
    strings = mixed_corpus() if strings is None else strings
    return [run_spm_row(name, Path(folder), strings) for name in (names or SPM_CONFIGS)]
