"""An interactive Unigram lattice explorer: every candidate piece with its score, the
Viterbi path, the k best paths and sampled paths as ``alpha`` moves; for short strings,
every segmentation ranked with its probability.

:func:`draw_paths` draws one static figure (the stored fallback); :class:`LatticeExplorer`
puts it behind ipywidgets (text, vocabulary, any Unigram file, k, alpha, samples, seed).
The lattice, n-best and sampling are :mod:`labkit.training.unigram_sampling`'s, so what
the explorer shows is what sentencepiece computes.
Introduced in notebook ``05_unigram_trie_viterbi`` (last section).

Example (the best segmentation of "school" and the next, with their probabilities at alpha 0.5):
    >>> from labkit.viz.lattice_explorer import paths_table, UnigramSampler
    >>> [(row["segmentation"], round(row["probability"], 5)) for row in paths_table(UnigramSampler.load("botchan-unigram"), "school", 0.5)[:2]]
    [('▁school', 0.99993), ('▁s | ch | o | o | l', 4e-05)]
"""
from __future__ import annotations

import math
from typing import Mapping

from labkit.training.unigram_sampling import UnigramSampler
from labkit.core import LabkitError

VITERBI_COLOR = "#c0392b"
EDGE_COLOR = "#9aa5b1"
NBEST_COLOR = "#2c7fb8"
SAMPLE_COLOR = "#31a354"
MAX_DRAWN_CHARS = 60
MAX_LISTED_PATHS = 5_000


def _piece_label(sampler: UnigramSampler, node) -> str:
    return sampler.model.pieces[node.id] if node.id >= 0 else "?"


def paths_table(sampler: UnigramSampler, text: str, alpha: float, limit: int = 20) -> list[dict]:
    """Every segmentation of a short ``text``, best first: rank, pieces, score and its
    probability under ``exp(alpha · score)`` (exact, by enumeration).

    Example:
        >>> rows = paths_table(UnigramSampler.load("botchan-unigram"), "school", 0.5)
        >>> rows[0]["rank"], rows[0]["score"], round(sum(row["probability"] for row in rows), 6)
        (1, -6.5709, 1.0)
    """
    lattice = sampler.lattice(text)
    try:
        paths = lattice.paths(limit=MAX_LISTED_PATHS)
    except LabkitError:
        raise LabkitError(f"paths_table: {text!r} has more than {MAX_LISTED_PATHS:,} segmentations; use a shorter text")
    logs = [alpha * score for _, score in paths]
    top = max(logs) if logs else 0.0
    weights = [math.exp(v - top) for v in logs]
    total = math.fsum(weights) or 1.0
    ranked = sorted(zip(paths, weights), key=lambda item: -item[0][1])
    return [{"rank": rank + 1, "segmentation": " | ".join(_piece_label(sampler, n) for n in path),
             "score": round(score, 4), "probability": weight / total}
            for rank, ((path, score), weight) in enumerate(ranked[:limit])]


def draw_paths(sampler: UnigramSampler, text: str, *, k: int = 3, alpha: float = 0.5, samples: int = 3,
               seed: int = 0, ax=None, title: str | None = None):
    """Draw the lattice of ``text``: arcs above the axis for every candidate piece (label:
    piece and score), the Viterbi path in red, then one row per n-best path (blue) and per
    sampled path (green) below it. Returns the matplotlib Axes.

    Example:
        >>> from labkit.viz.lattice_explorer import draw_paths, UnigramSampler
        >>> draw_paths(UnigramSampler.load("botchan-unigram"), "What is LoRA?", alpha=0.2)
        <Axes: title={'center': '20 candidate pieces; red: Viterbi; blue: next best; green: samples at alpha=0.2'}>
    """
    import random

    import matplotlib.pyplot as plt
    from matplotlib.patches import Arc, Rectangle

    lattice = sampler.lattice(text)
    n = lattice.n
    if n == 0:
        raise LabkitError("draw_paths: the text normalises to nothing")
    if n > MAX_DRAWN_CHARS:
        raise LabkitError(f"draw_paths: {n} characters after normalisation; draw at most {MAX_DRAWN_CHARS}")
    best = lattice.nbest(max(1, k))
    viterbi = best[0][0]
    on_viterbi = {(node.start, node.end) for node in viterbi}
    rng = random.Random(seed)
    drawn = [lattice.sample(alpha, rng) for _ in range(samples)]
    rows = [("best" if i == 0 else f"#{i + 1}", path, NBEST_COLOR if i else VITERBI_COLOR) for i, (path, _) in enumerate(best)]
    rows += [(f"sample {i + 1}", path, SAMPLE_COLOR) for i, path in enumerate(drawn)]
    if ax is None:
        _, ax = plt.subplots(figsize=(min(16, 1.2 + 0.55 * n), 3.2 + 0.38 * len(rows)))
    label_all = n <= 24
    for node in lattice.nodes[2:]:
        width = node.end - node.start
        chosen = (node.start, node.end) in on_viterbi
        ax.add_patch(Arc(((node.start + node.end) / 2, 0), width, width * 0.9, theta1=0, theta2=180,
                         color=VITERBI_COLOR if chosen else EDGE_COLOR, lw=2.4 if chosen else 0.8, alpha=1.0 if chosen else 0.7))
        if label_all or chosen:
            ax.text((node.start + node.end) / 2, width * 0.45 + 0.05, f"{_piece_label(sampler, node)}\n{node.score:.2f}",
                    ha="center", va="bottom", fontsize=6.5, color=VITERBI_COLOR if chosen else "#52606d")
    for offset in range(n + 1):
        ax.plot(offset, 0, "o", color="#1f2933", ms=3)
    for offset, ch in enumerate(lattice.text):
        ax.text(offset + 0.5, -0.35, ch, ha="center", va="center", fontsize=10, family="monospace")
    for r, (name, path, color) in enumerate(rows):
        y = -1.0 - 0.6 * r
        ax.text(-0.3, y, name, ha="right", va="center", fontsize=8, color=color)
        for node in path:
            ax.add_patch(Rectangle((node.start + 0.04, y - 0.22), node.end - node.start - 0.08, 0.44,
                                   facecolor=color, alpha=0.18, edgecolor=color))
            ax.text((node.start + node.end) / 2, y, _piece_label(sampler, node), ha="center", va="center", fontsize=7)
    top = max((node.end - node.start for node in lattice.nodes[2:]), default=1)
    ax.set_xlim(-2.2, n + 0.5)
    ax.set_ylim(-1.0 - 0.6 * len(rows), top * 0.45 + 1.0)
    ax.set_aspect("auto")
    ax.axis("off")
    ax.set_title(title or f"{len(lattice.nodes) - 2} candidate pieces; red: Viterbi; blue: next best; "
                          f"green: samples at alpha={alpha:g}", fontsize=9)
    return ax


class LatticeExplorer:
    """ipywidgets around :func:`draw_paths` and :func:`paths_table`: type a text, pick a
    vocabulary (or load any Unigram file), move ``k``, ``alpha``, the number of samples and
    the seed.

    Example (outside Jupyter the first drawing's table is printed, so it is caught here):
        >>> import contextlib, io
        >>> import matplotlib.pyplot as plt
        >>> with contextlib.redirect_stdout(io.StringIO()):
        ...     explorer = LatticeExplorer({"botchan-unigram": UnigramSampler.load("botchan-unigram")})
        >>> plt.close("all")
        >>> type(explorer.widget).__name__, explorer.k.value, explorer.vocab.options
        ('VBox', 3, ('botchan-unigram',))
    """

    def __init__(self, samplers: Mapping[str, UnigramSampler], text: str = "What is LoRA?"):
        import ipywidgets as widgets

        if not samplers:
            raise LabkitError("LatticeExplorer: give at least one vocabulary")
        self.samplers = dict(samplers)
        self.text = widgets.Text(value=text, description="text", continuous_update=False)
        self.vocab = widgets.Dropdown(options=list(self.samplers), description="vocabulary")
        self.path = widgets.Text(placeholder="path to a Unigram .model / GGUF / tokenizer.json", description="file")
        self.load_button = widgets.Button(description="load file")
        self.k = widgets.IntSlider(value=3, min=1, max=10, description="k best")
        self.alpha = widgets.FloatLogSlider(value=0.5, base=10, min=-2, max=1, step=0.1, description="alpha")
        self.samples = widgets.IntSlider(value=3, min=0, max=8, description="samples")
        self.seed = widgets.IntText(value=0, description="seed")
        self.out = widgets.Output()
        for control in (self.text, self.vocab, self.k, self.alpha, self.samples, self.seed):
            control.observe(lambda _change: self.refresh(), names="value")
        self.load_button.on_click(lambda _button: self.load_file())
        self.widget = widgets.VBox([
            widgets.HBox([self.text, self.vocab]),
            widgets.HBox([self.path, self.load_button]),
            widgets.HBox([self.k, self.alpha]),
            widgets.HBox([self.samples, self.seed]),
            self.out,
        ])
        self.refresh()

    def load_file(self) -> None:
        """Add the Unigram file named in the file box to the vocabularies and show it."""
        with self.out:
            try:
                sampler = UnigramSampler.load(self.path.value.strip())
            except LabkitError as error:
                print(f"cannot load: {error}")
                return
        name = self.path.value.strip()
        self.samplers[name] = sampler
        self.vocab.options = list(self.samplers)
        self.vocab.value = name

    def refresh(self) -> None:
        """Redraw for the current controls (errors are shown, not raised)."""
        import matplotlib.pyplot as plt
        import pandas as pd
        from IPython.display import display

        self.out.clear_output(wait=True)
        with self.out:
            sampler = self.samplers[self.vocab.value]
            try:
                ax = draw_paths(sampler, self.text.value, k=self.k.value, alpha=self.alpha.value,
                                samples=self.samples.value, seed=self.seed.value)
                plt.show()
                plt.close(ax.figure)
                display(pd.DataFrame(paths_table(sampler, self.text.value, self.alpha.value)).set_index("rank"))
            except LabkitError as error:
                print(error)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)
