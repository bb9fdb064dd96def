"""Checks over service outputs: the Fabric Manager log and DCGM diagnostics."""

from __future__ import annotations

from podium.health.checks.base import check
from podium.health.models import Action, DcgmDiag, FabricManagerLog
from podium.models.common import Provenance, Severity, Status
from podium.models.results import CheckResult

DCGM_DOC = "https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html"
FM_DOC = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"


def check_fabric_manager(log: FabricManagerLog, prov: Provenance) -> CheckResult:
    """A fatal NVSwitch/fabric error fails (drain); non-fatal errors warn."""
    errors = log.at_level("ERROR", "FATAL", "CRITICAL")
    fatal = [e for e in errors if "non-fatal" not in e.message.lower() and "fatal" in e.message.lower()] + [
        e for e in errors if e.level.upper() in ("FATAL", "CRITICAL")
    ]
    status = Status.FAIL if fatal else Status.WARN if errors else Status.PASS
    shown = fatal or errors
    return check(
        "fabricmanager.log",
        f"Fabric Manager: {len(fatal)} fatal, {len(errors) - len(fatal)} non-fatal error(s)"
        if errors
        else "Fabric Manager log has no errors",
        status,
        prov=prov,
        action=Action.DRAIN if fatal else Action.NONE,
        severity=Severity.LOW if status == Status.WARN else None,
        evidence=[
            (
                f"line {e.line_no} {e.timestamp.isoformat() if e.timestamp else ''} [{e.level}] {e.message[:160]}",
                e.line_no,
            )
            for e in shown[:10]
        ]
        or [("log entries", len(log.entries))],
        references=[FM_DOC],
    )


def check_dcgm(diag: DcgmDiag, prov: Provenance) -> CheckResult:
    """Any failed test fails; a hardware/memory failure asks for RMA, others for drain."""
    if diag.runtime_error and not diag.results:
        return check(
            "dcgm.diag",
            "DCGM diagnostic did not run",
            Status.UNKNOWN,
            prov=prov,
            reason=f"dcgmi runtime error: {diag.runtime_error[:200]}",
        )
    fails = [r for r in diag.results if r.status == "fail"]
    warns = [r for r in diag.results if r.status == "warn"]
    hardware = [r for r in fails if r.category.lower() == "hardware" or "memory" in r.test.lower()]
    action = Action.RMA if hardware else Action.DRAIN if fails else Action.NONE
    status = Status.FAIL if fails else Status.WARN if warns else Status.PASS
    passed = sum(1 for r in diag.results if r.status == "pass")
    return check(
        "dcgm.diag",
        f"DCGM diag ({diag.schema_shape}): {len(fails)} failed, {len(warns)} warned, {passed} passed",
        status,
        prov=prov,
        action=action,
        evidence=[
            (
                f"{r.category}/{r.test} {r.entity}: {r.status}"
                + (f": {'; '.join(r.warnings)[:200]}" if r.warnings else ""),
                r.status,
            )
            for r in (fails + warns)[:20]
        ]
        or [("tests passed", passed)],
        references=[DCGM_DOC],
        details={"dcgm_version": diag.version, "schema_shape": diag.schema_shape},
    )
