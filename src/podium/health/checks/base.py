"""Building a health CheckResult with evidence and an action."""

from __future__ import annotations

from typing import Any

from podium import __version__
from podium.health.models import Action
from podium.models.common import Evidence, Provenance, Severity, Status
from podium.models.results import CheckResult

_STATUS_ORDER = [Status.SKIPPED, Status.PASS, Status.UNKNOWN, Status.WARN, Status.FAIL]


def worst_status(statuses: list[Status]) -> Status:
    return max(statuses, key=_STATUS_ORDER.index, default=Status.PASS)


def worst_action(actions: list[Action]) -> Action:
    return max(actions, key=lambda a: a.rank, default=Action.NONE)


def check(
    check_id: str,
    title: str,
    status: Status,
    *,
    prov: Provenance | None = None,
    action: Action = Action.NONE,
    severity: Severity | None = None,
    evidence: list[tuple[str, Any]] | None = None,
    remediation: str | None = None,
    reason: str | None = None,
    subject: str | None = None,
    references: list[str] | None = None,
    details: dict[str, Any] | None = None,
) -> CheckResult:
    """One health result. Severity defaults from the status; the action goes into ``details``."""
    if severity is None:
        severity = {
            Status.FAIL: Severity.HIGH,
            Status.WARN: Severity.MEDIUM,
        }.get(status, Severity.NONE)
    ev = [Evidence(summary=s, value=v, source=prov) for s, v in (evidence or [])]
    d = {"action": action.value}
    d.update(details or {})
    return CheckResult(
        id=check_id,
        title=title,
        status=status,
        severity=severity,
        category="health",
        host=prov.host if prov else None,
        subject=subject,
        evidence=ev,
        remediation=remediation,
        reason=reason,
        references=references or [],
        details=d,
    )


def provenance(
    command: str, host: str | None, collected_at=None, raw_output: str | None = None
) -> Provenance:
    return Provenance(
        command=command,
        host=host,
        collected_at=collected_at,
        tool_version=f"podium {__version__}",
        raw_output=raw_output,
    )
