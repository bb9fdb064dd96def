"""InfiniBand / RoCE: wrap perftest's ``ib_write_bw`` and ``ib_write_lat`` and parse their tables.

Bandwidth tables come as ``BW peak[Gb/sec]`` (with ``--report_gbits``) or ``BW peak[MB/sec]``;
perftest's MB is 2^20 bytes, so MB/s is converted with 2^20·8/1e9 Gb per MB. Lines between rows
(e.g. "Conflicting CPU frequency values detected") are ignored.
Running: with a ``peer`` the client connects to a server already started there; without one, a
loopback pair (server in the background, client to 127.0.0.1) runs on this node, which checks the
local HCA only.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from podium.bench.model import BenchResult, skipped
from podium.errors import ParseError
from podium.runner import CommandOutput, CommandRunner

MB_TO_GBIT = (1 << 20) * 8 / 1e9


class IbInfo(BaseModel):
    test: str | None = Field(None, description="e.g. 'RDMA_Write BW Test'")
    device: str | None = None
    link_type: str | None = None
    qps: int | None = None
    bidirectional: bool = False


class IbBwRow(BaseModel):
    size_bytes: int
    iterations: int
    bw_peak_gbps: float
    bw_avg_gbps: float
    msg_rate_mpps: float | None = None


class IbLatRow(BaseModel):
    size_bytes: int
    iterations: int
    t_min_us: float | None = None
    t_max_us: float | None = None
    t_typical_us: float | None = None
    t_avg_us: float | None = None
    t_stdev_us: float | None = None
    p99_us: float | None = None
    p999_us: float | None = None


class IbBwRun(BaseModel):
    info: IbInfo
    unit_reported: str
    rows: list[IbBwRow]


class IbLatRun(BaseModel):
    info: IbInfo
    rows: list[IbLatRow]


def _info(text: str) -> IbInfo:
    info = IbInfo()
    for line in text.splitlines():
        s = line.strip()
        if s.endswith("Test") and ("BW" in s or "Latency" in s) and ":" not in s:
            info.test = s
            info.bidirectional = "Bidirectional" in s
        for key, attr in (("Device", "device"), ("Link type", "link_type"), ("Number of qps", "qps")):
            if m := re.search(rf"{key}\s*:\s*(\S+)", s):
                val = m.group(1)
                setattr(info, attr, int(val) if attr == "qps" and val.isdigit() else val)
    return info


def _table(text: str, source: str) -> tuple[list[str], list[list[str]]]:
    header: list[str] | None = None
    rows: list[list[str]] = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#bytes"):
            header = re.findall(
                r"#?[\w.%]+(?:\s+percentile)?(?:\[[^\]]*\])?", s.replace("#iterations", "iterations")
            )
            continue
        if header and s[:1].isdigit():
            toks = s.split()
            if len(toks) >= 4 and toks[0].isdigit() and toks[1].isdigit():
                rows.append(toks)
    if header is None:
        raise ParseError(source, "no perftest results header ('#bytes #iterations ...') found")
    if not rows:
        raise ParseError(source, "perftest header found but no result rows (did the test connect?)")
    return header, rows


def parse_bw(text: str, source: str = "ib_write_bw output") -> IbBwRun:
    """Parse ``ib_*_bw`` output into rows in Gb/s."""
    if not text or not text.strip():
        raise ParseError(source, "empty output")
    header, raw = _table(text, source)
    unit = (
        "Gb/sec"
        if any("Gb/sec" in h for h in header)
        else "MB/sec"
        if any("MB/sec" in h for h in header)
        else None
    )
    if unit is None:
        raise ParseError(source, f"unknown bandwidth unit in header {header}")
    factor = 1.0 if unit == "Gb/sec" else MB_TO_GBIT
    rows = []
    try:
        for t in raw:
            rows.append(
                IbBwRow(
                    size_bytes=int(t[0]),
                    iterations=int(t[1]),
                    bw_peak_gbps=round(float(t[2]) * factor, 4),
                    bw_avg_gbps=round(float(t[3]) * factor, 4),
                    msg_rate_mpps=float(t[4]) if len(t) > 4 else None,
                )
            )
    except ValueError as e:
        raise ParseError(source, f"bad result row: {e}") from None
    return IbBwRun(info=_info(text), unit_reported=unit, rows=rows)


_LAT_FIELDS = {
    "t_min": "t_min_us",
    "t_max": "t_max_us",
    "t_typical": "t_typical_us",
    "t_avg": "t_avg_us",
    "t_stdev": "t_stdev_us",
    "99%": "p99_us",
    "99.9%": "p999_us",
}


def parse_lat(text: str, source: str = "ib_write_lat output") -> IbLatRun:
    """Parse ``ib_*_lat`` output (columns read by name: t_min ... 99.9% percentile)."""
    if not text or not text.strip():
        raise ParseError(source, "empty output")
    header, raw = _table(text, source)
    names = [h.split("[")[0].split()[0] for h in header]
    rows = []
    try:
        for t in raw:
            row: dict[str, float | int] = {"size_bytes": int(t[0]), "iterations": int(t[1])}
            for name, tok in zip(names[2:], t[2:], strict=False):
                if name in _LAT_FIELDS:
                    row[_LAT_FIELDS[name]] = float(tok)
            rows.append(IbLatRow(**row))
    except ValueError as e:
        raise ParseError(source, f"bad result row: {e}") from None
    return IbLatRun(info=_info(text), rows=rows)


def bw_result(run: IbBwRun, link_gbps: int | None = None) -> BenchResult:
    """Average bandwidth at the largest message size; graded per NIC when the link rate is known.

    A bidirectional run (``-b``) reports ``bidir_bw_gbps``, which no reference covers.
    """
    row = max(run.rows, key=lambda r: r.size_bytes)
    return BenchResult(
        benchmark="ib_write_bw",
        # both directions summed: not comparable with the unidirectional per-NIC reference
        metric="bidir_bw_gbps" if run.info.bidirectional else "bw_gbps",
        value=row.bw_avg_gbps,
        unit="Gb/s",
        device=run.info.device,
        sku=f"NIC-{link_gbps}G" if link_gbps else None,
        params={
            "size_bytes": row.size_bytes,
            "bw_peak_gbps": row.bw_peak_gbps,
            "qps": run.info.qps,
            "bidirectional": run.info.bidirectional,
            "link_type": run.info.link_type,
            "unit_reported": run.unit_reported,
        },
        breakdown=[r.model_dump() for r in run.rows],
    )


def lat_result(run: IbLatRun) -> BenchResult:
    """Typical latency at the smallest message size (no per-SKU reference: graded unknown)."""
    row = min(run.rows, key=lambda r: r.size_bytes)
    return BenchResult(
        benchmark="ib_write_lat",
        metric="latency_us",
        value=row.t_typical_us if row.t_typical_us is not None else row.t_avg_us,
        unit="us",
        device=run.info.device,
        params={"size_bytes": row.size_bytes, "p99_us": row.p99_us, "p999_us": row.p999_us},
        breakdown=[r.model_dump() for r in run.rows],
    )


def rdma_devices(runner: CommandRunner) -> tuple[list[str], CommandOutput]:
    """RDMA device names from ``ibv_devices`` (empty when none)."""
    out = runner.run(["ibv_devices"], timeout=10)
    names = []
    for line in out.stdout.splitlines():
        toks = line.split()
        if toks and not line.strip().startswith(("device", "------")):
            names.append(toks[0])
    return names, out


def run(
    runner: CommandRunner,
    test: str = "ib_write_bw",
    device: str | None = None,
    peer: str | None = None,
    link_gbps: int | None = None,
    extra: list[str] | None = None,
    timeout: float = 120,
) -> list[BenchResult]:
    """Run one perftest binary; ``skipped`` with the reason when perftest or an RDMA device is missing."""
    metric = "bw_gbps" if test.endswith("_bw") else "latency_us"
    names, listing = rdma_devices(runner)
    if not listing.ran:
        return [skipped(test, metric, f"no RDMA tooling: {listing.why_not()}")]
    if not names:
        return [skipped(test, metric, "no RDMA device (ibv_devices lists none)")]
    dev = device or names[0]
    args = (
        [test, "-d", dev, "-F", "-a"]
        + (["--report_gbits"] if test.endswith("_bw") else [])
        + list(extra or [])
    )
    if peer:
        out = runner.run([*args, peer], timeout=timeout, name=f"{test}-{dev}")
    else:
        line = " ".join(args)
        out = runner.run(
            ["sh", "-c", f"{line} & sleep 1; {line} 127.0.0.1; wait"],
            timeout=timeout,
            name=f"{test}-{dev}-loopback",
        )
    if not out.ok:
        return [skipped(test, metric, f"{test} did not complete: {out.why_not()}", device=dev)]
    parsed = parse_bw(out.stdout) if test.endswith("_bw") else None
    result = bw_result(parsed, link_gbps) if parsed else lat_result(parse_lat(out.stdout))
    result.raw_output = out.raw_path
    result.provenance = out.provenance()
    result.params["mode"] = "peer" if peer else "loopback"
    return [result]
