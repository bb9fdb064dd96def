"""``podium facts collect``: node facts, locally or fanned out through srun / Kubernetes pods."""

from __future__ import annotations

from pathlib import Path

import typer

from podium.cli.common import emit_text, stderr_console

facts_app = typer.Typer(
    help="Collect node facts (driver, CUDA, runtimes, Slurm, MUNGE, OFED, firmware...).", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(facts_app, name="facts")


@facts_app.command("collect")
def collect(
    local: bool = typer.Option(False, "--local", help="Collect on this node (the default)."),
    slurm: bool = typer.Option(False, "--slurm", help="One task per node through srun."),
    k8s: bool = typer.Option(False, "--k8s", help="One privileged pod per GPU node through kubectl."),
    nodes: str = typer.Option(None, "--nodes", help="Slurm nodelist (n[1-4]) or node count."),
    partition: str = typer.Option(None, "--partition", help="Slurm partition."),
    image: str = typer.Option("python:3.12-slim", "--image", help="Container image for --k8s pods."),
    out: str = typer.Option("-", "--out", "-o", help="Output file ('-' = stdout)."),
    compact: bool = typer.Option(False, "--compact", help="One line of JSON per node (used by fan-out)."),
    runs_dir: Path = typer.Option(
        None, "--runs-dir", help="Where run directories go (default ./podium-runs)."
    ),
) -> None:
    """Collect facts and write them as JSON (one NodeFacts, or a list when fanned out)."""
    import json

    from podium.errors import UsageError
    from podium.facts.collect import collect_node_facts
    from podium.facts.fanout import collect_k8s, collect_slurm
    from podium.runner import LocalRunner
    from podium.runs import RunDirectory

    if sum([local, slurm, k8s]) > 1:
        raise UsageError("choose one of --local, --slurm, --k8s")
    console = stderr_console()
    # Per-node invocations of a fan-out print only a line of JSON and keep no run directory of their own.
    run = None if compact else RunDirectory.create("facts", ["facts", "collect"], root=runs_dir)
    runner = LocalRunner(raw_dir=run.raw_dir if run else None)
    problems: list[str] = []
    if slurm:
        facts, problems = collect_slurm(runner, nodes=nodes, partition=partition)
    elif k8s:
        facts, problems = collect_k8s(runner, image=image)
    else:
        facts = [collect_node_facts(runner)]
    for p in problems:
        console.print(f"[yellow]warning:[/] {p}")
    if compact:
        text = "\n".join(f.model_dump_json() for f in facts)
    elif len(facts) == 1 and not (slurm or k8s):
        text = facts[0].model_dump_json(indent=2)
    else:
        text = json.dumps([f.model_dump(mode="json") for f in facts], indent=2)
    if run:
        run.write_json("facts.json", [f.model_dump(mode="json") for f in facts])
        run.close(0)
        console.print(f"run directory: {run.path}")
    if out == "-":
        emit_text(text)
    else:
        Path(out).write_text(text + "\n")
        console.print(f"wrote facts for {len(facts)} node(s) to {out}")
