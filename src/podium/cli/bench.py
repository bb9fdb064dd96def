"""``podium bench``: run the benchmark suite locally, through Slurm or on Kubernetes."""

from __future__ import annotations

from pathlib import Path

import typer

from podium.cli.common import JSON_OPTION


def register(app: typer.Typer) -> None:
    @app.command("bench")
    def bench(
        names: list[str] = typer.Argument(
            None, help="Benchmark names (gemm, hbm, collectives, ...); overrides --suite."
        ),
        suite: str = typer.Option("quick", "--suite", help="quick | full | cpu-smoke"),
        backend: str = typer.Option("local", "--backend", help="local | slurm | k8s"),
        nodes: int = typer.Option(None, "--nodes", help="Nodes to run on (slurm, k8s)."),
        gpus_per_node: int = typer.Option(
            None, "--gpus-per-node", help="GPUs per node to request (slurm, k8s)."
        ),
        nodelist: str = typer.Option(None, "--nodelist", help="Slurm node list to use."),
        exclude: str = typer.Option(None, "--exclude", help="Slurm nodes to exclude."),
        partition: str = typer.Option(None, "--partition", help="Slurm partition."),
        container_image: str = typer.Option(
            None, "--container-image", help="pyxis image (slurm) or pod image (k8s)."
        ),
        namespace: str = typer.Option(None, "--namespace", help="Kubernetes namespace."),
        rdma_resource: str = typer.Option(
            None, "--rdma-resource", help="Kubernetes RDMA resource, e.g. rdma/rdma_shared_device_a."
        ),
        storage_path: str = typer.Option(
            None, "--storage-path", help="Directory fio writes its test files into."
        ),
        nccl_tests_output: list[Path] = typer.Option(
            None, "--nccl-tests-output", help="Parse this nccl-tests output (text or -J JSON)."
        ),
        ib_peer: str = typer.Option(None, "--ib-peer", help="Host running the perftest server."),
        ib_link_gbps: int = typer.Option(
            None, "--ib-link-gbps", help="NIC link rate for grading ib_write_bw (e.g. 400)."
        ),
        corrupt_rank: int = typer.Option(
            None, "--plant-corrupt-rank", help="Flip a bit on this rank (tests the numerics check)."
        ),
        master_addr: str = typer.Option(
            None, "--master-addr", help="Rendezvous address for multi-node collectives."
        ),
        dry_run: bool = typer.Option(
            False, "--dry-run", help="Print the sbatch scripts / manifests; submit nothing."
        ),
        resume: str = typer.Option(
            None, "--resume", help="Continue the run with this id; finished benchmarks are kept."
        ),
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Run benchmarks and grade each result against its per-SKU reference."""
        import sys

        from podium.bench.api import render, run_bench
        from podium.cli.common import emit_json, emit_text, stderr_console
        from podium.errors import ExitCode
        from podium.runs import RunDirectory

        selection: str | list[str] = list(names) if names else suite
        opts = {
            "gpus_per_node": gpus_per_node,
            "nodelist": nodelist,
            "exclude": exclude,
            "partition": partition,
            "container_image": container_image,
            "namespace": namespace,
            "rdma_resource": rdma_resource,
            "storage_path": storage_path,
            "nccl_tests_output": [str(p) for p in nccl_tests_output] if nccl_tests_output else None,
            "ib_peer": ib_peer,
            "ib_link_gbps": ib_link_gbps,
            "corrupt_rank": corrupt_rank,
            "master_addr": master_addr,
        }
        for p in nccl_tests_output or []:
            if not p.is_file():
                from podium.errors import InputError

                raise InputError(p, "no such file")
        from podium.bench.api import resolve

        resolve(selection)  # an unknown suite or benchmark is a one-line error before anything starts
        console = stderr_console()
        if dry_run:
            scripts = render(selection, backend, nodes, **opts)
            if as_json:
                emit_json({"backend": backend, "scripts": scripts})
            else:
                for name, text in scripts.items():
                    emit_text(f"# ---- {name}\n{text}")
            return
        run = RunDirectory.resume(resume) if resume else RunDirectory.create("bench", argv=sys.argv[1:])
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("bench", total=None)

            def progress(name: str, state: str, done: int, total: int) -> None:
                bar.update(task, description=f"bench {name}: {state}", completed=done, total=total)

            report = run_bench(selection, backend, nodes, run=run, progress=progress, **opts)
        run.close(0)
        if as_json:
            emit_json(report)
        else:
            _print_table(console, report)
            console.print(f"run {report.run_id}: {run.path}")
        raise typer.Exit(
            int(ExitCode.FINDINGS) if any(r.verdict.value == "fail" for r in report.results) else 0
        )


def _print_table(console, report) -> None:
    from rich.table import Table

    table = Table(title=f"podium bench ({report.backend})")
    for col in ("benchmark", "metric", "value", "device", "reference", "verdict", "reason"):
        table.add_column(col)
    for r in report.results:
        ref = f"{r.reference.target:g} {r.reference.unit}" if r.reference else "-"
        val = "-" if r.value is None else f"{r.value:.4g} {r.unit}"
        label = (
            r.metric
            + (f" {r.dtype}" if r.dtype else "")
            + (f" {r.params.get('op')}" if r.params.get("op") else "")
        )
        table.add_row(
            r.benchmark, label, val, (r.device or "-")[:28], ref, r.verdict.value, (r.reason or "")[:60]
        )
    console.print(table)
