"""Ranking: score many providers together into a tier list, a podium and category leaders.

Prices are peer-relative (a percentile among the providers ranked together), so all providers
are scored in one pass. Order: tier first (a capped provider sits below every uncapped one in a
better tier), then score, then name. Equal tier and score share a rank ("1, 2, 2, 4").
"""

from __future__ import annotations

from datetime import datetime
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from podium.errors import InputError
from podium.models.common import utcnow
from podium.rating.evidence import PROVIDER_FILE_NAMES, EvaluationEvidence, load_evaluation
from podium.rating.rubric import Rubric
from podium.rating.scoring import PeerPrices, Scorecard, score_evaluation


class RankedProvider(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rank: int
    name: str
    tier: str
    score: float
    categories: dict[str, float | None] = Field(description="Category -> score, null when unknown")
    critical_failures: list[str]
    uncapped_tier: str
    coverage: float
    fictional: bool
    previous_rank: int | None = None
    movement: int | None = Field(None, description="Places moved up since the last ranking; null when new")
    scorecard: str | None = Field(None, description="Scorecard file, relative to the ranking output")


class Ranking(BaseModel):
    """``podium rank --json``: providers in rank order, tiers, podium and category leaders."""

    model_config = ConfigDict(extra="forbid")
    rubric: str
    rubric_version: str
    generated_at: datetime = Field(default_factory=utcnow)
    source: str = Field(description="Directory or store the evaluations came from")
    providers: list[RankedProvider]
    podium: list[str] = Field(description="Top three (more when tied)")
    tiers: dict[str, list[str]] = Field(description="Tier -> providers, best tier first")
    category_leaders: dict[str, list[str]] = Field(
        description="Category -> best providers; [] when all unknown"
    )
    previous_generated_at: datetime | None = None


def packaged_examples() -> Path:
    """The example providers shipped in the package (a copy of examples/providers)."""
    return Path(str(resources.files("podium").joinpath("data/examples/providers")))


def load_providers_dir(root: Path) -> list[EvaluationEvidence]:
    """Each sub-directory with a provider file or evidence JSON is one evaluation."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "not a directory of provider evaluations")
    evaluations = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        has_provider = any((sub / n).is_file() for n in PROVIDER_FILE_NAMES)
        if has_provider or any(sub.glob("*.json")):
            evaluations.append(load_evaluation(sub))
    if not evaluations:
        raise InputError(root, "no provider evaluations found (sub-directories with provider.yaml or JSON)")
    names = [e.provider.name for e in evaluations]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(root, f"two evaluations use the same provider name: {', '.join(dupes)}")
    return evaluations


def peer_prices(evaluations: list[EvaluationEvidence], rubric: Rubric) -> PeerPrices:
    prices: dict[str, list[float]] = {}
    for cat in rubric.categories:
        for item in cat.items:
            if item.basis == "peer_price":
                vals = [ev.provider.price(item.sku, item.term)[0] for ev in evaluations]
                prices[item.id] = [v for v in vals if v is not None]
    return PeerPrices(prices=prices)


def rank(
    evaluations: list[EvaluationEvidence],
    rubric: Rubric,
    source: str,
    previous: Ranking | None = None,
) -> tuple[Ranking, list[Scorecard]]:
    """Score every evaluation against its peers and order them."""
    peers = peer_prices(evaluations, rubric)
    cards = [score_evaluation(ev, rubric, peers) for ev in evaluations]
    cards.sort(key=lambda c: (rubric.tier_index(c.tier), -c.score, c.name))
    prev_rank = {p.name: p.rank for p in previous.providers} if previous else {}
    ranked: list[RankedProvider] = []
    for i, card in enumerate(cards):
        if ranked and (ranked[-1].tier, ranked[-1].score) == (card.tier, card.score):
            position = ranked[-1].rank
        else:
            position = i + 1
        before = prev_rank.get(card.name)
        ranked.append(
            RankedProvider(
                rank=position,
                name=card.name,
                tier=card.tier,
                score=card.score,
                categories=card.category_scores(),
                critical_failures=[f.id for f in card.critical_failures],
                uncapped_tier=card.uncapped_tier,
                coverage=card.coverage,
                fictional=card.fictional,
                previous_rank=before,
                movement=None if before is None else before - position,
            )
        )
    tiers = {t.name: [p.name for p in ranked if p.tier == t.name] for t in rubric.tiers}
    leaders: dict[str, list[str]] = {}
    for cat in rubric.categories:
        scored = [(p.categories.get(cat.id), p.name) for p in ranked]
        known = [s for s, _n in scored if s is not None]
        best = max(known) if known else None
        leaders[cat.id] = [n for s, n in scored if best is not None and s == best]
    ranking = Ranking(
        rubric=rubric.name,
        rubric_version=rubric.version,
        source=source,
        providers=ranked,
        podium=[p.name for p in ranked if p.rank <= 3],
        tiers=tiers,
        category_leaders=leaders,
        previous_generated_at=previous.generated_at if previous else None,
    )
    return ranking, cards
