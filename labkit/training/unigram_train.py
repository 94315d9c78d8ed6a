"""Training a Unigram vocabulary the way sentencepiece's trainer does: seed pieces from
frequent substrings, EM over each word's lattice, pruning by the loss of likelihood.

The steps, with sentencepiece 0.2.3's defaults (``unigram_model_trainer.cc``,
``trainer_interface.cc``):

1. **Sentences.** Each input line is normalised (NFKC, ``▁`` for spaces, a dummy prefix);
   empty lines, lines over ``max_sentence_length`` bytes and lines holding ``" ⁇ "`` are
   skipped.
2. **Required characters.** Characters sorted by count (then code point) are taken until
   they cover ``character_coverage`` (0.9995) of all characters; the rest become ``⁇``
   (U+2047) and never enter a piece.
3. **Seed.** Every single character, plus the substrings a suffix array marks as internal
   nodes: byte strings that occur at least twice and are right-maximal (not always followed
   by the same byte), 2..``max_piece_length`` characters, valid pieces (``▁`` only first,
   one Unicode script, no ``⁇``). Each scores ``count × length``; the top ``seed_size`` are
   kept, ties broken by longer then smaller byte string. A string that ends a sentence also
   counts the node "string + sentence end", as sentencepiece adds both. Scores become log
   probabilities.
4. **Words.** Sentences are split before each ``▁`` and counted; EM works on the distinct
   words, most frequent first.
5. **EM.** E-step: forward-backward over each word's lattice gives the expected count of
   every piece. M-step: pieces expected less than 0.5 times go; the rest score
   ``digamma(count) - digamma(total)`` (a sparse, Bayesian variant of the plain
   ``log(count / total)``). Two such rounds, then pruning.
6. **Pruning.** A piece whose best segmentation (of its own string) is not itself can go
   at no loss; for the others the second-best segmentation is the fallback, and the loss
   of likelihood if the piece were replaced by it everywhere is estimated from Viterbi
   counts. The ``shrinking_factor`` (0.75) share with the highest loss stays (never fewer
   than ``1.1 × vocab_size``). Repeat from 5 until the model is that small.
7. **Final vocabulary.** Pieces the Viterbi pass could never choose go; the required
   characters come first (a missing one scores just below the lowest piece), then the
   best-scored pieces up to ``vocab_size`` minus the three meta pieces.

By default the E-step copies sentencepiece's arithmetic too (``float32_em=True``): log sums
in 32-bit floats, expected counts added into 16 float accumulators (one per sentencepiece
thread: word i goes to accumulator i mod 16) and summed in order. That makes the result
bit-identical to sentencepiece's (pieces, order and scores, measured on botchan at 1000 and
4000). ``float32_em=False`` sums in doubles, about twice as fast; its scores differ in the
last float bit, enough to break a tie differently now and then (notebook
``13_where_vocabularies_come_from``).

Example (150 pieces from the first 200 lines of *Botchan*; the meta pieces come first):
    >>> from labkit.paths import data_path
    >>> from labkit.training.unigram_train import train_unigram
    >>> lines = data_path("corpus/botchan.txt").read_text(encoding="utf-8").splitlines()[:200]
    >>> train_unigram(lines, 150).pieces[:8]
    ['<unk>', '<s>', '</s>', '▁', 'e', 's', 't', 'i']
"""
from __future__ import annotations

import functools
import math
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import regex

from labkit.algorithms.unigram import to_float32 as f32  # sentencepiece stores scores as floats
from labkit.core import LabkitError

SPACE = "\u2581"
UNK_CHAR = "\u2047"  # sentencepiece's stand-in for a character outside the required set
UNK_PENALTY = 10.0
META_PIECES = ("<unk>", "<s>", "</s>")
EXPECTED_FREQUENCY_THRESHOLD = 0.5


def digamma(x: float) -> float:
    """The digamma function by its asymptotic series after shifting ``x`` above 7
    (the formula sentencepiece's M-step uses).

    Example:
        >>> from labkit.training.unigram_train import digamma
        >>> round(digamma(1.0), 6)
        -0.577216
    """
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += math.log(x) + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4
    return result


# ----------------------------------------------------------------------------- piece validity

# scripts told apart (sentencepiece uses Unicode's Scripts.txt; others share one label)
_SCRIPTS = ("Latin", "Common", "Inherited", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Devanagari",
            "Bengali", "Thai", "Georgian", "Hangul", "Han", "Hiragana", "Katakana", "Ethiopic", "Tamil", "Telugu")
_SCRIPT_RES = [(name, regex.compile(rf"\p{{Script={name}}}")) for name in _SCRIPTS]
_script_cache: dict[str, str] = {}


def script_of(ch: str) -> str:
    """The Unicode script of one character as sentencepiece's trainer groups them:
    Hiragana, Katakana and ``ー`` count as Han.

    Example:
        >>> from labkit.training.unigram_train import script_of
        >>> (script_of("a"), script_of("."), script_of("か"))
        ('Latin', 'Common', 'Han')
    """
    found = _script_cache.get(ch)
    if found is None:
        found = "Other"
        for name, pattern in _SCRIPT_RES:
            if pattern.match(ch):
                found = name
                break
        if found in ("Hiragana", "Katakana") or ch == "\u30fc":
            found = "Han"
        _script_cache[ch] = found
    return found


def is_valid_piece(piece: str, max_piece_length: int = 16) -> bool:
    """sentencepiece's rule for a trainable piece (default options): 1..max_piece_length
    characters, no ``⁇``/NUL/space, ``▁`` only as the first character, one script
    (an Inherited mark takes its neighbour's; digits are Common).

    Example:
        >>> from labkit.training.unigram_train import is_valid_piece
        >>> [is_valid_piece(p) for p in ("▁the", "e▁", "e.", "▁1984")]
        [True, False, False, True]
    """
    if not piece or len(piece) > max_piece_length:
        return False
    prev = None
    for pos, ch in enumerate(piece):
        if ch in (UNK_CHAR, "\x00", " ", "\t"):
            return False
        if ch == SPACE:
            if pos > 0:
                return False
            continue
        script = script_of(ch)
        if script == "Inherited":
            script = prev
        if script is not None and prev is not None and script != prev:
            return False
        prev = script
    return True


# ----------------------------------------------------------------------------- sentences


def load_sentences(lines: Iterable[str], normalize: Callable[[str], str], max_sentence_length: int = 4192) -> list[str]:
    """The normalised training sentences: empty, too long (in UTF-8 bytes) and ``" ⁇ "``
    lines skipped as sentencepiece does, then the ones that normalise to nothing.

    Example:
        >>> from labkit.training.unigram_train import load_sentences
        >>> from labkit.algorithms.charsmap import SpmNormalizer
        >>> load_sentences(["Hello  world", ""], SpmNormalizer(None).normalize)
        ['▁Hello▁world']
    """
    out = []
    for line in lines:
        if not isinstance(line, str):
            raise LabkitError(f"train_unigram: every line must be str, got {type(line).__name__}")
        if not line or len(line.encode("utf-8")) > max_sentence_length or " \u2047 " in line:
            continue
        text = normalize(line)
        if " " in text:
            raise LabkitError("train_unigram: the normaliser left a space in a sentence; escape whitespace as ▁")
        if text:
            out.append(text)
    return out


def required_chars(sentences: Sequence[str], character_coverage: float = 0.9995) -> dict[str, int]:
    """The characters every vocabulary keeps: most frequent first (ties by code point)
    until their share of all characters reaches ``character_coverage``.

    Example:
        >>> from labkit.training.unigram_train import required_chars
        >>> required_chars(["▁aab"], 0.7)
        {'a': 2, 'b': 1}
    """
    counts: dict[str, int] = {}
    for sentence in sentences:
        for ch in sentence:
            if ch not in ("\x00", " "):
                counts[ch] = counts.get(ch, 0) + 1
    total = sum(counts.values())
    if total == 0:
        raise LabkitError("train_unigram: the corpus has no characters after normalisation")
    coverage_goal = f32(character_coverage)
    kept: dict[str, int] = {}
    accumulated = 0
    for ch, count in sorted(counts.items(), key=lambda item: (-item[1], ord(item[0]))):
        if f32(accumulated / total) >= coverage_goal:
            break
        accumulated += count
        kept[ch] = count
    return kept


def split_words(sentences: Sequence[str]) -> list[tuple[str, int]]:
    """Distinct words (a new word starts at each ``▁``) with counts, most frequent first,
    ties in byte order.

    Example:
        >>> from labkit.training.unigram_train import split_words
        >>> split_words(["▁a▁b▁a"])
        [('▁a', 2), ('▁b', 1)]
    """
    counts: dict[str, int] = {}
    for sentence in sentences:
        start = 0
        for pos in range(1, len(sentence) + 1):
            if pos == len(sentence) or sentence[pos] == SPACE:
                word = sentence[start:pos]
                counts[word] = counts.get(word, 0) + 1
                start = pos
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


# ----------------------------------------------------------------------------- the seed


def seed_pieces(sentences: Sequence[str], seed_size: int = 1_000_000, max_piece_length: int = 16) -> list[tuple[str, float]]:
    """The seed vocabulary with log-probability scores: every character (by count), then
    the top ``seed_size`` substrings by ``count × length`` among the suffix array's internal
    nodes (see the module docstring).

    A byte string is an internal node when it occurs twice or more and its occurrences are
    not all followed by the same byte. Counting level by level (length 2, 3, ...) and
    extending only substrings seen twice finds them without building the suffix array.

    Example:
        >>> from labkit.training.unigram_train import seed_pieces
        >>> [p for p, _ in seed_pieces(["▁ab▁ab", "▁ab"])]
        ['a', 'b', '▁', '▁ab', 'ab']
    """
    char_counts: dict[str, int] = {}
    for sentence in sentences:
        for ch in sentence:
            if ch != UNK_CHAR:
                char_counts[ch] = char_counts.get(ch, 0) + 1
    seeds: list[tuple[str, float]] = sorted(char_counts.items(), key=lambda item: (-item[1], item[0]))

    # every char as chr(its first UTF-8 byte): the suffix array tells followers apart by byte
    first_bytes = ["".join(ch if ch < "\x80" else chr(ch.encode("utf-8")[0]) for ch in s) for s in sentences]
    # what follows a sentence's end marker: the next sentence's first byte, or the text's end
    after_end = [first_bytes[i + 1][0] if i + 1 < len(sentences) else "\uffff" for i in range(len(sentences))]
    queue: dict[str, int] = {}
    # per char: a script number (0 for Inherited, which takes its neighbour's), -1 where no
    # piece may continue (▁ after the start, ⁇)
    script_ids: dict[str, int] = {}
    codes = []
    for sentence in sentences:
        row = []
        for ch in sentence:
            if ch == UNK_CHAR or ch == SPACE:
                row.append(-1)
            else:
                script = script_of(ch)
                row.append(0 if script == "Inherited" else script_ids.setdefault(script, len(script_ids) + 1))
        codes.append(row)
    # live: (sentence index, start char, script so far) of substrings still worth extending
    live = []
    for si, sentence in enumerate(sentences):
        for k, ch in enumerate(sentence):
            if ch == UNK_CHAR:
                continue
            live.append((si, k, 0 if ch == SPACE else max(codes[si][k], 0)))
    for length in range(2, max_piece_length + 1):
        pieces, follow_keys, ended, end_keys, extended = [], [], [], [], []
        for si, k, state in live:
            sentence = sentences[si]
            end = k + length
            if end > len(sentence):
                continue
            code = codes[si][end - 1]
            if code < 0:
                continue
            if code:
                if state and code != state:
                    continue
                state = code
            piece = sentence[k:end]
            pieces.append(piece)
            if end < len(sentence):
                follow_keys.append(piece + first_bytes[si][end])
            else:
                follow_keys.append(piece + "\x00")
                ended.append(piece)
                end_keys.append(piece + after_end[si])
            extended.append((si, k, state, piece))
        counts = Counter(pieces)
        _add_nodes(queue, counts, Counter(follow_keys))
        _add_nodes(queue, Counter(ended), Counter(end_keys))
        live = [(si, k, state) for si, k, state, piece in extended if counts[piece] >= 2]
        if not live:
            break
    scored = [(piece, f32(count * float(len(piece)))) for piece, count in queue.items()]
    scored.sort(key=lambda item: (-item[1], -len(item[0].encode("utf-8")), item[0]))
    seeds.extend(scored[:seed_size])
    total = math.fsum(float(value) for _, value in seeds)
    log_total = math.log(total)
    return [(piece, f32(math.log(value) - log_total)) for piece, value in seeds]


def _add_nodes(queue: dict[str, int], counts: Counter, follow: Counter) -> None:
    """Add to ``queue`` the strings seen twice or more whose occurrences are not all
    followed by the same byte (``follow`` counts string + follower)."""
    most_common_next: dict[str, int] = {}
    for key, count in follow.items():
        piece = key[:-1]
        if count > most_common_next.get(piece, 0):
            most_common_next[piece] = count
    for piece, count in counts.items():
        if count >= 2 and most_common_next[piece] < count:
            queue[piece] = queue.get(piece, 0) + count


# ----------------------------------------------------------------------------- lattices


class _Vocabulary:
    """The current pieces and, per word, the seed pieces found in it (found once: a piece
    removed later just drops out of the lattice)."""

    def __init__(self, seeds: list[tuple[str, float]], words: list[tuple[str, int]], max_piece_length: int):
        self.seed_index = {piece: i for i, (piece, _) in enumerate(seeds)}
        self.seed_piece = [piece for piece, _ in seeds]
        # per word: edges (start, end, seed index), by end then start
        self.word_edges = [self.edges_of(word, max_piece_length) for word, _ in words]

    def edges_of(self, text: str, max_piece_length: int) -> list[tuple[int, int, int]]:
        """Edges (start, end, seed index) of every seed piece in ``text``, by end then start."""
        index = self.seed_index
        edges = []
        for j in range(1, len(text) + 1):
            for i in range(max(0, j - max_piece_length), j):
                k = index.get(text[i:j])
                if k is not None:
                    edges.append((i, j, k))
        return edges


@dataclass
class EMStep:
    """One line of the training log: what the model looked like after a step.

    Example:
        >>> from labkit.training.unigram_train import EMStep
        >>> EMStep("em", 0, 5926, 10.53, 67023)
        EMStep(kind='em', round=0, size=5926, objective=10.53, tokens=67023)
    """

    kind: str  # "seed" | "em" | "prune" | "final"
    round: int
    size: int
    objective: float | None = None  # average negative log likelihood per sentence (E-step)
    tokens: int | None = None  # Viterbi tokens over the corpus (E-step)


@dataclass
class UnigramTraining:
    """The result of :func:`train_unigram`: final pieces (meta pieces first) with scores,
    the training log, the word counts EM saw, and how long it took.

    Example:
        >>> result = train_unigram(["hug hugs pug pun bun hugs"], 12)
        >>> result.pieces[3], round(result.scores[3], 4), [step.kind for step in result.log]
        ('n', -1.929, ['seed', 'em', 'em', 'prune', 'final'])
    """

    pieces: list[str]
    scores: list[float]
    types: list[int]
    log: list[EMStep] = field(default_factory=list)
    words: list[tuple[str, int]] = field(default_factory=list)
    required: dict[str, int] = field(default_factory=dict)
    seed_size: int = 0
    seconds: float = 0.0

    def model(self):
        """A :class:`labkit.algorithms.unigram.UnigramModel` over these pieces.

        Example:
            >>> train_unigram(["hug hugs pug pun bun hugs"], 12).model().encode_pieces("▁pun")
            ['▁pu', 'n']
        """
        from labkit.algorithms.unigram import UnigramModel

        return UnigramModel(self.pieces, self.scores, self.types)


class UnigramTrainer:
    """sentencepiece's Unigram trainer, step by step (see the module docstring); call
    :meth:`train`, or the steps one by one to watch them.

    Introduced in notebook ``13_where_vocabularies_come_from``.

    Example (the steps one by one on a tiny corpus: seed, EM, prune, the final table):
        >>> trainer = UnigramTrainer(12)
        >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
        >>> expected, objective, tokens = trainer.e_step(pieces, scores)
        >>> kept, kept_scores = trainer.m_step(pieces, expected)
        >>> kept, kept_scores = trainer.prune(kept, kept_scores)
        >>> len(pieces), len(kept), [piece for piece, _ in trainer.finalize(kept, kept_scores)][:4]
        (17, 8, ['n', '▁pu', '▁', 'u'])
    """

    def __init__(self, vocab_size: int, *, character_coverage: float = 0.9995, max_piece_length: int = 16,
                 seed_size: int = 1_000_000, shrinking_factor: float = 0.75, num_sub_iterations: int = 2,
                 max_sentence_length: int = 4192, normalize: Callable[[str], str] | None = None,
                 max_chars: int = 20_000_000, float32_em: bool = True, num_threads: int = 16):
        if not isinstance(vocab_size, int) or vocab_size <= len(META_PIECES):
            raise LabkitError(f"train_unigram: vocab_size must be an int above {len(META_PIECES)}, got {vocab_size!r}")
        if not 0.98 <= character_coverage <= 1.0:
            raise LabkitError(f"train_unigram: character_coverage must be in [0.98, 1], got {character_coverage!r}")
        if not 0.0 < shrinking_factor < 1.0:
            raise LabkitError(f"train_unigram: shrinking_factor must be in (0, 1), got {shrinking_factor!r}")
        if not isinstance(max_piece_length, int) or max_piece_length < 1:
            raise LabkitError(f"train_unigram: max_piece_length must be a positive int, got {max_piece_length!r}")
        if not isinstance(num_sub_iterations, int) or num_sub_iterations < 1:
            raise LabkitError(f"train_unigram: num_sub_iterations must be a positive int, got {num_sub_iterations!r}")
        self.vocab_size = vocab_size
        self.character_coverage = character_coverage
        self.max_piece_length = max_piece_length
        self.seed_size = seed_size
        self.shrinking_factor = shrinking_factor
        self.num_sub_iterations = num_sub_iterations
        self.max_sentence_length = max_sentence_length
        self.max_chars = max_chars
        self.float32_em = bool(float32_em)
        self.num_threads = num_threads
        if normalize is None:
            normalize = default_normalizer().normalize
        self.normalize = normalize
        self.desired_size = int(vocab_size * 1.1)
        self.log: list[EMStep] = []

    # -- the pipeline --------------------------------------------------------------
    def train(self, lines: Iterable[str]) -> UnigramTraining:
        """Run every step on ``lines`` (one sentence each) and return the vocabulary.

        Example:
            >>> training = UnigramTrainer(12).train(["hug hugs pug pun bun hugs"])
            >>> len(training.pieces), [step.kind for step in training.log][-2:]
            (12, ['prune', 'final'])
        """
        started = time.process_time()
        pieces, scores = self.prepare(lines)
        seeds_count = len(pieces)
        round_ = 0
        while True:
            for _ in range(self.num_sub_iterations):
                expected, objective, tokens = self.e_step(pieces, scores)
                pieces, scores = self.m_step(pieces, expected)
                self.log.append(EMStep("em", round_, len(pieces), objective, tokens))
            pieces, scores = self.prune(pieces, scores)
            self.log.append(EMStep("prune", round_, len(pieces)))
            round_ += 1
            if len(pieces) <= self.desired_size:
                break
        pieces, scores = self.drop_unreachable(pieces, scores)
        final = self.finalize(pieces, scores)
        self.log.append(EMStep("final", round_, len(final)))
        out_pieces = list(META_PIECES) + [piece for piece, _ in final]
        out_scores = [0.0] * len(META_PIECES) + [score for _, score in final]
        types = [2, 3, 3] + [1] * len(final)  # unknown, control, control, then normal pieces
        return UnigramTraining(out_pieces, out_scores, types, self.log, self.words, self.required, seeds_count,
                               time.process_time() - started)

    def prepare(self, lines: Iterable[str]) -> tuple[list[int], list[float]]:
        """Steps 1-4: sentences, required characters, seed, words. Returns the seed model
        (seed indices and their log-probability scores) that EM starts from.

        Example (seed pieces are indices into ``trainer.vocab.seed_piece``):
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> [trainer.vocab.seed_piece[seed] for seed in pieces[8:12]]
            ['▁hug', '▁hugs', 'hug', 'hugs']
        """
        lines = list(lines)
        total_chars = sum(len(line) for line in lines if isinstance(line, str))
        if total_chars > self.max_chars:
            raise LabkitError(f"train_unigram: corpus has {total_chars:,} characters, over max_chars={self.max_chars:,}")
        sentences = load_sentences(lines, self.normalize, self.max_sentence_length)
        if not sentences:
            raise LabkitError("train_unigram: no sentence left after normalisation")
        self.required = required_chars(sentences, self.character_coverage)
        if len(self.required) + len(META_PIECES) > self.vocab_size:
            raise LabkitError(f"train_unigram: vocab_size {self.vocab_size} is smaller than the "
                              f"{len(self.required)} required characters + {len(META_PIECES)} meta pieces")
        sentences = ["".join(ch if ch in self.required else UNK_CHAR for ch in s) for s in sentences]
        seeds = seed_pieces(sentences, self.seed_size, self.max_piece_length)
        self.log = [EMStep("seed", 0, len(seeds))]
        self.words = split_words(sentences)
        self.vocab = _Vocabulary(seeds, self.words, self.max_piece_length)
        # the model: seed indices in sentencepiece's order, and their scores
        return list(range(len(seeds))), [score for _, score in seeds]

    # -- EM ------------------------------------------------------------------------
    def _live_edges(self, pieces: list[int]) -> list[list[tuple[int, int, int]]]:
        """Per word, the edges (start, end, seed index) of the current pieces sorted by end,
        plus an unknown edge (seed index -1) where no one-char piece fits."""
        alive = bytearray(len(self.vocab.seed_piece))
        for seed in pieces:
            alive[seed] = 1
        # unknown edges are needed for ⁇ and once a one-character piece has gone
        chars_gone = any(len(piece) == 1 and not alive[k] for k, piece in enumerate(self.vocab.seed_piece))
        out = []
        for (word, _), edges in zip(self.words, self.vocab.word_edges):
            live = [edge for edge in edges if alive[edge[2]]]
            if chars_gone or UNK_CHAR in word:
                singles = {edge[0] for edge in live if edge[1] == edge[0] + 1}
                if len(singles) < len(word):
                    live += [(i, i + 1, -1) for i in range(len(word)) if i not in singles]
                    live.sort(key=lambda edge: (edge[1], edge[0]))
            out.append(live)
        return out

    def _edges_for(self, pieces: list[int]) -> list[list[tuple[int, int, int]]]:
        key = tuple(pieces)
        if getattr(self, "_edges_key", None) != key:
            self._edges_key = key
            self._edges = self._live_edges(pieces)
            self._starts = self._start_lists() if self.float32_em else None
        return self._edges

    def _start_lists(self) -> list[list[list[tuple[int, int]]]]:
        """Per word and start offset: (end, seed) in sentencepiece's begin_nodes order."""
        out = []
        for (word, _), edges in zip(self.words, self._edges):
            starts: list[list] = [[] for _ in range(len(word) + 1)]
            # shortest first, an unknown (added last) after the rest
            for i, j, seed in sorted(edges, key=lambda e: (e[0], e[2] < 0, e[1])):
                starts[i].append((j, seed))
            out.append(starts)
        return out

    def e_step(self, pieces: list[int], scores: list[float]) -> tuple[list[float], float, int]:
        """Expected counts, objective and Viterbi tokens (see :meth:`e_step_doubles`;
        with ``float32_em`` :meth:`e_step_float32`).

        Example:
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> expected, objective, tokens = trainer.e_step(pieces, scores)
            >>> round(objective, 4), tokens
            (5.4165, 11)
        """
        if self.float32_em:
            return self.e_step_float32(pieces, scores)
        return self.e_step_doubles(pieces, scores)

    def e_step_float32(self, pieces: list[int], scores: list[float]) -> tuple[list[float], float, int]:
        """The E-step with sentencepiece's arithmetic: forward and backward log sums in
        32-bit floats (its LogSumExp), each word's expected counts added into one of
        ``num_threads`` float accumulators (word i to thread i mod num_threads), the
        accumulators summed in thread order. About three times slower than doubles.

        Example (the same objective as in doubles, to within float rounding):
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> in_floats, in_doubles = trainer.e_step_float32(pieces, scores), trainer.e_step_doubles(pieces, scores)
            >>> abs(in_floats[1] - in_doubles[1]) < 1e-6, in_floats[1] == in_doubles[1]
            (True, False)
        """
        score_of = [0.0] * (len(self.vocab.seed_piece) + 1)
        slot_of = [0] * len(score_of)
        for k, (seed, score) in enumerate(zip(pieces, scores)):
            score_of[seed] = score
            slot_of[seed] = k
        score_of[-1] = f32(min(scores) - UNK_PENALTY)
        slot_of[-1] = 0
        threads = [array("f", bytes(4 * len(pieces))) for _ in range(self.num_threads)]
        total_freq = sum(freq for _, freq in self.words)
        objective = 0.0
        tokens = 0
        r = array("f", [0.0])
        log1p, exp = math.log1p, math.exp
        for index, ((word, freq), edges, starting) in enumerate(zip(self.words, self._edges_for(pieces), self._starts)):
            n = len(word)
            alpha = array("f", bytes(4 * (n + 1)))
            seen = [False] * (n + 1)
            best = [-math.inf] * (n + 1)  # a double Viterbi alongside, for the token count only
            best[0] = 0.0
            length = [0] * (n + 1)
            # sentencepiece's LogSumExp in floats, inlined in both passes (the hot loop)
            for i, j, seed in edges:  # by end, then start: sentencepiece's end_nodes order
                score = score_of[seed]
                offer = best[i] + score
                if offer > best[j]:
                    best[j] = offer
                    length[j] = length[i] + 1
                r[0] = score + alpha[i]
                y = r[0]
                if not seen[j]:
                    alpha[j] = y
                    seen[j] = True
                    continue
                x = alpha[j]
                low, high = (x, y) if x < y else (y, x)
                r[0] = low + 50.0
                if high > r[0]:
                    alpha[j] = high
                else:
                    r[0] = low - high
                    alpha[j] = high + log1p(exp(r[0]))
            beta = array("f", bytes(4 * (n + 1)))
            # deliberately the forward loop's float LogSumExp again, inlined: the trainer's hot loop
            for i in range(n - 1, -1, -1):
                first = True
                for j, seed in starting[i]:
                    r[0] = score_of[seed] + beta[j]
                    y = r[0]
                    if first:
                        beta[i] = y
                        first = False
                        continue
                    x = beta[i]
                    low, high = (x, y) if x < y else (y, x)
                    r[0] = low + 50.0
                    if high > r[0]:
                        beta[i] = high
                    else:
                        r[0] = low - high
                        beta[i] = high + log1p(exp(r[0]))
            z = alpha[n]
            acc = threads[index % self.num_threads]
            for i, j, seed in edges:
                r[0] = alpha[i] + score_of[seed]
                r[0] = r[0] + beta[j]
                r[0] = r[0] - z
                k = slot_of[seed]
                acc[k] = acc[k] + freq * exp(r[0])
            objective -= freq * z / total_freq
            tokens += freq * length[n]
        merged = threads[0]
        for other in threads[1:]:
            for k in range(len(merged)):
                merged[k] = merged[k] + other[k]
        return list(merged), objective, tokens

    def e_step_doubles(self, pieces: list[int], scores: list[float]) -> tuple[list[float], float, int]:
        """Expected count of every current piece (forward-backward over each word's
        lattice, times the word's count), the objective (average -log likelihood per
        word occurrence) and the number of Viterbi tokens.

        Each word's edges are sorted by end, so one pass left to right fills the forward
        sums and one pass right to left the backward sums.

        Example (the pieces expected more than 1.5 times in the first E-step):
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> expected = trainer.e_step_doubles(pieces, scores)[0]
            >>> {trainer.vocab.seed_piece[seed]: round(count, 2) for seed, count in zip(pieces, expected) if count > 1.5}
            {'n': 2.0, '▁hugs': 1.85, '▁pu': 1.88}
        """
        weight = [0.0] * (len(self.vocab.seed_piece) + 1)  # the last slot (index -1) is the unknown
        log_weight = [0.0] * len(weight)
        for seed, score in zip(pieces, scores):
            weight[seed] = math.exp(score)
            log_weight[seed] = score
        unk_score = f32(min(scores) - UNK_PENALTY)
        weight[-1] = math.exp(unk_score)
        log_weight[-1] = unk_score
        expected_by_seed = [0.0] * len(weight)
        total_freq = sum(freq for _, freq in self.words)
        objective = 0.0
        tokens = 0
        for (word, freq), edges in zip(self.words, self._edges_for(pieces)):
            n = len(word)
            forward = [0.0] * (n + 1)
            forward[0] = 1.0
            best = [-math.inf] * (n + 1)
            best[0] = 0.0
            length = [0] * (n + 1)
            for i, j, seed in edges:
                forward[j] += forward[i] * weight[seed]
                offer = best[i] + log_weight[seed]
                if offer > best[j]:
                    best[j] = offer
                    length[j] = length[i] + 1
            z = forward[n]
            tokens += freq * length[n]
            if not z > 1e-280:  # too small for doubles: this word in log space
                log_z, marginals = edge_marginals(n, [(i, j, seed, log_weight[seed], 0.0) for i, j, seed in edges], log_space=True)
                for (_, _, seed), value in zip(edges, marginals):
                    expected_by_seed[seed] += freq * value
                objective -= freq * log_z / total_freq
                continue
            backward = [0.0] * (n + 1)
            backward[n] = 1.0
            for i, j, seed in reversed(edges):
                backward[i] += weight[seed] * backward[j]
            scale = freq / z
            for i, j, seed in edges:
                expected_by_seed[seed] += scale * forward[i] * weight[seed] * backward[j]
            objective -= freq * math.log(z) / total_freq
        expected = [expected_by_seed[seed] for seed in pieces]
        expected[0] += expected_by_seed[-1]  # sentencepiece's trainer model counts unknowns as id 0
        return expected, objective, tokens

    def m_step(self, pieces: list[int], expected: list[float]) -> tuple[list[int], list[float]]:
        """Drop pieces expected under 0.5 times; score the rest by digamma(count) - digamma(total).

        Example:
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> kept, _ = trainer.m_step(pieces, trainer.e_step(pieces, scores)[0])
            >>> [trainer.vocab.seed_piece[seed] for seed in kept]
            ['u', '▁', 'g', 'n', 'b', '▁hug', '▁hugs', '▁pu']
        """
        kept = [(seed, f32(count)) for seed, count in zip(pieces, expected) if f32(count) >= EXPECTED_FREQUENCY_THRESHOLD]
        total = 0.0
        for _, count in kept:
            total = f32(total + count)
        log_total = f32(digamma(total))
        return [seed for seed, _ in kept], [f32(digamma(count) - log_total) for _, count in kept]

    # -- pruning -------------------------------------------------------------------
    def _nbest2(self, text: str, slot: dict[int, int], scores: list[float], unk_score: float):
        """The two best segmentations of ``text`` under the current model (lists of positions)."""
        n = len(text)
        by_end: list[list] = [[] for _ in range(n + 1)]
        single = [False] * n
        for i in range(n):
            for j in range(i + 1, min(n, i + self.max_piece_length) + 1):
                seed = self.vocab.seed_index.get(text[i:j])
                k = slot.get(seed) if seed is not None else None
                if k is not None:
                    by_end[j].append((i, k, scores[k]))
                    if j == i + 1:
                        single[i] = True
        for i in range(n):
            if not single[i]:
                by_end[i + 1].append((i, 0, unk_score))
        top: list[list] = [[] for _ in range(n + 1)]
        top[0] = [(0.0, ())]
        for j in range(1, n + 1):
            pool = []
            for i, k, score in by_end[j]:
                for total, path in top[i]:
                    pool.append((f32(total + score), path + (k,)))
            pool.sort(key=lambda item: -item[0])
            top[j] = pool[:2]
        return top[n]

    def prune(self, pieces: list[int], scores: list[float]) -> tuple[list[int], list[float]]:
        """Keep the pieces whose removal would cost the most likelihood (see the module docstring).

        Example (pieces on no Viterbi path go whatever the target, here 13: 8 of 17 remain):
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> len(trainer.prune(pieces, scores)[0])
            8
        """
        slot = {seed: k for k, seed in enumerate(pieces)}
        unk_score = f32(min(scores) - UNK_PENALTY)
        size = len(pieces)
        always_keep = [True] * size
        alternatives: list[tuple] = [()] * size
        for k, seed in enumerate(pieces):
            nbest = self._nbest2(self.vocab.seed_piece[seed], slot, scores, unk_score)
            if len(nbest) == 1:
                continue
            if len(nbest[0][1]) >= 2:
                always_keep[k] = False
            elif len(nbest[0][1]) == 1:
                alternatives[k] = nbest[1][1]
        freq = [0.0] * size
        score_by_seed = [0.0] * (len(self.vocab.seed_piece) + 1)
        slot_by_seed = [0] * len(score_by_seed)
        for k, seed in enumerate(pieces):
            score_by_seed[seed] = scores[k]
            slot_by_seed[seed] = k
        score_by_seed[-1] = unk_score
        for (word, count), edges in zip(self.words, self._edges_for(pieces)):
            lattice = [(i, j, slot_by_seed[seed], score_by_seed[seed]) for i, j, seed in edges]
            for k in viterbi_path(len(word), lattice):
                freq[k] += count
        total = f32(math.fsum(freq))
        log_total = f32(math.log(total))
        kept: list[int] = []
        candidates: list[tuple[int, float]] = []
        for k in range(size):
            if freq[k] == 0 or not always_keep[k]:
                continue
            if not alternatives[k]:
                kept.append(k)
                continue
            logprob_piece = f32(math.log(freq[k]) - log_total)
            log_total_alt = f32(math.log(f32(total + f32(freq[k] * (len(alternatives[k]) - 1)))))
            logprob_alt = 0.0
            for alt in alternatives[k]:
                logprob_alt = f32(logprob_alt + (math.log(f32(freq[alt] + freq[k])) - log_total_alt))
            share = f32(freq[k] / total)
            candidates.append((k, f32(share * f32(logprob_piece - logprob_alt))))
        target = max(self.desired_size, int(f32(self.shrinking_factor) * size))
        candidates.sort(key=lambda item: (-item[1], item[0]))
        for k, _ in candidates:
            if len(kept) == target:
                break
            kept.append(k)
        return [pieces[k] for k in kept], [scores[k] for k in kept]

    def drop_unreachable(self, pieces: list[int], scores: list[float]) -> tuple[list[int], list[float]]:
        """Drop a piece when another segmentation of its own string scores strictly higher
        (Viterbi could never choose it).

        Example (``▁hug`` scored far below ``▁`` + ``hug`` can never be chosen):
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> scores[pieces.index(trainer.vocab.seed_index["▁hug"])] = -50.0
            >>> kept, _ = trainer.drop_unreachable(pieces, scores)
            >>> len(pieces) - len(kept), "▁hug" in [trainer.vocab.seed_piece[seed] for seed in kept]
            (1, False)
        """
        slot = {seed: k for k, seed in enumerate(pieces)}
        unk_score = f32(min(scores) - UNK_PENALTY)
        keep = []
        for k, seed in enumerate(pieces):
            text = self.vocab.seed_piece[seed]
            best = self._best_without(text, k, slot, scores, unk_score)
            if best is not None and best > scores[k]:
                continue
            keep.append(k)
        return [pieces[k] for k in keep], [scores[k] for k in keep]

    def _best_without(self, text, banned, slot, scores, unk_score):
        n = len(text)
        best: list[float | None] = [None] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] is None:
                continue
            single = False
            for j in range(i + 1, min(n, i + self.max_piece_length) + 1):
                seed = self.vocab.seed_index.get(text[i:j])
                k = slot.get(seed) if seed is not None else None
                if k is None:
                    continue
                if j == i + 1:
                    single = True
                if i == 0 and j == n and k == banned:
                    continue
                offer = f32(best[i] + scores[k])
                if best[j] is None or offer > best[j]:
                    best[j] = offer
            if not single:
                offer = f32(best[i] + unk_score)
                if best[i + 1] is None or offer > best[i + 1]:
                    best[i + 1] = offer
        return best[n]

    def finalize(self, pieces: list[int], scores: list[float]) -> list[tuple[str, float]]:
        """Required characters first (a missing one gets min score + 0.0001·rank), then the
        best-scored pieces, up to ``vocab_size`` minus the meta pieces; best score first.

        Example (``vocab_size`` 12 less the three meta pieces; the seed scores rank them here):
            >>> trainer = UnigramTrainer(12)
            >>> pieces, scores = trainer.prepare(["hug hugs pug pun bun hugs"])
            >>> final = trainer.finalize(pieces, scores)
            >>> len(final), final[0][0]
            (9, '▁hug')
        """
        current = {self.vocab.seed_piece[seed]: score for seed, score in zip(pieces, scores)}
        min_score = min(scores)
        final: dict[str, float] = {}
        penalty = 0.0
        for ch, _ in sorted(self.required.items(), key=lambda item: (-item[1], ord(item[0]))):
            if ch in current:
                final[ch] = current[ch]
            else:
                final[ch] = f32(min_score + penalty)
                penalty = f32(penalty + f32(0.0001))
        room = self.vocab_size - len(META_PIECES)
        for piece, score in sorted(current.items(), key=lambda item: (-item[1], item[0])):
            if piece in final:
                continue
            if len(final) == room:
                break
            final[piece] = score
        return sorted(final.items(), key=lambda item: (-item[1], item[0]))


# ----------------------------------------------------------------------------- lattice passes


def edge_marginals(n: int, edges: list[tuple], log_space: bool = False) -> tuple[float, list[float]]:
    """Forward-backward over a lattice of ``n`` characters: log Z and, per edge
    (start, end, id, score, weight = exp(score)), the probability that a segmentation
    drawn from the model uses it.

    Sums run in probability space (fast); a lattice whose total falls below 1e-280 is
    redone in log space.

    Example:
        >>> from labkit.training.unigram_train import edge_marginals
        >>> from math import e
        >>> edge_marginals(2, [(0, 1, 0, -1.0, e**-1), (1, 2, 1, -1.0, e**-1), (0, 2, 2, -2.0, e**-2)])[1]
        [0.5, 0.5, 0.5]
    """
    by_end: list[list] = [[] for _ in range(n + 1)]
    by_start: list[list] = [[] for _ in range(n + 1)]
    for edge in edges:
        by_end[edge[1]].append(edge)
        by_start[edge[0]].append(edge)
    if log_space:
        return _edge_marginals_log(n, edges, by_end, by_start)
    forward = [0.0] * (n + 1)
    forward[0] = 1.0
    for j in range(1, n + 1):
        total = 0.0
        for edge in by_end[j]:
            total += forward[edge[0]] * edge[4]
        forward[j] = total
    z = forward[n]
    if not z > 1e-280:
        return _edge_marginals_log(n, edges, by_end, by_start)
    backward = [0.0] * (n + 1)
    backward[n] = 1.0
    for i in range(n - 1, -1, -1):
        total = 0.0
        for edge in by_start[i]:
            total += edge[4] * backward[edge[1]]
        backward[i] = total
    return math.log(z), [forward[e[0]] * e[4] * backward[e[1]] / z for e in edges]


def _logsumexp(values):
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def _edge_marginals_log(n, edges, by_end, by_start):
    alpha = [-math.inf] * (n + 1)
    alpha[0] = 0.0
    for j in range(1, n + 1):
        alpha[j] = _logsumexp([alpha[e[0]] + e[3] for e in by_end[j]])
    beta = [-math.inf] * (n + 1)
    beta[n] = 0.0
    for i in range(n - 1, -1, -1):
        beta[i] = _logsumexp([e[3] + beta[e[1]] for e in by_start[i]])
    z = alpha[n]
    return z, [math.exp(alpha[e[0]] + e[3] + beta[e[1]] - z) for e in edges]


def viterbi_path(n: int, edges: list[tuple]) -> list[int]:
    """The ids of the best path through a lattice of ``n`` characters whose edges
    (start, end, id, score) are sorted by end, then start: 32-bit float sums as in
    sentencepiece's lattice, the earlier start wins a tie.

    Example:
        >>> from labkit.training.unigram_train import viterbi_path
        >>> viterbi_path(2, [(0, 1, 0, -1.0), (0, 2, 2, -1.5), (1, 2, 1, -1.0)])
        [2]
    """
    best: list = [None] * (n + 1)
    best[0] = 0.0
    back: list = [None] * (n + 1)
    rounded = array("f", [0.0])
    for edge in edges:
        here = best[edge[0]]
        if here is None:
            continue
        rounded[0] = here + edge[3]
        offer = rounded[0]
        j = edge[1]
        if back[j] is None or offer > best[j]:
            best[j] = offer
            back[j] = edge
    path = []
    j = n
    while j > 0:
        edge = back[j]
        path.append(edge[2])
        j = edge[0]
    path.reverse()
    return path


@functools.lru_cache(maxsize=1)
def default_normalizer():
    """sentencepiece's default training normaliser (``nmt_nfkc``), taken from the shipped
    botchan BPE model, which was trained with it.

    Example:
        >>> from labkit.training.unigram_train import default_normalizer
        >>> default_normalizer().normalize("Ｈｉ  there")
        '▁Hi▁there'
    """
    from labkit.algorithms.charsmap import SpmNormalizer
    from labkit.formats.spm_model import read_spm_model
    from labkit.paths import data_path

    return SpmNormalizer.from_vocab(read_spm_model(data_path("sentencepiece/botchan_en_bpe_1000.model")))


def train_unigram(lines: Iterable[str], vocab_size: int, **options) -> UnigramTraining:
    """Train a Unigram vocabulary as sentencepiece's trainer does with its defaults.

    Introduced in notebook ``13_where_vocabularies_come_from``.

    Example:
        >>> train_unigram(["hug hugs pug pun bun hugs"], 12).pieces[:5]
        ['<unk>', '<s>', '</s>', 'n', '▁pu']
    """
    return UnigramTrainer(vocab_size, **options).train(lines)
