"""GPU checks over a GpuInventory (from NVML, nvidia-smi XML or nvidia-smi text)."""

from __future__ import annotations

from typing import Any

from podium.health.checks.base import check
from podium.health.models import Action, GpuInfo, GpuInventory, NvLinkReport
from podium.health.thresholds import idle_power_ceiling
from podium.models.common import Provenance, Severity, Status
from podium.models.results import CheckResult

ECC_DOC = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html"


def _label(g: GpuInfo) -> str:
    return f"GPU {g.index} ({g.bus_id or '?'})"


def _is_idle(g: GpuInfo, t: dict[str, Any]) -> bool:
    if g.process_count:
        return False
    if g.throttle_reasons.get("gpu_idle") or g.throttle_reasons.get("idle"):
        return True
    util = g.utilization_gpu_pct
    return util is not None and util < t["idle_power_ceiling_w"]["idle_utilization_pct"]


def check_gpus(
    inv: GpuInventory,
    prov: Provenance,
    thresholds: dict[str, Any],
    expected_gpus: int | None = None,
) -> list[CheckResult]:
    """All passive per-GPU checks; each check id aggregates over the node's GPUs."""
    out: list[CheckResult] = []
    gpus = inv.gpus
    n = len(gpus)

    # count
    ev = [("GPUs listed", n)]
    if inv.attached_gpus is not None:
        ev.append(("Attached GPUs reported by the tool", inv.attached_gpus))
    if expected_gpus is not None and n < expected_gpus:
        out.append(
            check(
                "gpu.count",
                "GPU count below expected",
                Status.FAIL,
                prov=prov,
                action=Action.DRAIN,
                evidence=[*ev, ("expected", expected_gpus)],
                remediation="A GPU is missing from the bus: check `lspci`, Xid 79 and reseat/RMA.",
                details={"found": n, "expected": expected_gpus},
            )
        )
    elif inv.attached_gpus is not None and n != inv.attached_gpus:
        out.append(
            check(
                "gpu.count",
                "GPU sections differ from 'Attached GPUs'",
                Status.WARN,
                prov=prov,
                evidence=ev,
                details={"found": n, "attached": inv.attached_gpus},
            )
        )
    else:
        out.append(
            check(
                "gpu.count",
                f"{n} GPU(s) present",
                Status.PASS,
                prov=prov,
                evidence=ev,
                details={"found": n, "expected": expected_gpus},
            )
        )

    # driver + persistence
    out.append(
        check(
            "gpu.driver",
            f"NVIDIA driver {inv.driver_version or 'unknown'}",
            Status.PASS if inv.driver_version else Status.UNKNOWN,
            prov=prov,
            reason=None if inv.driver_version else "the output names no driver version",
            evidence=[("driver version", inv.driver_version), ("CUDA version", inv.cuda_version)],
        )
    )
    off = [g for g in gpus if g.persistence_mode is False]
    known = [g for g in gpus if g.persistence_mode is not None]
    if not known:
        out.append(
            check(
                "gpu.persistence",
                "Persistence mode not reported",
                Status.UNKNOWN,
                prov=prov,
                reason="persistence mode is N/A in this output (Windows WDDM or excerpt)",
            )
        )
    else:
        out.append(
            check(
                "gpu.persistence",
                "Persistence mode" + (" disabled" if off else " enabled"),
                Status.WARN if off else Status.PASS,
                prov=prov,
                severity=Severity.LOW if off else None,
                evidence=[(f"{_label(g)} persistence mode disabled", False) for g in off],
                remediation="Enable nvidia-persistenced (or `nvidia-smi -pm 1`)." if off else None,
            )
        )

    # ECC
    ev, status, action, sev = [], Status.PASS, Action.NONE, None
    for g in gpus:
        if g.ecc_volatile_uncorrectable:
            ev.append((f"{_label(g)} volatile uncorrectable ECC errors", g.ecc_volatile_uncorrectable))
            status, action = Status.FAIL, max(action, Action.RESET_GPU, key=lambda a: a.rank)
        if g.sram_threshold_exceeded:
            ev.append((f"{_label(g)} SRAM uncorrectable error threshold exceeded", True))
            status, action, sev = Status.FAIL, Action.RMA, Severity.CRITICAL
        if g.ecc_aggregate_uncorrectable and not g.ecc_volatile_uncorrectable:
            ev.append(
                (f"{_label(g)} aggregate (lifetime) uncorrectable ECC errors", g.ecc_aggregate_uncorrectable)
            )
            if status == Status.PASS:
                status = Status.WARN
        if (g.ecc_aggregate_correctable or 0) >= thresholds["ecc"]["aggregate_correctable_warn"]:
            ev.append((f"{_label(g)} aggregate correctable ECC errors", g.ecc_aggregate_correctable))
            if status == Status.PASS:
                status = Status.WARN
    if not any(
        g.ecc_volatile_uncorrectable is not None or g.ecc_aggregate_uncorrectable is not None for g in gpus
    ):
        out.append(
            check(
                "gpu.ecc",
                "ECC counters not reported",
                Status.UNKNOWN,
                prov=prov,
                reason="ECC is disabled or N/A on these GPUs (consumer GPU or excerpt)",
            )
        )
    else:
        out.append(
            check(
                "gpu.ecc",
                "ECC errors" if ev else "No uncorrectable ECC errors",
                status,
                prov=prov,
                action=action,
                severity=sev,
                evidence=ev,
                references=[ECC_DOC],
                remediation="Reset the GPU (`nvidia-smi -r`) and re-run; RMA if the SRAM threshold is exceeded."
                if ev
                else None,
            )
        )

    # row remapping / retired pages
    ev, status, action, sev = [], Status.PASS, Action.NONE, None
    known_remap = [
        g
        for g in gpus
        if g.remap_pending is not None
        or g.retired_pages_pending is not None
        or g.retired_pages_dbe is not None
    ]
    for g in gpus:
        if g.remap_failure:
            ev.append((f"{_label(g)} row remapping failure occurred", True))
            status, action, sev = Status.FAIL, Action.RMA, Severity.CRITICAL
        if g.remap_pending:
            ev.append(
                (f"{_label(g)} row remap pending (uncorrectable rows: {g.remapped_rows_uncorrectable})", True)
            )
            status = Status.FAIL
            action = max(action, Action.RESET_GPU, key=lambda a: a.rank)
        if g.retired_pages_pending:
            ev.append((f"{_label(g)} page retirement pending", True))
            status = Status.FAIL
            action = max(action, Action.RESET_GPU, key=lambda a: a.rank)
        retired = (g.retired_pages_sbe or 0) + (g.retired_pages_dbe or 0)
        if retired >= 64:  # the page retirement table holds 64 pages; full means RMA per NVIDIA
            ev.append((f"{_label(g)} retired pages", retired))
            status, action, sev = Status.FAIL, Action.RMA, Severity.CRITICAL
    if not known_remap:
        out.append(
            check(
                "gpu.memory-remap",
                "Row remap / page retirement not reported",
                Status.UNKNOWN,
                prov=prov,
                reason="neither remapped rows nor retired pages are reported",
            )
        )
    else:
        out.append(
            check(
                "gpu.memory-remap",
                "Row remapping / page retirement" + (" needs action" if ev else " clean"),
                status,
                prov=prov,
                action=action,
                severity=sev,
                evidence=ev,
                references=[ECC_DOC],
                remediation="A pending remap takes effect after a GPU reset; a remap failure means RMA."
                if ev
                else None,
            )
        )

    # reset status reported by the driver
    need_reset = [g for g in gpus if g.reset_required]
    drain = [g for g in gpus if g.drain_and_reset_recommended]
    if need_reset or drain:
        out.append(
            check(
                "gpu.reset-status",
                "Driver asks for a GPU reset",
                Status.FAIL,
                prov=prov,
                action=Action.DRAIN if drain else Action.RESET_GPU,
                evidence=[(f"{_label(g)} reset required", True) for g in need_reset]
                + [(f"{_label(g)} drain and reset recommended", True) for g in drain],
            )
        )
    elif any(g.reset_required is not None for g in gpus):
        out.append(check("gpu.reset-status", "No GPU reset requested by the driver", Status.PASS, prov=prov))

    # throttling
    tt = thresholds["throttle"]
    ev, status, action = [], Status.PASS, Action.NONE
    for g in gpus:
        for reason, active in sorted(g.throttle_reasons.items()):
            if not active:
                continue
            if reason in tt["fail_reasons"]:
                ev.append((f"{_label(g)} clock event reason active: {reason}", True))
                status, action = Status.FAIL, Action.DRAIN
            elif reason in tt["warn_reasons"]:
                ev.append((f"{_label(g)} clock event reason active: {reason}", True))
                if status == Status.PASS:
                    status = Status.WARN
    if not any(g.throttle_reasons for g in gpus):
        out.append(
            check(
                "gpu.throttle",
                "Clock event reasons not reported",
                Status.UNKNOWN,
                prov=prov,
                reason="no clocks_event_reasons / clocks_throttle_reasons in the output",
            )
        )
    else:
        out.append(
            check(
                "gpu.throttle",
                "Clocks throttled" if ev else "No thermal/power throttling",
                status,
                prov=prov,
                action=action,
                evidence=ev,
                remediation="Check cooling, power delivery and the BMC's power capping." if ev else None,
            )
        )

    # temperature
    tc = thresholds["temperature"]
    ev, status, action = [], Status.PASS, Action.NONE
    temps = [g for g in gpus if g.temperature_c is not None]
    for g in temps:
        slow = g.slowdown_temperature_c if g.slowdown_temperature_c and g.slowdown_temperature_c > 0 else None
        fail_at = slow if slow is not None else tc["fallback_fail_c"]
        warn_at = slow - tc["margin_c"] if slow is not None else tc["fallback_warn_c"]
        if g.temperature_c >= fail_at:
            ev.append((f"{_label(g)} at {g.temperature_c:g} C (slowdown {fail_at:g} C)", g.temperature_c))
            status, action = Status.FAIL, Action.DRAIN
        elif g.temperature_c >= warn_at:
            ev.append((f"{_label(g)} at {g.temperature_c:g} C (warn from {warn_at:g} C)", g.temperature_c))
            if status == Status.PASS:
                status = Status.WARN
    if not temps:
        out.append(
            check(
                "gpu.temperature",
                "Temperature not reported",
                Status.UNKNOWN,
                prov=prov,
                reason="no GPU temperature in the output",
            )
        )
    else:
        hottest = max(temps, key=lambda g: g.temperature_c or 0)
        out.append(
            check(
                "gpu.temperature",
                "GPU temperature" + (" too high" if ev else " normal"),
                status,
                prov=prov,
                action=action,
                evidence=ev or [(f"hottest {_label(hottest)}", hottest.temperature_c)],
            )
        )

    # idle power
    ev, status, graded = [], Status.PASS, 0
    for g in gpus:
        ceiling = idle_power_ceiling(thresholds, g.name)
        if ceiling is None or g.power_draw_w is None or not _is_idle(g, thresholds):
            continue
        graded += 1
        if g.power_draw_w > ceiling:
            ev.append((f"{_label(g)} idle at {g.power_draw_w:g} W (ceiling {ceiling:g} W)", g.power_draw_w))
            status = Status.WARN
    if graded:
        out.append(
            check(
                "gpu.idle-power",
                "Idle power above ceiling" if ev else "Idle power within ceiling",
                status,
                prov=prov,
                evidence=ev or [("idle GPUs graded", graded)],
                remediation="An idle GPU stuck in a high power state: reset it or check for stray contexts."
                if ev
                else None,
                references=["src/podium/data/health_thresholds.yaml#idle_power_ceiling_w"],
            )
        )
    else:
        out.append(
            check(
                "gpu.idle-power",
                "Idle power not graded",
                Status.SKIPPED,
                prov=prov,
                reason="no idle GPU of a model with an idle ceiling (Hopper, B200/B300, GB200/GB300)",
            )
        )

    # PCIe
    pc = thresholds["pcie"]
    ev, status, graded = [], Status.PASS, 0
    for g in gpus:
        if g.pcie_width_current is None or g.pcie_width_max is None:
            continue
        graded += 1
        if g.pcie_width_current < g.pcie_width_max:
            ev.append(
                (f"{_label(g)} PCIe x{g.pcie_width_current} of x{g.pcie_width_max}", g.pcie_width_current)
            )
            status = Status.WARN
        busy = (g.utilization_gpu_pct or 0) >= pc["busy_utilization_pct"]
        if busy and g.pcie_gen_current is not None and g.pcie_gen_max and g.pcie_gen_current < g.pcie_gen_max:
            ev.append(
                (
                    f"{_label(g)} PCIe gen {g.pcie_gen_current} of {g.pcie_gen_max} while busy",
                    g.pcie_gen_current,
                )
            )
            status = Status.WARN
    if graded:
        out.append(
            check(
                "gpu.pcie",
                "PCIe link degraded" if ev else "PCIe link at full width",
                status,
                prov=prov,
                evidence=ev or [("GPUs graded", graded)],
                remediation="Reseat the GPU/riser or check the slot and BIOS PCIe settings." if ev else None,
            )
        )
    else:
        out.append(
            check(
                "gpu.pcie",
                "PCIe link not reported",
                Status.UNKNOWN,
                prov=prov,
                reason="no PCIe link width in the output",
            )
        )

    # MIG (informational)
    mig = {g.index: g.mig_mode for g in gpus if g.mig_mode}
    if mig:
        enabled = [i for i, m in mig.items() if m.lower() == "enabled"]
        out.append(
            check(
                "gpu.mig",
                f"MIG enabled on {len(enabled)} of {len(mig)} GPU(s)",
                Status.PASS,
                prov=prov,
                severity=Severity.INFO,
                evidence=[(f"GPU {i} MIG mode", m) for i, m in sorted(mig.items())],
                details={"mig_enabled_gpus": enabled},
            )
        )

    # Fabric (NVSwitch systems report a fabric state)
    fab = [g for g in gpus if g.fabric_state is not None]
    if fab:
        bad = [
            g
            for g in fab
            if g.fabric_state.lower() != "completed" or (g.fabric_status or "success").lower() != "success"
        ]
        out.append(
            check(
                "gpu.fabric",
                "GPU fabric registration incomplete" if bad else "GPU fabric registration completed",
                Status.FAIL if bad else Status.PASS,
                prov=prov,
                action=Action.DRAIN if bad else Action.NONE,
                evidence=[
                    (f"{_label(g)} fabric {g.fabric_state}/{g.fabric_status}", g.fabric_state)
                    for g in (bad or fab[:1])
                ],
                remediation="Check nvidia-fabricmanager (systemctl status nvidia-fabricmanager) and its log."
                if bad
                else None,
            )
        )
    return out


def check_nvlink_errors(report: NvLinkReport, prov: Provenance, thresholds: dict[str, Any]) -> CheckResult:
    """NVLink replay/recovery/CRC error counters from ``nvidia-smi nvlink -e``."""
    limits = {k: v for k, v in thresholds["nvlink_errors"].items() if k != "source"}
    ev, status = [], Status.PASS
    for link, counters in sorted(report.errors.items()):
        for name, value in sorted(counters.items()):
            warn_at, fail_at = limits.get(name, (None, None))
            if fail_at is not None and value >= fail_at:
                ev.append((f"GPU/link {link} {name} errors = {value} (fail at {fail_at})", value))
                status = Status.FAIL
            elif warn_at is not None and value >= warn_at:
                ev.append((f"GPU/link {link} {name} errors = {value} (warn at {warn_at})", value))
                if status == Status.PASS:
                    status = Status.WARN
    return check(
        "gpu.nvlink-errors",
        "NVLink error counters above thresholds" if ev else "NVLink error counters clean",
        status,
        prov=prov,
        action=Action.RESET_GPU if status == Status.FAIL else Action.NONE,
        evidence=ev or [("links with counters", len(report.errors))],
    )


def check_nvlink(report: NvLinkReport, prov: Provenance) -> list[CheckResult]:
    """Inactive links, or links slower than the GPU's fastest, fail (a GPU reset retrains them)."""
    if not report.links and report.errors:
        return []
    if not report.links:
        return [
            check(
                "gpu.nvlink",
                "No NVLinks reported",
                Status.SKIPPED,
                prov=prov,
                reason="nvidia-smi nvlink -s lists no links (PCIe-only GPUs)",
            )
        ]
    ev = []
    top = max((link.speed_gbps or 0) for link in report.links)
    for link in report.links:
        if not link.active:
            ev.append((f"GPU {link.gpu_index} link {link.link} inactive", False))
        elif link.speed_gbps is not None and link.speed_gbps < top:
            ev.append(
                (
                    f"GPU {link.gpu_index} link {link.link} at {link.speed_gbps:g} GB/s (others {top:g})",
                    link.speed_gbps,
                )
            )
    active = sum(1 for link in report.links if link.active)
    return [
        check(
            "gpu.nvlink",
            "NVLink degraded" if ev else f"{active} NVLinks active at {top:g} GB/s",
            Status.FAIL if ev else Status.PASS,
            prov=prov,
            action=Action.RESET_GPU if ev else Action.NONE,
            evidence=ev or [("active links", active)],
            remediation="Reset the GPUs; if links stay down, drain and check the NVLink bridge/baseboard."
            if ev
            else None,
        )
    ]
