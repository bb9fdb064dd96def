"""Self-contained HTML report for ``podium inference compare``: inline SVG charts, no scripts, no CDN.

Every string taken from the inputs (system names, file names, warnings) is HTML-escaped.
"""

from __future__ import annotations

import math
from html import escape

from podium.inference.compare import CompareReport, CompareSystem

_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
_W, _H = 720, 420
_ML, _MR, _MT, _MB = 78, 20, 20, 52


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=mag * 10)
    start = math.floor(lo / step) * step
    ticks, t = [start], start
    while t < hi - step * 1e-9:  # the last tick is at or above hi, so every point is inside the axes
        t += step
        ticks.append(round(t, 10))
    return ticks


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def svg_chart(
    systems: list[CompareSystem],
    y_attr: str,
    y_label: str,
    title: str,
    target: float | None = None,
) -> str:
    """One chart: every point as a dot, the Pareto front as a line, per system."""
    series = []
    for i, s in enumerate(systems):
        pts = [(p.interactivity, getattr(p, y_attr)) for p in s.points if getattr(p, y_attr) is not None]
        front = [(p.interactivity, getattr(p, y_attr)) for p in s.pareto if getattr(p, y_attr) is not None]
        series.append((s.name, _COLORS[i % len(_COLORS)], pts, front))
    xs = [x for *_, pts, _f in series for x, _ in pts]
    ys = [y for *_, pts, _f in series for _, y in pts]
    title_el = f'<text x="{_W / 2}" y="14" text-anchor="middle" font-weight="bold">{escape(title)}</text>'
    if not xs:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="80" role="img">{title_el}'
            f'<text x="{_W / 2}" y="50" text-anchor="middle">no data for this chart</text></svg>'
        )
    xticks = _nice_ticks(0.0, max(xs + ([target] if target else [])) * 1.05)
    yticks = _nice_ticks(0.0, max(ys) * 1.08)
    x0, x1, y0, y1 = xticks[0], xticks[-1], yticks[0], yticks[-1]
    pw, ph = _W - _ML - _MR, _H - _MT - _MB

    def sx(x: float) -> float:
        return _ML + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return _MT + ph - (y - y0) / (y1 - y0) * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
        f'role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="12">',
        title_el,
        f'<rect x="{_ML}" y="{_MT}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>',
    ]
    for t in xticks:
        parts.append(
            f'<line x1="{sx(t):.1f}" y1="{_MT}" x2="{sx(t):.1f}" y2="{_MT + ph}" stroke="#eee"/>'
            f'<text x="{sx(t):.1f}" y="{_MT + ph + 16}" text-anchor="middle">{_fmt(t)}</text>'
        )
    for t in yticks:
        parts.append(
            f'<line x1="{_ML}" y1="{sy(t):.1f}" x2="{_ML + pw}" y2="{sy(t):.1f}" stroke="#eee"/>'
            f'<text x="{_ML - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>'
        )
    parts.append(
        f'<text x="{_ML + pw / 2}" y="{_H - 12}" text-anchor="middle">Interactivity (tok/s/user)</text>'
        f'<text transform="translate(16 {_MT + ph / 2}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>'
    )
    if target:
        parts.append(
            f'<line x1="{sx(target):.1f}" y1="{_MT}" x2="{sx(target):.1f}" y2="{_MT + ph}" '
            f'stroke="#555" stroke-dasharray="4 3"><title>target {escape(_fmt(target))} tok/s/user</title></line>'
        )
    for name, color, pts, front in series:
        for x, y in pts:
            parts.append(
                f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}" fill-opacity="0.35">'
                f"<title>{escape(name)}: {escape(_fmt(x))} tok/s/user, {escape(_fmt(y))}</title></circle>"
            )
        if front:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in front)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
            for x, y in front:
                parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{color}"/>')
    for i, (name, color, _pts, _front) in enumerate(series):
        ly = _MT + 14 + i * 16
        parts.append(
            f'<rect x="{_ML + pw - 150}" y="{ly - 9}" width="10" height="10" fill="{color}"/>'
            f'<text x="{_ML + pw - 135}" y="{ly}">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _cell(v: float | None, digits: str = ".4g") -> str:
    return "—" if v is None else escape(format(v, digits))


def render_html(report: CompareReport, title: str = "podium inference compare") -> str:
    """The full report page as one string."""
    target = report.target_interactivity
    rows = []
    for s in report.systems:
        at = s.at_target
        rows.append(
            "<tr>"
            f"<td>{escape(s.name)}</td><td>{escape(', '.join(s.models))}</td>"
            f"<td>{escape(', '.join(s.workloads))}</td><td>{len(s.points)}</td><td>{len(s.pareto)}</td>"
            f"<td>{_cell(s.economics.price_usd_per_gpu_hour)} ({escape(s.economics.price_source)})</td>"
            f"<td>{_cell(at.throughput_per_gpu if at else None)}</td>"
            f"<td>{_cell(at.cost_per_million_tokens if at else None)}</td>"
            f"<td>{escape(s.at_target_reason or (at.method if at else ''))}</td>"
            "</tr>"
        )
    ratio_rows = "".join(
        f"<tr><td>{escape(r.a)}</td><td>{escape(r.b)}</td><td>{_cell(r.throughput_per_gpu_ratio, '.3f')}</td>"
        f"<td>{_cell(r.cost_per_million_tokens_ratio, '.3f')}</td></tr>"
        for r in report.ratios
    )
    warnings = "".join(f"<li>{escape(w)}</li>" for w in report.warnings)
    formulas = "".join(f"<li><code>{escape(k)}</code> = {escape(v)}</li>" for k, v in report.formulas.items())
    sources = "".join(
        f"<li>{escape(s.name)}: {escape(', '.join(s.sources))}"
        + (f" — price from {escape(s.economics.reference)}" if s.economics.reference else "")
        + "</li>"
        for s in report.systems
    )
    conv = escape(report.interactivity_convention)
    tgt = escape(_fmt(target)) if target else "none"
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:2em;max-width:1000px}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
        "th{background:#f4f4f4}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f"<p>Interactivity convention: <b>{conv}</b>. Target interactivity: <b>{tgt}</b> tok/s/user. "
        f"Interpolation: {escape(report.interpolation)} along each Pareto front.</p>"
        + svg_chart(
            report.systems,
            "throughput_per_gpu",
            "Throughput per GPU (tok/s/GPU)",
            "Throughput per GPU vs interactivity",
            target,
        )
        + "<br>"
        + svg_chart(
            report.systems,
            "cost_per_million_tokens",
            "USD per million tokens",
            "Cost per million tokens vs interactivity",
            target,
        )
        + "<h2>At the target interactivity</h2><table><tr><th>System</th><th>Model</th><th>ISL/OSL</th>"
        "<th>Points</th><th>Front</th><th>$/GPU-hr</th><th>tok/s/GPU</th><th>$/M tokens</th><th>Note</th></tr>"
        + "".join(rows)
        + "</table>"
        + (
            "<h2>Ratios at equal interactivity (a ÷ b)</h2><table><tr><th>a</th><th>b</th>"
            f"<th>throughput/GPU</th><th>$/M tokens</th></tr>{ratio_rows}</table>"
            if ratio_rows
            else ""
        )
        + (f"<h2>Warnings</h2><ul>{warnings}</ul>" if warnings else "")
        + f"<h2>Formulas</h2><ul>{formulas}</ul><h2>Sources</h2><ul>{sources}</ul>"
        "</body></html>\n"
    )
