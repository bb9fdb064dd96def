"""Host parsers: /proc/mounts, ``df -P -k``, ``ps -eo pid=,stat=,comm=`` and the CPU governor."""

from __future__ import annotations

from collections import Counter

from podium.errors import ParseError
from podium.health.models import DiskUsage, MountEntry, ProcessState
from podium.health.values import ensure_text


def parse_mounts(text: str, source: str = "/proc/mounts") -> list[MountEntry]:
    """Parse /proc/mounts (fstab-like lines, octal escapes for spaces)."""
    ensure_text(text, source, "mount table")
    out = []
    for raw in text.splitlines():
        parts = raw.split()
        if len(parts) < 4:
            continue
        dev, mnt, fstype, opts = (p.replace("\\040", " ") for p in parts[:4])
        out.append(MountEntry(device=dev, mountpoint=mnt, fstype=fstype, options=opts.split(",")))
    if not out:
        raise ParseError(source, "no 'device mountpoint fstype options' lines")
    return out


def parse_df(text: str, source: str = "df -P -k") -> list[DiskUsage]:
    """Parse POSIX ``df -P -k`` output (1024-byte blocks)."""
    ensure_text(text, source, "df output")
    lines = text.splitlines()
    if not lines or not lines[0].startswith("Filesystem"):
        raise ParseError(source, "missing the 'Filesystem ...' header line")
    out = []
    for raw in lines[1:]:
        parts = raw.split()
        if len(parts) < 6 or not all(p.isdigit() for p in parts[1:4]):
            continue
        out.append(
            DiskUsage(
                filesystem=parts[0],
                size_kb=int(parts[1]),
                used_kb=int(parts[2]),
                avail_kb=int(parts[3]),
                mountpoint=" ".join(parts[5:]),
            )
        )
    return out


def parse_ps_states(text: str, source: str = "ps -eo pid=,stat=,comm=") -> list[ProcessState]:
    """Parse ``ps -eo pid=,stat=,comm=`` lines."""
    ensure_text(text, source, "ps output")
    out = []
    for raw in text.splitlines():
        parts = raw.split(None, 2)
        if len(parts) >= 2 and parts[0].isdigit():
            out.append(
                ProcessState(pid=int(parts[0]), state=parts[1], command=parts[2] if len(parts) > 2 else "")
            )
    if not out:
        raise ParseError(source, "no 'pid stat comm' lines")
    return out


def governors(values: list[str]) -> Counter[str]:
    """Count scaling_governor values across CPUs."""
    return Counter(v.strip() for v in values if v and v.strip())
