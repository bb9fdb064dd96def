"""Typed models for health: what the parsers return and what ``podium health --json`` prints."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from podium.models.common import utcnow
from podium.models.results import CheckResult


class Verdict(str, Enum):
    """A node's overall grade. ``unknown`` never counts as a pass."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"


class Action(str, Enum):
    """What an operator (or the scheduler hook) should do with the node, mildest first."""

    NONE = "none"
    RESET_GPU = "reset-gpu"
    REBOOT = "reboot"
    DRAIN = "drain"
    RMA = "rma"

    @property
    def rank(self) -> int:
        return list(Action).index(self)


# ---------------------------------------------------------------------------------------------- GPU
class GpuInfo(BaseModel):
    """One GPU as seen by NVML or nvidia-smi. ``None`` means the tool reported N/A or nothing."""

    model_config = ConfigDict(extra="forbid")

    index: int
    bus_id: str | None = None
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    architecture: str | None = None
    persistence_mode: bool | None = None
    mig_mode: str | None = Field(None, description="Current MIG mode: Enabled | Disabled")
    ecc_mode: str | None = None
    ecc_volatile_uncorrectable: int | None = None
    ecc_volatile_correctable: int | None = None
    ecc_aggregate_uncorrectable: int | None = None
    ecc_aggregate_correctable: int | None = None
    sram_threshold_exceeded: bool | None = None
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    throttle_reasons: dict[str, bool] = Field(
        default_factory=dict, description="Clock event (throttle) reason -> active"
    )
    temperature_c: float | None = None
    memory_temperature_c: float | None = None
    slowdown_temperature_c: float | None = None
    shutdown_temperature_c: float | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    utilization_gpu_pct: float | None = None
    sm_clock_mhz: float | None = None
    max_sm_clock_mhz: float | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    fabric_state: str | None = None
    fabric_status: str | None = None
    reset_required: bool | None = None
    drain_and_reset_recommended: bool | None = None
    process_count: int | None = None


class GpuInventory(BaseModel):
    """All GPUs of one node plus the driver identity, from one source."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="nvml | nvidia-smi-xml | nvidia-smi-text")
    driver_version: str | None = None
    cuda_version: str | None = None
    attached_gpus: int | None = None
    gpus: list[GpuInfo] = Field(default_factory=list)


class NvLinkState(BaseModel):
    """One NVLink of one GPU from ``nvidia-smi nvlink -s``."""

    gpu_index: int
    link: int
    active: bool
    speed_gbps: float | None = Field(None, description="GB/s as printed; None when inactive")


class NvLinkReport(BaseModel):
    gpus: dict[int, str] = Field(default_factory=dict, description="GPU index -> name")
    links: list[NvLinkState] = Field(default_factory=list)
    errors: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="'gpu/link' -> {'replay': n, 'recovery': n, 'crc': n} from nvlink -e",
    )


# ---------------------------------------------------------------------------------------- InfiniBand
class IbPort(BaseModel):
    """One port of one HCA, from ibstat, ibstatus or sysfs."""

    model_config = ConfigDict(extra="forbid")

    device: str
    port: int
    state: str | None = Field(None, description="Active | Down | Init | Armed (normalised)")
    physical_state: str | None = Field(None, description="LinkUp | Disabled | Polling ... (normalised)")
    rate_gbps: float | None = None
    link_layer: str | None = None
    ca_type: str | None = None
    firmware: str | None = None
    counters: dict[str, int] = Field(default_factory=dict, description="counters/* (and hw_counters/*)")
    source: str = Field(description="ibstat | ibstatus | sysfs")


# ------------------------------------------------------------------------------------------ kernel log
class KernelLogLine(BaseModel):
    """One kernel log record, whatever the time format it was printed in."""

    model_config = ConfigDict(extra="forbid")

    line_no: int
    timestamp: datetime | None = Field(None, description="Wall-clock time when the format has one")
    uptime_s: float | None = Field(None, description="Seconds since boot for raw [uptime] formats")
    facility: str | None = None
    level: str | None = None
    message: str
    time_format: str = Field(description="iso | ctime | uptime | kmsg | syslog | journal | none")


class XidEvent(BaseModel):
    """One de-duplicated NVIDIA Xid event."""

    model_config = ConfigDict(extra="forbid")

    xid: int
    pci: str | None = None
    message: str
    first_seen: datetime | None = None
    first_line: int
    count: int = 1
    recovery_action: str | None = Field(None, description="For Xid 154: the action named in the message")


# ---------------------------------------------------------------------------------------- fabric mgr
class FabricManagerEntry(BaseModel):
    timestamp: datetime | None = None
    level: str
    message: str
    line_no: int


class FabricManagerLog(BaseModel):
    entries: list[FabricManagerEntry] = Field(default_factory=list)

    def at_level(self, *levels: str) -> list[FabricManagerEntry]:
        wanted = {lv.upper() for lv in levels}
        return [e for e in self.entries if e.level.upper() in wanted]


# --------------------------------------------------------------------------------------------- DCGM
class DcgmTestResult(BaseModel):
    """One (test, entity) result from ``dcgmi diag -j``."""

    category: str
    test: str
    entity: str = Field(description="'gpu 0', 'gpus 0,1' or 'all'")
    status: str = Field(description="pass | fail | warn | skip (normalised)")
    warnings: list[str] = Field(default_factory=list)


class DcgmDiag(BaseModel):
    """A parsed ``dcgmi diag -j`` document, 3.x or 4.x shape."""

    schema_shape: str = Field(description="'3.x' (DCGM GPU Diagnostic) or '4.x' (DCGM Diagnostic)")
    version: str | None = None
    driver_version: str | None = None
    runtime_error: str | None = None
    results: list[DcgmTestResult] = Field(default_factory=list)


# --------------------------------------------------------------------------------------------- host
class MountEntry(BaseModel):
    device: str
    mountpoint: str
    fstype: str
    options: list[str] = Field(default_factory=list)


class DiskUsage(BaseModel):
    filesystem: str
    mountpoint: str
    size_kb: int
    used_kb: int
    avail_kb: int

    @property
    def used_pct(self) -> float:
        total = self.used_kb + self.avail_kb
        return 100.0 * self.used_kb / total if total else 0.0


class ProcessState(BaseModel):
    pid: int
    state: str
    command: str


# --------------------------------------------------------------------------------------------- report
class NodeHealth(BaseModel):
    """One node's verdict, action and the checks behind them."""

    model_config = ConfigDict(extra="forbid")

    host: str
    verdict: Verdict
    action: Action
    mode: str = Field("quick", description="quick | full | burnin | replay")
    collected_at: datetime = Field(default_factory=utcnow)
    duration_s: float | None = None
    checks: list[CheckResult] = Field(default_factory=list)


class HealthReport(BaseModel):
    """What ``podium health --json`` prints: one entry per node."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    tool_version: str
    generated_at: datetime = Field(default_factory=utcnow)
    nodes: list[NodeHealth] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="Caveats, e.g. nodes that did not answer")

    def worst(self) -> Verdict:
        order = [Verdict.PASS, Verdict.UNKNOWN, Verdict.WARN, Verdict.FAIL]
        return max((n.verdict for n in self.nodes), key=order.index, default=Verdict.UNKNOWN)
