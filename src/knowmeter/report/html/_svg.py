"""Inline SVG charts (forest plot, line chart). Every label passes through ``_label`` (bidi
controls shown as their code, then escaped); numbers are formatted here, so no caller-supplied
text reaches the markup unescaped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from knowmeter.report.html._text import visible


def _label(text: str) -> Markup:
    return escape(visible(text))


def _signed(v: float) -> str:
    """``+1.19``; a value that rounds to zero is ``+0.00``, never ``-0.00``."""
    return f"{round(v, 2) + 0.0:+.2f}"


@dataclass(frozen=True)
class ForestRow:
    """One line of a forest plot: an estimate with its interval."""

    label: str
    estimate: float | None
    low: float | None
    high: float | None
    significant: bool | None


def _span(values: Sequence[float | None], pad: float) -> tuple[float, float]:
    known = [v for v in values if v is not None]
    lo, hi = (min(known), max(known)) if known else (-1.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    margin = (hi - lo) * pad
    return lo - margin, hi + margin


def forest_plot(rows: Sequence[ForestRow], *, min_effect: float | None, title: str) -> Markup:
    """Δ with its CI per row, the zero line and the ±min-effect band."""
    label_w, plot_w, text_w, row_h, top = 130, 360, 190, 28, 24
    band = abs(min_effect) if min_effect is not None else None
    edges: list[float | None] = [0.0, *(r.low for r in rows), *(r.high for r in rows), *(r.estimate for r in rows)]
    if band is not None:
        edges += [band, -band]
    lo, hi = _span(edges, 0.08)

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    height = top + row_h * len(rows) + 46
    width = label_w + plot_w + text_w
    parts = [
        f'<svg class="forest" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{_label(title)}</title>'
    ]
    bottom = top + row_h * len(rows)
    if band is not None:
        parts.append(
            f'<rect class="band" x="{x(-band):.1f}" y="{top - 6}" width="{x(band) - x(-band):.1f}" '
            f'height="{bottom - top + 6}"><title>min effect ±{band:g}</title></rect>'
        )
    parts.append(f'<line class="zero" x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top - 8}" y2="{bottom}"/>')
    for i, r in enumerate(rows):
        y = top + row_h * i + row_h / 2
        parts.append(f'<text class="lbl" x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end">{_label(r.label)}</text>')
        cls = "sig" if r.significant else "ns"
        if r.low is not None and r.high is not None:
            parts.append(f'<line class="ci {cls}" x1="{x(r.low):.1f}" x2="{x(r.high):.1f}" y1="{y:.1f}" y2="{y:.1f}"/>')
        if r.estimate is not None:
            parts.append(f'<circle class="pt {cls}" cx="{x(r.estimate):.1f}" cy="{y:.1f}" r="5"/>')
        parts.append(f'<text class="val" x="{label_w + plot_w + 10}" y="{y + 4:.1f}">{_label(_ci_text(r))}</text>')
    for v in (lo, 0.0, hi):
        if v != 0.0 and abs(x(v) - x(0.0)) < 40:
            continue  # would overlap the zero tick
        parts.append(f'<text class="tick" x="{x(v):.1f}" y="{bottom + 16}" text-anchor="middle">{_signed(v)}</text>')
    parts.append(
        f'<text class="axis" x="{label_w + plot_w / 2:.0f}" y="{bottom + 34}" text-anchor="middle">'
        "Δ = treatment − control (points)</text>"
    )
    parts.append("</svg>")
    return Markup("".join(parts))


def _ci_text(r: ForestRow) -> str:
    if r.estimate is None:
        return "Δ unknown"
    ci = "CI unknown" if r.low is None or r.high is None else f"[{_signed(r.low)}, {_signed(r.high)}]"
    return f"Δ {_signed(r.estimate)} {ci}"


@dataclass(frozen=True)
class Series:
    """One line of a line chart: (x label, y) points; y None is a gap in the line."""

    name: str
    points: Sequence[tuple[str, float | None]]


def line_chart(series: Sequence[Series], *, title: str, y_label: str, x_label: str, percent: bool = False) -> Markup:
    """Each series as its own polyline over its own points (x = position in the series), with its
    own dash so equal series stay visible; the y axis titled above its ticks, the x axis with its
    first and last point's label and its title; the legend below the plot, one series a line."""
    w, plot_h, left, top, bottom = 560, 250, 56, 24, 70
    h = plot_h + 14 * max(len(series) - 1, 0)
    values = [y for s in series for _, y in s.points]
    lo, hi = _span([*values, 0.0] if percent else values, 0.05)
    if percent:
        lo, hi = max(lo, 0.0), min(max(hi, 0.01), 1.0)
    n = max((len(s.points) for s in series), default=1)

    def px(i: int) -> float:
        return left + (i / max(n - 1, 1)) * (w - left - 16)

    def py(v: float) -> float:
        return top + (1 - (v - lo) / ((hi - lo) or 1)) * (plot_h - top - bottom)

    def fmt(v: float) -> str:
        return f"{100 * v:.0f}%" if percent else f"{v:.2f}"

    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{_label(title)}</title>',
        f'<text class="axis" x="4" y="{top - 10}">{_label(y_label)}</text>',
    ]
    axis_y = plot_h - bottom + 4
    first = next((s.points[0][0] for s in series if s.points), None)
    last = next((s.points[-1][0] for s in series if len(s.points) > 1), None)
    if first is not None:
        parts.append(f'<text class="tick" x="{left}" y="{axis_y + 10}">{_label(first)}</text>')
    if last is not None:
        parts.append(f'<text class="tick" x="{w - 16}" y="{axis_y + 24}" text-anchor="end">{_label(last)}</text>')
    parts.append(
        f'<text class="axis" x="{(left + w - 16) / 2:.0f}" y="{axis_y + 38}" '
        f'text-anchor="middle">{_label(x_label)}</text>'
    )
    for v in (lo, hi):
        parts.append(f'<text class="tick" x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{fmt(v)}</text>')
        parts.append(f'<line class="grid" x1="{left}" x2="{w - 16}" y1="{py(v):.1f}" y2="{py(v):.1f}"/>')
    for k, s in enumerate(series):
        cls = f"s{k % 6} d{k % 3}"
        segment: list[str] = []
        for i, (label, y) in enumerate(s.points):
            if y is None:
                if len(segment) > 1:
                    parts.append(f'<polyline class="line {cls}" points="{" ".join(segment)}"/>')
                segment = []
                continue
            segment.append(f"{px(i):.1f},{py(y):.1f}")
            parts.append(
                f'<circle class="dot {cls}" cx="{px(i):.1f}" cy="{py(y):.1f}" r="3.5">'
                f"<title>{_label(s.name)} · {_label(label)}: {fmt(y)}</title></circle>"
            )
        if len(segment) > 1:
            parts.append(f'<polyline class="line {cls}" points="{" ".join(segment)}"/>')
    for k, s in enumerate(series):
        parts.append(f'<text class="legend s{k % 6}" x="{left}" y="{plot_h - 8 + 14 * k}">■ {_label(s.name)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
