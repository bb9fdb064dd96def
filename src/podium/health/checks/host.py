"""Host checks: required mounts, disk space, D-state processes, CPU governor."""

from __future__ import annotations

from typing import Any

from podium.health.checks.base import check
from podium.health.models import Action, DiskUsage, MountEntry, ProcessState
from podium.models.common import Provenance, Severity, Status
from podium.models.results import CheckResult


def check_mounts(mounts: list[MountEntry], prov: Provenance, required: list[str]) -> CheckResult:
    """Required mountpoints must be mounted; '/' must not have gone read-only."""
    present = {m.mountpoint for m in mounts}
    missing = [mp for mp in required if mp not in present]
    root_ro = [
        m
        for m in mounts
        if m.mountpoint == "/" and "ro" in m.options and m.fstype not in ("overlay", "rootfs")
    ]
    ev = [(f"{mp} not mounted", mp) for mp in missing] + [
        (f"/ mounted read-only ({m.device})", "ro") for m in root_ro
    ]
    return check(
        "host.mounts",
        "Mount problems"
        if ev
        else f"{len(mounts)} mounts; required present: {', '.join(required) or '(none declared)'}",
        Status.FAIL if ev else Status.PASS,
        prov=prov,
        action=Action.DRAIN if ev else Action.NONE,
        evidence=ev or [("mount count", len(mounts))],
        details={"required": required},
    )


def check_disk(usage: list[DiskUsage], prov: Provenance, thresholds: dict[str, Any]) -> CheckResult:
    t = thresholds["disk"]
    watched = [u for u in usage if u.mountpoint in t["mountpoints"]]
    ev, status, action = [], Status.PASS, Action.NONE
    for u in watched:
        if u.used_pct >= t["fail_pct"]:
            ev.append((f"{u.mountpoint} {u.used_pct:.1f}% used", round(u.used_pct, 1)))
            status, action = Status.FAIL, Action.DRAIN
        elif u.used_pct >= t["warn_pct"]:
            ev.append((f"{u.mountpoint} {u.used_pct:.1f}% used", round(u.used_pct, 1)))
            if status == Status.PASS:
                status = Status.WARN
    if not watched:
        return check(
            "host.disk",
            "No watched filesystem found",
            Status.UNKNOWN,
            prov=prov,
            reason=f"none of {', '.join(t['mountpoints'])} in df output",
        )
    return check(
        "host.disk",
        "Disk space low" if ev else "Disk space fine",
        status,
        prov=prov,
        action=action,
        evidence=ev or [(f"{u.mountpoint} {u.used_pct:.1f}% used", round(u.used_pct, 1)) for u in watched],
    )


def check_d_state(procs: list[ProcessState], prov: Provenance, thresholds: dict[str, Any]) -> CheckResult:
    t = thresholds["d_state"]
    stuck = [p for p in procs if p.state.startswith("D")]
    status = (
        Status.FAIL if len(stuck) >= t["fail"] else Status.WARN if len(stuck) >= t["warn"] else Status.PASS
    )
    return check(
        "host.d-state",
        f"{len(stuck)} process(es) in uninterruptible sleep" if stuck else "No D-state processes",
        status,
        prov=prov,
        action=Action.DRAIN if status == Status.FAIL else Action.NONE,
        severity=Severity.LOW if status == Status.WARN else None,
        evidence=[(f"pid {p.pid} {p.command} state {p.state}", p.pid) for p in stuck[:10]]
        or [("processes scanned", len(procs))],
    )


def check_governor(values: list[str] | None, prov: Provenance, thresholds: dict[str, Any]) -> CheckResult:
    expected = thresholds["cpu_governor"]["expected"]
    if not values:
        return check(
            "host.cpu-governor",
            "CPU frequency governor not available",
            Status.SKIPPED,
            prov=prov,
            reason="no /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor (VM or cpufreq disabled)",
        )
    counts: dict[str, int] = {}
    for v in values:
        counts[v.strip()] = counts.get(v.strip(), 0) + 1
    other = {g: n for g, n in counts.items() if g != expected}
    return check(
        "host.cpu-governor",
        f"CPU governor {', '.join(f'{g} x{n}' for g, n in sorted(counts.items()))}",
        Status.WARN if other else Status.PASS,
        prov=prov,
        severity=Severity.LOW if other else None,
        evidence=[(f"{n} CPU(s) on governor {g}", g) for g, n in sorted(counts.items())],
        remediation=f"Set the '{expected}' governor (cpupower frequency-set -g {expected})."
        if other
        else None,
    )
