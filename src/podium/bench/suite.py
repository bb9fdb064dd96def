"""Which benchmarks a suite runs, how each one runs in a task, and how task outputs merge.

A *task* is one process on one node (one per GPU under Slurm, or this process locally). Each task
runs :func:`run_in_task` and returns a :class:`TaskOutput`; :func:`merge` turns the outputs of all
tasks into graded :class:`BenchResult` objects. The same path serves every backend.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from podium.bench import grading
from podium.bench.devices import NO_GPU, BenchUnavailable, Device, hostname, local_devices
from podium.bench.model import BenchResult, skipped
from podium.bench.numerics import NumericsRecord
from podium.bench.references import sku_of
from podium.errors import UsageError
from podium.models.common import Status
from podium.runner import CommandRunner, LocalRunner

BENCHMARKS = (
    "gemm",
    "hbm",
    "collectives",
    "nccl_tests",
    "ib_write_bw",
    "ib_write_lat",
    "storage",
    "train_step",
    "numerics",
)
SUITES: dict[str, tuple[str, list[str]]] = {
    # name: (profile, benchmarks)
    "cpu-smoke": ("smoke", ["gemm", "hbm", "collectives", "train_step", "numerics"]),
    "quick": ("quick", ["gemm", "hbm", "collectives", "nccl_tests", "train_step", "numerics", "storage"]),
    "full": ("full", list(BENCHMARKS)),
}
# Benchmarks that use every GPU of a node as one task per GPU under a scheduler.
PER_GPU_TASKS = {"gemm", "hbm", "collectives", "train_step", "numerics"}


class TaskOutput(BaseModel):
    """What one task produced for one benchmark."""

    benchmark: str
    host: str
    task: int = 0
    results: list[BenchResult] = Field(default_factory=list)
    numerics: list[NumericsRecord] = Field(default_factory=list)
    error: str | None = None


def resolve(suite: str | list[str]) -> tuple[str, list[str]]:
    """(profile, benchmark names) for a suite name or a list of benchmark names."""
    names = [suite] if isinstance(suite, str) else list(suite)
    if len(names) == 1 and names[0] in SUITES:
        return SUITES[names[0]]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise UsageError(
            f"unknown suite or benchmark {', '.join(unknown)}; suites: {', '.join(SUITES)}; benchmarks: {', '.join(BENCHMARKS)}"
        )
    return "quick", names


def _task_index() -> int:
    return int(
        os.environ.get("SLURM_PROCID", os.environ.get("JOB_COMPLETION_INDEX", os.environ.get("RANK", "0")))
    )


def run_in_task(
    name: str, profile: str, opts: dict[str, Any], runner: CommandRunner | None = None
) -> TaskOutput:
    """Run one benchmark in this process (one task). Never raises for a benchmark that cannot run."""
    runner = runner or LocalRunner()
    out = TaskOutput(benchmark=name, host=hostname(), task=_task_index())
    try:
        out.results, out.numerics = _RUNNERS[name](profile, opts, runner)
    except BenchUnavailable as e:
        out.results = [skipped(name, "-", str(e))]
    for r in out.results:
        r.host = r.host or out.host
    return out


def _devices() -> list[Device]:
    devs = local_devices()
    if os.environ.get("PODIUM_ONE_DEVICE_PER_TASK") == "1" and devs[0].kind == "cuda":
        local = int(os.environ.get("SLURM_LOCALID", os.environ.get("LOCAL_RANK", "0")))
        return [devs[local % len(devs)]]
    return devs


def _gemm(profile, opts, runner):
    from podium.bench import gemm

    return gemm.run(_devices(), profile, opts.get("dtypes")), []


def _hbm(profile, opts, runner):
    from podium.bench import hbm

    return hbm.run(_devices(), profile), []


def _collectives(profile, opts, runner):
    from podium.bench import collectives

    return collectives.run(profile, local_world=int(opts.get("local_ranks", 2)), ops=opts.get("ops")), []


def _train_step(profile, opts, runner):
    from podium.bench import train_step

    ranks = opts.get("ddp_local_ranks")
    return train_step.run(_devices(), profile, local_ranks=None if ranks is None else int(ranks)), []


def _numerics(profile, opts, runner):
    from podium.bench import numerics

    devs = _devices()
    first = _task_index() * len(devs)
    corrupt = opts.get("corrupt_rank")
    recs = numerics.compute(devs, first_rank=first, corrupt_rank=None if corrupt is None else int(corrupt))
    return [], recs


def _nccl_tests(profile, opts, runner):
    from podium.bench import nccl_tests_parse

    files = opts.get("nccl_tests_output") or []
    if isinstance(files, str):
        files = [files]
    results = []
    for f in files:
        text = Path(f).read_text(errors="replace")
        run = nccl_tests_parse.parse(text, source=str(f))
        res = nccl_tests_parse.to_result(run, sku=sku_of(run.devices[0].name) if run.devices else None)
        res.raw_output = str(f)
        results.append(res)
    if files:
        return results, []
    devs = _devices()
    if devs[0].kind != "cuda":
        return [skipped("nccl_tests", "busbw_gbps", NO_GPU)], []
    binary = opts.get("nccl_tests_binary") or "all_reduce_perf"
    if shutil.which(binary) is None:
        return [
            skipped(
                "nccl_tests",
                "busbw_gbps",
                f"{binary} not found (build NVIDIA/nccl-tests or pass --nccl-tests-output)",
            )
        ], []
    cmd = [binary, "-b", "8", "-e", "8G" if profile != "smoke" else "64M", "-f", "2", "-g", str(len(devs))]
    res_out = runner.run(cmd, timeout=1800, name="nccl-tests")
    if not res_out.ok:
        return [skipped("nccl_tests", "busbw_gbps", res_out.why_not())], []
    run = nccl_tests_parse.parse_text(res_out.stdout, source=binary)
    res = nccl_tests_parse.to_result(run, sku=sku_of(devs[0].name))
    res.raw_output, res.provenance = res_out.raw_path, res_out.provenance()
    return [res], []


def _ib(test: str) -> Callable:
    def inner(profile, opts, runner):
        from podium.bench import ib_perftest

        link = opts.get("ib_link_gbps")
        return ib_perftest.run(
            runner,
            test,
            device=opts.get("ib_device"),
            peer=opts.get("ib_peer"),
            link_gbps=int(link) if link else None,
        ), []

    return inner


def _storage(profile, opts, runner):
    from podium.bench import storage

    return storage.run(runner, opts.get("storage_path"), profile), []


_RUNNERS: dict[str, Callable] = {
    "gemm": _gemm,
    "hbm": _hbm,
    "collectives": _collectives,
    "nccl_tests": _nccl_tests,
    "ib_write_bw": _ib("ib_write_bw"),
    "ib_write_lat": _ib("ib_write_lat"),
    "storage": _storage,
    "train_step": _train_step,
    "numerics": _numerics,
}


def merge(name: str, outputs: list[TaskOutput], opts: dict[str, Any] | None = None) -> list[BenchResult]:
    """Graded results of one benchmark from all its tasks."""
    opts = opts or {}
    if not outputs:
        return [
            BenchResult(benchmark=name, metric="-", verdict=Status.UNKNOWN, reason="no task produced output")
        ]
    if name == "numerics":
        from podium.bench import numerics

        records = [rec for o in outputs for rec in o.numerics]
        results = numerics.compare(records, rtol=float(opts.get("numerics_rtol", numerics.DEFAULT_RTOL)))
        return results or [r for o in outputs for r in o.results]
    results = []
    for o in outputs:
        if o.error:
            results.append(
                BenchResult(benchmark=name, metric="-", host=o.host, verdict=Status.UNKNOWN, reason=o.error)
            )
        for r in o.results:
            r.sku = r.sku or sku_of(r.device)
            results.append(grading.grade(r))
    if name == "gemm":
        from podium.bench.gemm import flag_stragglers

        flag_stragglers(results)
    return results
