"""Markdown for scorecards and rankings. Untrusted strings are escaped for Markdown tables."""

from __future__ import annotations

import re

from podium.rating.rubric import Rubric
from podium.rating.scoring import Scorecard

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")


def md(text: object) -> str:
    """Escape a string for a Markdown table cell: no HTML, no pipes, one line."""
    s = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", s)


def _score(v: float | None) -> str:
    return "unknown" if v is None else f"{v:.1f}"


def scorecard_markdown(card: Scorecard, level: int = 2) -> str:
    h = "#" * level
    out = [f"{h} {md(card.name)}: {card.tier} ({card.score:.1f})", ""]
    if card.fictional:
        out += ["> Fictional provider, invented for podium's examples.", ""]
    out += [
        f"Rubric {md(card.rubric)} v{card.rubric_version}; evidence coverage {card.coverage:.0%}; "
        f"tier before caps: {card.uncapped_tier}.",
        "",
    ]
    for f in card.critical_failures:
        out.append(f"- **Critical failure:** {md(f.title)} (caps at {f.cap}). Fix: {md(f.fix)}")
    if card.critical_failures:
        out.append("")
    out += ["| Category | Weight | Score | Gaps (unknown items) |", "|---|---:|---:|---|"]
    for c in card.categories:
        gaps = ", ".join(md(i.id) for i in c.items if i.fraction is None) or "none"
        out.append(f"| {md(c.title)} | {c.weight:g} | {_score(c.score)} | {gaps} |")
    out.append("")
    failing = [
        (i, e)
        for c in card.categories
        for i in c.items
        for e in i.evidence
        if e.status in ("fail", "warn", "partial")
    ]
    if failing:
        out += ["Findings behind lost points:", ""]
        for i, e in failing:
            where = f" ({md(e.file)} {md(e.pointer or '')})" if e.file else ""
            out.append(f"- {md(i.id)}: {e.status} {md(e.summary)}{where}")
        out.append("")
    t = card.to_next_tier
    if t.target:
        out += [f"**To reach {t.target}** ({t.points_needed:.1f} points needed), cheapest first:", ""]
        for i, f in enumerate(t.fixes, 1):
            req = " (required: removes a cap)" if f.mandatory else ""
            out.append(f"{i}. {md(f.action)}{req}: cost {f.cost}, +{f.gain:.2f} points")
        out.append("")
    if card.declared:
        out += ["Declared facts (declared by the provider, not measured):", ""]
        out += ["| Fact | Value | Source |", "|---|---|---|"]
        out += [f"| {md(d.path)} | {md(d.value)} | {md(d.source)} |" for d in card.declared]
        out.append("")
    if card.fix_times:
        out += ["| Finding | Hours to fix |", "|---|---:|"]
        out += [
            f"| {md(f.title)} | {f.hours:g}{'' if f.fixed else ' (still open)'} |" for f in card.fix_times
        ]
        out.append("")
    return "\n".join(out)


def ranking_markdown(ranking, cards: list[Scorecard], rubric: Rubric) -> str:
    cats = [c.id for c in rubric.categories]
    out = [
        "# podium ranking",
        "",
        f"Rubric {md(ranking.rubric)} v{ranking.rubric_version}; generated {ranking.generated_at.isoformat(timespec='seconds')}; "
        f"source {md(ranking.source)}.",
        "",
        "Podium: " + ", ".join(f"{i}. {md(n)}" for i, n in enumerate(ranking.podium, 1)),
        "",
        "| Rank | Provider | Tier | Score | " + " | ".join(cats) + " | Critical failures | Movement |",
        "|---:|---|---|---:|" + "---:|" * len(cats) + "---|---|",
    ]
    for p in ranking.providers:
        move = "—" if p.movement is None else (f"+{p.movement}" if p.movement > 0 else str(p.movement))
        cells = " | ".join(_score(p.categories.get(c)) for c in cats)
        crit = ", ".join(p.critical_failures) or "none"
        out.append(f"| {p.rank} | {md(p.name)} | {p.tier} | {p.score:.1f} | {cells} | {crit} | {move} |")
    out += ["", "## Tiers", ""]
    out += [f"- **{t}**: {', '.join(md(n) for n in names) or '—'}" for t, names in ranking.tiers.items()]
    out += ["", "## Category leaders", ""]
    out += [
        f"- {c}: {', '.join(md(n) for n in names) or 'unknown for everyone'}"
        for c, names in ranking.category_leaders.items()
    ]
    out.append("")
    for card in cards:
        out.append(scorecard_markdown(card, level=2))
    return "\n".join(out)
