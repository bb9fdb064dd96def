"""Storage: run ``fio`` with JSON output on a path (shared FS, local NVMe) and parse it.

Jobs: sequential read and write (1 MiB blocks), random 4 KiB read and write IOPS, and many small
files (16 KiB each, written then read). fio's ``bw_bytes`` is bytes/s; MB/s here is 1e6 bytes/s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from podium.bench.model import BenchResult, skipped
from podium.errors import ParseError
from podium.runner import CommandRunner

# (job name, fio options, direction, metric)
JOBS: list[tuple[str, dict[str, str], str, str]] = [
    ("seq_read", {"rw": "read", "bs": "1M"}, "read", "seq_read_mbps"),
    ("seq_write", {"rw": "write", "bs": "1M"}, "write", "seq_write_mbps"),
    ("rand_read_4k", {"rw": "randread", "bs": "4k", "iodepth": "16"}, "read", "rand_read_iops"),
    ("rand_write_4k", {"rw": "randwrite", "bs": "4k", "iodepth": "16"}, "write", "rand_write_iops"),
    (
        "small_files",
        {"rw": "write", "bs": "16k", "filesize": "16k", "nrfiles": "FILES", "openfiles": "64"},
        "write",
        "small_file_iops",
    ),
]
PROFILES = {"smoke": ("8M", 1, 64), "quick": ("256M", 5, 1000), "full": ("4G", 30, 10000)}


class FioJobResult(BaseModel):
    name: str
    read_bw_bytes: float = 0.0
    read_iops: float = 0.0
    read_lat_mean_ns: float | None = None
    write_bw_bytes: float = 0.0
    write_iops: float = 0.0
    write_lat_mean_ns: float | None = None
    runtime_ms: float | None = None
    error: int = 0


class FioRun(BaseModel):
    fio_version: str | None = None
    jobs: list[FioJobResult] = Field(default_factory=list)


def parse_fio_json(text: str, source: str = "fio JSON") -> FioRun:
    """Parse ``fio --output-format=json``. Text before the JSON object (fio warnings) is ignored."""
    if not text or not text.strip():
        raise ParseError(source, "empty output")
    start = text.find("{")
    if start < 0:
        raise ParseError(source, "no JSON object in fio output")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        raise ParseError(source, f"not valid fio JSON: {e.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise ParseError(source, "no 'jobs' list (not fio JSON output?)")

    def side(job: dict, key: str) -> dict[str, Any]:
        d = job.get(key) or {}
        bw = d.get("bw_bytes")
        if bw is None and d.get("bw") is not None:
            bw = d["bw"] * 1024  # older fio: KiB/s only
        lat = (d.get("lat_ns") or {}).get("mean")
        return {"bw": float(bw or 0.0), "iops": float(d.get("iops") or 0.0), "lat": lat}

    jobs = []
    try:
        for job in data["jobs"]:
            r, w = side(job, "read"), side(job, "write")
            jobs.append(
                FioJobResult(
                    name=str(job["jobname"]),
                    read_bw_bytes=r["bw"],
                    read_iops=r["iops"],
                    read_lat_mean_ns=r["lat"],
                    write_bw_bytes=w["bw"],
                    write_iops=w["iops"],
                    write_lat_mean_ns=w["lat"],
                    runtime_ms=(job.get("read") or {}).get("runtime")
                    or (job.get("write") or {}).get("runtime"),
                    error=int(job.get("error", 0)),
                )
            )
    except (KeyError, TypeError, ValueError) as e:
        raise ParseError(source, f"malformed fio job: {e}") from None
    if not jobs:
        raise ParseError(source, "fio JSON has no jobs")
    return FioRun(fio_version=data.get("fio version"), jobs=jobs)


def fio_argv(path: str, profile: str = "quick") -> list[str]:
    """One fio invocation running every job one after another (``stonewall``) on ``path``."""
    size, runtime, files = PROFILES[profile]
    argv = [
        "fio",
        "--output-format=json",
        f"--directory={path}",
        "--ioengine=psync",
        "--direct=0",
        f"--size={size}",
        f"--runtime={runtime}",
        "--time_based=0",
        "--group_reporting=0",
    ]
    for name, opts, _, _ in JOBS:
        argv.append(f"--name={name}")
        argv.append("--stonewall")
        for k, v in opts.items():
            if k == "iodepth":
                continue  # psync is synchronous; depth would be ignored
            argv.append(f"--{k}={files if v == 'FILES' else v}")
        if name == "small_files":
            argv.append(f"--size={int(files) * 16}k")
    return argv


def to_results(run: FioRun, path: str) -> list[BenchResult]:
    out = []
    by_name = {j.name: j for j in run.jobs}
    for name, _, direction, metric in JOBS:
        job = by_name.get(name)
        if job is None:
            continue
        bw = job.read_bw_bytes if direction == "read" else job.write_bw_bytes
        iops = job.read_iops if direction == "read" else job.write_iops
        value, unit = (bw / 1e6, "MB/s") if metric.endswith("_mbps") else (iops, "IOPS")
        out.append(
            BenchResult(
                benchmark="storage",
                metric=metric,
                value=round(value, 3),
                unit=unit,
                params={
                    "path": path,
                    "job": name,
                    "fio_version": run.fio_version,
                    "bw_bytes": bw,
                    "iops": iops,
                    "lat_mean_ns": job.read_lat_mean_ns if direction == "read" else job.write_lat_mean_ns,
                },
            )
        )
    return out


def run(runner: CommandRunner, path: str | None, profile: str = "quick") -> list[BenchResult]:
    """fio on ``path`` (a directory podium may write test files into; they are removed after)."""
    if not path:
        return [skipped("storage", "seq_read_mbps", "no --storage-path given")]
    target = Path(path) / ".podium-fio"
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return [skipped("storage", "seq_read_mbps", f"cannot write to {path}: {e.strerror}")]
    _, runtime, _ = PROFILES[profile]
    out = runner.run(fio_argv(str(target), profile), timeout=60 + 6 * runtime * len(JOBS), name="fio")
    try:
        for f in target.iterdir():
            f.unlink()
        target.rmdir()
    except OSError:
        pass
    if not out.ran:
        return [skipped("storage", "seq_read_mbps", f"fio: {out.why_not()}")]
    if not out.ok:
        return [skipped("storage", "seq_read_mbps", f"fio failed: {out.why_not()}")]
    results = to_results(parse_fio_json(out.stdout, "fio output"), path)
    for r in results:
        r.raw_output, r.provenance = out.raw_path, out.provenance()
    return results
