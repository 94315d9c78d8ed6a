"""Checkers for the "Try it" exercises of notebooks 05 (Unigram) and 06 (the charsmap).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint that says which part of the answer is wrong, and returns True/False. While an
answer is still the stub ``...`` (or ``None``) it prints ``not answered yet`` and returns None.
Introduced in notebooks ``05_unigram_trie_viterbi`` and ``06_normalization_charsmap``.

Example:
    >>> from labkit.exercises.unigram import check_viterbi
    >>> check_viterbi({"a": -1, "b": -2, "ab": -2.5}, "ab", ["ab"])
    right
    True
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

from labkit.algorithms.unigram import UnigramModel
from labkit.core import LabkitError
from labkit.exercises import unanswered
from labkit.exercises import verdict as _verdict


@lru_cache(maxsize=1)
def _botchan():
    import labkit

    return labkit.load("botchan-unigram", engine="labkit")


def _toy(scores: Mapping[str, float]) -> UnigramModel:
    if not scores or not all(isinstance(p, str) and p for p in scores):
        raise LabkitError("the scores must map non-empty piece strings to numbers")
    return UnigramModel(["<unk>", *scores], [0.0, *scores.values()], [2] + [1] * len(scores), sentencepiece=False)


def check_viterbi(scores: Mapping[str, float], text: str, answer: Sequence[str]) -> bool:
    """Which pieces does the Viterbi pass choose for ``text`` (already normalised) given
    piece ``scores``? Unknown characters score ``min score - 10``.

    Example:
        >>> from labkit.exercises.unigram import check_viterbi
        >>> check_viterbi({"a": -1, "b": -2, "ab": -2.5}, "ab", ["ab"])
        right
        True
    """
    if unanswered(answer):
        return None
    model = _toy(scores)
    best = [text[s:e] for _, s, e in model.encode(text)]
    answer = list(answer)
    if "".join(map(str, answer)) != text:
        return _verdict(False, f"the pieces must spell the text exactly: {''.join(map(str, answer))!r} is not {text!r}")
    unknown = [piece for piece in answer if piece not in scores]
    if unknown:
        return _verdict(False, f"{unknown[0]!r} is not a piece of the vocabulary; cut only into pieces that have a score")
    total = sum(scores[piece] for piece in answer)
    best_total = sum(scores[piece] for piece in best if piece in scores)
    return _verdict(answer == best,
                    f"your cut scores {total:g}; another cut scores {best_total:g} (higher wins: add up each cut's scores)")


def check_best_score(scores: Mapping[str, float], text: str, answer: float) -> bool:
    """What total score does the best segmentation of ``text`` reach?

    Example:
        >>> from labkit.exercises.unigram import check_best_score
        >>> check_best_score({"a": -1, "b": -2, "ab": -2.5}, "ab", -2.5)
        right
        True
    """
    if unanswered(answer):
        return None
    lattice = _toy(scores).lattice(text)
    hint = "best[j] = max over pieces text[i:j] of best[i] + score; the answer is best[len(text)]"
    if float(answer) > 0:
        hint = "scores are log probabilities (negative), so a total is negative too"
    elif float(answer) < lattice.score:
        hint = "that total belongs to a worse cut: keep the highest offer at each offset"
    return _verdict(abs(float(answer) - lattice.score) < 1e-6, hint)


def check_botchan_tokens(text: str, answer: Sequence[str]) -> bool:
    """Which tokens does the botchan Unigram model give ``text``?

    Example:
        >>> from labkit.exercises.unigram import check_botchan_tokens
        >>> check_botchan_tokens("What is", ["▁What", "▁is"])
        right
        True
    """
    if unanswered(answer):
        return None
    expected = _botchan().encode(text, parse_special=False).tokens
    answer = list(answer)
    if not answer or not str(answer[0]).startswith("\u2581"):
        return _verdict(False, "the first piece starts with '▁': the normaliser puts one in front of the text")
    if "".join(map(str, answer)) != "".join(expected):
        return _verdict(False, f"the pieces must spell the normalised text {''.join(expected)!r}")
    first = next(k for k, (a, b) in enumerate(zip(answer + [None], expected + [None])) if a != b) if answer != expected else -1
    return _verdict(answer == expected, f"the cut differs from piece {first} on ({answer[first:first + 2]}): "
                                        "that piece is not the best-scoring way on")


def check_normalized(text: str, answer: str) -> bool:
    """What does the botchan model's normaliser (NFKC charsmap + whitespace rules) make of
    ``text``?

    Example:
        >>> from labkit.exercises.unigram import check_normalized
        >>> check_normalized("Ｈｉ  there", "▁Hi▁there")
        right
        True
    """
    if unanswered(answer):
        return None
    expected = _botchan().normalize(text)
    hint = "apply the longest charsmap rule at each position, squeeze spaces, add '▁' in front, spaces -> '▁'"
    if isinstance(answer, str):
        if not answer.startswith("\u2581"):
            hint = "the dummy prefix: the normalised text starts with '▁'"
        elif " " in answer:
            hint = "spaces become '▁' (escape_whitespaces)"
        elif "\u2581\u2581" in answer:
            hint = "runs of spaces are squeezed to one before they become '▁'"
        elif answer.lower() == expected.lower() or len(answer) == len(expected):
            hint = "NFKC maps full-width letters to plain ASCII ones; compare each character"
    return _verdict(answer == expected, hint)


def check_charsmap_replacement(char: str, answer: str) -> bool:
    """What does the NFKC charsmap replace ``char`` with (itself if no rule applies)?

    Example:
        >>> from labkit.exercises.unigram import check_charsmap_replacement
        >>> check_charsmap_replacement("①", "1")
        right
        True
    """
    if not isinstance(char, str) or not char:
        raise LabkitError("check_charsmap_replacement: give a non-empty str")
    if unanswered(answer):
        return None
    match = _botchan().normalizer.charsmap.longest_match(char.encode("utf-8"))
    expected = match.replacement if match is not None and match.length == len(char.encode("utf-8")) else char
    hint = "walk the double array byte by byte; the longest key that ends a leaf wins"
    if expected == char and answer != char:
        hint = f"no key starts with {ascii(char)}: the character is copied as it is"
    elif expected != char and answer == char:
        hint = f"{ascii(char)} is a key of the charsmap: it is replaced"
    elif isinstance(answer, str) and len(answer) != len(expected):
        hint = f"the replacement has {len(expected)} character(s)"
    return _verdict(answer == expected, hint)


def check_viterbi_function(viterbi, lines: int = 400) -> bool:
    """Build it: ``viterbi(normalized_text)`` returns the ids of the best segmentation under
    the botchan model (unknown runs merged into one ``<unk>``); it must equal sentencepiece
    on the first ``lines`` lines of *Botchan*. Says which line, and where in it, differs.

    Example:
        >>> import labkit
        >>> model = labkit.load("botchan-unigram", engine="labkit").model
        >>> check_viterbi_function(lambda text: [i for i, _, _ in model.encode(text)], lines=20)
        right
        True
    """
    if unanswered(viterbi):
        return None
    if not callable(viterbi):
        raise LabkitError("check_viterbi_function: give a function normalized_text -> list of ids")
    import sentencepiece

    from labkit.paths import data_path

    tok = _botchan()
    sp = sentencepiece.SentencePieceProcessor(model_file=str(data_path("sentencepiece/botchan_en_unigram_1000.model")))
    corpus = [line for line in data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n") if line.strip()]
    for number, line in enumerate(corpus[:lines]):
        expected = sp.encode(line)
        got = list(viterbi(tok.normalize(line)))
        if not all(isinstance(i, int) for i in got):
            raise LabkitError("check_viterbi_function: the function must return a list of ids (ints), "
                              f"got {got[:3]!r}... for line {number}")
        if got != expected:
            at = next((k for k, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
            pieces = tok.vocab.tokens
            if any(pieces[i] == "<unk>" for i in expected) and len(got) > len(expected):
                hint = "merge each run of unknown pieces into one <unk>"
            elif got[:1] and expected[:1] and got[0] != expected[0] and at == 0:
                hint = "the first piece already differs: is best[0] = 0 and do offers reach best[j] from every start i < j?"
            else:
                hint = ("on a tie keep the first offer (the piece that starts earlier), and add in 32-bit floats as "
                        "sentencepiece does")
            shown = [pieces[i] for i in got[at:at + 3]], [pieces[i] for i in expected[at:at + 3]]
            return _verdict(False, f"line {number} {line[:40]!r}..., token {at}: yours {shown[0]}, sentencepiece {shown[1]}; {hint}")
    return _verdict(True, "")
