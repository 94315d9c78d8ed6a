"""SentencePiece rows of the conformance matrix: models trained in the run, every engine
compared with ``sentencepiece`` called directly.

Each configuration is one set of ``SentencePieceTrainer`` options (model type, byte
fallback, digit and whitespace splitting, user-defined and control symbols, the normaliser
flags and rules) trained on botchan in well under a second or two. Every engine that loads
the ``.model`` must give the ids, pieces, offsets and decode (with and without
``skip_special_tokens``) of ``sentencepiece`` on :func:`labkit.conformance.spm_corpus.mixed_corpus`;
an engine that cannot must refuse at load with a LabkitError. The cases register with
:func:`labkit.conformance.cases.register` and run through :func:`labkit.conformance.runner.run_case`.
Introduced in notebook ``14_conformance_matrix``.

Example (the first configuration, one string):
    >>> import tempfile
    >>> from pathlib import Path
    >>> from labkit.conformance.runner import run_case
    >>> from labkit.conformance.spm_matrix import spm_cases
    >>> case = spm_cases()[0]
    >>> case.name, [cell.status for cell in run_case(case, Path(tempfile.mkdtemp()), ("labkit", "sentencepiece"), ["Hello world"])]
    ('spm/unigram', ['exact', 'exact'])
"""
from __future__ import annotations

import io
from pathlib import Path

import sentencepiece

from labkit.conformance.cases import ConfigCase, register
from labkit.paths import data_path

ENGINES = ("labkit", "sentencepiece", "hf", "default")
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


def train_model(name: str, folder: Path) -> Path:
    """Train configuration ``name`` on botchan into ``folder/name.model``.

    Example:
        >>> import tempfile
        >>> train_model("bpe", Path(tempfile.mkdtemp())).name
        'bpe.model'
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


class SentencePieceReference:
    """``sentencepiece`` called directly on a ``.model``, in the runner's terms: a .model
    adds neither BOS nor EOS, never matches control spellings, and its decode drops control ids.

    Example (the dummy-prefix ``▁`` covers no character of the text):
        >>> import tempfile
        >>> reference = SentencePieceReference(train_model("bpe", Path(tempfile.mkdtemp())))
        >>> reference.encode("x", False)[1:]
        (['▁', 'x'], [(0, 0), (0, 1)])
    """

    def __init__(self, path: Path):
        self.sp = sentencepiece.SentencePieceProcessor(model_file=str(path))

    def encode(self, text: str, add_special_tokens: bool):
        out = self.sp.encode(text, out_type="offset_mapping", return_bytes=False)
        ids = list(out["ids"])
        # out["pieces"] shows an unknown piece's surface text; the piece itself is id_to_piece
        return ids, [self.sp.id_to_piece(i) for i in ids], [tuple(o) for o in out["offsets"]]

    def decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return self.sp.decode(list(ids))


# text only SentencePiece options make interesting: user-defined and control spellings in
# context, the unknown surface, whitespace next to symbols, digits next to letters
EXTRA_TEXTS = ("<sep> tag", "a<sep>b", "tag <sep>", "<sep><sep>", "<<sep>>", "x <s> y", "x<ctl>y",
               "<mask>42<mask>", "a42b 4242", "\u2047", " \u2047 ", "語" * 60, "é" * 50, "e\u0301" * 20)


def component_of(name: str) -> tuple[tuple[str, str], ...]:
    """The (kind, label) pairs a configuration exercises.

    Example:
        >>> from labkit.conformance.spm_matrix import component_of
        >>> component_of("bpe+control")
        (('model_type', 'bpe'), ('option', 'control'))
    """
    model = name.split("+")[0].split("-")[0].split("/")[0]
    parts = [("model_type", model)]
    for sep, kind in (("+", "option"), ("-", "option off"), ("/", "normalization_rule")):
        if sep in name:
            parts.append((kind, name.split(sep, 1)[1]))
            break
    return tuple(parts)


def _case(name: str) -> ConfigCase:
    options = SPM_CONFIGS[name]
    specials = ("<s>", "</s>", "<unk>", *options.get("user_defined_symbols", ()), *options.get("control_symbols", ()))
    return ConfigCase(
        name=f"spm/{name}", family="spm", components=component_of(name),
        build=lambda folder, name=name: train_model(name, folder),
        reference=SentencePieceReference, specials=specials, texts=EXTRA_TEXTS,
    )


@register("spm")
def spm_cases() -> list[ConfigCase]:
    """Every SentencePiece configuration as a ConfigCase.

    Example:
        >>> from labkit.conformance.spm_matrix import spm_cases
        >>> [c.name for c in spm_cases()][:2]
        ['spm/unigram', 'spm/bpe']
    """
    return [_case(name) for name in SPM_CONFIGS]
