"""Training a WordPiece vocabulary with the pair score ``count(ab) / (count(a) · count(b))``.

Words come from a BERT-style pre-tokenizer (split on whitespace, every punctuation
character alone). Each word starts as its characters, the first plain and the rest with
``##`` (``hug`` -> ``h ##u ##g``); the vocabulary starts as the special tokens and every such
unit. Then, until the vocabulary is full, the adjacent pair with the highest score merges
everywhere (``h`` + ``##u`` -> ``hu``, ``##u`` + ``##g`` -> ``##ug``), ties going to the
pair of smaller ids (earlier in the vocabulary).

The score prefers pairs whose parts are rare on their own: BPE merges the most *frequent*
pair, WordPiece the pair that is most *surprising* given its parts (the likelihood gain of
a unigram language model, as Google's WordPiece paper describes it). ``tokenizers``'
``WordPieceTrainer`` does not do this: it trains BPE by frequency with the ``##`` prefix and
keeps BPE's vocabulary; notebook ``13_where_vocabularies_come_from`` shows where the two
vocabularies part.

Example:
    >>> from labkit.algorithms.wordpiece_train import train_wordpiece
    >>> train_wordpiece(["hug hugs pug pun bun hugs"], 30).tokens[-3:]
    ['pug', 'hug', 'hugs']
"""
from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from typing import Iterable

from labkit.algorithms.bert_basic import is_punctuation, is_whitespace
from labkit.core import LabkitError

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def bert_words(text: str) -> list[str]:
    """Split like ``tokenizers``' BertPreTokenizer: on whitespace, with each punctuation
    character a word of its own.

    Example:
        >>> from labkit.algorithms.wordpiece_train import bert_words
        >>> bert_words("Hi, there!")
        ['Hi', ',', 'there', '!']
    """
    words, current = [], []
    for ch in text:
        if is_whitespace(ch):
            if current:
                words.append("".join(current))
                current = []
        elif is_punctuation(ch):
            if current:
                words.append("".join(current))
                current = []
            words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


@dataclass
class WordPieceMerge:
    """One training step: ``left`` + ``right`` became ``token`` with this score.

    Example:
        >>> from labkit.algorithms.wordpiece_train import WordPieceMerge
        >>> WordPieceMerge("h", "##u", "hu", 0.05, 20)
        WordPieceMerge(left='h', right='##u', token='hu', score=0.05, count=20)
    """

    left: str
    right: str
    token: str
    score: float
    count: int


@dataclass
class TrainedWordPiece:
    """The vocabulary (special tokens, alphabet, then merged tokens in order) and the merges.

    Example:
        >>> trained = train_wordpiece(["hug hugs pug pun bun hugs"], 30)
        >>> trained.vocab()["[UNK]"], list(trained.vocab())[-3:]
        (1, ['pug', 'hug', 'hugs'])
    """

    tokens: list[str]
    merges: list[WordPieceMerge] = field(default_factory=list)
    seconds: float = 0.0

    def vocab(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.tokens)}


def train_wordpiece(texts: Iterable[str], vocab_size: int, *, prefix: str = "##",
                    special_tokens: Iterable[str] = SPECIAL_TOKENS, score: str = "pair",
                    max_chars: int = 20_000_000) -> TrainedWordPiece:
    """Train a WordPiece vocabulary of ``vocab_size`` tokens by the pair score.

    ``score="frequency"`` merges the most frequent pair instead (BPE with ``##``
    continuations, what ``tokenizers``' WordPieceTrainer does).

    Pair counts and unit counts are kept up to date as merges happen, and a heap holds the
    scores (a stale entry is skipped when popped), so each merge touches only the words
    that hold the pair.

    Example:
        >>> from labkit.algorithms.wordpiece_train import train_wordpiece
        >>> train_wordpiece(["hug hugs pug pun bun hugs"], 20).tokens[5:9]
        ['b', 'g', 'h', 'n']

    (introduced in notebook ``13_where_vocabularies_come_from``)
    """
    if score not in ("pair", "frequency"):
        raise LabkitError(f"train_wordpiece: score must be 'pair' or 'frequency', got {score!r}")
    if not isinstance(vocab_size, int) or vocab_size < 1:
        raise LabkitError(f"train_wordpiece: vocab_size must be a positive int, got {vocab_size!r}")
    started = time.process_time()
    word_counts: dict[str, int] = {}
    total = 0
    for text in texts:
        if not isinstance(text, str):
            raise LabkitError(f"train_wordpiece: every text must be str, got {type(text).__name__}")
        total += len(text)
        if total > max_chars:
            raise LabkitError(f"train_wordpiece: corpus over max_chars={max_chars:,} characters")
        for word in bert_words(text):
            word_counts[word] = word_counts.get(word, 0) + 1
    specials = list(dict.fromkeys(special_tokens))
    words = [[word[0]] + [prefix + ch for ch in word[1:]] for word in word_counts]
    counts = list(word_counts.values())
    # every character alone (as tokenizers does, even one that never starts a word), then
    # the ## forms that occur
    chars = {ch for word in word_counts for ch in word}
    alphabet = sorted(chars) + sorted({unit for units in words for unit in units[1:]})
    tokens = specials + [unit for unit in alphabet if unit not in specials]
    if vocab_size < len(tokens):
        raise LabkitError(f"train_wordpiece: vocab_size {vocab_size} is smaller than the "
                          f"{len(tokens)} special tokens and characters")
    unit_count: dict[str, int] = {}
    pair_count: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], set[int]] = {}
    for w, (units, c) in enumerate(zip(words, counts)):
        for unit in units:
            unit_count[unit] = unit_count.get(unit, 0) + c
        for pair in zip(units, units[1:]):
            pair_count[pair] = pair_count.get(pair, 0) + c
            where.setdefault(pair, set()).add(w)
    pairs_of: dict[str, set[tuple[str, str]]] = {}
    for pair in pair_count:
        pairs_of.setdefault(pair[0], set()).add(pair)
        pairs_of.setdefault(pair[1], set()).add(pair)

    by_frequency = score == "frequency"

    def score(pair):
        if by_frequency:
            return float(pair_count[pair])
        return pair_count[pair] / (unit_count[pair[0]] * unit_count[pair[1]])

    rank = {token: i for i, token in enumerate(tokens)}  # ties go to the pair of smaller ids

    def entry(pair):
        return (-score(pair), rank[pair[0]], rank[pair[1]], pair)

    heap = [entry(pair) for pair in pair_count]
    heapq.heapify(heap)
    known = set(tokens)
    merges: list[WordPieceMerge] = []
    while len(tokens) < vocab_size and heap:
        negative, _, _, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) <= 0 or -negative != score(pair):
            continue  # stale: counts changed since this entry was pushed
        left, right = pair
        merged = left + (right[len(prefix):] if right.startswith(prefix) else right)
        merges.append(WordPieceMerge(left, right, merged, -negative, pair_count[pair]))
        if merged not in known:
            known.add(merged)
            rank[merged] = len(tokens)
            tokens.append(merged)
        touched: set[tuple[str, str]] = set()
        # the pair is replaced inside each word as in bpe_train.py, on purpose: each trainer keeps
        # its own counts (frequency there, the pair score here), so each loop reads whole in its file
        for w in sorted(where.pop(pair, ())):
            units, c = words[w], counts[w]
            for old in zip(units, units[1:]):
                _add(pair_count, where, pairs_of, old, -c, w)
                touched.add(old)
            out, i = [], 0
            while i < len(units):
                if i + 1 < len(units) and units[i] == left and units[i + 1] == right:
                    out.append(merged)
                    unit_count[left] -= c
                    unit_count[right] -= c
                    unit_count[merged] = unit_count.get(merged, 0) + c
                    i += 2
                else:
                    out.append(units[i])
                    i += 1
            words[w] = out
            for new in zip(out, out[1:]):
                _add(pair_count, where, pairs_of, new, c, w)
                touched.add(new)
        # the parts' counts fell, so every pair holding them scores higher now
        for unit in (left, right, merged):
            touched |= pairs_of.get(unit, set())
        for other in touched:
            if pair_count.get(other, 0) > 0:
                heapq.heappush(heap, entry(other))
    return TrainedWordPiece(tokens, merges, time.process_time() - started)


def _add(pair_count, where, pairs_of, pair, delta, w):
    pair_count[pair] = pair_count.get(pair, 0) + delta
    if delta > 0:
        where.setdefault(pair, set()).add(w)
        pairs_of.setdefault(pair[0], set()).add(pair)
        pairs_of.setdefault(pair[1], set()).add(pair)
    elif pair_count[pair] <= 0:
        pair_count.pop(pair)
        where.pop(pair, None)
