"""labkit's Unigram trainer vs sentencepiece's trainer run here on botchan with its
default options: the piece sets and the encodings of the corpus are compared."""
from __future__ import annotations

import io
import math

import pytest
import sentencepiece as spm

from labkit.training.unigram_train import (
    UnigramTrainer,
    default_normalizer,
    digamma,
    is_valid_piece,
    required_chars,
    seed_pieces,
    split_words,
    train_unigram,
)
from labkit.core import LabkitError
from labkit.paths import data_path

CORPUS = data_path("corpus/botchan.txt")
LINES = CORPUS.read_text(encoding="utf-8").split("\n")


def train_reference(vocab_size: int) -> spm.SentencePieceProcessor:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(CORPUS), model_writer=model, vocab_size=vocab_size,
                                   model_type="unigram", minloglevel=2)
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


_TRAINERS: dict[int, UnigramTrainer] = {}


def labkit_trainer(vocab_size: int) -> tuple[UnigramTrainer, object]:
    if vocab_size not in _TRAINERS:
        trainer = UnigramTrainer(vocab_size)
        _TRAINERS[vocab_size] = (trainer, trainer.train(LINES))
    return _TRAINERS[vocab_size]


@pytest.fixture(scope="module", params=[1000, 4000])
def trained(request):
    vocab_size = request.param
    return vocab_size, train_reference(vocab_size), labkit_trainer(vocab_size)[1]


def test_vocabulary_is_sentencepiece_s_bit_for_bit(trained):
    vocab_size, sp, ours = trained
    reference = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    # measured: identical pieces, ids and float scores at 1000 and at 4000
    assert ours.pieces == reference
    assert ours.scores == [sp.get_score(i) for i in range(sp.get_piece_size())]
    assert ours.types[:3] == [2, 3, 3]


def test_encodings_of_the_corpus_agree(trained):
    vocab_size, sp, ours = trained
    model = ours.model()
    normalize = default_normalizer().normalize
    lines = [line for line in LINES if line.strip()]
    for line in lines:
        assert [i for i, _, _ in model.encode(normalize(line))] == sp.encode(line), line


def test_double_sums_break_one_tie_differently():
    # float32_em=False sums in doubles: at 1000 on botchan four pieces share sentencepiece's
    # float score at the cut; in doubles two of them come out one float step lower
    sp = train_reference(1000)
    fast = UnigramTrainer(1000, float32_em=False).train(LINES)
    reference = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}
    assert sorted(reference - set(fast.pieces)) == ["▁borrow", "▁garden"]
    assert sorted(set(fast.pieces) - reference) == ["▁grabbe", "▁window"]


def test_em_log_matches_sentencepiece_sizes():
    # sentencepiece 0.2.3 logs these sizes for botchan at 1000 (EM sub-iterations after each prune)
    trainer, _ = labkit_trainer(1000)
    sizes = [step.size for step in trainer.log if step.kind in ("seed", "em")]
    assert sizes == [16112, 5926, 5232, 3923, 3921, 2940, 2940, 2205, 2205, 1653, 1653, 1239, 1239]
    objectives = [round(step.objective, 3) for step in trainer.log if step.kind == "em"]
    assert objectives[:2] == [10.528, 8.645]


def test_digamma_matches_known_values():
    # the asymptotic series is good to about 1e-10 (scipy.special.digamma's values)
    assert digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-9)
    assert digamma(0.5) == pytest.approx(-1.9635100260214235, abs=1e-9)
    assert digamma(10.0) == pytest.approx(2.251752589066721, abs=1e-9)


def test_piece_validity_rules():
    assert is_valid_piece("▁the")
    assert not is_valid_piece("the▁")
    assert not is_valid_piece("e.")  # Latin then Common
    assert is_valid_piece("▁1984")
    assert not is_valid_piece("a" * 17)
    assert not is_valid_piece("a\u2047")


def test_seed_counts_right_maximal_substrings():
    seeds = seed_pieces(["▁ab▁ab", "▁ab"])
    # characters by count (ties in byte order), then substrings by count x length: "▁ab" and
    # "ab" are followed by "▁" or a sentence end (3 times, plus 2 for "…\0" before different
    # bytes: 5); "▁a" is always followed by "b", so it is no suffix-tree node
    assert [piece for piece, _ in seeds] == ["a", "b", "▁", "▁ab", "ab"]
    values = [3, 3, 3, 15, 10]
    assert [round(math.exp(score) * sum(values), 3) for _, score in seeds] == values


def test_required_chars_and_words():
    assert required_chars(["▁aab"], 0.98) == {"a": 2, "▁": 1, "b": 1}
    assert split_words(["▁a▁b▁a"]) == [("▁a", 2), ("▁b", 1)]


@pytest.mark.parametrize("options", [{"vocab_size": 3}, {"vocab_size": 100, "character_coverage": 0.5},
                                     {"vocab_size": 100, "shrinking_factor": 1.0}])
def test_bad_options_are_refused(options):
    with pytest.raises(LabkitError):
        UnigramTrainer(**options)


def test_too_small_vocabulary_is_refused():
    with pytest.raises(LabkitError, match="required characters"):
        train_unigram(LINES[:200], 10)
    with pytest.raises(LabkitError, match="no sentence"):
        train_unigram(["", "   "], 100)
