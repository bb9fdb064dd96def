"""The audit report: per-node results, fleet groups, and the bundle they were graded against."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from pydantic import BaseModel, Field

from podium.models.common import utcnow
from podium.models.results import CheckResult, ResultSummary


class BundleInfo(BaseModel):
    version: str
    built_at: datetime
    data_date: datetime | None = None
    age_days: int
    stale: bool = Field(description="Older than 30 days: findings after that date are missing")


class NodeSummary(BaseModel):
    host: str
    collected_at: datetime
    method: str
    summary: ResultSummary


class FindingGroup(BaseModel):
    """Identical results across nodes: '412 nodes: driver 535.104.05, 19 CVEs, upgrade to 535.309.01'."""

    id: str
    status: str
    severity: str
    subject: str | None
    title: str
    node_count: int
    hosts: list[str]
    remediation: str | None = None
    cve_count: int = 0
    upgrade_to: str | None = None
    findings: list[dict] = Field(default_factory=list, description="Advisories behind this group, once")

    @property
    def headline(self) -> str:
        return f"{self.node_count} node{'s' if self.node_count != 1 else ''}: {self.title}"


class AuditReport(BaseModel):
    """Output of ``podium audit --json``."""

    podium_version: str
    generated_at: datetime = Field(default_factory=utcnow)
    run_id: str | None = None
    profiles: list[str] = Field(default_factory=lambda: ["versions"])
    advisory_bundle: BundleInfo | None = None
    nodes: list[NodeSummary] = Field(default_factory=list)
    summary: ResultSummary
    groups: list[FindingGroup] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


_STATUS_ORDER = {"fail": 0, "warn": 1, "unknown": 2, "skipped": 3, "pass": 4}


def group_results(results: list[CheckResult], findings_by_subject: dict | None = None) -> list[FindingGroup]:
    buckets: dict[tuple, list[CheckResult]] = defaultdict(list)
    for r in results:
        buckets[r.group_key()].append(r)
    groups = []
    for rs in buckets.values():
        r = rs[0]
        hosts = sorted({x.host or "-" for x in rs})
        groups.append(
            FindingGroup(
                id=r.id,
                status=r.status.value,
                severity=r.severity.value,
                subject=r.subject,
                title=r.title,
                node_count=len(hosts),
                hosts=hosts,
                remediation=r.remediation,
                cve_count=len(r.details.get("cves", [])),
                upgrade_to=r.details.get("upgrade_to"),
                findings=(findings_by_subject or {}).get(r.subject, [])
                if r.status.value in ("fail", "warn")
                else [],
            )
        )
    groups.sort(key=lambda g: (_STATUS_ORDER.get(g.status, 9), -_sev_rank(g.severity), -g.node_count, g.id))
    return groups


def _sev_rank(sev: str) -> int:
    return {"critical": 5, "high": 4, "medium": 3, "low": 2, "info": 1}.get(sev, 0)
