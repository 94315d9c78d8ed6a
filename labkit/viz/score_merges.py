"""Draw a SentencePiece (score) BPE merge trace: a static table (HTML + text) and a stepper.

Reads the :class:`labkit.algorithms.merge_step.MergeStep` list that
``SpmBpeModel.merge_naive`` or ``merge`` records (each step knows the symbols before it). ``▁`` is shown
as it is, since that is how the vocabulary spells a space.
Introduced in notebook ``03_bpe_sentencepiece``.

Example (one row per merge; a notebook shows it as HTML):
    >>> import labkit
    >>> from labkit.viz.score_merges import ScoreMergeTable
    >>> tok = labkit.load("botchan-bpe", engine="labkit")
    >>> steps = []
    >>> _ = tok.model.merge_naive("▁lower", steps)
    >>> print(repr(ScoreMergeTable("▁lower", steps, token_id=tok.token_to_id)))
    step  left  right  score  merged  id  symbols
    0                                     ▁ l o w e r
    1     e     r      -18    er      21  ▁ l o w er
    2     ▁     l      -37    ▁l      40  ▁l o w er
    3     o     w      -46    ow      49  ▁l ow er
"""
from __future__ import annotations

from typing import Callable, Sequence

from labkit.algorithms.merge_step import MergeStep
from labkit.core import LabkitError
from labkit.viz.merge_view import aligned_text, moment_html, steps_table_html, stepper


class ScoreMergeTable:
    """A score-BPE merge trace as a table: step, pair, score of the merged piece, new piece,
    symbols afterwards.

    HTML in Jupyter, an aligned text table in ``repr``. Introduced in notebook ``03_bpe_sentencepiece``.

    Example:
        >>> import labkit
        >>> steps = []
        >>> _ = labkit.load("botchan-bpe", engine="labkit").model.merge_naive("▁low", steps)
        >>> len(ScoreMergeTable("▁low", steps).steps)
        2
    """

    def __init__(self, text: str, steps: Sequence[MergeStep], *, token_id: Callable[[str], int | None] | None = None):
        if not isinstance(text, str):
            raise LabkitError(f"ScoreMergeTable takes the normalised text as str, got {type(text).__name__}")
        steps = list(steps)
        if any(not isinstance(s, MergeStep) or s.score is None or not s.parts_before for s in steps):
            raise LabkitError("ScoreMergeTable needs the MergeStep list of merge_naive or merge (score steps with their symbols)")
        self.text = text
        self.steps = steps
        self.token_id = token_id

    def symbols_at(self, step: int) -> tuple[str, ...]:
        """The symbols after ``step`` merges (0 = the characters).

        Example:
            >>> import labkit
            >>> steps = []
            >>> _ = labkit.load("botchan-bpe", engine="labkit").model.merge_naive("▁low", steps)
            >>> table = ScoreMergeTable("▁low", steps)
            >>> table.symbols_at(0), table.symbols_at(2)
            (('▁', 'l', 'o', 'w'), ('▁l', 'ow'))
        """
        if not isinstance(step, int) or not 0 <= step <= len(self.steps):
            raise LabkitError(f"symbols_at(): step must be 0..{len(self.steps)}, got {step!r}")
        return tuple(self.text) if step == 0 else self.steps[step - 1].parts_after

    def rows(self) -> list[tuple[str, ...]]:
        """Text rows: step, left, right, score, merged, id, symbols after."""
        rows = [("0", "", "", "", "", "", " ".join(self.text))]
        for s in self.steps:
            new_id = "" if self.token_id is None else str(self.token_id(s.merged))
            rows.append((str(s.step + 1), s.left, s.right, f"{s.score:g}", s.merged, new_id, " ".join(s.parts_after)))
        return rows

    def __repr__(self) -> str:
        return aligned_text(("step", "left", "right", "score", "merged", "id", "symbols"), self.rows())

    def _repr_html_(self) -> str:
        steps = [
            (s.step + 1, s.left, s.right, f"{s.score:g}", s.merged,
             "" if self.token_id is None else str(self.token_id(s.merged)), s.parts_after, s.position)
            for s in self.steps
        ]
        return steps_table_html("score", "symbols after", self.text, steps)

    def step_html(self, step: int) -> str:
        """HTML for one moment: the symbols after ``step`` merges, the last merge lit.

        Example (the piece the step made is lit):
            >>> import labkit
            >>> steps = []
            >>> _ = labkit.load("botchan-bpe", engine="labkit").model.merge_naive("▁low", steps)
            >>> ScoreMergeTable("▁low", steps).step_html(1).split("<small>")[1]
            'step 1: ▁ + l -&gt; ▁l (score -37)</small></div>'
        """
        symbols = self.symbols_at(step)
        if step == 0:
            return moment_html(symbols, None, f"start: {len(symbols)} characters")
        s = self.steps[step - 1]
        caption = f"step {step}: {s.left} + {s.right} -> {s.merged} (score {s.score:g})"
        return moment_html(symbols, s.position, caption)


def score_merge_stepper(table: ScoreMergeTable):
    """An ipywidgets slider stepping through the merges (show the table too, as the static
    fallback). Introduced in notebook ``03_bpe_sentencepiece``.

    Example:
        >>> import labkit
        >>> steps = []
        >>> _ = labkit.load("botchan-bpe", engine="labkit").model.merge_naive("▁low", steps)
        >>> score_merge_stepper(ScoreMergeTable("▁low", steps)).children[0].max
        2
    """
    return stepper(len(table.steps), table.step_html)
