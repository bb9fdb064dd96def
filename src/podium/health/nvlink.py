"""Parser for ``nvidia-smi nvlink -s`` / ``--status``."""

from __future__ import annotations

import re

from podium.errors import ParseError
from podium.health.models import NvLinkReport, NvLinkState
from podium.health.values import ensure_text

SOURCE = "nvidia-smi nvlink -s"
_GPU = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?\s*$")
_LINK = re.compile(r"^\s+Link (\d+): (.+?)\s*$")
_ERR = re.compile(r"^\s+Link (\d+): ([A-Za-z ]+?) Errors?\s*:\s*(\d+)\s*$")


def parse_nvlink_status(text: str, source: str = SOURCE) -> NvLinkReport:
    """Parse ``nvidia-smi nvlink -s`` ('Link 3: 25 GB/s' / 'Link 3: <inactive>') and ``-e``
    ('Link 3: CRC Errors: 0') lines; both may be in one text."""
    ensure_text(text, source, "nvlink status output")
    report = NvLinkReport()
    current: int | None = None
    for raw in text.splitlines():
        if not raw.strip():
            continue
        m = _GPU.match(raw)
        if m:
            current = int(m.group(1))
            report.gpus[current] = m.group(2)
            continue
        m = _ERR.match(raw)
        if m and current is not None:  # `nvidia-smi nvlink -e` lines
            key = (current, int(m.group(1)))
            report.errors.setdefault(f"{key[0]}/{key[1]}", {})[m.group(2).strip().lower()] = int(m.group(3))
            continue
        m = _LINK.match(raw)
        if m and current is not None:
            value = m.group(2)
            speed = re.match(r"([\d.]+)\s*GB/s", value)
            report.links.append(
                NvLinkState(
                    gpu_index=current,
                    link=int(m.group(1)),
                    active=speed is not None,
                    speed_gbps=float(speed.group(1)) if speed else None,
                )
            )
            continue
        if raw.strip().startswith(("NVML", "Failed", "No devices")):
            raise ParseError(source, raw.strip()[:200])
    if not report.gpus:
        raise ParseError(source, "no 'GPU N: name' lines")
    return report
