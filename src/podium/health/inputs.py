"""The raw inputs of one node's health evaluation, however they were gathered (live or replay)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from podium.health.models import GpuInventory


@dataclass
class RawText:
    """Captured output of one command or file, with where it came from."""

    text: str
    source: str  # command line or file path
    collected_at: datetime | None = None
    raw_output: str | None = None  # path kept in the run directory, if any


@dataclass
class NodeInputs:
    """Everything the passive checks look at. ``None`` means not available; ``missing`` says why."""

    host: str
    nvml: GpuInventory | None = None
    nvidia_smi_xml: RawText | None = None
    nvidia_smi_text: RawText | None = None
    nvlink: RawText | None = None
    nvlink_errors: RawText | None = None
    ibstat: RawText | None = None
    ib_sysfs: dict[str, str] | None = None
    ib_sysfs_source: str = "/sys/class/infiniband"
    kernel_log: RawText | None = None
    syslog: RawText | None = None
    fabric_manager: RawText | None = None
    dcgm_diag: RawText | None = None
    mounts: RawText | None = None
    df: RawText | None = None
    ps: RawText | None = None
    governors: list[str] | None = None
    governor_source: str = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
    required_mounts: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # kind -> reason it is absent
    no_gpu_reason: str | None = None  # set when the node has no NVIDIA GPU at all
    replay: bool = False
