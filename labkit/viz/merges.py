"""Draw a BPE merge trace: a static table (HTML + text) and an ipywidgets stepper.

Reads the :class:`labkit.algorithms.bpe.MergeTrace` that ``bpe_naive``/``bpe_heap`` record;
parts are spelled the GPT-2 way (``Ġ`` for a space) so every byte is visible.
Introduced in notebook ``02_bpe_byte_level``.

Example:
    >>> import labkit
    >>> from labkit.viz.merges import MergeTable
    >>> len(MergeTable(labkit.load("gpt2").merge_trace(" lower")).trace.steps)
    5
"""
from __future__ import annotations

from labkit.algorithms.bpe import MergeTrace
from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.core import LabkitError
from labkit.viz.merge_view import aligned_text, moment_html, steps_table_html, stepper


def spell(part: bytes) -> str:
    """A part as GPT-2 characters (every byte visible).

    Example:
        >>> from labkit.viz.merges import spell
        >>> spell(b" lo")
        'Ġlo'
    """
    return bytes_to_gpt2(part)


def parts_at(trace: MergeTrace, step: int) -> tuple[bytes, ...]:
    """The parts after ``step`` merges (0 = the starting bytes).

    Example:
        >>> import labkit
        >>> from labkit.viz.merges import parts_at
        >>> trace = labkit.load("gpt2").merge_trace(" lower")
        >>> parts_at(trace, len(trace)) == trace.final
        True
    """
    if not isinstance(step, int) or not 0 <= step <= len(trace.steps):
        raise LabkitError(f"parts_at(): step must be 0..{len(trace.steps)}, got {step!r}")
    return trace.initial if step == 0 else trace.steps[step - 1].parts_after


def _spelled(parts) -> list[str]:
    return [spell(part) for part in parts]


class MergeTable:
    """A merge trace as a table: step, pair, rank, new part, parts after the merge.

    Example (HTML in Jupyter, an aligned text table in ``repr``):
        >>> import labkit
        >>> print(repr(MergeTable(labkit.load("gpt2").merge_trace(" lower"))).splitlines()[2])
        1     e     r      7     er          Ġ l o w er

    Introduced in notebook ``02_bpe_byte_level``.
    """

    def __init__(self, trace: MergeTrace, *, token_id=None):
        if not isinstance(trace, MergeTrace):
            raise LabkitError(f"MergeTable takes a MergeTrace, got {type(trace).__name__}")
        self.trace = trace
        self.token_id = token_id  # optional bytes -> id lookup to show the new token's id

    def rows(self) -> list[tuple[str, ...]]:
        """Text rows: step, left, right, rank, merged, new id, parts after."""
        rows = [("0", "", "", "", "", "", " ".join(spell(p) for p in self.trace.initial))]
        for s in self.trace.steps:
            new_id = "" if self.token_id is None else str(self.token_id(s.merged))
            rows.append((str(s.step + 1), spell(s.left), spell(s.right), str(s.rank), spell(s.merged), new_id,
                         " ".join(spell(p) for p in s.parts_after)))
        return rows

    def __repr__(self) -> str:
        return aligned_text(("step", "left", "right", "rank", "merged", "id", "parts"), self.rows())

    def _repr_html_(self) -> str:
        steps = [
            (s.step + 1, spell(s.left), spell(s.right), s.rank, spell(s.merged),
             "" if self.token_id is None else str(self.token_id(s.merged)), _spelled(s.parts_after), s.position)
            for s in self.trace.steps
        ]
        return steps_table_html("rank", "parts after", _spelled(self.trace.initial), steps)


def step_html(trace: MergeTrace, step: int) -> str:
    """HTML for one moment of the trace: the parts after ``step`` merges, the last merge lit.

    Example:
        >>> import labkit
        >>> from labkit.viz.merges import step_html
        >>> trace = labkit.load("gpt2").merge_trace(" lower")
        >>> step_html(trace, 1)[:4]
        '<div'
    """
    parts = parts_at(trace, step)
    if step == 0:
        return moment_html(_spelled(parts), None, f"start: {len(parts)} bytes")
    s = trace.steps[step - 1]
    caption = f"step {step}: {spell(s.left)} + {spell(s.right)} -> {spell(s.merged)} (rank {s.rank})"
    return moment_html(_spelled(parts), s.position, caption)


def merge_stepper(trace: MergeTrace):
    """An ipywidgets slider that steps through the merges (show :class:`MergeTable` too,
    as the static fallback).

    Example:
        >>> import labkit
        >>> [type(child).__name__ for child in merge_stepper(labkit.load("gpt2").merge_trace(" lower")).children]
        ['IntSlider', 'HTML']

    Introduced in notebook ``02_bpe_byte_level``.
    """
    return stepper(len(trace.steps), lambda step: step_html(trace, step))
