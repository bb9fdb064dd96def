"""Inline SVG plots, generated here (no JavaScript, no CDN, no network).

Every string that reaches an SVG passes through :func:`markupsafe.escape`: provider names,
host names and check titles come from nodes and provider files and are untrusted.
"""

from __future__ import annotations

import math

from markupsafe import Markup, escape

FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"
GAP_FILL = "url(#gap)"
STATUS_COLORS = {"pass": "#2e7d32", "partial": "#f9a825", "fail": "#c62828", "unknown": "#9e9e9e"}
VERDICT_COLORS = {"pass": "#2e7d32", "warn": "#f9a825", "fail": "#c62828"}


def _svg(width: float, height: float, body: str, label: str) -> Markup:
    defs = (
        "<defs><pattern id='gap' width='6' height='6' patternUnits='userSpaceOnUse' "
        "patternTransform='rotate(45)'><rect width='6' height='6' fill='#eeeeee'/>"
        "<line x1='0' y1='0' x2='0' y2='6' stroke='#b0b0b0' stroke-width='2'/></pattern></defs>"
    )
    return Markup(
        f"<svg xmlns='http://www.w3.org/2000/svg' class='plot' role='img' aria-label='{escape(label)}' "
        f"width='{width:.0f}' height='{height:.0f}' viewBox='0 0 {width:.0f} {height:.0f}' {FONT}>"
        f"<title>{escape(label)}</title>{defs}{body}</svg>"
    )


def _text(x, y, s, size=12, anchor="start", weight="normal", fill="#222") -> str:
    return (
        f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' "
        f"font-weight='{weight}' fill='{fill}'>{escape(str(s))}</text>"
    )


def category_bars(rows: list[tuple[str, float | None]], label: str, href_prefix: str = "") -> Markup:
    """Horizontal bars, one per category (0-100); an unknown category is a hatched gap."""
    left, width, bar_h, pad = 150, 260, 16, 6
    height = len(rows) * (bar_h + pad) + 24
    parts = []
    for i, (name, score) in enumerate(rows):
        y = 8 + i * (bar_h + pad)
        parts.append(_text(left - 8, y + bar_h - 4, name, anchor="end"))
        parts.append(f"<rect x='{left}' y='{y}' width='{width}' height='{bar_h}' fill='#f3f3f3'/>")
        if score is None:
            parts.append(
                f"<rect class='gap' x='{left}' y='{y}' width='{width}' height='{bar_h}' fill='{GAP_FILL}'/>"
            )
            parts.append(_text(left + 6, y + bar_h - 4, "unknown (gap)", size=11, fill="#555"))
            continue
        w = max(0.0, min(100.0, score)) / 100 * width
        color = (
            "#2e7d32"
            if score >= 85
            else "#7cb342"
            if score >= 70
            else "#f9a825"
            if score >= 40
            else "#c62828"
        )
        bar = f"<rect class='bar' x='{left}' y='{y}' width='{w:.1f}' height='{bar_h}' fill='{color}'/>"
        if href_prefix:
            bar = f"<a href='#{escape(href_prefix + name)}'>{bar}</a>"
        parts.append(bar)
        parts.append(_text(left + width + 6, y + bar_h - 4, f"{score:.1f}", size=11))
    for v in (0, 50, 100):
        x = left + v / 100 * width
        parts.append(
            f"<line x1='{x:.1f}' y1='4' x2='{x:.1f}' y2='{height - 16}' stroke='#ccc' stroke-dasharray='2,2'/>"
        )
        parts.append(_text(x, height - 4, v, size=10, anchor="middle", fill="#666"))
    return _svg(left + width + 50, height, "".join(parts), label)


def tier_podium(
    podium: list[tuple[str, str, float]], tiers: list[tuple[str, str, list[str]]], label: str
) -> Markup:
    """A podium (2nd, 1st, 3rd) above a tier list: one row per tier with its providers."""
    width = 760
    parts = []
    steps = {0: (300, 150, 130), 1: (110, 110, 100), 2: (490, 80, 70)}  # place -> x, height, top offset
    base = 200
    colors = {t: c for t, c, _n in tiers}
    for place, (name, tier, score) in enumerate(podium[:3]):
        x, h, _ = steps[place]
        fill = escape(colors.get(tier, "#d9d9d9"))
        parts.append(
            f"<rect class='step' x='{x}' y='{base - h}' width='160' height='{h}' fill='{fill}' stroke='#555'/>"
        )
        parts.append(
            _text(x + 80, base - h + 34, place + 1, size=28, anchor="middle", weight="bold", fill="#fff")
        )
        parts.append(_text(x + 80, base - h - 24, _short(name, 30), size=12, anchor="middle", weight="bold"))
        parts.append(
            _text(x + 80, base - h - 8, f"{tier} · {score:.1f}", size=11, anchor="middle", fill="#444")
        )
    y = base + 24
    for tier, color, names in tiers:
        parts.append(f"<rect x='10' y='{y}' width='150' height='30' fill='{escape(color)}'/>")
        parts.append(_text(85, y + 20, tier, size=13, anchor="middle", weight="bold", fill="#fff"))
        parts.append(
            f"<rect x='160' y='{y}' width='{width - 170}' height='30' fill='#fafafa' stroke='#ddd'/>"
        )
        parts.append(_text(170, y + 20, ", ".join(_short(n, 30) for n in names) or "—", size=12))
        y += 34
    return _svg(width, y + 6, "".join(parts), label)


def bench_vs_reference(rows: list[tuple[str, float | None, float | None, str, str]], label: str) -> Markup:
    """Each measurement as a share of its reference (100% line), coloured by verdict."""
    rows = [r for r in rows if r[1] is not None and r[2]]
    left, width, bar_h, pad = 220, 300, 16, 6
    height = max(1, len(rows)) * (bar_h + pad) + 28
    scale = max([1.2] + [r[1] / r[2] for r in rows])
    parts = []
    for i, (name, value, ref, unit, verdict) in enumerate(rows):
        y = 8 + i * (bar_h + pad)
        ratio = value / ref
        parts.append(_text(left - 8, y + bar_h - 4, _short(name, 34), anchor="end"))
        w = ratio / scale * width
        parts.append(
            f"<rect class='bar' x='{left}' y='{y}' width='{w:.1f}' height='{bar_h}' "
            f"fill='{VERDICT_COLORS.get(verdict, '#9e9e9e')}'/>"
        )
        parts.append(_text(left + w + 4, y + bar_h - 4, f"{value:g} / {ref:g} {unit} ({ratio:.0%})", size=10))
    x100 = left + width / scale
    parts.append(
        f"<line x1='{x100:.1f}' y1='2' x2='{x100:.1f}' y2='{height - 14}' stroke='#333' stroke-width='1.5'/>"
    )
    parts.append(_text(x100, height - 2, "reference", size=10, anchor="middle"))
    if not rows:
        parts.append(_text(left, 20, "no measurement with a reference", fill="#666"))
    return _svg(left + width + 200, height, "".join(parts), label)


def time_to_fix(rows: list[tuple[str, float, bool]], label: str) -> Markup:
    """Hours to fix per finding on a log scale; still-open findings are hatched red."""
    left, width, bar_h, pad = 260, 300, 14, 6
    height = max(1, len(rows)) * (bar_h + pad) + 30
    top = max([24.0] + [h for _n, h, _f in rows])
    span = math.log10(top + 1)
    parts = []
    for i, (name, hours, fixed) in enumerate(rows):
        y = 8 + i * (bar_h + pad)
        w = max(2.0, math.log10(hours + 1) / span * width)
        fill = "#1565c0" if fixed else "#c62828"
        parts.append(_text(left - 8, y + bar_h - 3, _short(name, 40), size=11, anchor="end"))
        parts.append(f"<rect class='bar' x='{left}' y='{y}' width='{w:.1f}' height='{bar_h}' fill='{fill}'/>")
        what = _hours(hours) + ("" if fixed else " (still open)")
        parts.append(_text(left + w + 4, y + bar_h - 3, what, size=10))
    for h, name in ((1, "1 h"), (24, "1 d"), (168, "1 w"), (720, "30 d")):
        if h <= top:
            x = left + math.log10(h + 1) / span * width
            parts.append(
                f"<line x1='{x:.1f}' y1='4' x2='{x:.1f}' y2='{height - 16}' stroke='#ccc' stroke-dasharray='2,2'/>"
            )
            parts.append(_text(x, height - 4, name, size=10, anchor="middle", fill="#666"))
    if not rows:
        parts.append(_text(left, 20, "no finding seen in two runs yet", fill="#666"))
    return _svg(left + width + 130, height, "".join(parts), label)


def _hours(h: float) -> str:
    if h < 48:
        return f"{h:g} h"
    return f"{h / 24:.1f} d"


def _short(s: str, n: int) -> str:
    s = str(s)
    return s if len(s) <= n else s[: n - 1] + "…"
