"""How a merge trace is shown, whatever BPE made it: a row of part "chips" with the last merge
lit, the table of steps (HTML and aligned text), and a slider that steps through them.

Byte-level BPE (:mod:`labkit.viz.merges`, parts spelled the GPT-2 way, ranked merges) and
SentencePiece score BPE (:mod:`labkit.viz.score_merges`, ``▁`` pieces, scored merges) fill in
the labels; the layout is this module's. Introduced in notebook ``02_bpe_byte_level``.

Example:
    >>> from labkit.viz.merge_view import chips_html
    >>> chips_html(["Ġl", "ow", "er"], highlight=1).count("<span")
    3
"""
from __future__ import annotations

import html
from typing import Callable, Sequence

_CHIP = ("display:inline-block;margin:1px 2px;padding:0 4px;border:1px solid #999;"
         "border-radius:3px;font-family:monospace;background:{bg}")


def chips_html(labels: Sequence[str], highlight: int | None = None) -> str:
    """The parts as boxed labels, the one at index ``highlight`` lit.

    Example:
        >>> from labkit.viz.merge_view import chips_html
        >>> chips_html(["a", "b"], highlight=0)  # doctest: +ELLIPSIS
        '<span style="...#ffe08a">a</span>...'
    """
    out = []
    for index, label in enumerate(labels):
        bg = "#ffe08a" if index == highlight else "#f4f4f4"
        out.append(f'<span style="{_CHIP.format(bg=bg)}">{html.escape(label)}</span>')
    return "".join(out)


def aligned_text(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table, columns padded to their widest cell (the ``repr`` of a trace table).

    Example:
        >>> from labkit.viz.merge_view import aligned_text
        >>> aligned_text(("a", "bb"), [("1", "2")])
        'a  bb\\n1  2'
    """
    rows = [tuple(header), *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def steps_table_html(value_name: str, after_name: str, start: Sequence[str], steps) -> str:
    """The HTML table of a trace: a start row with the ``start`` labels, then per step
    ``(number, left, right, value, merged, new_id, labels_after, lit_index)``.

    Example:
        >>> html = steps_table_html("rank", "parts after", ["a", "b"], [(1, "a", "b", "0", "ab", "", ["ab"], 0)])
        >>> html.count("<tr>"), "<td style='font-family:monospace'>a + b</td>" in html
        (3, True)
    """
    head = "".join(f"<th>{h}</th>" for h in ("step", "pair", value_name, "merged", "id", after_name))
    body = [f"<tr><td>0</td><td></td><td></td><td></td><td></td><td>{chips_html(start)}</td></tr>"]
    for number, left, right, value, merged, new_id, after, lit in steps:
        pair = f"{html.escape(left)} + {html.escape(right)}"
        body.append(
            f"<tr><td>{number}</td><td style='font-family:monospace'>{pair}</td><td>{value}</td>"
            f"<td style='font-family:monospace'>{html.escape(merged)}</td><td>{html.escape(new_id)}</td>"
            f"<td>{chips_html(after, lit)}</td></tr>"
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def moment_html(labels: Sequence[str], lit: int | None, caption: str) -> str:
    """One moment of a trace: the parts (the last merge lit) over a caption.

    Example:
        >>> from labkit.viz.merge_view import moment_html
        >>> moment_html(["ab"], 0, "step 1: a + b -> ab")
        '<div><span style="display:inline-block;margin:1px 2px;padding:0 4px;border:1px solid #999;border-radius:3px;font-family:monospace;background:#ffe08a">ab</span></div><div><small>step 1: a + b -&gt; ab</small></div>'
    """
    return f"<div>{chips_html(labels, lit)}</div><div><small>{html.escape(caption)}</small></div>"


def stepper(count: int, render: Callable[[int], str]):
    """An ipywidgets slider over moments 0..``count`` showing ``render(moment)`` (show the
    static table too, as the fallback).

    Example:
        >>> widget = stepper(2, lambda moment: f"<b>moment {moment}</b>")
        >>> slider, view = widget.children
        >>> slider.value = 2
        >>> slider.max, view.value
        (2, '<b>moment 2</b>')
    """
    import ipywidgets as widgets

    slider = widgets.IntSlider(value=0, min=0, max=count, description="merges")
    view = widgets.HTML(render(0))

    def on_change(change):
        view.value = render(change["new"])

    slider.observe(on_change, names="value")
    return widgets.VBox([slider, view])
