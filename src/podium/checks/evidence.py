"""Small helpers that turn command outputs, file reads and probe outcomes into Evidence."""

from __future__ import annotations

from podium import __version__
from podium.models.common import Evidence, Provenance, Severity, Status, utcnow
from podium.models.results import CheckResult
from podium.runner import CommandOutput

TOOL = f"podium {__version__}"


def from_command(out: CommandOutput, summary: str, value=None) -> Evidence:
    """Evidence backed by a command's output (command line, host, time)."""
    return Evidence(summary=summary, value=value, source=out.provenance())


def from_file(path: str, host: str, summary: str, value=None) -> Evidence:
    """Evidence backed by a file read on this node."""
    return Evidence(
        summary=summary,
        value=value,
        source=Provenance(command=f"read {path}", host=host, collected_at=utcnow(), tool_version=TOOL),
    )


def from_probe(description: str, host: str, summary: str, value=None) -> Evidence:
    """Evidence backed by a network probe podium sent (e.g. 'GET https://10.0.0.5:10250/pods')."""
    return Evidence(
        summary=summary,
        value=value,
        source=Provenance(command=description, host=host, collected_at=utcnow(), tool_version=TOOL),
    )


def result(
    spec_id: str,
    title: str,
    category: str,
    status: Status,
    severity: Severity = Severity.NONE,
    *,
    host: str | None = None,
    subject: str | None = None,
    evidence: list[Evidence] | None = None,
    remediation: str | None = None,
    references: list[str] | None = None,
    reason: str | None = None,
    details: dict | None = None,
) -> CheckResult:
    """Build a CheckResult; pass results carry no severity, unknown/skipped ones must carry a reason."""
    if status in (Status.UNKNOWN, Status.SKIPPED) and not reason:
        raise ValueError(f"{spec_id}: a {status.value} result needs a reason")
    return CheckResult(
        id=spec_id,
        title=title,
        status=status,
        severity=Severity.NONE if status == Status.PASS else severity,
        category=category,
        host=host,
        subject=subject,
        evidence=evidence or [],
        remediation=remediation,
        references=references or [],
        reason=reason,
        details=details or {},
    )


def unavailable(
    out: CommandOutput,
    spec_id: str,
    title: str,
    category: str,
    host: str | None,
    *,
    hint: str | None = None,
    subject: str | None = None,
) -> CheckResult:
    """The result when a command gave nothing to judge: ``skipped`` when the tool is absent (the check
    does not apply to this node), ``unknown`` when it ran and failed. Never a pass."""
    status = Status.SKIPPED if out.error == "not found" else Status.UNKNOWN
    reason = out.why_not() + (f" ({hint})" if hint else "")
    return result(spec_id, title, category, status, host=host, subject=subject, reason=reason)
