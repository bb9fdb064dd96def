"""What this process can benchmark on: torch (optional), GPUs, the CPU. No benchmark logic here."""

from __future__ import annotations

import os
import platform
import socket
from dataclasses import dataclass
from typing import Any

NO_TORCH = "torch is not installed (pip install 'podium[bench]', torch==2.13.0)"
NO_GPU = "no NVIDIA GPU"


class BenchUnavailable(Exception):
    """A benchmark cannot run here; the message is the ``skipped`` reason."""


def import_torch() -> Any:
    """torch, imported lazily, or :class:`BenchUnavailable` with the reason."""
    try:
        import torch
    except ImportError:
        raise BenchUnavailable(NO_TORCH) from None
    return torch


def has_gpu() -> bool:
    try:
        torch = import_torch()
    except BenchUnavailable:
        return False
    return bool(torch.cuda.is_available() and torch.cuda.device_count() > 0)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return "cpu: " + line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu: " + (platform.processor() or platform.machine())


@dataclass
class Device:
    """One device a benchmark runs on: ``cuda:N`` or ``cpu``."""

    kind: str
    index: int
    name: str

    @property
    def torch_device(self) -> str:
        return "cpu" if self.kind == "cpu" else f"cuda:{self.index}"


def local_devices() -> list[Device]:
    """GPUs visible to this process, else the CPU."""
    if has_gpu():
        torch = import_torch()
        return [Device("cuda", i, torch.cuda.get_device_name(i)) for i in range(torch.cuda.device_count())]
    return [Device("cpu", 0, cpu_name())]


def hostname() -> str:
    # Under Slurm the node name identifies the node even when hosts share a real host name.
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()
