"""Train a small byte-level BPE: count pairs, merge the most frequent, repeat.

1. Pre-tokenize the corpus (the same regexes as encoding, so no merge crosses a word
   boundary) and count each distinct word once with its frequency.
2. Start from the 256 single bytes (id = byte value).
3. Count every adjacent pair over all words, weighted by word frequency; merge the most
   frequent pair everywhere (left to right, non-overlapping) into a new token; repeat until
   the vocabulary has ``vocab_size`` tokens or no pair is left.

Ties are broken by the smallest pair (compare the left part's bytes, then the right's), so a
run is deterministic and easy to check by hand. Pair counts are updated incrementally: after a
merge only the words that contained the pair are recounted.
Introduced in notebook ``02_bpe_byte_level``.

Example:
    >>> from labkit.algorithms.bpe_train import train_bpe
    >>> train_bpe(["aaabdaaabac"], vocab_size=259).merges
    [(b'a', b'a'), (b'a', b'b'), (b'aa', b'ab')]
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.algorithms.pretokenize import get_pre_tokenizer
from labkit.core import TOKEN_NORMAL, LabkitError, VocabData


@dataclass(frozen=True)
class TrainStep:
    """One training merge: the pair, how often it occurred, and the new token.

    Example:
        >>> from labkit.algorithms.bpe_train import TrainStep
        >>> TrainStep(pair=(b'a', b'a'), count=4, new_id=256, new_token=b'aa')
        TrainStep(pair=(b'a', b'a'), count=4, new_id=256, new_token=b'aa')
    """

    pair: tuple[bytes, bytes]
    count: int
    new_id: int
    new_token: bytes


@dataclass
class TrainedBPE:
    """The result of :func:`train_bpe`: merges in rank order, id -> bytes, and the steps.

    Example (four merges learned, then served by labkit's byte-level BPE engine):
        >>> from labkit.engines.labkit_bpe_byte import build
        >>> build(train_bpe(["low lower lowest"], 260).to_vocab_data()).encode("lowest").tokens
        ['low', 'e', 's', 't']

    Introduced in notebook ``02_bpe_byte_level``.
    """

    merges: list[tuple[bytes, bytes]]
    vocab: dict[int, bytes]
    pre: str
    steps: list[TrainStep] = field(default_factory=list)
    word_counts: dict[str, int] = field(default_factory=dict)

    def to_vocab_data(self, source: str = "trained-bpe") -> VocabData:
        """A VocabData (GPT-2 spelling, merges, the same pre-tokenizer) for the labkit engine."""
        ids = sorted(self.vocab)
        if ids != list(range(len(ids))):
            raise LabkitError(f"{source}: trained vocab ids are not 0..{len(ids) - 1}")
        tokens = [bytes_to_gpt2(self.vocab[i]) for i in ids]
        return VocabData(
            source=source,
            format="trained",
            model="bpe_byte",
            tokens=tokens,
            token_types=[TOKEN_NORMAL] * len(tokens),
            merges=[(bytes_to_gpt2(a), bytes_to_gpt2(b)) for a, b in self.merges],
            token_bytes=None,
            pre=self.pre,
        )


def train_bpe(texts: Iterable[str], vocab_size: int, *, pre: str = "gpt-2", min_count: int = 1) -> TrainedBPE:
    """Learn ``vocab_size - 256`` merges from ``texts`` (fewer if pairs run out).

    ``min_count``: stop when the best pair occurs fewer times than this.
    Example:
        >>> from labkit.algorithms.bpe_train import train_bpe
        >>> train_bpe(["low lower lowest"], 260).steps[0].pair
        (b'l', b'o')

    Introduced in notebook ``02_bpe_byte_level``.
    """
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(vocab_size, int) or vocab_size < 256:
        raise LabkitError(f"train_bpe(): vocab_size must be an int >= 256 (the byte alphabet), got {vocab_size!r}")
    spec = get_pre_tokenizer(pre)
    word_counts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise LabkitError(f"train_bpe(): text #{i} is {type(text).__name__}, not str")
        word_counts.update(spec.split(text))

    words: list[list[bytes]] = []
    freqs: list[int] = []
    for word, count in word_counts.items():
        data = word.encode("utf-8")
        words.append([data[i : i + 1] for i in range(len(data))])
        freqs.append(count)

    pair_counts: Counter[tuple[bytes, bytes]] = Counter()
    where: dict[tuple[bytes, bytes], set[int]] = defaultdict(set)
    for w, parts in enumerate(words):
        for pair in zip(parts, parts[1:]):
            pair_counts[pair] += freqs[w]
            where[pair].add(w)

    vocab = {i: bytes([i]) for i in range(256)}
    merges: list[tuple[bytes, bytes]] = []
    steps: list[TrainStep] = []
    while len(vocab) < vocab_size and pair_counts:
        # most frequent; on a tie the smallest pair (bytes order) wins
        best = min(pair_counts.items(), key=lambda item: (-item[1], item[0]))
        pair, count = best
        if count < max(1, min_count):
            break
        merged = pair[0] + pair[1]
        new_id = len(vocab)
        vocab[new_id] = merged
        merges.append(pair)
        steps.append(TrainStep(pair, count, new_id, merged))
        for w in sorted(where.pop(pair, ())):
            parts = words[w]
            f = freqs[w]
            # take the word's pairs out, merge, put the new pairs back
            for old in zip(parts, parts[1:]):
                pair_counts[old] -= f
                if pair_counts[old] <= 0:
                    del pair_counts[old]
            new_parts = []
            i = 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == pair[0] and parts[i + 1] == pair[1]:
                    new_parts.append(merged)
                    i += 2
                else:
                    new_parts.append(parts[i])
                    i += 1
            words[w] = new_parts
            for new in zip(new_parts, new_parts[1:]):
                pair_counts[new] += f
                where[new].add(w)
        pair_counts.pop(pair, None)
    return TrainedBPE(merges=merges, vocab=vocab, pre=spec.name, steps=steps, word_counts=dict(word_counts))
