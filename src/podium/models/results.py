"""The one result model: every audit, isolation, health and endpoint check returns CheckResult."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from podium.models.common import Evidence, Severity, Status


class CheckResult(BaseModel):
    """The outcome of one check on one subject (a node, a component, an endpoint)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Stable check id, e.g. 'advisory.nvidia-driver' or 'ib.pkey.default-full'")
    title: str
    status: Status
    severity: Severity = Severity.NONE
    category: str = Field("security", description="Rubric category this result feeds")
    host: str | None = Field(None, description="Node or endpoint the result is about")
    subject: str | None = Field(
        None, description="Component or object checked, e.g. 'nvidia-driver 535.104.05'"
    )
    evidence: list[Evidence] = Field(default_factory=list)
    remediation: str | None = None
    references: list[str] = Field(default_factory=list)
    reason: str | None = Field(None, description="Why the check is unknown or skipped")
    details: dict[str, Any] = Field(default_factory=dict, description="Check-specific structured data")

    def group_key(self) -> tuple:
        """Results that differ only by host group together ("412 nodes: ...")."""
        return (self.id, self.status, self.subject, self.title)


# A finding is a result that is not a pass; the model is the same so consumers need one schema.
Finding = CheckResult


class ResultSummary(BaseModel):
    """Counts of results by status."""

    pass_: int = Field(0, alias="pass")
    warn: int = 0
    fail: int = 0
    unknown: int = 0
    skipped: int = 0

    model_config = ConfigDict(populate_by_name=True)

    @classmethod
    def of(cls, results: list[CheckResult]) -> ResultSummary:
        counts = Counter(r.status.value for r in results)
        return cls.model_validate(dict(counts))


def worst_severity(results: list[CheckResult], statuses=(Status.FAIL, Status.WARN)) -> Severity:
    worst = Severity.NONE
    for r in results:
        if r.status in statuses and r.severity.rank > worst.rank:
            worst = r.severity
    return worst


def exceeds(results: list[CheckResult], fail_on: Severity) -> bool:
    """True when any failing or warning result is at or above ``fail_on``."""
    return any(r.status in (Status.FAIL, Status.WARN) and r.severity.rank >= fail_on.rank for r in results)
