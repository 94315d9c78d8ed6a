"""Draw a BPE merge trace: a static table (HTML + text) and an ipywidgets stepper.

Reads the :class:`labkit.algorithms.bpe.MergeTrace` that ``bpe_naive``/``bpe_heap`` record;
parts are spelled the GPT-2 way (``Ġ`` for a space) so every byte is visible.
Introduced in notebook ``02_bpe_byte_level``.

Example: ``MergeTable(tok.merge_trace(" lower"))`` shows one row per merge in a notebook.
"""
from __future__ import annotations

import html

from labkit.algorithms.bpe import MergeTrace
from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.core import LabkitError

_CHIP = ("display:inline-block;margin:1px 2px;padding:0 4px;border:1px solid #999;"
         "border-radius:3px;font-family:monospace;background:{bg}")


def spell(part: bytes) -> str:
    """A part as GPT-2 characters (every byte visible).

    Example: ``spell(b" lo")`` -> ``'Ġlo'``
    """
    return bytes_to_gpt2(part)


def parts_at(trace: MergeTrace, step: int) -> tuple[bytes, ...]:
    """The parts after ``step`` merges (0 = the starting bytes).

    Example: ``parts_at(trace, len(trace))`` == ``trace.final``
    """
    if not isinstance(step, int) or not 0 <= step <= len(trace.steps):
        raise LabkitError(f"parts_at(): step must be 0..{len(trace.steps)}, got {step!r}")
    return trace.initial if step == 0 else trace.steps[step - 1].parts_after


def _chips_html(parts, highlight: int | None = None) -> str:
    out = []
    for i, part in enumerate(parts):
        bg = "#ffe08a" if i == highlight else "#f4f4f4"
        out.append(f'<span style="{_CHIP.format(bg=bg)}">{html.escape(spell(part))}</span>')
    return "".join(out)


class MergeTable:
    """A merge trace as a table: step, pair, rank, new part, parts after the merge.

    Example: ``MergeTable(trace)`` (HTML in Jupyter, an aligned text table in ``repr``)
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
        header = ("step", "left", "right", "rank", "merged", "id", "parts")
        rows = [header, *self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in ("step", "pair", "rank", "merged", "id", "parts after"))
        body = [f"<tr><td>0</td><td></td><td></td><td></td><td></td><td>{_chips_html(self.trace.initial)}</td></tr>"]
        for s in self.trace.steps:
            new_id = "" if self.token_id is None else html.escape(str(self.token_id(s.merged)))
            pair = f"{html.escape(spell(s.left))} + {html.escape(spell(s.right))}"
            body.append(
                f"<tr><td>{s.step + 1}</td><td style='font-family:monospace'>{pair}</td><td>{s.rank}</td>"
                f"<td style='font-family:monospace'>{html.escape(spell(s.merged))}</td><td>{new_id}</td>"
                f"<td>{_chips_html(s.parts_after, highlight=s.position)}</td></tr>"
            )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def step_html(trace: MergeTrace, step: int) -> str:
    """HTML for one moment of the trace: the parts after ``step`` merges, the last merge lit.

    Example: ``step_html(trace, 1)``
    """
    parts = parts_at(trace, step)
    if step == 0:
        caption = f"start: {len(parts)} bytes"
        return f"<div>{_chips_html(parts)}</div><div><small>{html.escape(caption)}</small></div>"
    s = trace.steps[step - 1]
    caption = f"step {step}: {spell(s.left)} + {spell(s.right)} -> {spell(s.merged)} (rank {s.rank})"
    return f"<div>{_chips_html(parts, highlight=s.position)}</div><div><small>{html.escape(caption)}</small></div>"


def merge_stepper(trace: MergeTrace):
    """An ipywidgets slider that steps through the merges (show :class:`MergeTable` too,
    as the static fallback).

    Example: ``display(merge_stepper(tok.merge_trace(" tokenization")))``
    Introduced in notebook ``02_bpe_byte_level``.
    """
    import ipywidgets as widgets

    slider = widgets.IntSlider(value=0, min=0, max=len(trace.steps), description="merges")
    view = widgets.HTML(step_html(trace, 0))

    def on_change(change):
        view.value = step_html(trace, change["new"])

    slider.observe(on_change, names="value")
    return widgets.VBox([slider, view])
