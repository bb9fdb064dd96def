"""Write a ranking or a scorecard to a folder: index.html, Markdown and JSON."""

from __future__ import annotations

from pathlib import Path

from podium.rating.rubric import Rubric
from podium.rating.scoring import Scorecard
from podium.report.html import render, slugify
from podium.report.markdown import ranking_markdown, scorecard_markdown
from podium.secrets import redact


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(redact(text))
    tmp.replace(path)
    return path


def write_ranking(ranking, cards: list[Scorecard], rubric: Rubric, outdir: Path) -> dict[str, Path]:
    """OUTDIR/index.html, ranking.md, ranking.json and scorecards/<provider>.json."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    for p, card in zip(ranking.providers, cards, strict=True):
        p.scorecard = f"scorecards/{slugify(card.name, taken)}.json"
        _write(outdir / p.scorecard, card.model_dump_json(indent=2))
    html = render("podium ranking", rubric, cards, outdir, ranking.source, ranking=ranking)
    return {
        "html": _write(outdir / "index.html", html),
        "markdown": _write(outdir / "ranking.md", ranking_markdown(ranking, cards, rubric)),
        "json": _write(outdir / "ranking.json", ranking.model_dump_json(indent=2)),
    }


def write_scorecard(card: Scorecard, rubric: Rubric, outdir: Path) -> dict[str, Path]:
    """OUTDIR/index.html, scorecard.md and scorecard.json."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    html = render(f"podium scorecard: {card.name}", rubric, [card], outdir, card.evidence_root or "")
    return {
        "html": _write(outdir / "index.html", html),
        "markdown": _write(outdir / "scorecard.md", "# podium scorecard\n\n" + scorecard_markdown(card)),
        "json": _write(outdir / "scorecard.json", card.model_dump_json(indent=2)),
    }
