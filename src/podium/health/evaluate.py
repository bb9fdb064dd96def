"""Passive evaluation: parse each available input and grade it. Parse errors become ``unknown``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from podium.errors import ParseError
from podium.health.checks import gpu as gpu_checks
from podium.health.checks import host as host_checks
from podium.health.checks import ib as ib_checks
from podium.health.checks import kernel as kernel_checks
from podium.health.checks import services as service_checks
from podium.health.checks.base import check, provenance
from podium.health.dcgm import parse_dcgm_diag
from podium.health.fabric_manager import parse_fabric_manager_log
from podium.health.host import parse_df, parse_mounts, parse_ps_states
from podium.health.ib_sysfs import parse_ib_sysfs
from podium.health.ibstat import parse_ib_tool_output
from podium.health.inputs import NodeInputs, RawText
from podium.health.kernel_log import parse_kernel_log
from podium.health.models import GpuInventory
from podium.health.nvidia_smi_text import parse_nvidia_smi_text
from podium.health.nvidia_smi_xml import parse_nvidia_smi_xml
from podium.health.nvlink import parse_nvlink_status
from podium.health.xid import load_xid_policy
from podium.models.common import Status
from podium.models.results import CheckResult

GPU_CHECK_IDS = (
    "gpu.count",
    "gpu.ecc",
    "gpu.memory-remap",
    "gpu.throttle",
    "gpu.temperature",
    "gpu.idle-power",
    "gpu.pcie",
    "gpu.nvlink",
)


def _prov(inputs: NodeInputs, raw: RawText):
    return provenance(raw.source, inputs.host, raw.collected_at, raw.raw_output)


def _parse(
    out: list[CheckResult], check_id: str, inputs: NodeInputs, raw: RawText, parser: Callable[..., Any]
):
    """Run a parser; a ParseError becomes an ``unknown`` result for ``check_id``."""
    try:
        return parser(raw.text, raw.source)
    except ParseError as e:
        out.append(
            check(
                check_id,
                "Output could not be parsed",
                Status.UNKNOWN,
                prov=_prov(inputs, raw),
                reason=f"ParseError: {e.problem}",
            )
        )
        return None


def within_lookback(lines: list, hours: float, now: datetime | None = None) -> list:
    """Live runs grade the look-back window only; lines without a wall-clock time are kept."""
    cutoff = (now or datetime.now(timezone.utc)) - timedelta(hours=hours)
    return [ln for ln in lines if ln.timestamp is None or ln.timestamp >= cutoff]


def evaluate_passive(
    inputs: NodeInputs,
    thresholds: dict[str, Any],
    expected_gpus: int | None = None,
    expected_ib_rate_gbps: float | None = None,
) -> list[CheckResult]:
    """All passive checks for one node."""
    out: list[CheckResult] = []
    host = inputs.host

    # ---- GPU: NVML, else nvidia-smi XML, else text
    inventory: GpuInventory | None = None
    inventory_prov = None
    if inputs.nvml is not None:
        inventory, inventory_prov = inputs.nvml, provenance("NVML (nvidia-ml-py)", host)
    elif inputs.nvidia_smi_xml is not None:
        inventory = _parse(out, "gpu.inventory", inputs, inputs.nvidia_smi_xml, parse_nvidia_smi_xml)
        inventory_prov = _prov(inputs, inputs.nvidia_smi_xml)
    elif inputs.nvidia_smi_text is not None:
        inventory = _parse(out, "gpu.inventory", inputs, inputs.nvidia_smi_text, parse_nvidia_smi_text)
        inventory_prov = _prov(inputs, inputs.nvidia_smi_text)
    if inventory is not None:
        out += gpu_checks.check_gpus(inventory, inventory_prov, thresholds, expected_gpus)
    elif inputs.no_gpu_reason and not any(c.id == "gpu.inventory" for c in out):
        if expected_gpus:
            out.append(
                check(
                    "gpu.count",
                    f"No GPU found, {expected_gpus} expected",
                    Status.FAIL,
                    prov=provenance("nvidia-smi", host),
                    reason=inputs.no_gpu_reason,
                    details={"action": "drain", "found": 0, "expected": expected_gpus},
                )
            )
        for cid in GPU_CHECK_IDS:
            if cid == "gpu.count" and expected_gpus:
                continue
            out.append(
                check(
                    cid,
                    "GPU check skipped",
                    Status.SKIPPED,
                    prov=provenance("nvidia-smi", host),
                    reason=inputs.no_gpu_reason,
                    evidence=[("GPU probe", inputs.missing.get("gpu", inputs.no_gpu_reason))],
                )
            )
    if inputs.nvlink is not None:
        report = _parse(out, "gpu.nvlink", inputs, inputs.nvlink, parse_nvlink_status)
        if report is not None:
            out += gpu_checks.check_nvlink(report, _prov(inputs, inputs.nvlink))
    if inputs.nvlink_errors is not None:
        report = _parse(out, "gpu.nvlink-errors", inputs, inputs.nvlink_errors, parse_nvlink_status)
        if report is not None:
            out.append(
                gpu_checks.check_nvlink_errors(report, _prov(inputs, inputs.nvlink_errors), thresholds)
            )

    # ---- kernel log: Xid
    if inputs.kernel_log is not None:
        lines = _parse(out, "kernel.xid", inputs, inputs.kernel_log, parse_kernel_log)
        if lines is not None and not inputs.replay:
            lines = within_lookback(lines, thresholds.get("kernel_log_lookback_hours", 24))
        if lines is not None:
            out += kernel_checks.check_xids(lines, _prov(inputs, inputs.kernel_log), load_xid_policy())
    elif "kernel_log" in inputs.missing:
        out.append(
            check(
                "kernel.xid",
                "Kernel log not readable",
                Status.UNKNOWN,
                prov=provenance("journalctl -k / dmesg", host),
                reason=inputs.missing["kernel_log"],
            )
        )

    # ---- InfiniBand / RoCE: sysfs preferred (it has counters), ibstat otherwise
    ports = None
    if inputs.ib_sysfs:
        raw = RawText(text="", source=inputs.ib_sysfs_source)
        try:
            ports = parse_ib_sysfs(inputs.ib_sysfs, inputs.ib_sysfs_source)
            prov = _prov(inputs, raw)
        except ParseError as e:
            out.append(
                check(
                    "ib.port-state",
                    "IB sysfs could not be parsed",
                    Status.UNKNOWN,
                    prov=_prov(inputs, raw),
                    reason=f"ParseError: {e.problem}",
                )
            )
    if ports is None and inputs.ibstat is not None:
        ports = _parse(out, "ib.port-state", inputs, inputs.ibstat, parse_ib_tool_output)
        prov = _prov(inputs, inputs.ibstat)
    if ports:
        out += ib_checks.check_ib_ports(ports, prov, thresholds, expected_ib_rate_gbps)
    elif ports is None and not inputs.replay and not any(c.id == "ib.port-state" for c in out):
        out.append(
            check(
                "ib.port-state",
                "No InfiniBand/RoCE device",
                Status.SKIPPED,
                prov=provenance(inputs.ib_sysfs_source, host),
                reason=inputs.missing.get("ib", "no /sys/class/infiniband devices and no ibstat output"),
            )
        )
    if inputs.syslog is not None:
        lines = _parse(out, "ib.link-flaps", inputs, inputs.syslog, parse_kernel_log)
        if lines is not None:
            out.append(ib_checks.check_link_flaps(lines, _prov(inputs, inputs.syslog), thresholds))

    # ---- services
    if inputs.fabric_manager is not None:
        log = _parse(out, "fabricmanager.log", inputs, inputs.fabric_manager, parse_fabric_manager_log)
        if log is not None:
            out.append(service_checks.check_fabric_manager(log, _prov(inputs, inputs.fabric_manager)))
    if inputs.dcgm_diag is not None:
        diag = _parse(out, "dcgm.diag", inputs, inputs.dcgm_diag, parse_dcgm_diag)
        if diag is not None:
            out.append(service_checks.check_dcgm(diag, _prov(inputs, inputs.dcgm_diag)))

    # ---- host
    if inputs.mounts is not None:
        mounts = _parse(out, "host.mounts", inputs, inputs.mounts, parse_mounts)
        if mounts is not None:
            out.append(host_checks.check_mounts(mounts, _prov(inputs, inputs.mounts), inputs.required_mounts))
    if inputs.df is not None:
        usage = _parse(out, "host.disk", inputs, inputs.df, parse_df)
        if usage is not None:
            out.append(host_checks.check_disk(usage, _prov(inputs, inputs.df), thresholds))
    if inputs.ps is not None:
        procs = _parse(out, "host.d-state", inputs, inputs.ps, parse_ps_states)
        if procs is not None:
            out.append(host_checks.check_d_state(procs, _prov(inputs, inputs.ps), thresholds))
    if not inputs.replay or inputs.governors is not None:
        out.append(
            host_checks.check_governor(inputs.governors, provenance(inputs.governor_source, host), thresholds)
        )
    return out
