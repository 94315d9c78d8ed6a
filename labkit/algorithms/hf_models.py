"""``tokenizers``' four models on one pre-token, in pure Python: BPE (merges over
characters, continuing-subword prefix, end-of-word suffix, byte fallback, unk fusing,
``ignore_merges``), WordPiece (greedy longest match), WordLevel (a lookup) and Unigram
(the best-path forward pass ``tokenizers`` runs, with its tie-breaking).
Each returns (id, value, start, end) with char offsets into the pre-token.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.algorithms.hf_models import WordLevelModel
    >>> WordLevelModel({"hi": 0, "<unk>": 1}, "<unk>").tokenize("yo")
    [(1, '<unk>', 0, 2)]
"""
from __future__ import annotations

import heapq

from labkit.algorithms.bounded import BoundedDict
from labkit.core import LabkitError

Token = tuple[int, str, int, int]


class WordLevelModel:
    """The whole pre-token is one token, or unk: (id, token, start, end).

    Example:
        >>> model = WordLevelModel({"<unk>": 0, "hello": 1}, "<unk>")
        >>> model.tokenize("hello"), model.tokenize("bye")
        ([(1, 'hello', 0, 5)], [(0, '<unk>', 0, 3)])
    """

    def __init__(self, vocab: dict[str, int], unk_token: str | None):
        self.vocab = vocab
        self.unk_token = unk_token

    def tokenize(self, word: str) -> list[Token]:
        index = self.vocab.get(word)
        if index is not None:
            return [(index, word, 0, len(word))]
        if self.unk_token is not None and self.unk_token in self.vocab:
            return [(self.vocab[self.unk_token], self.unk_token, 0, len(word))]
        raise LabkitError(f"WordLevel: {word[:40]!r} is not in the vocabulary and there is no unk token")


class WordPieceModel:
    """Greedy longest match with a continuation prefix; a word with no match is one unk.

    Example:
        >>> from labkit.algorithms.hf_models import WordPieceModel
        >>> WordPieceModel({"un": 0, "##aff": 1, "[UNK]": 2}).tokenize("unaff")
        [(0, 'un', 0, 2), (1, '##aff', 2, 5)]
    """

    def __init__(self, vocab: dict[str, int], unk_token: str = "[UNK]", prefix: str = "##", max_chars: int = 100):
        self.vocab, self.unk_token, self.prefix, self.max_chars = vocab, unk_token, prefix, max_chars

    def _unk(self, word: str) -> list[Token]:
        if self.unk_token not in self.vocab:
            raise LabkitError(f"WordPiece: unk token {self.unk_token!r} is not in the vocabulary")
        return [(self.vocab[self.unk_token], self.unk_token, 0, len(word))]

    def tokenize(self, word: str) -> list[Token]:
        if len(word) > self.max_chars:
            return self._unk(word)
        out: list[Token] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                index = self.vocab.get(piece)
                if index is not None:
                    found = (index, piece, start, end)
                    break
                end -= 1
            if found is None:
                return self._unk(word)
            out.append(found)
            start = end
        return out


class _CachedWords:
    """``tokenize`` through a bounded word cache; a model supplies ``_tokenize_word``."""

    _cache: BoundedDict

    def tokenize(self, word: str) -> list[Token]:
        if not word:
            return []
        cached = self._cache.get(word)
        if cached is None:
            cached = self._cache[word] = self._tokenize_word(word)
        return cached


class CharBPEModel(_CachedWords):
    """tokenizers' BPE over the characters of one pre-token.

    Example:
        >>> from labkit.algorithms.hf_models import CharBPEModel
        >>> CharBPEModel({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).tokenize("ab")
        [(2, 'ab', 0, 2)]
    """

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]], *, unk_token: str | None = None,
                 prefix: str | None = None, suffix: str | None = None, byte_fallback: bool = False,
                 fuse_unk: bool = False, ignore_merges: bool = False):
        self.vocab = vocab
        self.by_id = {i: t for t, i in vocab.items()}
        self.unk_token, self.prefix, self.suffix = unk_token, prefix or None, suffix or None
        self.byte_fallback, self.fuse_unk, self.ignore_merges = byte_fallback, fuse_unk, ignore_merges
        cut = len(self.prefix.encode("utf-8")) if self.prefix else 0
        self.merges: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, (left, right) in enumerate(merges):
            made = left + right.encode("utf-8")[cut:].decode("utf-8", "replace")  # tokenizers cuts the prefix's bytes
            if left not in vocab or right not in vocab or made not in vocab:
                raise LabkitError(f"BPE: merge #{rank} ({left!r}, {right!r}) uses a token that is not in the vocabulary")
            # a merge listed twice takes its last rank (tokenizers collects the merges into a map)
            self.merges[vocab[left], vocab[right]] = (rank, vocab[made])
        self._cache = BoundedDict(100_000)

    def _symbols(self, word: str) -> list[list[int]]:
        """[id, byte_length] per symbol before merging (unk and byte fallback applied). A char
        with no token, no byte pieces and no unk is dropped, and (as in tokenizers) the
        offsets after it are counted from the symbols kept."""
        out: list[list[int]] = []
        unk: list[int] | None = None
        last = len(word) - 1
        for i, char in enumerate(word):
            piece = char
            size = len(char.encode("utf-8"))
            if i > 0 and self.prefix:
                piece = self.prefix + piece
            if i == last and self.suffix:
                piece = piece + self.suffix
            index = self.vocab.get(piece)
            if index is not None:
                if unk is not None:
                    out.append(unk)
                    unk = None
                out.append([index, size])
                continue
            if self.byte_fallback:
                ids = [self.vocab.get(f"<0x{b:02X}>") for b in piece.encode("utf-8")]
                if all(x is not None for x in ids):
                    # a pending unk stays pending (tokenizers adds it at the next known char)
                    out.extend([x, 1] for x in ids)
                    continue
            if self.unk_token is not None:
                unk_id = self.vocab.get(self.unk_token)
                if unk_id is None:
                    raise LabkitError(f"BPE: unk token {self.unk_token!r} is not in the vocabulary")
                if unk is not None and self.fuse_unk:
                    unk[1] += size
                else:
                    if unk is not None:
                        out.append(unk)
                    unk = [unk_id, size]
        if unk is not None:
            out.append(unk)
        return out

    def _merge(self, symbols: list[list[int]]) -> list[list[int]]:
        """Merge the lowest-ranked adjacent pair, leftmost first, until none is left."""
        alive = symbols
        nxt = list(range(1, len(alive) + 1))
        prv = list(range(-1, len(alive) - 1))
        heap = []
        for i in range(len(alive) - 1):
            found = self.merges.get((alive[i][0], alive[i + 1][0]))
            if found is not None:
                heap.append((found[0], i, alive[i][0], alive[i + 1][0]))
        heapq.heapify(heap)
        dead = [False] * len(alive)
        while heap:
            rank, i, left, right = heapq.heappop(heap)
            j = nxt[i]
            if dead[i] or j >= len(alive) or dead[j] or alive[i][0] != left or alive[j][0] != right:
                continue
            made = self.merges[(left, right)][1]
            alive[i] = [made, alive[i][1] + alive[j][1]]
            dead[j] = True
            nxt[i] = nxt[j]
            if nxt[j] < len(alive):
                prv[nxt[j]] = i
            p = prv[i]
            if p >= 0:
                found = self.merges.get((alive[p][0], made))
                if found is not None:
                    heapq.heappush(heap, (found[0], p, alive[p][0], made))
            n = nxt[i]
            if n < len(alive):
                found = self.merges.get((made, alive[n][0]))
                if found is not None:
                    heapq.heappush(heap, (found[0], i, made, alive[n][0]))
        return [s for s, d in zip(alive, dead) if not d]

    def _tokenize_word(self, word: str) -> list[Token]:
        if self.ignore_merges and word in self.vocab:
            out = [(self.vocab[word], word, 0, len(word))]
        else:
            out = []
            char_at = [i for i, c in enumerate(word) for _ in range(len(c.encode("utf-8")))]
            start = 0
            for index, size in self._merge(self._symbols(word)):
                # byte offsets counted over the kept symbols -> the chars holding those bytes
                end = start + size
                out.append((index, self.by_id[index], char_at[start], char_at[end - 1] + 1))
                start = end
        return out


K_UNK_PENALTY = 10.0


class HFUnigramModel(_CachedWords):
    """The best path tokenizers' Unigram finds (its forward pass and its tie-breaking).

    Example:
        >>> from labkit.algorithms.hf_models import HFUnigramModel
        >>> HFUnigramModel([("<unk>", 0.0), ("a", -1.0)], 0).tokenize("ab")
        [(1, 'a', 0, 1), (0, 'b', 1, 2)]
    """

    def __init__(self, pieces: list[tuple[str, float]], unk_id: int | None, byte_fallback: bool = False):
        self.pieces = pieces
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.ids = {}
        for index, (piece, _) in enumerate(pieces):
            self.ids[piece] = index
        self.min_score = min((score for _, score in pieces), default=0.0)
        self.max_len = max((len(p) for p, _ in pieces), default=1)
        self._cache = BoundedDict(100_000)

    def _best_path(self, word: str) -> list[str]:
        size = len(word)
        unk_score = self.min_score - K_UNK_PENALTY
        best: list[list] = [[0, 0.0, None] for _ in range(size + 1)]  # id, score, start
        ids, pieces = self.ids, self.pieces
        for start in range(size):
            here = best[start][1]
            single = False
            for end in range(start + 1, min(size, start + self.max_len) + 1):
                index = ids.get(word[start:end])
                if index is None:
                    continue
                score = pieces[index][1] + here
                node = best[end]
                if node[2] is None or score > node[1]:
                    node[0], node[1], node[2] = index, score, start
                if end == start + 1:
                    single = True
            if not single:
                if self.unk_id is None:
                    raise LabkitError(f"Unigram: {word[start]!r} has no piece and the model has no unk id")
                node = best[start + 1]
                score = unk_score + here
                if node[2] is None or score > node[1]:
                    node[0], node[1], node[2] = self.unk_id, score, start
        out: list[tuple[int, int]] = []
        end = size
        fused_end = None
        while end > 0:
            index, _, start = best[end]
            if index == self.unk_id:
                if fused_end is None:
                    fused_end = end
            else:
                if fused_end is not None:
                    out.append((end, fused_end))
                    fused_end = None
                out.append((start, end))
            end = start
        if fused_end is not None:
            out.append((0, fused_end))
        out.reverse()
        return [word[s:e] for s, e in out]

    def _tokenize_word(self, word: str) -> list[Token]:
        out: list[Token] = []
        pos = 0
        for string in self._best_path(word):
            end = pos + len(string)
            index = self.ids.get(string)
            if index is None and self.byte_fallback:
                byte_ids = [self.ids.get(f"<0x{b:02X}>") for b in string.encode("utf-8")]
                if all(x is not None for x in byte_ids):
                    out.extend((x, f"<0x{b:02X}>", pos, end) for x, b in zip(byte_ids, string.encode("utf-8")))
                    pos = end
                    continue
            if index is None:
                index = self.unk_id
            out.append((index, string, pos, end))
            pos = end
        return out
