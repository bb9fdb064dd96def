"""Self-contained HTML for scorecards and rankings: Jinja2 with autoescaping, inline SVG, no network."""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

from jinja2 import Environment, FunctionLoader, StrictUndefined

from podium import __version__
from podium.models.common import utcnow
from podium.rating.rubric import Rubric
from podium.rating.scoring import Scorecard
from podium.report import svg


def _load(name: str) -> str:
    return resources.files("podium").joinpath(f"data/report/{name}").read_text()


def environment() -> Environment:
    # autoescape on for everything: names, hosts and titles come from nodes and provider files.
    return Environment(loader=FunctionLoader(_load), autoescape=True, undefined=StrictUndefined)


def slugify(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "provider"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


def _evidence_base(card: Scorecard, outdir: Path) -> str:
    root = Path(card.evidence_root or "")
    if card.evidence_root and root.is_dir():
        return os.path.relpath(root.resolve(), outdir.resolve()).replace(os.sep, "/") + "/"
    if card.evidence_root and root.is_file():
        return os.path.relpath(root.resolve().parent, outdir.resolve()).replace(os.sep, "/") + "/"
    return ""


def card_context(card: Scorecard, slug: str, outdir: Path) -> dict:
    return {
        "card": card,
        "slug": slug,
        "evidence_base": _evidence_base(card, outdir),
        "bars": svg.category_bars(
            [(c.id, c.score) for c in card.categories], f"Category scores of {card.name}", f"cat-{slug}-"
        ),
        "bench": svg.bench_vs_reference(
            [
                (f"{m.benchmark} {m.metric}", m.value, m.reference, m.unit or "", m.verdict.value)
                for m in card.measurements
            ],
            f"Benchmarks of {card.name} against references",
        ),
        "ttf": svg.time_to_fix(
            [(f.title, f.hours, f.fixed) for f in card.fix_times], f"Time to fix findings at {card.name}"
        ),
    }


def render(
    title: str,
    rubric: Rubric,
    cards: list[Scorecard],
    outdir: Path,
    source: str,
    ranking=None,
) -> str:
    """Render one HTML page: a ranking (tier list + every scorecard) or a single scorecard."""
    taken: set[str] = set()
    slugs = {c.name: slugify(c.name, taken) for c in cards}
    contexts = [card_context(c, slugs[c.name], outdir) for c in cards]
    podium_svg = None
    if ranking is not None:
        by_name = {p.name: p for p in ranking.providers}
        podium_svg = svg.tier_podium(
            [(n, by_name[n].tier, by_name[n].score) for n in ranking.podium],
            [(t.name, t.color, ranking.tiers.get(t.name, [])) for t in rubric.tiers],
            "Podium and tier list",
        )
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            title=title,
            generated_at=(ranking.generated_at if ranking is not None else utcnow()).isoformat(
                timespec="seconds"
            ),
            podium_version=__version__,
            rubric_name=rubric.name,
            rubric_version=rubric.version,
            source=source,
            any_fictional=any(c.fictional for c in cards),
            ranking=ranking,
            podium_svg=podium_svg,
            categories=rubric.categories,
            slugs=slugs,
            tier_colors={t.name: t.color for t in rubric.tiers},
            cards=contexts,
        )
    )
