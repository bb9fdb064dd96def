"""Slurm launcher: one sbatch script per benchmark, srun inside, results collected from each task.

Each script asks for ``--nodes`` nodes; benchmarks that measure every GPU start one task per GPU
(``--ntasks-per-node`` = GPUs per node), the others one task per node. The environment is passed
through (``--export=ALL`` plus PATH and the podium interpreter), and with ``container_image`` srun
runs the task in that image through pyxis (``--container-image``, run directory mounted).
Jobs are tracked with ``squeue`` and, once they leave the queue, ``sacct`` (falling back to
``scontrol show job`` where accounting is off). Each task writes ``task-<N>.json`` into
``<run>/results/<benchmark>/``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podium.bench.suite import PER_GPU_TASKS, TaskOutput
from podium.runner import CommandRunner, LocalRunner
from podium.runs import RunDirectory

FINAL_STATES = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
}
PASSTHROUGH_ENV = ("PATH", "PYTHONPATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "PODIUM_RUNS_DIR")


@dataclass
class SlurmOptions:
    """How jobs are requested. ``gpus_per_node`` 0 means CPU-only jobs."""

    nodes: int = 1
    gpus_per_node: int = 0
    nodelist: str | None = None
    exclude: str | None = None
    partition: str | None = None
    account: str | None = None
    time_limit: str = "00:30:00"
    container_image: str | None = None
    container_mounts: list[str] = field(default_factory=list)
    python: str = sys.executable
    master_addr: str | None = None
    extra_sbatch: list[str] = field(default_factory=list)
    poll_s: float = 1.0
    job_timeout_s: float = 3600.0


@dataclass
class JobStatus:
    job_id: str
    state: str
    exit_code: str | None = None
    nodes: str | None = None
    source: str = "sacct"


def tasks_per_node(benchmark: str, opts: SlurmOptions) -> int:
    return opts.gpus_per_node if opts.gpus_per_node > 0 and benchmark in PER_GPU_TASKS else 1


def render_script(
    benchmark: str, profile: str, bench_opts: dict[str, Any], out_dir: Path, log_dir: Path, opts: SlurmOptions
) -> str:
    """The sbatch script for one benchmark."""
    ntasks = tasks_per_node(benchmark, opts)
    sb = [
        f"--job-name=podium-{benchmark}",
        f"--nodes={opts.nodes}",
        f"--ntasks-per-node={ntasks}",
        f"--output={log_dir}/{benchmark}-%j.out",
        f"--time={opts.time_limit}",
        "--export=ALL",
    ]
    if opts.gpus_per_node:
        sb.append(f"--gpus-per-node={opts.gpus_per_node}")
    for flag, val in (
        ("partition", opts.partition),
        ("account", opts.account),
        ("nodelist", opts.nodelist),
        ("exclude", opts.exclude),
    ):
        if val:
            sb.append(f"--{flag}={val}")
    sb.extend(opts.extra_sbatch)
    lines = ["#!/bin/bash", f"# podium bench: {benchmark} ({profile}); generated, safe to re-submit"]
    lines += [f"#SBATCH {s}" for s in sb]
    lines += ["set -euo pipefail"]
    for var in PASSTHROUGH_ENV:
        if os.environ.get(var):
            lines.append(f"export {var}={shlex.quote(os.environ[var])}")
    if opts.master_addr:
        lines.append(f"export MASTER_ADDR={shlex.quote(opts.master_addr)}")
    else:
        lines.append('export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)')
    lines.append("export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))")
    if ntasks > 1:
        lines.append("export PODIUM_ONE_DEVICE_PER_TASK=1  # each task measures the GPU at its SLURM_LOCALID")
    srun = ["srun", f"--ntasks-per-node={ntasks}", "--kill-on-bad-exit=0"]
    python = opts.python
    if opts.container_image:
        mounts = [f"{out_dir.parent.parent}:{out_dir.parent.parent}", *opts.container_mounts]
        srun += [f"--container-image={opts.container_image}", f"--container-mounts={','.join(mounts)}"]
        python = "python3"
    worker = [
        python,
        "-m",
        "podium.bench.worker",
        "--benchmark",
        benchmark,
        "--profile",
        profile,
        "--opts",
        json.dumps(bench_opts, sort_keys=True),
        "--out",
        str(out_dir),
    ]
    lines.append(" ".join(shlex.quote(a) for a in srun + worker))
    return "\n".join(lines) + "\n"


def parse_sbatch(stdout: str) -> str | None:
    """Job id from ``sbatch --parsable`` ('123' or '123;cluster')."""
    first = stdout.strip().splitlines()[-1:] or [""]
    job = first[0].split(";")[0].strip()
    return job if job.isdigit() else None


def parse_sacct(stdout: str, job_id: str) -> JobStatus | None:
    """The allocation's row of ``sacct -n -P -X -o JobID,State,ExitCode,NodeList``."""
    for line in stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) >= 3 and parts[0] == job_id:
            return JobStatus(job_id, parts[1].split()[0], parts[2], parts[3] if len(parts) > 3 else None)
    return None


def parse_scontrol_job(stdout: str, job_id: str) -> JobStatus | None:
    """``scontrol show job -o ID``: JobState= and ExitCode=."""
    fields = dict(tok.split("=", 1) for tok in stdout.split() if "=" in tok)
    if fields.get("JobId") != job_id or "JobState" not in fields:
        return None
    return JobStatus(
        job_id, fields["JobState"], fields.get("ExitCode"), fields.get("NodeList"), source="scontrol"
    )


class SlurmLauncher:
    """Submit, track and collect one benchmark at a time through the real Slurm commands."""

    name = "slurm"

    def __init__(self, run: RunDirectory, opts: SlurmOptions, runner: CommandRunner | None = None):
        self.run = run
        self.opts = opts
        self.runner = runner or LocalRunner(raw_dir=run.raw_dir)

    def paths(self, benchmark: str) -> tuple[Path, Path, Path]:
        base = self.run.path.resolve()
        return base / "slurm" / f"{benchmark}.sbatch", base / "results" / benchmark, base / "slurm"

    def script(self, benchmark: str, profile: str, bench_opts: dict[str, Any]) -> str:
        _, out_dir, log_dir = self.paths(benchmark)
        return render_script(benchmark, profile, bench_opts, out_dir, log_dir, self.opts)

    def run_benchmark(self, benchmark: str, profile: str, bench_opts: dict[str, Any]) -> list[TaskOutput]:
        script_path, out_dir, log_dir = self.paths(benchmark)
        log_dir.mkdir(parents=True, exist_ok=True)
        if out_dir.exists():  # a resumed step starts clean
            for f in out_dir.glob("task-*.json"):
                f.unlink()
        script_path.write_text(self.script(benchmark, profile, bench_opts))
        sub = self.runner.run(
            ["sbatch", "--parsable", str(script_path)], timeout=60, name=f"sbatch-{benchmark}"
        )
        job = parse_sbatch(sub.stdout) if sub.ok else None
        if job is None:
            return [TaskOutput(benchmark=benchmark, host="slurm", error=f"sbatch failed: {sub.why_not()}")]
        self.run.log.info("benchmark %s submitted as Slurm job %s", benchmark, job)
        status = self.wait(job)
        outputs = [TaskOutput.model_validate_json(p.read_text()) for p in sorted(out_dir.glob("task-*.json"))]
        if status.state != "COMPLETED" or not outputs:
            log = log_dir / f"{benchmark}-{job}.out"
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            why = f"Slurm job {job} {status.state} (exit {status.exit_code}, from {status.source})"
            if tail:
                why += f"; log: {tail[0][:200]}"
            if not outputs or status.state != "COMPLETED":
                outputs.append(TaskOutput(benchmark=benchmark, host=status.nodes or "slurm", error=why))
        return outputs

    def wait(self, job: str) -> JobStatus:
        """Poll squeue until the job leaves the queue, then read its final state."""
        deadline = time.monotonic() + self.opts.job_timeout_s
        while time.monotonic() < deadline:
            q = self.runner.run(["squeue", "-h", "-j", job, "-o", "%T"], timeout=30, name=f"squeue-{job}")
            if q.ok:
                state = q.stdout.strip()
                if not state or state in FINAL_STATES:
                    break
            elif "Invalid job id" in q.stderr + q.stdout:
                break  # already purged from slurmctld's memory
            time.sleep(self.opts.poll_s)
        else:
            self.runner.run(["scancel", job], timeout=30)
            return JobStatus(job, "TIMEOUT", None, None, source="podium")
        # sacct is eventually consistent: poll a few seconds for the row
        for _ in range(20):
            acct = self.runner.run(
                ["sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State,ExitCode,NodeList"],
                timeout=30,
                name=f"sacct-{job}",
            )
            if not acct.ok:
                break
            st = parse_sacct(acct.stdout, job)
            if st and st.state in FINAL_STATES:
                return st
            time.sleep(0.5)
        sc = self.runner.run(["scontrol", "show", "job", "-o", job], timeout=30, name=f"scontrol-{job}")
        st = parse_scontrol_job(sc.stdout, job) if sc.ok else None
        return st or JobStatus(job, "UNKNOWN", None, None, source="none")
