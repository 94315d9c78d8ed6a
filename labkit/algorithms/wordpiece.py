"""WordPiece: greedy longest-match-first over one word, with ``##`` continuations.

For each word the basic tokenizer (:mod:`labkit.algorithms.bert_basic`) produced: take the
longest prefix of the word that is in the vocabulary; then, from where it ended, the longest
``##``-prefixed piece; and so on to the end. If at some position no piece matches, the
*whole word* becomes ``[UNK]`` (not just the part that failed), and so does a word longer
than ``max_input_chars_per_word`` characters. There are no scores and no merges: the
vocabulary alone decides, which is why ``unaffable`` becomes ``un ##aff ##able`` when
``unaffable``, ``unaff`` and ``##affable`` are missing but ``un``, ``##aff`` and ``##able`` are
there.

Decoding joins ``##`` pieces to the piece before them and puts a space before every other
piece; ``tokenizers``' cleanup then pulls punctuation and English contractions back
(`` .`` -> ``.``, `` n't`` -> ``n't``, ...).
Introduced in notebook ``04_wordpiece``.

Example:
    >>> from labkit.algorithms.wordpiece import WordPiece
    >>> WordPiece({"un": 0, "##aff": 1, "##able": 2, "[UNK]": 3}).tokenize_word("unaffable")
    [(0, 0, 2), (1, 2, 5), (2, 5, 9)]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from labkit.core import LabkitError


@dataclass(frozen=True)
class Attempt:
    """One lookup of the greedy search: ``candidate`` (with its ``##``) for word chars
    ``start:end``, and whether the vocabulary has it.

    Example:
        >>> from labkit.algorithms.wordpiece import Attempt
        >>> Attempt(0, 9, 'unaffable', False)
        Attempt(start=0, end=9, candidate='unaffable', found=False)
    """

    start: int
    end: int
    candidate: str
    found: bool


class WordPiece:
    """The WordPiece model: a vocabulary, the continuation prefix and the unknown token.

    Example:
        >>> from labkit.algorithms.wordpiece import WordPiece
        >>> WordPiece.from_tokens(["[UNK]", "un", "##aff", "##able"]).tokenize("unaffable")
        ['un', '##aff', '##able']

    (introduced in notebook ``04_wordpiece``)
    """

    def __init__(self, vocab: Mapping[str, int], *, unk_token: str = "[UNK]", prefix: str = "##",
                 max_input_chars_per_word: int = 100):
        if not isinstance(prefix, str):
            raise LabkitError(f"WordPiece: the continuation prefix must be str, got {prefix!r}")
        if not isinstance(max_input_chars_per_word, int) or max_input_chars_per_word < 0:
            raise LabkitError(f"WordPiece: max_input_chars_per_word must be a non-negative int, got {max_input_chars_per_word!r}")
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        # None: a word with no pieces is an error, as in tokenizers (MissingUnkToken)
        self.unk_id = self.vocab.get(unk_token)
        self.prefix = prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        # no piece is longer than this, so the search never needs to try a longer one
        longest = [len(t) for t in self.vocab]
        longest_cont = [len(t) - len(prefix) for t in self.vocab if prefix and t.startswith(prefix)]
        self._max_first = max(longest, default=0)
        self._max_cont = max(longest_cont, default=0) if prefix else self._max_first

    @classmethod
    def from_tokens(cls, tokens: Sequence[str], **options) -> "WordPiece":
        """A model from an id-ordered token list (``vocab.txt`` lines); the first id of a
        duplicated token wins.

        Example:
            >>> WordPiece.from_tokens(["[UNK]", "a", "a"]).vocab
            {'[UNK]': 0, 'a': 1}
        """
        vocab: dict[str, int] = {}
        for index, token in enumerate(tokens):
            if token is not None:  # None: an id the model does not look up
                vocab.setdefault(token, index)
        return cls(vocab, **options)

    @classmethod
    def from_vocab(cls, vocab) -> "WordPiece":
        """The model of a WordPiece VocabData (GGUF bert or tokenizer.json).

        Example:
            >>> import labkit
            >>> WordPiece.from_vocab(labkit.load("minilm").vocab).unk_id
            100
        """
        options = vocab.options or {}
        # tokenizer.json: an added token outside model.vocab is matched as an added token only,
        # never by the model's longest-match lookup (tokenizers' WordPiece does not know it)
        added_only = set(options.get("added_only_ids", ()))
        tokens = [None if index in added_only else token for index, token in enumerate(vocab.tokens)]
        return cls.from_tokens(
            tokens,
            unk_token=options.get("unk_token") or vocab.specials.unk or "[UNK]",
            prefix=options.get("continuing_subword_prefix", "##"),
            max_input_chars_per_word=int(options.get("max_input_chars_per_word", 100)),
        )

    def tokenize_word(self, word: str, trace: list | None = None) -> list[tuple[int, int, int]]:
        """One word -> (id, start, end) per piece, char offsets into the word. With
        ``trace`` (a list), appends an :class:`Attempt` for every lookup.

        Example:
            >>> import labkit
            >>> from labkit.algorithms.wordpiece import WordPiece
            >>> model = WordPiece.from_vocab(labkit.load("bert-bge").vocab)
            >>> model.tokenize_word("unaffable")
            [(14477, 0, 3), (20961, 3, 6), (3468, 6, 9)]
        """
        n = len(word)
        if n > self.max_input_chars_per_word:
            return self._unknown(word)
        vocab, prefix = self.vocab, self.prefix
        pieces: list[tuple[int, int, int]] = []
        start = 0
        while start < n:
            if start == 0:
                end = min(n, self._max_first)
            else:
                end = min(n, start + self._max_cont)
            found = None
            while end > start:
                candidate = word[start:end] if start == 0 else prefix + word[start:end]
                found = vocab.get(candidate)
                if trace is not None:
                    trace.append(Attempt(start, end, candidate, found is not None))
                if found is not None:
                    break
                end -= 1
            if found is None:
                # one position with no piece makes the whole word unknown
                return self._unknown(word)
            pieces.append((found, start, end))
            start = end
        return pieces

    def _unknown(self, word: str) -> list[tuple[int, int, int]]:
        """The whole word as the unknown token; LabkitError if the vocabulary has none."""
        if self.unk_id is None:
            raise LabkitError(f"WordPiece: {word[:40]!r} has no pieces and the unknown token {self.unk_token!r} "
                              "is not in the vocabulary (tokenizers fails on it too)")
        return [(self.unk_id, 0, len(word))]

    def tokenize(self, word: str) -> list[str]:
        """One word -> its pieces as strings.

        Example:
            >>> import labkit
            >>> model = WordPiece.from_vocab(labkit.load("minilm").vocab)
            >>> model.tokenize("playing"), model.tokenize("tokenizer")
            (['playing'], ['token', '##izer'])
        """
        return [self.id_to_token[i] for i, _, _ in self.tokenize_word(word)]

    def trace(self, word: str) -> list[Attempt]:
        """Every lookup the greedy search makes on ``word``, in order (for drawing the search).

        Lookups longer than the longest piece of the vocabulary are skipped, since none can match.
        Example:
            >>> import labkit
            >>> from labkit.algorithms.wordpiece import WordPiece
            >>> model = WordPiece.from_vocab(labkit.load("bert-bge").vocab)
            >>> [a.candidate for a in model.trace("unaffable") if a.found]
            ['una', '##ffa', '##ble']
        """
        attempts: list[Attempt] = []
        self.tokenize_word(word, attempts)
        return attempts


def decode_wordpiece(tokens: Sequence[str], *, prefix: str = "##", cleanup: bool = True) -> str:
    """Join WordPiece tokens into text as ``tokenizers``' WordPiece decoder does.

    Every token but the first: a leading ``prefix`` is removed (joined to the previous
    piece), otherwise a space goes in front. With ``cleanup`` each token then has the
    spaces before punctuation and contractions pulled back.
    Example:
        >>> from labkit.algorithms.wordpiece import decode_wordpiece
        >>> decode_wordpiece(["un", "##aff", "##able", "!"])
        'unaffable!'
    """
    parts = []
    for index, token in enumerate(tokens):
        if index:
            if token.startswith(prefix):
                token = token[len(prefix):]
            else:
                token = " " + token
        if cleanup:
            token = cleanup_spaces(token)
        parts.append(token)
    return "".join(parts)


_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def cleanup_spaces(text: str) -> str:
    """Undo the spaces tokenization put before punctuation and contractions, in the order
    ``tokenizers`` applies the replacements.

    Example:
        >>> cleanup_spaces(" do not"), cleanup_spaces("a , b . c")
        (" don't", 'a, b. c')
    """
    for old, new in _CLEANUP:
        text = text.replace(old, new)
    return text
