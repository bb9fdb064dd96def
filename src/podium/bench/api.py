"""Public API: :func:`run_bench` runs a suite on a backend and returns a :class:`BenchReport`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podium.bench.model import BenchReport, BenchResult
from podium.bench.suite import TaskOutput, merge, resolve
from podium.models.common import Status
from podium.runs import RunDirectory

ProgressFn = Callable[[str, str, int, int], None]
# Options that belong to the launcher, not to the benchmark tasks.
_LAUNCH_KEYS = {
    "nodelist",
    "exclude",
    "partition",
    "account",
    "time_limit",
    "container_image",
    "gpus_per_node",
    "python",
    "master_addr",
    "namespace",
    "rdma_resource",
    "gpu_resource",
    "k8s_kind",
    "dry_run",
    "poll_s",
    "job_timeout_s",
}


def _launcher(backend: str, run: RunDirectory, nodes: int | None, opts: dict[str, Any]):
    if backend == "local":
        from podium.launch.local import LocalLauncher

        return LocalLauncher(run)
    if backend == "slurm":
        from podium.launch.slurm import SlurmLauncher, SlurmOptions

        so = SlurmOptions(nodes=nodes or 1, gpus_per_node=int(opts.get("gpus_per_node") or 0))
        for key in (
            "nodelist",
            "exclude",
            "partition",
            "account",
            "time_limit",
            "container_image",
            "python",
            "master_addr",
            "poll_s",
            "job_timeout_s",
        ):
            if opts.get(key) is not None:
                setattr(so, key, opts[key])
        return SlurmLauncher(run, so)
    if backend == "k8s":
        from podium.launch.k8s import K8sLauncher, K8sOptions

        ko = K8sOptions(
            image=opts.get("container_image"),
            nodes=nodes or 1,
            gpus_per_node=int(opts.get("gpus_per_node") or 0),
        )
        for key in ("namespace", "rdma_resource", "gpu_resource"):
            if opts.get(key):
                setattr(ko, key, opts[key])
        if opts.get("k8s_kind"):
            ko.kind = opts["k8s_kind"]
        return K8sLauncher(run, ko)
    from podium.errors import UsageError

    raise UsageError(f"unknown backend '{backend}'; one of: local, slurm, k8s")


def render(
    suite: str | list[str] = "quick",
    backend: str = "slurm",
    nodes: int | None = None,
    run: RunDirectory | None = None,
    **opts: Any,
) -> dict[str, str]:
    """The scripts/manifests a backend would submit, by benchmark name (``--dry-run``); nothing runs."""
    import json

    import yaml

    profile, names = resolve(suite)
    bench_opts = {k: v for k, v in opts.items() if k not in _LAUNCH_KEYS and v is not None}
    if run is None:
        # where a real run would go; nothing is written for a dry run
        import socket

        from podium import __version__
        from podium.models.run import RunRecord
        from podium.runs import DEFAULT_RUNS_ROOT, new_run_id

        run_id = new_run_id("bench")
        record = RunRecord(
            run_id=run_id, command="bench", podium_version=__version__, host=socket.gethostname()
        )
        run = RunDirectory(DEFAULT_RUNS_ROOT.resolve() / run_id, record)
    launcher = _launcher(backend, run, nodes, opts)
    out = {}
    for name in names:
        if backend == "slurm":
            out[name] = launcher.script(name, profile, bench_opts)
        elif backend == "k8s":
            docs = launcher.manifests(name, profile, bench_opts, opts.get("k8s_kind") or "Job")
            out[name] = yaml.safe_dump_all(json.loads(json.dumps(docs)), sort_keys=False)
        else:
            out[name] = f"podium bench (local): {name} ({profile}) runs in this process"
    return out


def run_bench(
    suite: str | list[str] = "quick",
    backend: str = "local",
    nodes: int | None = None,
    run: RunDirectory | None = None,
    progress: ProgressFn | None = None,
    **opts: Any,
) -> BenchReport:
    """Run a suite ('quick', 'full', 'cpu-smoke') or benchmark names on a backend.

    Each benchmark is one resumable step of ``run`` (``bench:<name>``); finished steps are not
    re-run when the run is resumed, their results are read back from ``results/<name>.json``.
    A benchmark that crashes is reported ``unknown`` with the error and its step is marked failed.
    """
    profile, names = resolve(suite)
    own_run = run is None
    run = run or RunDirectory.create("bench", argv=[f"suite={suite}", f"backend={backend}"])
    bench_opts = {k: v for k, v in opts.items() if k not in _LAUNCH_KEYS and v is not None}
    launcher = _launcher(backend, run, nodes, opts)
    report = BenchReport(run_id=run.record.run_id, suite=names, backend=backend)
    for i, name in enumerate(names):
        step, rel = f"bench:{name}", f"results/{name}.json"
        if run.is_done(step) and (run.path / rel).is_file():
            report.results.extend(BenchResult.model_validate(r) for r in run.read_json(rel))
            if progress:
                progress(name, "resumed", i + 1, len(names))
            continue
        if progress:
            progress(name, "running", i, len(names))
        try:
            with run.step(step, output=rel):
                outputs: list[TaskOutput] = launcher.run_benchmark(name, profile, bench_opts)
                if backend != "slurm":  # slurm tasks write their own files there
                    for o in outputs:
                        run.write_json(f"results/{name}/task-{o.task}.json", o)
                results = merge(name, outputs, bench_opts)
                run.write_json(rel, results)
        except Exception as e:
            from podium.errors import UsageError

            if isinstance(e, UsageError):
                raise
            results = [
                BenchResult(
                    benchmark=name,
                    metric="-",
                    verdict=Status.UNKNOWN,
                    reason=f"benchmark crashed: {type(e).__name__}: {e}",
                )
            ]
        report.results.extend(results)
        if progress:
            progress(name, "done", i + 1, len(names))
    run.write_json("report.json", report)
    if own_run:
        run.close(0)
    return report
