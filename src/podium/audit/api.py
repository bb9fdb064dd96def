"""Library entry points for the audit: collect or load facts, grade them, build the report."""

from __future__ import annotations

from collections.abc import Sequence

from podium import __version__
from podium.audit.report import AuditReport, BundleInfo, NodeSummary, group_results
from podium.models.facts import NodeFacts
from podium.models.results import CheckResult, ResultSummary

STALE_AFTER_DAYS = 30


def bundle_info(bundle) -> BundleInfo:
    from podium.advisories.bundle import bundle_age_days

    age = bundle_age_days(bundle)
    return BundleInfo(
        version=bundle.version,
        built_at=bundle.built_at,
        data_date=bundle.data_date,
        age_days=age,
        stale=age > STALE_AFTER_DAYS,
    )


def grade_fleet(facts: Sequence[NodeFacts], bundle=None, grader=None) -> list[CheckResult]:
    """Grade every node's components; the fast path used for large fleets."""
    from podium.audit.grade import Grader

    grader = grader or Grader(bundle)
    out: list[CheckResult] = []
    for f in facts:
        out.extend(grader.grade_node(f))
    return out


def run_audit(
    facts: Sequence[NodeFacts],
    bundle=None,
    extra_checks: Sequence[CheckResult] = (),
    profiles: Sequence[str] = ("versions",),
    run_id: str | None = None,
) -> AuditReport:
    """Grade ``facts`` (when the versions profile is on) and assemble the report with ``extra_checks``."""
    from podium.advisories.bundle import load_default
    from podium.audit.grade import Grader

    bundle = bundle or load_default()
    grader = Grader(bundle)
    checks: list[CheckResult] = list(grade_fleet(facts, grader=grader)) if "versions" in profiles else []
    checks.extend(extra_checks)
    info = bundle_info(bundle)
    warnings = []
    if info.stale:
        warnings.append(
            f"advisory bundle {info.version} is {info.age_days} days old (> {STALE_AFTER_DAYS}): advisories "
            "published since are missing; rebuild it with `podium advisories build`"
        )
    by_host: dict[str | None, list[CheckResult]] = {}
    for c in checks:
        by_host.setdefault(c.host, []).append(c)
    nodes = [
        NodeSummary(
            host=f.host,
            collected_at=f.collected_at,
            method=f.method,
            summary=ResultSummary.of(by_host.get(f.host, [])),
        )
        for f in facts
    ]
    return AuditReport(
        podium_version=__version__,
        run_id=run_id,
        profiles=list(profiles),
        advisory_bundle=info,
        nodes=nodes,
        summary=ResultSummary.of(checks),
        groups=group_results(checks, grader.findings_by_subject),
        checks=checks,
        warnings=warnings,
    )
