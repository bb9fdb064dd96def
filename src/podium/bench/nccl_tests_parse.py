"""Parse NVIDIA nccl-tests output: the text table (any column layout) and the ``-J`` JSON file.

Text: the header line ``#  size  count  type  redop  root  time  algbw  busbw  #wrong ...`` names the
columns, so older layouts (no ``root``, ``error`` instead of ``#wrong``), ``cputime``, per-iteration
columns (``i_min`` ... ) and a trailing timestamp are all read by name. The first
time/algbw/busbw group is out-of-place, the second in-place.
JSON (nccl-tests ``-J FILE``, src/util.cu, JSON_FILE_VERSION 2): ``config`` (with ``devices``),
``results`` [{size, count, type, redop, root, out_of_place{time,alg_bw,bus_bw,nwrong}, in_place{...}}],
``out_of_bounds``, ``average_bus_bandwidth``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from podium.bench.model import BenchResult
from podium.errors import ParseError

_DEVICE_LINE = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)\s+Group\s+(?P<group>\d+)\s+Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]+)\]\s+(?P<name>.+?)\s*$"
)
_PROGRAM = re.compile(
    r"\b(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|sendrecv|gather|scatter|hypercube)_perf"
)
_TIME_NAMES = ("time", "cputime")
_WRONG_NAMES = ("#wrong", "error", "wrong")


class NcclPlace(BaseModel):
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    wrong: float | None = Field(None, description="#wrong elements; None when not checked (N/A)")


class NcclRow(BaseModel):
    size_bytes: int
    count: int
    dtype: str
    redop: str | None = None
    root: int | None = None
    out_of_place: NcclPlace | None = None
    in_place: NcclPlace | None = None


class NcclDevice(BaseModel):
    rank: int
    host: str
    device: int
    bus_id: str
    name: str


class NcclTestsRun(BaseModel):
    """One nccl-tests run, from either output form."""

    op: str | None = Field(None, description="all_reduce, all_gather, ... when the output says")
    rows: list[NcclRow]
    devices: list[NcclDevice] = Field(default_factory=list)
    avg_busbw_gbps: float | None = None
    out_of_bounds: int | None = None
    nccl_version: str | None = None
    source_format: str = "text"

    @property
    def ranks(self) -> int:
        return len(self.devices)

    @property
    def hosts(self) -> list[str]:
        return list(dict.fromkeys(d.host for d in self.devices))


def _num(tok: str) -> float | None:
    if tok in ("N/A", "-", ""):
        return None
    return float(tok)


def parse_text(text: str, source: str = "nccl-tests output") -> NcclTestsRun:
    """Parse the stdout of an nccl-tests binary (``all_reduce_perf`` ...)."""
    if not text or not text.strip():
        raise ParseError(source, "empty output")
    header: list[str] | None = None
    rows: list[NcclRow] = []
    devices: list[NcclDevice] = []
    avg = oob = None
    op = None
    version = None
    for line in text.splitlines():
        s = line.strip().lstrip(">").strip()
        if not s:
            continue
        if m := _DEVICE_LINE.match(s):
            devices.append(
                NcclDevice(
                    rank=int(m["rank"]),
                    host=m["host"],
                    device=int(m["device"]),
                    bus_id=m["bus"],
                    name=m["name"],
                )
            )
            continue
        if op is None and (m := _PROGRAM.search(s)):
            op = m.group(1)
        if s.startswith("#"):
            body = s.lstrip("#").strip()
            toks = body.split()
            if toks[:2] == ["size", "count"] or (toks and toks[0] == "size" and "algbw" in toks):
                header = toks
            elif body.startswith("Avg bus bandwidth"):
                avg = float(body.split(":", 1)[1].split()[0])
            elif body.startswith("Out of bounds values"):
                oob = int(body.split(":", 1)[1].split()[0])
            elif m := re.search(r"nccl-library=(\d+)", body):
                version = m.group(1)
            continue
        if header is None or not s[0].isdigit():
            continue
        row = _row_from(header, s.split(), source)
        if row is not None:
            rows.append(row)
    if header is None:
        raise ParseError(source, "no nccl-tests results header ('# size count type ...') found")
    if not rows:
        raise ParseError(source, "results header found but no result rows (truncated output?)")
    return NcclTestsRun(
        op=op, rows=rows, devices=devices, avg_busbw_gbps=avg, out_of_bounds=oob, nccl_version=version
    )


def _row_from(header: list[str], toks: list[str], source: str) -> NcclRow | None:
    if len(toks) < len([h for h in header if h not in ("timestamp",)]) - 1:
        return None  # a partial line (trace replay prints no out-of-place body)
    try:
        fields: dict[str, Any] = {}
        places: list[dict[str, float | None]] = []
        for name, tok in zip(header, toks, strict=False):
            if name in _TIME_NAMES:
                places.append({"time_us": _num(tok)})
            elif name == "algbw" and places:
                places[-1]["algbw_gbps"] = _num(tok)
            elif name == "busbw" and places:
                places[-1]["busbw_gbps"] = _num(tok)
            elif name in _WRONG_NAMES and places:
                places[-1]["wrong"] = _num(tok)
            elif name in ("size", "count"):
                fields[name] = int(tok)
            elif name == "type":
                fields["dtype"] = tok
            elif name == "redop":
                fields["redop"] = tok
            elif name == "root":
                fields["root"] = int(tok)
        full = [
            NcclPlace(**p)
            for p in places
            if None not in (p.get("time_us"), p.get("algbw_gbps"), p.get("busbw_gbps"))
        ]
    except (ValueError, TypeError) as e:
        raise ParseError(source, f"bad result row '{' '.join(toks)[:80]}': {e}") from None
    if "size" not in fields or not full:
        return None
    return NcclRow(
        size_bytes=fields["size"],
        count=fields.get("count", 0),
        dtype=fields.get("dtype", "?"),
        redop=fields.get("redop"),
        root=fields.get("root"),
        out_of_place=full[0],
        in_place=full[1] if len(full) > 1 else None,
    )


def parse_json(text: str, source: str = "nccl-tests JSON") -> NcclTestsRun:
    """Parse the file written by ``nccl-tests -J FILE``."""
    if not text or not text.strip():
        raise ParseError(source, "empty file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParseError(source, f"not JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ParseError(source, "no 'results' list (not an nccl-tests -J file?)")

    def place(p: Any) -> NcclPlace | None:
        if not isinstance(p, dict):
            return None
        t = p.get("time", p.get("cpu_time"))
        if t is None or p.get("alg_bw") is None or p.get("bus_bw") is None:
            return None
        wrong = p.get("nwrong")
        return NcclPlace(
            time_us=float(t),
            algbw_gbps=float(p["alg_bw"]),
            busbw_gbps=float(p["bus_bw"]),
            wrong=None if wrong in (None, "nan") else float(wrong),
        )

    rows = []
    try:
        for r in data["results"]:
            root = str(r.get("root", "")).strip()
            rows.append(
                NcclRow(
                    size_bytes=int(r["size"]),
                    count=int(r.get("count", 0)),
                    dtype=str(r.get("type", "?")),
                    redop=r.get("redop"),
                    root=int(root) if root.lstrip("-").isdigit() else None,
                    out_of_place=place(r.get("out_of_place")),
                    in_place=place(r.get("in_place")),
                )
            )
        devices = [
            NcclDevice(
                rank=int(d["rank"]),
                host=str(d.get("hostname", "")),
                device=int(d.get("device", 0)),
                bus_id=str(d.get("device_hex", "")),
                name=str(d.get("device_info", "")),
            )
            for d in (data.get("config") or {}).get("devices", [])
        ]
    except (KeyError, TypeError, ValueError) as e:
        raise ParseError(source, f"malformed result entry: {e}") from None
    if not rows:
        raise ParseError(source, "'results' is empty")
    op = None
    for arg in data.get("args", []):
        if m := _PROGRAM.search(str(arg)):
            op = m.group(1)
    avg = (data.get("average_bus_bandwidth") or {}).get("bandwidth")
    oob = (data.get("out_of_bounds") or {}).get("count")
    return NcclTestsRun(
        op=op,
        rows=rows,
        devices=devices,
        avg_busbw_gbps=None if avg in (None, "nan") else float(avg),
        out_of_bounds=oob,
        nccl_version=str(data["nccl_version"]) if "nccl_version" in data else None,
        source_format="json",
    )


def parse(text: str, source: str = "nccl-tests output") -> NcclTestsRun:
    """Text or JSON, whichever ``text`` is."""
    return parse_json(text, source) if text.lstrip().startswith("{") else parse_text(text, source)


def to_result(run: NcclTestsRun, sku: str | None = None) -> BenchResult:
    """busbw at the largest message (out-of-place), with every size in the breakdown."""
    largest = max(run.rows, key=lambda r: r.size_bytes)
    place = largest.out_of_place or largest.in_place
    assert place is not None
    names = list(dict.fromkeys(d.name for d in run.devices))
    params: dict[str, Any] = {
        "op": run.op,
        "size_bytes": largest.size_bytes,
        "algbw_gbps": place.algbw_gbps,
        "avg_busbw_gbps": run.avg_busbw_gbps,
        "out_of_bounds": run.out_of_bounds,
        "ranks": run.ranks or None,
        "nodes": len(run.hosts) or None,
        "format": run.source_format,
    }
    if run.ranks:
        params["gpus"] = run.ranks
    return BenchResult(
        benchmark="nccl_tests",
        metric="busbw_gbps",
        value=place.busbw_gbps,
        unit="GB/s",
        host=",".join(run.hosts) or None,
        device=names[0] if len(names) == 1 else (", ".join(names) or None),
        sku=sku,
        params=params,
        breakdown=[
            {
                "size_bytes": r.size_bytes,
                "oop_busbw_gbps": r.out_of_place.busbw_gbps if r.out_of_place else None,
                "ip_busbw_gbps": r.in_place.busbw_gbps if r.in_place else None,
                "oop_time_us": r.out_of_place.time_us if r.out_of_place else None,
            }
            for r in run.rows
        ],
    )
