"""Draw a Unigram lattice: offsets as nodes, candidate pieces as arcs, the best path in red;
and the ``tokenization_results`` table as deterministic HTML with a text fallback.

Reads the :class:`labkit.algorithms.unigram.Lattice` that ``UnigramModel.lattice`` returns
(or builds it from a Unigram tokenizer and a text).
Introduced in notebook ``05_unigram_trie_viterbi``; ``labkit lattice NAME TEXT --png out.png``
calls :func:`lattice_figure`.

Example:
    >>> import labkit
    >>> import matplotlib.pyplot as plt
    >>> from labkit.viz.lattice import lattice_figure
    >>> figure = lattice_figure(labkit.load("botchan-unigram"), "What is LoRA?")
    >>> figure.axes[0].get_title().split(";")[0]
    '20 candidate pieces'
    >>> plt.close(figure)
"""
from __future__ import annotations

import html

from labkit.algorithms.unigram import Lattice
from labkit.core import LabkitError

BEST_COLOR = "#c0392b"
OTHER_COLOR = "#9aa5b1"
UNKNOWN_COLOR = "#e67e22"


def lattice_of(source, text: str | None = None) -> Lattice:
    """A Lattice as is, or the lattice of ``text`` under a Unigram tokenizer (any engine:
    for one without ``lattice()``, labkit's Unigram model and normaliser are built from the
    tokenizer's public ``vocab``).

    Example:
        >>> from labkit.viz.lattice import lattice_of
        >>> import labkit
        >>> lattice_of(labkit.load("botchan-unigram", engine="sentencepiece"), "Hi")
        <Lattice '▁Hi': 3 candidate pieces, best path '▁ | H | i', score -15.1342>
    """
    if isinstance(source, Lattice):
        return source
    if text is None or not isinstance(text, str):
        raise LabkitError(f"lattice_of(): give a Lattice, or a tokenizer and a str text (got text={text!r})")
    lattice = getattr(source, "lattice", None)
    if callable(lattice):
        return lattice(text)
    vocab = getattr(source, "vocab", None)
    if vocab is None or vocab.model != "unigram":
        model = getattr(vocab, "model", type(source).__name__)
        raise LabkitError(f"lattice_of(): a lattice needs a Unigram tokenizer, not {model!r}")
    from labkit.algorithms.charsmap import SpmNormalizer
    from labkit.algorithms.unigram import UnigramModel

    sentencepiece = vocab.format != "gguf"  # as labkit's Unigram engine decides
    model = UnigramModel(vocab.tokens, vocab.scores, vocab.token_types, unk_id=vocab.specials.unk_id,
                         sentencepiece=sentencepiece, byte_fallback=bool(vocab.options.get("byte_fallback", False)))
    normalizer = SpmNormalizer.from_vocab(vocab, compat="sentencepiece" if sentencepiece else "llama.cpp")
    return model.lattice(normalizer.normalize(text))


def draw_lattice(lattice: Lattice, ax=None, *, label: str = "best", max_chars: int = 80, title: str | None = None):
    """Draw ``lattice`` on a matplotlib Axes: one node per offset of the normalised text,
    one arc per candidate piece (height grows with its length), the best path in red with
    each piece and its score written on it. ``label="all"`` writes every arc's piece too.

    Example (one arc per candidate piece; the best path's pieces labelled with their scores):
        >>> import labkit
        >>> import matplotlib.pyplot as plt
        >>> ax = draw_lattice(labkit.load("botchan-unigram", engine="labkit").model.lattice("▁ab"))
        >>> len(ax.lines), [text.get_text() for text in ax.texts][:2]
        (4, ['b\\n-5.87', '▁a\\n-4.18'])
        >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    if not isinstance(lattice, Lattice):
        raise LabkitError(f"draw_lattice(): expected a Lattice, got {type(lattice).__name__}")
    if label not in ("best", "all", "none"):
        raise LabkitError(f"draw_lattice(): label must be 'best', 'all' or 'none', got {label!r}")
    n = len(lattice.text)
    if n > max_chars:
        raise LabkitError(f"draw_lattice(): {n} characters is too many to draw legibly (max_chars={max_chars})")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.62 * n + 1.5), 4.2))
    best = set(lattice.path)
    longest = max((node.end - node.start for node in lattice.nodes), default=1)
    order = sorted(range(len(lattice.nodes)), key=lambda i: (i in best, lattice.nodes[i].end - lattice.nodes[i].start))
    placed: list[tuple[float, float, float]] = []  # (y, x from, x to) of the labels written so far
    for index in best:  # the best path's labels (two lines each) come first; others make way
        node = lattice.nodes[index]
        mid, y = (node.start + node.end) / 2, 0.35 + 0.9 * (node.end - node.start) / longest + 0.04
        half = max(len(node.piece), 5) * _CHAR_WIDTH / 2 + 0.05
        placed += [(y, mid - half, mid + half), (y + _LABEL_ROW, mid - half, mid + half)]
    for index in order:
        node = lattice.nodes[index]
        on_path = index in best
        width = node.end - node.start
        height = 0.35 + 0.9 * width / longest
        steps = 24
        xs = [node.start + width * k / steps for k in range(steps + 1)]
        ys = [height * 4 * (x - node.start) * (node.end - x) / (width * width) for x in xs]
        color = BEST_COLOR if on_path else (UNKNOWN_COLOR if node.kind == "unknown" else OTHER_COLOR)
        ax.plot(xs, ys, color=color, linewidth=2.6 if on_path else 1.0, alpha=1.0 if on_path else 0.7,
                linestyle="--" if node.kind == "unknown" else "-", zorder=3 if on_path else 2)
        if label == "all" or (label == "best" and on_path):
            mid = (node.start + node.end) / 2
            text = f"{node.piece}\n{node.score:.2f}" if on_path else node.piece
            y = height + 0.04 if on_path else _free_height(placed, mid, height + 0.04, len(node.piece))
            ax.text(mid, y, text, ha="center", va="bottom", fontsize=8 if on_path else 6.5,
                    color=color, fontweight="bold" if on_path else "normal", zorder=4)
    path_ends = {0} | {lattice.nodes[i].end for i in lattice.path}
    ax.scatter(range(n + 1), [0] * (n + 1), s=36, zorder=5,
               color=[BEST_COLOR if j in path_ends else "#34495e" for j in range(n + 1)])
    for j in range(n + 1):
        ax.text(j, -0.13, str(j), ha="center", va="top", fontsize=7, color="#34495e")
    for j, ch in enumerate(lattice.text):
        ax.text(j + 0.5, -0.32, ch if ch.isprintable() else repr(ch)[1:-1], ha="center", va="top",
                fontsize=10, family="monospace")
    ax.set_xlim(-0.5, n + 0.5)
    ax.set_ylim(-0.55, 1.65)
    ax.axis("off")
    pieces = " | ".join(lattice.nodes[i].piece for i in lattice.path)
    ax.set_title(title or f"{len(lattice.nodes)} candidate pieces; best path: {pieces}  (score {lattice.score:.3f})",
                 fontsize=9)
    return ax


_LABEL_ROW = 0.11  # height of one line of small label text, in the drawing's y units
_CHAR_WIDTH = 0.16  # width of one small label character, in offsets


def _free_height(placed: list, mid: float, y: float, chars: int) -> float:
    """The lowest height at or above ``y`` where a label of ``chars`` characters centred on
    ``mid`` overlaps no label placed so far (arcs of one length share a height, so labels of
    neighbouring pieces would otherwise print over each other); records it in ``placed``."""
    half = max(chars, 1) * _CHAR_WIDTH / 2 + 0.05
    for _ in range(12):
        if not any(abs(y - y2) < _LABEL_ROW and mid - half < x2 and x1 < mid + half for y2, x1, x2 in placed):
            break
        y += _LABEL_ROW
    placed.append((y, mid - half, mid + half))
    return y


def lattice_figure(source, text: str | None = None, *, label: str = "best", title: str | None = None):
    """A matplotlib Figure of the lattice of ``text`` under a Unigram tokenizer (or of a
    Lattice): what ``labkit lattice NAME TEXT --png out.png`` saves.

    Example:
        >>> from labkit.viz.lattice import lattice_figure
        >>> import labkit
        >>> lattice_figure(labkit.load("botchan-unigram"), "What is LoRA?")
        <Figure size 1018x420 with 1 Axes>
    """
    ax = draw_lattice(lattice_of(source, text), label=label, title=title)
    return ax.figure


class LatticeTable:
    """The ``tokenization_results`` table (best score, last piece and its start at every
    offset) as deterministic HTML, with a plain-text ``repr``.

    Example (HTML in a notebook cell; the text form here):
        >>> import labkit
        >>> print(repr(LatticeTable(labkit.load("botchan-unigram", engine="labkit").model.lattice("▁ab"))))
        offset  char  best_score  last_piece  starts_at  on_best_path
        0             0.0000                             yes
        1       ▁     -3.3335     ▁           0
        2       a     -4.1793     ▁a          0          yes
        3       b     -10.0463    b           2          yes
    """

    columns = ("offset", "char", "best_score", "last_piece", "starts_at", "on_best_path")

    def __init__(self, lattice: Lattice):
        if not isinstance(lattice, Lattice):
            raise LabkitError(f"LatticeTable: expected a Lattice, got {type(lattice).__name__}")
        self.lattice = lattice
        self.rows = lattice.results_table()

    def _cells(self, row) -> list[str]:
        return [
            str(row["offset"]), row["char"], f"{row['best_score']:.4f}", row["last_piece"],
            "" if row["starts_at"] is None else str(row["starts_at"]), "yes" if row["on_best_path"] else "",
        ]

    def __repr__(self) -> str:
        table = [list(self.columns)] + [self._cells(r) for r in self.rows]
        widths = [max(len(line[k]) for line in table) for k in range(len(self.columns))]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{c}</th>" for c in self.columns)
        body = []
        for row in self.rows:
            style = ' style="background:#fdecea"' if row["on_best_path"] else ""
            cells = "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(row))
            body.append(f"<tr{style}>{cells}</tr>")
        return (f'<table class="labkit-lattice"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table>")
