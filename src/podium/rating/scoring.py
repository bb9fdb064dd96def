"""Scoring: evidence + rubric -> a scorecard with category scores, critical failures and a tier.

Rules that the tests hold this module to:
- an item with no evidence is ``unknown``: it earns nothing and is shown as a gap, never as a pass;
- adding a failing result never raises a score (the weakest result bounds a ``worst`` item, and a
  failing result adds zero to a ``mean`` item);
- a critical failure caps the tier whatever the score;
- a category with no items does not count; a category whose items are all unknown is null.
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatch

from pydantic import BaseModel, ConfigDict, Field

from podium.models.common import Provenance, Status
from podium.rating.evidence import EvaluationEvidence, Measurement, SourcedCheck
from podium.rating.history import FixTime, FixTimeSummary, summarise, time_to_fix
from podium.rating.provider import FactSource
from podium.rating.rubric import COST_RANK, Category, CriticalRule, Rubric, RubricItem, Selector, Threshold
from podium.rating.scheduler import SchedulerReliability


class EvidenceRef(BaseModel):
    """What one point rests on: a check, a measurement, a declared fact or a history figure."""

    model_config = ConfigDict(extra="forbid")
    summary: str
    value: str | float | int | bool | None = None
    file: str | None = Field(None, description="Evidence file, relative to the evaluation directory")
    pointer: str | None = Field(None, description="JSON pointer inside the file")
    basis: str = Field(description="measured | declared | peer | history")
    status: str | None = None
    source: Provenance | None = None
    declared_source: str | None = Field(None, description="URL/document and date of a declared fact")


class ItemScore(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    category: str
    basis: str
    points: float
    fraction: float | None = Field(description="Share of the points earned; null = unknown (a gap)")
    earned: float
    status: str = Field(description="pass | partial | fail | unknown")
    evidence: list[EvidenceRef] = Field(default_factory=list)
    note: str | None = None


class CategoryScore(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    weight: float
    score: float | None = Field(description="0-100; null when no item has evidence")
    earned: float
    max_points: float
    known_points: float = Field(description="Points of items that have evidence (the rest are gaps)")
    items: list[ItemScore] = Field(default_factory=list)


class CriticalFailure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    cap: str
    fix: str
    evidence: list[EvidenceRef] = Field(default_factory=list)


class Fix(BaseModel):
    """One step toward the next tier."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="Rubric item or critical failure id")
    title: str
    category: str | None = None
    action: str
    cost: str
    gain: float = Field(description="Points of total score the fix adds (0 for a cap removal)")
    mandatory: bool = Field(False, description="A critical failure that blocks the next tier")


class ToNextTier(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: str | None = Field(description="The next tier up; null at the top")
    points_needed: float = 0.0
    reachable: bool = True
    fixes: list[Fix] = Field(default_factory=list)


class DeclaredFactView(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    value: str | float | bool | None
    source: str
    fictional: bool = False


class Scorecard(BaseModel):
    """One provider's scorecard (``podium score --json``)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    cluster: str
    fictional: bool
    description: str | None = None
    rubric: str
    rubric_version: str
    score: float
    uncapped_tier: str
    tier: str
    coverage: float = Field(description="Share of weighted points that have evidence, 0-1")
    categories: list[CategoryScore]
    critical_failures: list[CriticalFailure]
    to_next_tier: ToNextTier
    declared: list[DeclaredFactView] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    fix_times: list[FixTime] = Field(default_factory=list)
    fix_time_summary: FixTimeSummary = Field(default_factory=FixTimeSummary)
    scheduler: SchedulerReliability | None = None
    sources: list[dict] = Field(default_factory=list, description="Evidence files with kind, sha256, time")
    notes: list[str] = Field(default_factory=list)
    evidence_root: str | None = None

    def category_scores(self) -> dict[str, float | None]:
        return {c.id: c.score for c in self.categories}

    def summary(self) -> dict:
        """The fields ``podium rank --json`` and ``podium score --json`` share."""
        return {
            "name": self.name,
            "tier": self.tier,
            "score": self.score,
            "categories": self.category_scores(),
            "critical_failures": [c.id for c in self.critical_failures],
        }


# --------------------------------------------------------------------------------------- grading
def _glob_any(value: str | None, patterns: list[str]) -> bool:
    if not patterns:
        return True
    v = (value or "").lower()
    return any(fnmatch(v, p.lower()) for p in patterns)


def select_checks(checks: list[SourcedCheck], sel: Selector) -> list[SourcedCheck]:
    return [
        c
        for c in checks
        if (not sel.kinds or c.kind in sel.kinds)
        and _glob_any(c.result.id, sel.ids)
        and (not sel.categories or c.result.category in sel.categories)
    ]


def select_measurements(ms: list[Measurement], sel: Selector) -> list[Measurement]:
    return [
        m
        for m in ms
        if (not sel.kinds or m.kind in sel.kinds)
        and _glob_any(m.benchmark, sel.benchmarks)
        and _glob_any(m.metric, sel.metrics)
    ]


def band(value: float, thresholds: list[Threshold]) -> float:
    """Fraction of the first threshold band the value falls in; 0 when none."""
    for t in thresholds:
        if t.matches(value):
            return t.fraction
    return 0.0


def check_fraction(status: Status, severity: str, rubric: Rubric) -> float | None:
    """Points share one result earns; None (unknown) for unknown and skipped results."""
    if status in (Status.UNKNOWN, Status.SKIPPED):
        return None
    if status == Status.FAIL:
        return rubric.fail_severity_fractions.get(severity, 0.0)
    return rubric.status_fractions.get(status.value, 0.0)


def aggregate(fractions: list[float | None], how: str, fails: list[bool] | None = None) -> float | None:
    """Combine per-result fractions into an item's fraction.

    Unknown results (None) earn 0 but an item with only unknown results stays unknown. In the
    mean, a failing result counts as 0 whatever its severity, so that adding a failure can never
    raise the mean; ``worst`` is also bounded by the weakest known result (severity-graded).
    """
    known = [f for f in fractions if f is not None]
    if not known:
        return None
    fails = fails or [False] * len(fractions)
    mean = sum(0.0 if bad else (f or 0.0) for f, bad in zip(fractions, fails, strict=True)) / len(fractions)
    if how == "mean":
        return mean
    return min(min(known), mean)


def _status_of(fraction: float | None) -> str:
    if fraction is None:
        return "unknown"
    if fraction >= 1.0:
        return "pass"
    return "fail" if fraction <= 0.0 else "partial"


class PeerPrices(BaseModel):
    """Prices of every provider ranked together, per peer_price item: item id -> [prices]."""

    prices: dict[str, list[float]] = Field(default_factory=dict)


def grade_item(
    item: RubricItem,
    ev: EvaluationEvidence,
    rubric: Rubric,
    peers: PeerPrices | None,
    fix_summary: FixTimeSummary,
) -> tuple[float | None, list[EvidenceRef], str | None]:
    """(fraction or None, evidence, note) for one rubric item."""
    refs: list[EvidenceRef] = []
    if item.basis == "checks":
        chosen = select_checks(ev.checks, item.select)
        fractions, fails = [], []
        for c in chosen:
            r = c.result
            fractions.append(check_fraction(r.status, r.severity.value, rubric))
            fails.append(r.status == Status.FAIL)
            refs.append(
                EvidenceRef(
                    summary=f"{r.id}"
                    + (f" on {r.host}" if r.host else "")
                    + f": {r.title}"
                    + (f" ({r.subject})" if r.subject else ""),
                    value=r.severity.value if r.status == Status.FAIL else None,
                    file=c.file,
                    pointer=c.pointer,
                    basis="measured",
                    status=r.status.value,
                    source=r.evidence[0].source if r.evidence else None,
                )
            )
        note = None if chosen else f"no {'/'.join(item.select.kinds) or 'check'} results in the evidence"
        return aggregate(fractions, item.aggregate, fails), refs, note
    if item.basis == "measurements":
        chosen_m = select_measurements(ev.measurements, item.select)
        fractions = []
        for m in chosen_m:
            if item.thresholds and m.value is not None:
                f: float | None = band(m.value, item.thresholds)
            else:
                f = check_fraction(m.verdict, "none", rubric)
            fractions.append(f)
            refs.append(
                EvidenceRef(
                    summary=f"{m.benchmark} {m.metric} on {m.host or m.device or '?'}",
                    value=m.value,
                    file=m.file,
                    pointer=m.pointer,
                    basis="measured",
                    status=m.verdict.value if not item.thresholds else _status_of(f),
                    source=m.source,
                )
            )
        note = None if chosen_m else "no matching measurements in the evidence"
        return aggregate(fractions, item.aggregate), refs, note
    if item.basis == "declared":
        values = []
        for path in item.facts:
            value, src = ev.provider.fact(path)
            values.append(value)
            refs.append(_declared_ref(path, value, src))
        known = [v for v in values if v is not None]
        if not known:
            return None, refs, "not declared in the provider file"
        if item.thresholds:
            return band(float(known[0]), item.thresholds), refs, None
        return sum(1.0 for v in values if v is True) / len(values), refs, None
    if item.basis == "peer_price":
        price, entry = ev.provider.price(item.sku, item.term)
        if price is None:
            return None, refs, f"no declared {item.term} price for a SKU matching '{item.sku}'"
        refs.append(
            EvidenceRef(
                summary=f"{entry.sku} {item.term} ${price:.2f}/GPU-hr (declared)",
                value=price,
                basis="declared",
                declared_source=entry.source.label(),
            )
        )
        others = list((peers.prices.get(item.id) if peers else None) or [])
        if price in others:
            others.remove(price)  # the provider itself
        if len(others) + 1 >= item.min_peers:
            dearer = sum(1 for p in others if p > price) + 0.5 * sum(1 for p in others if p == price)
            frac = dearer / len(others)
            refs.append(
                EvidenceRef(
                    summary=f"cheaper than {frac:.0%} of {len(others)} priced peers",
                    value=round(frac, 4),
                    basis="peer",
                )
            )
            return frac, refs, "peer-relative"
        return band(price, item.thresholds), refs, f"fewer than {item.min_peers} priced peers: absolute bands"
    if item.basis == "scheduler":
        sched: SchedulerReliability | None = ev.scheduler
        value = sched.metric(item.metric) if sched else None
        if value is None:
            return None, refs, "no scheduler history for this metric"
        refs.append(
            EvidenceRef(
                summary=f"{item.metric} = {value:g} from {', '.join(sched.sources)}",
                value=value,
                file=sched.sources[0] if sched.sources else None,
                basis="history",
            )
        )
        return band(value, item.thresholds), refs, None
    if item.basis == "fix_time":
        value = fix_summary.metric(item.metric)
        if value is None:
            return None, refs, "fewer than two runs of a kind with findings: no time-to-fix"
        refs.append(
            EvidenceRef(
                summary=f"{item.metric} = {value:g} h over {fix_summary.fixed} fixed, {fix_summary.open} open findings",
                value=value,
                basis="history",
            )
        )
        return band(value, item.thresholds), refs, None
    raise AssertionError(item.basis)


def _declared_ref(path: str, value, src: FactSource | None) -> EvidenceRef:
    return EvidenceRef(
        summary=f"{path} = {value}" + (" (declared)" if value is not None else " (not declared)"),
        value=value,
        basis="declared",
        status=None if value is not None else "unknown",
        declared_source=src.label() if src else None,
    )


# ------------------------------------------------------------------------------ critical failures
_CVE = re.compile(r"CVE-\d{4}-\d{4,7}", re.I)


def _check_text(r) -> str:
    parts = [r.id, r.title, r.subject or "", " ".join(r.references), " ".join(e.summary for e in r.evidence)]
    parts.append(json.dumps(r.details, default=str))
    return " ".join(parts)


def find_critical(rule: CriticalRule, ev: EvaluationEvidence) -> CriticalFailure | None:
    refs: list[EvidenceRef] = []
    if rule.rule == "no_declared_true":
        values = [(p, *ev.provider.fact(p)) for p in rule.facts]
        if any(v is True for _p, v, _s in values):
            return None
        refs = [_declared_ref(p, v, s) for p, v, s in values]
    elif rule.rule == "failing_checks":
        sel = rule.select or Selector()
        hits = [c for c in select_checks(ev.checks, sel) if c.result.status == Status.FAIL]
        if rule.cross_tenant_detail:
            hits += [
                c
                for c in ev.checks
                if c.result.status == Status.FAIL
                and c.result.details.get("cross_tenant") is True
                and c not in hits
            ]
        if not hits:
            return None
        refs = [_check_ref(c) for c in hits]
    elif rule.rule == "unpatched_cve":
        wanted = {c.id.upper() for c in rule.cves}
        sel = rule.select or Selector()
        for c in select_checks(ev.checks, sel):
            if c.result.status != Status.FAIL:
                continue
            found = {m.upper() for m in _CVE.findall(_check_text(c.result))} & wanted
            if found:
                ref = _check_ref(c)
                ref.value = ", ".join(sorted(found))
                refs.append(ref)
        if not refs:
            return None
    return CriticalFailure(id=rule.id, title=rule.title, cap=rule.cap, fix=rule.fix, evidence=refs)


def _check_ref(c: SourcedCheck) -> EvidenceRef:
    r = c.result
    return EvidenceRef(
        summary=f"{r.id}: {r.title}" + (f" on {r.host}" if r.host else ""),
        file=c.file,
        pointer=c.pointer,
        basis="measured",
        status=r.status.value,
        source=r.evidence[0].source if r.evidence else None,
    )


# ---------------------------------------------------------------------------------------- scoring
def _category(cat: Category, items: list[ItemScore]) -> CategoryScore:
    max_points = cat.max_points
    earned = sum(i.earned for i in items)
    known = sum(i.points for i in items if i.fraction is not None)
    score = round(100 * earned / max_points, 2) if max_points and known else None
    return CategoryScore(
        id=cat.id,
        title=cat.title,
        weight=cat.weight,
        score=score,
        earned=round(earned, 4),
        max_points=max_points,
        known_points=known,
        items=items,
    )


def total_score(categories: list[CategoryScore]) -> float:
    """Weighted mean of category scores; a null category adds 0; an empty category does not count."""
    weights = sum(c.weight for c in categories if c.max_points > 0)
    if not weights:
        return 0.0
    return round(sum(c.weight * (c.score or 0.0) for c in categories if c.max_points > 0) / weights, 2)


def score_evaluation(ev: EvaluationEvidence, rubric: Rubric, peers: PeerPrices | None = None) -> Scorecard:
    """Grade one evaluation against the rubric."""
    fixes = time_to_fix(ev.history)
    fix_summary = summarise(fixes)
    categories = []
    for cat in rubric.categories:
        items = []
        for item in cat.items:
            fraction, refs, note = grade_item(item, ev, rubric, peers, fix_summary)
            items.append(
                ItemScore(
                    id=item.id,
                    title=item.title,
                    category=cat.id,
                    basis=item.basis,
                    points=item.points,
                    fraction=None if fraction is None else round(fraction, 4),
                    earned=round(item.points * (fraction or 0.0), 4),
                    status=_status_of(fraction),
                    evidence=refs,
                    note=note,
                )
            )
        categories.append(_category(cat, items))
    score = total_score(categories)
    failures = [f for rule in rubric.critical_failures if (f := find_critical(rule, ev))]
    uncapped = rubric.tier_for(score)
    tier_idx = rubric.tier_index(uncapped)
    for f in failures:
        tier_idx = max(tier_idx, rubric.tier_index(f.cap))
    weights = sum(c.weight for c in categories if c.max_points > 0) or 1.0
    coverage = sum(c.weight * c.known_points / c.max_points for c in categories if c.max_points) / weights
    card = Scorecard(
        name=ev.provider.name,
        cluster=ev.provider.cluster,
        fictional=ev.provider.fictional,
        description=ev.provider.description,
        rubric=rubric.name,
        rubric_version=rubric.version,
        score=score,
        uncapped_tier=uncapped,
        tier=rubric.tiers[tier_idx].name,
        coverage=round(coverage, 4),
        categories=categories,
        critical_failures=failures,
        to_next_tier=ToNextTier(target=None),
        declared=declared_facts(ev),
        measurements=list(ev.measurements),
        fix_times=fixes,
        fix_time_summary=fix_summary,
        scheduler=ev.scheduler,
        sources=[s.model_dump(mode="json") for s in ev.sources],
        notes=list(ev.notes),
        evidence_root=ev.root,
    )
    card.to_next_tier = next_tier_plan(card, rubric)
    return card


def declared_facts(ev: EvaluationEvidence) -> list[DeclaredFactView]:
    """Every declared fact with its source, for the 'declared, not measured' table."""
    out = []
    d = ev.provider.declared
    for p in d.pricing:
        for term in ("on_demand", "reserved_1y", "reserved_3y"):
            v = getattr(p, term)
            if v is not None:
                out.append(
                    DeclaredFactView(
                        path=f"pricing.{p.sku}.{term}",
                        value=v,
                        source=p.source.label(),
                        fictional=p.source.fictional,
                    )
                )
    for section in ("availability", "managed", "sla", "certifications", "support", "monitoring"):
        for name in type(getattr(d, section)).model_fields:
            value, src = ev.provider.fact(f"{section}.{name}")
            if src is not None:
                out.append(
                    DeclaredFactView(
                        path=f"{section}.{name}", value=value, source=src.label(), fictional=src.fictional
                    )
                )
    return out


def next_tier_plan(card: Scorecard, rubric: Rubric) -> ToNextTier:
    """The cheapest fixes that lift the card one tier: blocking critical failures first, then items
    ordered by cost (low first) and, within a cost, by points gained."""
    idx = rubric.tier_index(card.tier)
    if idx == 0:
        return ToNextTier(target=None)
    target = rubric.tiers[idx - 1]
    fixes: list[Fix] = []
    for f in card.critical_failures:
        if rubric.tier_index(f.cap) > idx - 1:
            rule = next(r for r in rubric.critical_failures if r.id == f.id)
            fixes.append(Fix(id=f.id, title=f.title, action=f.fix, cost=rule.cost, gain=0.0, mandatory=True))
    fixes.sort(key=lambda f: COST_RANK[f.cost])
    needed = round(max(0.0, target.min_score - card.score), 2)
    weights = sum(c.weight for c in card.categories if c.max_points > 0) or 1.0
    items_by_id = {i.id: i for c in rubric.categories for i in c.items}
    candidates = []
    for c in card.categories:
        for it in c.items:
            if it.fraction is not None and it.fraction >= 1.0:
                continue
            gain = 100 * c.weight / weights * it.points * (1 - (it.fraction or 0.0)) / c.max_points
            rub = items_by_id[it.id]
            if it.fraction is None:
                action, cost = f"Provide evidence (unknown now): {how_to_evidence(rub)}", "low"
            else:
                action, cost = rub.fix, rub.cost
            candidates.append(
                Fix(id=it.id, title=it.title, category=c.id, action=action, cost=cost, gain=round(gain, 2))
            )
    candidates.sort(key=lambda f: (COST_RANK[f.cost], -f.gain, f.id))
    gained = 0.0
    for cand in candidates:
        if gained >= needed - 1e-9:
            break
        fixes.append(cand)
        gained += cand.gain
    return ToNextTier(
        target=target.name, points_needed=needed, reachable=gained >= needed - 1e-9, fixes=fixes
    )


def how_to_evidence(item: RubricItem) -> str:
    """What to hand podium so that an unknown item can be graded."""
    if item.basis == "checks":
        kinds = ", ".join(item.select.kinds) or "check"
        return f"add the JSON of `podium {kinds}` to the evaluation"
    if item.basis == "measurements":
        kinds = ", ".join(item.select.kinds)
        return f"add {kinds} results ({', '.join(item.select.benchmarks or item.select.metrics)})"
    if item.basis == "declared":
        return f"declare {' or '.join(item.facts)} with a source in the provider file"
    if item.basis == "peer_price":
        return f"declare the {item.term} price of a {item.sku.upper()} SKU in the provider file"
    if item.basis == "scheduler":
        return "add captured `sacctmgr show event`, `sinfo -R` and `sacct -P` output under slurm/"
    return "re-run the evaluation after fixing findings, so that the time to fix is measured"
