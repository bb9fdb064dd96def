"""Kernel log checks: NVIDIA Xid events graded by the policy table."""

from __future__ import annotations

from podium.health.checks.base import check, worst_action, worst_status
from podium.health.models import Action, KernelLogLine
from podium.health.xid import XidPolicy, extract_xids
from podium.models.common import Provenance, Severity, Status
from podium.models.results import CheckResult


def check_xids(lines: list[KernelLogLine], prov: Provenance, policy: XidPolicy) -> list[CheckResult]:
    """One result per Xid code seen (de-duplicated events), or one pass when there are none."""
    events = extract_xids(lines)
    if not events:
        return [
            check(
                "kernel.xid",
                "No NVIDIA Xid events in the kernel log",
                Status.PASS,
                prov=prov,
                evidence=[("kernel log lines scanned", len(lines))],
                details={"policy_version": policy.version},
            )
        ]
    out = []
    for xid in sorted({e.xid for e in events}):
        evs = [e for e in events if e.xid == xid]
        graded = [policy.grade(e) for e in evs]
        status = worst_status([Status(s) for s, _, _ in graded])
        action = worst_action([a for _, a, _ in graded])
        rule = graded[0][2]
        total = sum(e.count for e in evs)
        gpus = sorted({e.pci or "?" for e in evs})
        out.append(
            check(
                f"kernel.xid.{xid}",
                f"Xid {xid} ({rule.name}) x{total} on {', '.join(gpus)}",
                status,
                prov=prov,
                action=action,
                severity=Severity.parse(rule.severity) if status != Status.PASS else Severity.INFO,
                evidence=[
                    (
                        f"line {e.first_line}"
                        + (f" {e.first_seen.isoformat()}" if e.first_seen else "")
                        + f": Xid {e.xid} PCI {e.pci}: {e.message[:160]}"
                        + (f" (x{e.count})" if e.count > 1 else ""),
                        e.count,
                    )
                    for e in evs[:10]
                ],
                references=[rule.source] if rule.source else [],
                remediation=f"NVIDIA catalog resolution: {rule.resolution}" if rule.resolution else None,
                details={
                    "xid": xid,
                    "events": len(evs),
                    "occurrences": total,
                    "pci": gpus,
                    "recovery_action": next((e.recovery_action for e in evs if e.recovery_action), None),
                    "policy_version": policy.version,
                },
            )
        )
    return out


def worst_of(results: list[CheckResult]) -> Action:
    return worst_action([Action(r.details.get("action", "none")) for r in results])
