"""Subword regularisation on a Unigram lattice: the k best segmentations and random ones.

The lattice is sentencepiece's: a node per piece that fits at each character, the pieces
starting at one offset shortest first (an unknown last), the ones ending at an offset in
order of their start, and a BOS and an EOS node.

* :meth:`UnigramSampler.nbest` is sentencepiece's ``NBestEncode``: a Viterbi pass gives
  every node the best score of a path from BOS to it, which is the exact remaining cost
  for an A* search that grows paths leftwards from EOS; paths come off the agenda best
  first. Sums are 32-bit floats as in sentencepiece, so the same paths come out in the
  same order with the same scores.
* :meth:`UnigramSampler.sample` with ``nbest_size=-1`` draws a segmentation with
  probability proportional to ``exp(alpha · score)`` by forward-filtering
  backward-sampling: forward sums ``A[j]`` (log of the total weight of the paths from the
  start to offset j), then from the end back, a piece ``[i, j)`` is chosen with probability
  ``exp(A[i] + alpha·score - A[j])``. ``alpha`` near 0 makes every segmentation equally
  likely; a large ``alpha`` gives the Viterbi path nearly always.
* With ``nbest_size > 1`` it draws among the ``nbest_size`` best paths instead, each with
  probability proportional to ``exp(alpha · score)`` (sentencepiece's other mode).

Unknown runs merge, or spell as bytes with byte fallback, after a path is chosen, as
sentencepiece's processor does. Kudo (2018) introduced both n-best and sampling for
subword regularisation. Introduced in notebook ``13_where_vocabularies_come_from``.

Example:
    >>> from labkit.training.unigram_sampling import UnigramSampler
    >>> UnigramSampler.load("botchan-unigram").nbest("Hello world", 3)[0]
    ([151, 88, 21, 887], -26.98749351501465)
"""
from __future__ import annotations

import math
import random
from array import array
from dataclasses import dataclass
from typing import Callable, Sequence

from labkit.core import LabkitError

MAX_NBEST = 512  # sentencepiece's processor refuses more (kMaxNBestSize)
MAX_AGENDA = 10_000
MIN_AGENDA = 512
MAX_HYPOTHESES = 100_000
MAX_ALLOCATED = 500_000
MAX_SHRINKS = 10
MAX_TEXT_CHARS = 100_000
MAX_ENUMERATED = 200_000


@dataclass(frozen=True)
class Node:
    """One lattice node: piece ``id`` covers normalised chars ``start:end`` with ``score``.

    Example:
        >>> from labkit.training.unigram_sampling import Node
        >>> Node(0, 2, 37, -3.5)
        Node(start=0, end=2, id=37, score=-3.5)
    """

    start: int
    end: int
    id: int
    score: float


class SpLattice:
    """sentencepiece's lattice of a normalised string under a UnigramModel.

    ``nodes[0]`` is BOS, ``nodes[1]`` EOS; ``begin[pos]``/``end[pos]`` list node indices
    starting/ending at ``pos`` in sentencepiece's insertion order.

    Example (BOS, EOS and one node per candidate piece):
        >>> import labkit
        >>> lattice = SpLattice(labkit.load("botchan-unigram", engine="labkit").model, "▁ab")
        >>> [(node.start, node.end, node.id) for node in lattice.nodes[2:]]
        [(0, 1, 4), (0, 2, 11), (1, 2, 19), (2, 3, 66)]
    """

    def __init__(self, model, text: str):
        if len(text) > MAX_TEXT_CHARS:
            raise LabkitError(f"SpLattice: text of {len(text):,} characters is over {MAX_TEXT_CHARS:,}")
        n = len(text)
        self.text = text
        self.n = n
        self.nodes: list[Node] = [Node(0, 0, -1, 0.0), Node(n, n, -1, 0.0)]
        self.begin: list[list[int]] = [[] for _ in range(n + 1)]
        self.end: list[list[int]] = [[] for _ in range(n + 1)]
        self.end[0].append(0)
        self.begin[n].append(1)
        for pos in range(n):
            for stop, piece_id, score, _unknown in model.candidates(text, pos):
                self.nodes.append(Node(pos, stop, piece_id, score))
                self.begin[pos].append(len(self.nodes) - 1)
                self.end[stop].append(len(self.nodes) - 1)

    # -- Viterbi and n-best --------------------------------------------------------
    def viterbi_scores(self) -> list[float]:
        """Per node, the best float-sum score of a path from BOS through it (sentencepiece's
        ``backtrace_score``), the earlier node winning a tie.

        Example (at EOS, index 1, the best path's score: ``▁a`` + ``b``):
            >>> import labkit
            >>> lattice = SpLattice(labkit.load("botchan-unigram", engine="labkit").model, "▁ab")
            >>> lattice.viterbi_scores()[1]
            -10.046313285827637
        """
        best = array("f", bytes(4 * len(self.nodes)))
        rounded = array("f", [0.0])
        for pos in range(self.n + 1):
            for r in self.begin[pos]:
                r_score = self.nodes[r].score
                chosen = None
                for l in self.end[pos]:
                    rounded[0] = best[l] + r_score
                    if chosen is None or rounded[0] > chosen:
                        chosen = rounded[0]
                best[r] = chosen
        return list(best)

    def nbest(self, k: int) -> list[tuple[list[Node], float]]:
        """The ``k`` best paths with their scores, best first, by sentencepiece's A* search
        (including its agenda shrinking on very long inputs).

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> [([model.pieces[node.id] for node in path], score) for path, score in SpLattice(model, "▁ab").nbest(2)]
            [(['▁a', 'b'], -10.046313285827637), (['▁', 'a', 'b'], -13.91345500946045)]
        """
        if self.n == 0:
            return []
        backtrace = self.viterbi_scores()
        rounded = array("f", [0.0])
        # hypotheses: (node, next hypothesis index, gx); the agenda holds (fx, index)
        hyps: list[tuple[int, int, float]] = [(1, -1, 0.0)]
        agenda = StdPriorityQueue()
        agenda.push((backtrace[1], 0))
        min_agenda = min(MIN_AGENDA, k * 10)
        max_hypotheses = MAX_HYPOTHESES
        total = 1
        shrinks = 0
        results: list[tuple[list[Node], float]] = []
        while agenda:
            fx, top = agenda.pop()
            node, _, gx = hyps[top]
            if node == 0:
                path = []
                nxt = hyps[top][1]
                while nxt >= 0 and hyps[nxt][1] >= 0:
                    path.append(self.nodes[hyps[nxt][0]])
                    nxt = hyps[nxt][1]
                results.append((path, fx))
                if len(results) == k:
                    break
                continue
            lefts = self.end[self.nodes[node].start]
            for l in lefts:
                rounded[0] = self.nodes[l].score + gx
                new_gx = rounded[0]
                rounded[0] = backtrace[l] + gx
                hyps.append((l, top, new_gx))
                agenda.push((rounded[0], len(hyps) - 1))
            total += len(lefts)
            if total >= MAX_ALLOCATED or len(hyps) >= MAX_ALLOCATED:
                return [self._viterbi_path(backtrace)]
            if len(agenda) >= MAX_AGENDA or (len(agenda) > min_agenda and len(hyps) >= max_hypotheses):
                if shrinks >= MAX_SHRINKS:
                    return [self._viterbi_path(backtrace)]
                shrinks += 1
                keep = [agenda.pop() for _ in range(min(len(agenda), min_agenda))]
                hyps, agenda = _compact(hyps, keep)
                max_hypotheses = len(hyps) + MAX_HYPOTHESES
        return results

    def _viterbi_path(self, backtrace: list[float]) -> tuple[list[Node], float]:
        path = []
        pos = self.n
        while pos > 0:
            best_l = None
            for l in self.end[pos]:
                if best_l is None or backtrace[l] > backtrace[best_l]:
                    best_l = l
            path.append(self.nodes[best_l])
            pos = self.nodes[best_l].start
        path.reverse()
        return path, backtrace[1]

    # -- sampling ------------------------------------------------------------------
    def forward_log(self, alpha: float) -> list[float]:
        """``A[pos]``: log of the summed ``exp(alpha · score)`` of all paths from the start to
        ``pos`` (doubles).

        Example (at the end, log Z: the two paths' scores summed in probability):
            >>> import labkit
            >>> lattice = SpLattice(labkit.load("botchan-unigram", engine="labkit").model, "▁ab")
            >>> round(lattice.forward_log(1.0)[-1], 6)
            -10.025611
        """
        forward = [-math.inf] * (self.n + 1)
        forward[0] = 0.0
        for pos in range(1, self.n + 1):
            terms = [forward[self.nodes[l].start] + alpha * self.nodes[l].score for l in self.end[pos]]
            top = max(terms)
            forward[pos] = top + math.log(math.fsum(math.exp(t - top) for t in terms))
        return forward

    def sample(self, alpha: float, rng: random.Random) -> list[Node]:
        """One path drawn with probability proportional to ``exp(alpha · score)``
        (forward-filtering backward-sampling).

        Example (alpha 0.1 flattens the two paths' odds):
            >>> import random
            >>> import labkit
            >>> lattice = SpLattice(labkit.load("botchan-unigram", engine="labkit").model, "▁ab")
            >>> [node.id for node in lattice.sample(0.1, random.Random(0))]
            [4, 19, 66]
        """
        forward = self.forward_log(alpha)
        path = []
        pos = self.n
        while pos > 0:
            lefts = self.end[pos]
            weights = [math.exp(forward[self.nodes[l].start] + alpha * self.nodes[l].score - forward[pos]) for l in lefts]
            chosen = self.nodes[lefts[_draw(weights, rng)]]
            path.append(chosen)
            pos = chosen.start
        path.reverse()
        return path

    def sampler(self, alpha: float) -> Callable[[random.Random], list[Node]]:
        """A function drawing paths like :meth:`sample`, with the forward pass and each
        offset's choice weights computed once (for many draws of one text).

        Example:
            >>> import random
            >>> import labkit
            >>> lattice = SpLattice(labkit.load("botchan-unigram", engine="labkit").model, "▁ab")
            >>> draw, rng = lattice.sampler(0.1), random.Random(0)
            >>> [len(draw(rng)) for _ in range(3)]
            [3, 2, 3]
        """
        forward = self.forward_log(alpha)
        choices: list[tuple[list[int], list[float]]] = [([], [])]
        for pos in range(1, self.n + 1):
            lefts = self.end[pos]
            running, cumulative = 0.0, []
            for l in lefts:
                node = self.nodes[l]
                running += math.exp(forward[node.start] + alpha * node.score - forward[pos])
                cumulative.append(running)
            choices.append((lefts, cumulative))
        nodes = self.nodes

        def draw(rng: random.Random) -> list[Node]:
            path = []
            pos = self.n
            while pos > 0:
                lefts, cumulative = choices[pos]
                target = rng.random() * cumulative[-1]
                i = 0
                while i + 1 < len(cumulative) and target >= cumulative[i]:
                    i += 1
                node = nodes[lefts[i]]
                path.append(node)
                pos = node.start
            path.reverse()
            return path

        return draw

    def paths(self, limit: int = MAX_ENUMERATED) -> list[tuple[list[Node], float]]:
        """Every segmentation with its score (double sums), for short strings only.

        Example:
            >>> import labkit
            >>> lattice = SpLattice(labkit.load("botchan-unigram", engine="labkit").model, "▁ab")
            >>> sorted(score for _, score in lattice.paths())
            [-13.91345500946045, -10.046313285827637]
        """
        out: list[tuple[list[Node], float]] = []
        stack = [(self.n, [], 0.0)]
        while stack:
            pos, suffix, score = stack.pop()
            if pos == 0:
                out.append((list(reversed(suffix)), score))
                if len(out) > limit:
                    raise LabkitError(f"SpLattice.paths: more than {limit:,} segmentations; use a shorter text")
                continue
            for l in self.end[pos]:
                node = self.nodes[l]
                stack.append((node.start, suffix + [node], score + node.score))
        return out


def _compact(hyps, keep):
    """Copy the kept agenda entries and the hypotheses they point to into a fresh list."""
    new_hyps: list[tuple[int, int, float]] = []
    moved: dict[int, int] = {}

    def move(index: int) -> int:
        chain = []
        while index >= 0 and index not in moved:
            chain.append(index)
            index = hyps[index][1]
        tail = moved[index] if index >= 0 else -1
        for old in reversed(chain):
            node, _, gx = hyps[old]
            new_hyps.append((node, tail, gx))
            tail = moved[old] = len(new_hyps) - 1
        return tail

    agenda = StdPriorityQueue()
    for fx, index in keep:
        agenda.push((fx, move(index)))
    return new_hyps, agenda


class StdPriorityQueue:
    """A max-heap of (priority, item) that breaks ties exactly as C++'s
    ``std::priority_queue`` in libstdc++ does (its push_heap / pop_heap steps), so an A*
    search pops equal-priority paths in sentencepiece's order.

    Example:
        >>> from labkit.training.unigram_sampling import StdPriorityQueue
        >>> q = StdPriorityQueue()
        >>> q.push((1.0, "a"))
        >>> q.push((2.0, "b"))
        >>> q.pop()
        (2.0, 'b')
    """

    def __init__(self):
        self.heap: list[tuple[float, object]] = []

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, entry: tuple[float, object]) -> None:
        self.heap.append(entry)
        self._sift_up(len(self.heap) - 1, 0, entry)

    def pop(self) -> tuple[float, object]:
        heap = self.heap
        top = heap[0]
        last = heap.pop()
        if heap:
            self._adjust(0, len(heap), last)
        return top

    def _sift_up(self, hole: int, top: int, value) -> None:
        heap = self.heap
        parent = (hole - 1) // 2
        while hole > top and heap[parent][0] < value[0]:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = value

    def _adjust(self, hole: int, length: int, value) -> None:
        heap = self.heap
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if heap[child][0] < heap[child - 1][0]:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        self._sift_up(hole, top, value)


def _draw(weights: Sequence[float], rng: random.Random) -> int:
    total = math.fsum(weights)
    target = rng.random() * total
    running = 0.0
    for i, weight in enumerate(weights):
        running += weight
        if target < running:
            return i
    return len(weights) - 1


class UnigramSampler:
    """n-best and sampled segmentations of raw text under a Unigram model: normalise,
    build the lattice, search or sample, then merge unknowns as sentencepiece does.

    Example:
        >>> from labkit.training.unigram_sampling import UnigramSampler
        >>> UnigramSampler.load("botchan-unigram").sample("Hello world", 0.1, seed=0)
        [4, 165, 16, 88, 21, 102, 54, 31, 17]

    (introduced in notebook ``13_where_vocabularies_come_from``)
    """

    def __init__(self, model, normalize: Callable[[str], str]):
        self.model = model
        self.normalize = normalize

    @classmethod
    def from_vocab(cls, vocab) -> "UnigramSampler":
        """The sampler for a Unigram VocabData (a .model, GGUF or tokenizer.json read by labkit).

        Example:
            >>> from labkit.paths import data_path
            >>> from labkit.formats.spm_model import read_spm_model
            >>> from labkit.training.unigram_sampling import UnigramSampler
            >>> sampler = UnigramSampler.from_vocab(read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model")))
            >>> sampler.nbest("Hi", 1)
            [([4, 165, 25], 0.0)]
        """
        from labkit.algorithms.charsmap import SpmNormalizer
        from labkit.algorithms.unigram import UnigramModel

        if vocab.model != "unigram":
            raise LabkitError(f"UnigramSampler: needs a Unigram vocabulary, got {vocab.model!r} ({vocab.source})")
        model = UnigramModel(vocab.tokens, vocab.scores, vocab.token_types, unk_id=vocab.specials.unk_id,
                             byte_fallback=bool(vocab.options.get("byte_fallback", False)))
        return cls(model, SpmNormalizer.from_vocab(vocab).normalize)

    @classmethod
    def load(cls, source: str) -> "UnigramSampler":
        """The sampler for a bundled name (``"botchan-unigram"``) or a Unigram file path.

        Example:
            >>> from labkit.training.unigram_sampling import UnigramSampler
            >>> sampler = UnigramSampler.load("botchan-unigram")
            >>> sampler.nbest("Hello", 1)
            [([151, 88, 21], 0.0)]
        """
        from labkit.factory import resolve_source
        from labkit.formats.detect import read_vocab

        return cls.from_vocab(read_vocab(resolve_source(source)))

    def lattice(self, text: str) -> SpLattice:
        """The lattice of ``text`` after normalisation.

        Example:
            >>> from labkit.training.unigram_sampling import UnigramSampler
            >>> sampler = UnigramSampler.load("botchan-unigram")
            >>> len(sampler.lattice("Hi").paths())
            1
        """
        if not isinstance(text, str):
            raise LabkitError(f"UnigramSampler: text must be str, got {type(text).__name__}")
        return SpLattice(self.model, self.normalize(text))

    def _ids(self, lattice: SpLattice, path: list[Node]) -> list[int]:
        segments = [(node.id, node.start, node.end) for node in path]
        return [piece_id for piece_id, _, _ in self.model.finish(segments, lattice.text)]

    def nbest(self, text: str, k: int) -> list[tuple[list[int], float]]:
        """The ``k`` best segmentations as (ids, score), best first: sentencepiece's
        ``nbest_encode_as_ids`` (k above 512 is refused as sentencepiece does; k <= 1 is the
        plain encoding, score 0).

        Example:
            >>> from labkit.training.unigram_sampling import UnigramSampler
            >>> sampler = UnigramSampler.load("botchan-unigram")
            >>> sampler.nbest("Hello", 2)
            [([151, 88, 21], -17.766786575317383), ([151, 31, 31, 21], -21.9941463470459)]
        """
        if not isinstance(k, int) or isinstance(k, bool) or k > MAX_NBEST:
            raise LabkitError(f"UnigramSampler.nbest: k must be an int <= {MAX_NBEST}, got {k!r}")
        lattice = self.lattice(text)
        if lattice.n == 0:
            return [([], 0.0)]
        k = max(1, k)
        if k == 1:
            return [([piece_id for piece_id, _, _ in self.model.encode(lattice.text)], 0.0)]
        return [(self._ids(lattice, path), score) for path, score in lattice.nbest(k)]

    def sample(self, text: str, alpha: float, nbest_size: int = -1, *, seed: int | None = None,
               rng: random.Random | None = None) -> list[int]:
        """One random segmentation (ids): from the whole lattice (``nbest_size < 0``), from
        the ``nbest_size`` best (``> 1``), or the best one (``0`` or ``1``).

        Example:
            >>> from labkit.training.unigram_sampling import UnigramSampler
            >>> sampler = UnigramSampler.load("botchan-unigram")
            >>> sampler.sample("Hello world", 0.1, seed=0)
            [4, 165, 16, 88, 21, 102, 54, 31, 17]
        """
        if not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0:
            raise LabkitError(f"UnigramSampler.sample: alpha must be a finite number >= 0, got {alpha!r}")
        if not isinstance(nbest_size, int) or nbest_size > MAX_NBEST:
            raise LabkitError(f"UnigramSampler.sample: nbest_size must be an int <= {MAX_NBEST}, got {nbest_size!r}")
        rng = rng or random.Random(seed)
        lattice = self.lattice(text)
        if lattice.n == 0:
            return []
        if nbest_size < 0:
            return self._ids(lattice, lattice.sample(float(alpha), rng))
        if nbest_size <= 1:
            return [piece_id for piece_id, _, _ in self.model.encode(lattice.text)]
        best = lattice.nbest(nbest_size)
        logs = [alpha * score for _, score in best]
        top = max(logs)
        chosen = best[_draw([math.exp(v - top) for v in logs], rng)][0]
        return self._ids(lattice, chosen)

    def sample_many(self, text: str, alpha: float, count: int, *, seed: int | None = None,
                    rng: random.Random | None = None) -> list[list[int]]:
        """``count`` draws of :meth:`sample` with ``nbest_size=-1`` (one lattice, one forward pass).

        Example:
            >>> from collections import Counter
            >>> from labkit.training.unigram_sampling import UnigramSampler
            >>> sampler = UnigramSampler.load("botchan-unigram")
            >>> Counter(map(tuple, sampler.sample_many("Hello", 0.5, 1000, seed=0))).most_common(2)
            [((151, 88, 21), 866), ((151, 31, 31, 21), 116)]
        """
        if not isinstance(count, int) or count < 0 or count > 10_000_000:
            raise LabkitError(f"UnigramSampler.sample_many: count must be an int in [0, 10,000,000], got {count!r}")
        if not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0:
            raise LabkitError(f"UnigramSampler.sample_many: alpha must be a finite number >= 0, got {alpha!r}")
        rng = rng or random.Random(seed)
        lattice = self.lattice(text)
        if lattice.n == 0:
            return [[] for _ in range(count)]
        draw = lattice.sampler(float(alpha))
        return [self._ids(lattice, draw(rng)) for _ in range(count)]

    def distribution(self, text: str, alpha: float) -> dict[tuple[int, ...], float]:
        """Exact probability of every segmentation (as ids) under ``exp(alpha · score)``,
        by enumerating all of them (short strings only).

        Example:
            >>> from labkit.training.unigram_sampling import UnigramSampler
            >>> sampler = UnigramSampler.load("botchan-unigram")
            >>> max(sampler.distribution("hello", 1.0).items(), key=lambda kv: kv[1])
            ((39, 88, 21), 0.9804942669470057)
        """
        lattice = self.lattice(text)
        paths = lattice.paths()
        logs = [alpha * score for _, score in paths]
        top = max(logs)
        weights = [math.exp(v - top) for v in logs]
        total = math.fsum(weights)
        out: dict[tuple[int, ...], float] = {}
        for (path, _), weight in zip(paths, weights):
            key = tuple(self._ids(lattice, path))
            out[key] = out.get(key, 0.0) + weight / total
        return out
