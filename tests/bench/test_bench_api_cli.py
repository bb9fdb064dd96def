"""The public API, the CLI, resume, and the end-to-end run through the real Slurm."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tests.conftest import FIXTURES, need

from podium.bench.api import render, run_bench
from podium.models.common import Status
from podium.runs import RunDirectory

pytest.importorskip("torch", reason="torch==2.13.0 is in scripts/test.sh; tests need the bench extra")


def _cli(args: list[str], env_extra: dict[str, str], timeout: int = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-c", "from podium.cli.main import entry; entry()", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def test_run_bench_numerics_planted_corruption_and_resume(tmp_path):
    run = RunDirectory.create("bench", root=tmp_path)
    report = run_bench(
        ["numerics", "nccl_tests"],
        run=run,
        corrupt_rank=1,
        nccl_tests_output=[str(FIXTURES / "nccl-tests" / "ztan_all_reduce_perf_2node_h100.md")],
    )
    numerics = [r for r in report.results if r.benchmark == "numerics"]
    # three CPU runs: the corrupted one is outvoted
    assert [(r.params["rank"], r.verdict) for r in numerics] == [
        (0, Status.PASS),
        (1, Status.FAIL),
        (2, Status.PASS),
    ]
    nccl = [r for r in report.results if r.benchmark == "nccl_tests"]
    assert nccl[0].value == 338.82 and nccl[0].sku == "H100" and nccl[0].verdict == Status.UNKNOWN
    assert run.done_steps() == ["bench:numerics", "bench:nccl_tests"]
    assert (run.path / "results" / "numerics.json").is_file() and (run.path / "report.json").is_file()
    # resume: finished steps are read back, not re-run
    stored = json.loads((run.path / "results" / "nccl_tests.json").read_text())
    stored[0]["reason"] = "read back from the run directory"
    (run.path / "results" / "nccl_tests.json").write_text(json.dumps(stored))
    again = run_bench(["numerics", "nccl_tests"], run=RunDirectory.resume(run.record.run_id, root=tmp_path))
    assert [r.reason for r in again.results if r.benchmark == "nccl_tests"] == [
        "read back from the run directory"
    ]


def test_unknown_suite_is_usage_error():
    from podium.errors import UsageError

    with pytest.raises(UsageError, match="unknown suite or benchmark nope"):
        run_bench("nope")


def test_dry_run_renders_one_script_per_benchmark(tmp_path):
    scripts = render("cpu-smoke", "slurm", nodes=2, exclude="n3")
    assert list(scripts) == ["gemm", "hbm", "collectives", "train_step", "numerics"]
    assert all("#SBATCH --nodes=2" in s and "#SBATCH --exclude=n3" in s for s in scripts.values())
    proc = _cli(
        ["bench", "--suite", "cpu-smoke", "--backend", "slurm", "--dry-run", "--json"],
        {"PODIUM_RUNS_DIR": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["backend"] == "slurm" and sorted(data["scripts"]) == sorted(scripts)


def test_cli_local_cpu_smoke_json(tmp_path):
    proc = _cli(["bench", "--suite", "cpu-smoke", "--json"], {"PODIUM_RUNS_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)  # stdout holds only JSON
    results = data["results"]
    assert {r["benchmark"] for r in results} == {
        "gemm",
        "host_memory",
        "hbm",
        "collectives",
        "train_step",
        "numerics",
    }
    for r in results:
        assert {"benchmark", "metric", "value", "unit", "host", "device", "reference", "verdict"} <= set(r)
        assert r["verdict"] != "pass" or r["benchmark"] == "numerics"  # nothing on a CPU has a reference
    skipped = {(r["benchmark"], r["metric"], r.get("dtype")) for r in results if r["verdict"] == "skipped"}
    assert ("gemm", "tflops", "fp8") in skipped and ("hbm", "h2d_gbps", None) in skipped
    assert all(r["reason"] == "no NVIDIA GPU" for r in results if r["verdict"] == "skipped")
    ops = sorted(r["params"]["op"] for r in results if r["benchmark"] == "collectives")
    assert ops == ["all_gather", "all_reduce", "alltoall", "broadcast", "reduce_scatter"]


def test_cli_bad_nccl_file_is_exit_2(tmp_path):
    proc = _cli(
        ["bench", "nccl_tests", "--nccl-tests-output", str(tmp_path / "missing.txt")],
        {"PODIUM_RUNS_DIR": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert "missing.txt: no such file" in proc.stderr


@pytest.mark.slurm
def test_slurm_end_to_end_cpu_smoke(tmp_path):
    need(
        os.environ.get("PODIUM_TEST_SLURM") == "1" and bool(os.environ.get("SLURM_CONF")),
        "real Slurm from scripts/ci/slurm-start.sh (PODIUM_TEST_SLURM=1)",
    )
    runs = tmp_path / "runs"
    proc = _cli(
        ["bench", "--backend", "slurm", "--suite", "cpu-smoke", "--json"],
        {"PODIUM_RUNS_DIR": str(runs)},
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert {r["benchmark"] for r in results} == {
        "gemm",
        "host_memory",
        "hbm",
        "collectives",
        "train_step",
        "numerics",
    }
    assert not [r for r in results if r["metric"] == "-"], [
        r["reason"] for r in results if r["metric"] == "-"
    ]
    # results came from the Slurm tasks: node names n1/n2, one task file per benchmark, a job log each
    assert {r["host"] for r in results} <= {"n1", "n2"}
    (run_dir,) = list(runs.iterdir())
    for bench in ("gemm", "hbm", "collectives", "train_step", "numerics"):
        assert (run_dir / "results" / bench / "task-0.json").is_file()
        assert (run_dir / "slurm" / f"{bench}.sbatch").is_file()
    assert len(list((run_dir / "slurm").glob("*.out"))) == 5
    numerics = [r for r in results if r["benchmark"] == "numerics"]
    assert [r["verdict"] for r in numerics] == ["pass", "pass", "pass"]


@pytest.mark.slurm
def test_slurm_collectives_across_two_nodes(tmp_path):
    need(
        os.environ.get("PODIUM_TEST_SLURM") == "1" and bool(os.environ.get("SLURM_CONF")),
        "real Slurm from scripts/ci/slurm-start.sh (PODIUM_TEST_SLURM=1)",
    )
    # the CI nodes n1/n2 are slurmd's on this host: their names do not resolve, so rendezvous on loopback
    args = [
        "bench",
        "collectives",
        "--backend",
        "slurm",
        "--nodes",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--json",
    ]
    proc = _cli(args, {"PODIUM_RUNS_DIR": str(tmp_path)}, timeout=200)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert [r["params"]["op"] for r in results] == [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "alltoall",
        "broadcast",
    ]
    for r in results:
        # two srun tasks, one per node, formed one gloo group: rank 0 reports for both nodes
        assert (r["params"]["ranks"], r["params"]["nodes"], r["host"]) == (2, 2, "n1,n2")
        assert r["value"] > 0
