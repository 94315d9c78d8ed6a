"""Draw WordPiece's greedy longest-match search: every lookup it makes on one word.

Reads the :class:`labkit.algorithms.wordpiece.Attempt` list that ``WordPiece.trace``
returns. One row per lookup: the characters the candidate covers, lit green when the
vocabulary has it (the piece taken) and red when not; the search then moves on from the end
of the green span. Static HTML + text (``repr``), and a matplotlib picture.
Introduced in notebook ``04_wordpiece``.

Example:
    >>> import labkit
    >>> from labkit.algorithms.wordpiece import WordPiece
    >>> from labkit.viz.wordpiece import GreedySearch
    >>> model = WordPiece.from_vocab(labkit.load("minilm").vocab)
    >>> print(repr(GreedySearch("unaffable", model.trace("unaffable")))[:60])
    unaffable
    ---------  unaffable  not in vocab
    --------   unaf
"""
from __future__ import annotations

import html
from typing import Sequence

from labkit.algorithms.wordpiece import Attempt
from labkit.core import LabkitError

_CELL = "font-family:monospace;padding:1px 5px;text-align:center;{extra}"
_FOUND, _MISSED, _DONE = "#b7e4a1", "#f6c1b8", "#e8e8e8"


class GreedySearch:
    """The lookups of one greedy longest-match search, as a grid.

    HTML in Jupyter, text in ``repr``; introduced in notebook ``04_wordpiece``.

    Example:
        >>> import labkit
        >>> from labkit.algorithms.wordpiece import WordPiece
        >>> model = WordPiece.from_vocab(labkit.load("minilm").vocab)
        >>> search = GreedySearch("tokenizer", model.trace("tokenizer"))
        >>> [attempt.candidate for attempt in search.attempts if attempt.found]
        ['token', '##izer']
    """

    def __init__(self, word: str, attempts: Sequence[Attempt]):
        if not isinstance(word, str):
            raise LabkitError(f"GreedySearch takes the word as str, got {type(word).__name__}")
        attempts = list(attempts)
        if any(not isinstance(a, Attempt) or a.end > len(word) for a in attempts):
            raise LabkitError("GreedySearch needs the Attempt list WordPiece.trace() made for this word")
        self.word = word
        self.attempts = attempts

    @property
    def pieces(self) -> list[str]:
        """The candidates found, in order (the word's pieces unless the search failed)."""
        return [a.candidate for a in self.attempts if a.found]

    @property
    def failed(self) -> bool:
        """True when some position had no piece, so the whole word became the unknown token."""
        covered = max((a.end for a in self.attempts if a.found), default=0)
        return covered < len(self.word)

    def rows(self) -> list[tuple[str, str, str]]:
        """(marks, candidate, verdict): marks show covered chars as '=' (found) or '-' (missed)
        and chars already taken as '.'."""
        out = []
        for a in self.attempts:
            mark = "=" if a.found else "-"
            line = "." * a.start + mark * (a.end - a.start) + " " * (len(self.word) - a.end)
            out.append((line, a.candidate, "in vocab" if a.found else "not in vocab"))
        return out

    def __repr__(self) -> str:
        lines = [self.word]
        width = max((len(c) for _, c, _ in self.rows()), default=0)
        lines += [f"{marks}  {candidate.ljust(width)}  {verdict}" for marks, candidate, verdict in self.rows()]
        lines.append("=> " + ("[UNK] (a position had no piece)" if self.failed else " ".join(self.pieces)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='{_CELL.format(extra='')}'>{html.escape(ch)}</th>" for ch in self.word)
        body = []
        for a in self.attempts:
            cells = []
            for i, ch in enumerate(self.word):
                if i < a.start:
                    cells.append(f"<td style='{_CELL.format(extra='background:' + _DONE)}'></td>")
                elif i < a.end:
                    bg = _FOUND if a.found else _MISSED
                    cells.append(f"<td style='{_CELL.format(extra='background:' + bg)}'>{html.escape(ch)}</td>")
                else:
                    cells.append(f"<td style='{_CELL.format(extra='')}'></td>")
            verdict = "✓" if a.found else "✗"
            body.append(f"<tr>{''.join(cells)}<td style='font-family:monospace'>{html.escape(a.candidate)} {verdict}</td></tr>")
        result = "[UNK]" if self.failed else " ".join(self.pieces)
        return (f"<table><thead><tr>{head}<th>candidate</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
                f"<div><small>result: {html.escape(result)}</small></div>")


def plot_greedy_search(search: GreedySearch, ax=None):
    """Draw the search with matplotlib: one bar per lookup over the characters it covers
    (green found, red not found), first lookup at the top. Returns the Axes.

    Example:
        >>> import labkit
        >>> import matplotlib.pyplot as plt
        >>> from labkit.algorithms.wordpiece import WordPiece
        >>> model = WordPiece.from_vocab(labkit.load("minilm").vocab)
        >>> ax = plot_greedy_search(GreedySearch("tokenizer", model.trace("tokenizer")))
        >>> len(ax.patches), "".join(label.get_text() for label in ax.get_xticklabels())
        (6, 'tokenizer')
        >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(max(4, 0.45 * len(search.word) + 2), 0.32 * len(search.attempts) + 1.2))
    for row, a in enumerate(search.attempts):
        ax.barh(row, a.end - a.start, left=a.start, color=_FOUND if a.found else _MISSED, edgecolor="#666")
        ax.text(len(search.word) + 0.2, row, a.candidate, va="center", family="monospace", fontsize=8)
    ax.set_xticks([i + 0.5 for i in range(len(search.word))], list(search.word), family="monospace")
    ax.set_xlim(0, len(search.word) + 0.2 + 0.16 * max((len(a.candidate) for a in search.attempts), default=1) + 1)
    ax.set_yticks([])
    ax.invert_yaxis()
    ax.set_title(f"greedy longest match on {search.word!r}: {len(search.attempts)} lookups")
    return ax
