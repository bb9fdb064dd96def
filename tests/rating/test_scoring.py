"""Scoring maths: caps, monotonicity, unknown as a gap, ties, empty categories, cheapest fixes."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium.rating.ranking import rank
from podium.rating.rubric import Rubric, load_rubric
from podium.rating.scoring import PeerPrices, aggregate, score_evaluation

from .helpers import bench, check, evaluation, provider

RUBRIC = load_rubric()
GOOD = [
    check("audit", "advisory.runc", "pass"),
    check("isolation", "isolation.ib.pkey", "pass"),
    check("health", "health.node", "pass"),
]


def item(card, item_id):
    return next(i for c in card.categories for i in c.items if i.id == item_id)


def test_critical_cross_tenant_caps_the_tier_whatever_the_score():
    clean = score_evaluation(evaluation(GOOD), RUBRIC)
    leak = check(
        "isolation",
        "isolation.cross-tenant.ib-reachability",
        "fail",
        "critical",
        n=1,
        details={"cross_tenant": True},
    )
    capped = score_evaluation(evaluation([*GOOD, leak]), RUBRIC)
    assert [f.id for f in capped.critical_failures] == ["critical.cross_tenant"]
    assert capped.tier == "Underperforming"
    assert clean.critical_failures == []


def test_container_escape_cve_caps_at_bronze_and_names_the_cve():
    benches = [bench(b, "pass", n=i) for i, b in enumerate(["gemm_bf16", "hbm_copy", "nccl_all_reduce"])]
    prov = provider(
        sla={"uptime_percent": {"value": 99.95, "source": {"document": "MSA", "date": "2026-01-01"}}},
        monitoring={
            k: {"value": True, "source": {"document": "docs", "date": "2026-01-01"}}
            for k in ("grafana", "dcgm_exporter", "automated_health_checks")
        },
    )
    escape = check(
        "audit",
        "advisory.runc",
        "fail",
        "high",
        n=5,
        references=["https://www.cve.org/CVERecord?id=CVE-2024-21626"],
    )
    card = score_evaluation(evaluation([escape, *GOOD[1:]], benches, prov=prov), RUBRIC)
    crit = {f.id: f for f in card.critical_failures}
    assert set(crit) == {"critical.container_escape"}
    assert crit["critical.container_escape"].evidence[0].value == "CVE-2024-21626"
    assert RUBRIC.tier_index(card.tier) >= RUBRIC.tier_index("Bronze")
    # the same CVE on a passing check is not a failure
    patched = score_evaluation(
        evaluation([check("audit", "advisory.runc", "pass", references=["CVE-2024-21626"])]), RUBRIC
    )
    assert "critical.container_escape" not in [f.id for f in patched.critical_failures]


def test_no_attestation_caps_at_silver_and_unknown_counts_as_absent():
    card = score_evaluation(evaluation(GOOD, prov=provider(certs=False)), RUBRIC)
    assert [f.id for f in card.critical_failures] == ["critical.no_attestation"]
    assert card.critical_failures[0].evidence[0].summary == "certifications.soc2_type2 = None (not declared)"
    assert RUBRIC.tier_index(card.tier) >= RUBRIC.tier_index("Silver")


def test_unknown_is_a_gap_never_a_pass():
    only_unknown = score_evaluation(evaluation([check("audit", "advisory.kernel", "unknown")]), RUBRIC)
    adv = item(only_unknown, "security.advisories")
    assert (adv.fraction, adv.status, adv.earned) == (None, "unknown", 0.0)
    passed = score_evaluation(evaluation([check("audit", "advisory.kernel", "pass")]), RUBRIC)
    assert item(passed, "security.advisories").earned == 40.0
    assert only_unknown.score < passed.score
    # a pass next to an unknown earns less than two passes
    mixed = score_evaluation(
        evaluation([check("audit", "a", "pass"), check("audit", "b", "skipped", n=1)]), RUBRIC
    )
    two = score_evaluation(
        evaluation([check("audit", "a", "pass"), check("audit", "b", "pass", n=1)]), RUBRIC
    )
    assert item(mixed, "security.advisories").fraction == 0.5
    assert item(two, "security.advisories").fraction == 1.0
    # a category with no evidence at all is null (a gap), and adds nothing to the total
    cats = only_unknown.category_scores()
    assert cats["performance"] is None and cats["storage"] is None


@st.composite
def results(draw):
    kinds = st.sampled_from(["audit", "isolation", "health", "endpoint-audit"])
    statuses = st.sampled_from(["pass", "warn", "fail", "unknown", "skipped"])
    severities = st.sampled_from(["critical", "high", "medium", "low", "info", "none"])
    n = draw(st.integers(0, 8))
    out = []
    for i in range(n):
        kind = draw(kinds)
        cid = "health.node" if kind == "health" and draw(st.booleans()) else f"{kind}.c{i}"
        out.append(check(kind, cid, draw(statuses), draw(severities), n=i))
    return out


@settings(max_examples=150, deadline=None)
@given(
    results(),
    st.sampled_from(["audit", "isolation", "health", "endpoint-audit"]),
    st.sampled_from(["critical", "high", "medium", "low", "info", "none"]),
    st.lists(st.sampled_from(["pass", "warn", "fail", "unknown"]), max_size=4),
    st.booleans(),
)
def test_adding_a_fail_never_raises_a_score(checks, kind, severity, verdicts, health_node):
    ms = [bench("gemm_bf16", v, n=i) for i, v in enumerate(verdicts)]
    before = score_evaluation(evaluation(checks, ms), RUBRIC)
    cid = "health.node" if kind == "health" and health_node else f"{kind}.new-fail"
    after = score_evaluation(evaluation([*checks, check(kind, cid, "fail", severity, n=99)], ms), RUBRIC)
    assert after.score <= before.score
    for b, a in zip(before.categories, after.categories, strict=True):
        assert (a.score or 0.0) <= (b.score or 0.0)
    assert RUBRIC.tier_index(after.tier) >= RUBRIC.tier_index(before.tier)
    with_bench_fail = score_evaluation(evaluation(checks, [*ms, bench("gemm_bf16", "fail", n=50)]), RUBRIC)
    assert with_bench_fail.score <= before.score


@given(
    st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=8),
    st.sampled_from(["worst", "mean"]),
)
def test_aggregate_is_bounded_and_fail_monotone(fractions, how):
    fails = [False] * len(fractions)
    value = aggregate(fractions, how, fails)
    if all(f is None for f in fractions):
        assert value is None
        return
    assert 0.0 <= value <= 1.0
    worse = aggregate([*fractions, 0.5], how, [*fails, True])  # a low-severity fail
    assert worse <= value


def test_ties_share_a_rank_and_the_next_rank_skips():
    a = evaluation(GOOD, prov=provider("Alpha"))
    b = evaluation(GOOD, prov=provider("Beta"))
    c = evaluation([*GOOD, check("audit", "advisory.x", "fail", "high", n=7)], prov=provider("Gamma"))
    ranking, _cards = rank([c, b, a], RUBRIC, "mem")
    assert [(p.rank, p.name) for p in ranking.providers] == [(1, "Alpha"), (1, "Beta"), (3, "Gamma")]
    assert ranking.podium == ["Alpha", "Beta", "Gamma"]
    assert ranking.category_leaders["security"] == ["Alpha", "Beta"]
    assert ranking.category_leaders["storage"] == []  # unknown for everyone


def test_empty_category_does_not_count_and_is_null():
    data = RUBRIC.model_dump()
    data["categories"].append({"id": "empty", "title": "Empty", "weight": 50, "items": []})
    rubric = Rubric.model_validate(data)
    ev = evaluation(GOOD)
    with_empty = score_evaluation(ev, rubric)
    without = score_evaluation(ev, RUBRIC)
    assert with_empty.category_scores()["empty"] is None
    assert with_empty.score == without.score


def test_peer_price_percentile_and_absolute_fallback():
    prices = PeerPrices(prices={"pricing.on_demand": [1.89, 2.19, 2.39, 2.49]})
    card = score_evaluation(evaluation(GOOD, prov=provider(price=2.19)), RUBRIC, prices)
    assert item(card, "pricing.on_demand").fraction == pytest.approx(2 / 3, abs=1e-4)
    cheapest = score_evaluation(evaluation(GOOD, prov=provider(price=1.89)), RUBRIC, prices)
    assert item(cheapest, "pricing.on_demand").fraction == 1.0
    alone = score_evaluation(evaluation(GOOD, prov=provider(price=2.19)), RUBRIC)
    assert item(alone, "pricing.on_demand").fraction == 0.75  # band: at most $2.50
    assert item(alone, "pricing.on_demand").note == "fewer than 3 priced peers: absolute bands"


def test_to_next_tier_lists_required_cap_fixes_then_cheapest():
    card = score_evaluation(evaluation(GOOD, prov=provider(certs=False)), RUBRIC)
    plan = card.to_next_tier
    target_idx = RUBRIC.tier_index(card.tier) - 1
    assert plan.target == RUBRIC.tiers[target_idx].name
    costs = [f.cost for f in plan.fixes if not f.mandatory]
    assert costs == sorted(costs, key=["low", "medium", "high"].index)
    assert sum(f.gain for f in plan.fixes) >= plan.points_needed or not plan.reachable
    top = copy.deepcopy(card)
    top.tier = RUBRIC.tiers[0].name
    from podium.rating.scoring import next_tier_plan

    assert next_tier_plan(top, RUBRIC).target is None
