"""``podium health``: node health checks with a verdict and an action per node.

Exit codes: 0 when no node's verdict is at or above ``--fail-on`` (default ``fail``), 1 when one is,
2 for bad usage or input, 3 for an internal error.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path

import typer


class HealthFailOn(str, Enum):
    fail = "fail"
    warn = "warn"
    unknown = "unknown"
    never = "never"


def parse_duration(text: str) -> float:
    """'90', '90s', '10m', '2h' -> seconds."""
    from podium.errors import UsageError

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text or "")
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"--burnin: cannot read duration {text!r} (use e.g. 600, 30s, 10m, 2h)")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def register(app: typer.Typer) -> None:
    @app.command("health")
    def health(
        quick: bool = typer.Option(
            False, "--quick", help="Passive checks only (the default; <= 5 s per node)."
        ),
        full: bool = typer.Option(
            False, "--full", help="Add dcgmi diag -r 3, a 60 s GEMM stress, a GPU memory test, NCCL."
        ),
        burnin: str = typer.Option(
            None,
            "--burnin",
            metavar="DURATION",
            help="Burn-in: dcgmi diag -r 4 and a GEMM stress for DURATION (10m, 2h).",
        ),
        json_out: bool = typer.Option(False, "--json", help="Print only the JSON report on stdout."),
        replay: Path = typer.Option(
            None,
            "--replay",
            metavar="DIR",
            help="Grade captured outputs in DIR (one node per directory; see docs/health.md).",
        ),
        slurm: bool = typer.Option(
            False, "--slurm", help="Fan out over Slurm nodes with srun and print a cluster table."
        ),
        k8s: bool = typer.Option(
            False,
            "--k8s",
            help="Render the DaemonSet that labels nodes podium.io/health=...; list labels if the kubernetes client is installed.",
        ),
        prometheus: Path = typer.Option(
            None,
            "--prometheus",
            metavar="FILE",
            help="Also write Prometheus text format to FILE (node-exporter textfile collector).",
        ),
        slurm_healthcheck: bool = typer.Option(
            False,
            "--slurm-healthcheck",
            help="HealthCheckProgram/prolog/epilog mode: drain this node when it fails (reason 'podium: ...'); resume it when podium's drain is no longer needed.",
        ),
        k8s_label: bool = typer.Option(
            False,
            "--k8s-label",
            help="Label this Kubernetes node (NODE_NAME) with the verdict (used by the DaemonSet).",
        ),
        node: str = typer.Option(
            None,
            "--node",
            envvar="SLURMD_NODENAME",
            help="Slurm node name for --slurm-healthcheck (default: SLURMD_NODENAME, then hostname).",
        ),
        nodes: str = typer.Option(
            None, "--nodes", help="With --slurm: node list to check (default: all responding nodes)."
        ),
        partition: str = typer.Option(None, "--partition", help="With --slurm: partition."),
        expected_gpus: int = typer.Option(
            None, "--expected-gpus", min=0, help="Fail when fewer GPUs are present."
        ),
        expected_ib_rate: float = typer.Option(
            None, "--expected-ib-rate", help="Expected IB link rate in Gb/s (e.g. 400)."
        ),
        require_mount: list[str] = typer.Option(
            None, "--require-mount", help="A mountpoint that must be mounted (repeatable)."
        ),
        thresholds: Path = typer.Option(
            None, "--thresholds", help="Thresholds YAML replacing the bundled data/health_thresholds.yaml."
        ),
        fail_on: HealthFailOn = typer.Option(
            HealthFailOn.fail,
            "--fail-on",
            help="Exit 1 when a node's verdict is at or above this (fail | warn | unknown | never).",
        ),
    ) -> None:
        """Check node health and give each node a verdict (pass|warn|fail|unknown) and an action
        (none|reset-gpu|reboot|drain|rma)."""
        from podium.cli.common import done, emit_json, stderr_console
        from podium.errors import ExitCode, UsageError
        from podium.health.models import Verdict

        if sum([quick, full, burnin is not None]) > 1:
            raise UsageError("choose one of --quick, --full, --burnin")
        if slurm and k8s:
            raise UsageError("choose one of --slurm, --k8s")
        mode = "burnin" if burnin is not None else "full" if full else "quick"
        burnin_s = parse_duration(burnin) if burnin is not None else None
        console = stderr_console()

        if k8s:
            _k8s(console, json_out)
            return

        from podium.runner import LocalRunner

        runner = LocalRunner()
        if slurm:
            from podium.health.integrations.slurm import fan_out

            passthrough = ["--" + mode if mode != "burnin" else "--burnin", *([burnin] if burnin else [])]
            if expected_gpus is not None:
                passthrough += ["--expected-gpus", str(expected_gpus)]
            if replay is not None:
                passthrough += ["--replay", str(replay.resolve())]
            report = fan_out(runner, passthrough, nodes=nodes, partition=partition)
        else:
            from podium.health.api import run_health

            report = run_health(
                mode=mode,
                runner=runner,
                replay_dir=replay,
                burnin_s=burnin_s,
                expected_gpus=expected_gpus,
                expected_ib_rate_gbps=expected_ib_rate,
                required_mounts=list(require_mount or []),
                thresholds_path=str(thresholds) if thresholds else None,
            )

        if slurm_healthcheck:
            from podium.health.integrations.slurm import apply_healthcheck, node_name

            if len(report.nodes) != 1:
                raise UsageError("--slurm-healthcheck grades exactly one node (one replay directory)")
            drain_on = {Verdict.FAIL} | ({Verdict.WARN} if fail_on == HealthFailOn.warn else set())
            act = apply_healthcheck(runner, report.nodes[0], node_name(node), drain_on)
            report.notes.append(
                f"slurm: node {act.node} {act.did}" + (f" ({act.reason})" if act.reason else "")
            )
        if k8s_label:
            import os

            from podium.health.integrations.k8s import apply_node_label

            name = os.environ.get("NODE_NAME")
            if not name:
                raise UsageError("--k8s-label needs NODE_NAME (the DaemonSet sets it from spec.nodeName)")
            via = apply_node_label(runner, name, report.nodes[0])
            report.notes.append(f"k8s: labelled node {name} via {via}")
        if prometheus is not None:
            from podium.health.integrations.prometheus import write_textfile

            write_textfile(report, prometheus)

        if json_out:
            emit_json(report)
        else:
            _print_human(console, report, cluster=slurm or len(report.nodes) > 1)
        order = [Verdict.PASS, Verdict.UNKNOWN, Verdict.WARN, Verdict.FAIL]
        if fail_on == HealthFailOn.never or not report.nodes:
            done(ExitCode.OK)
        threshold = Verdict(fail_on.value)
        worst = report.worst()
        done(ExitCode.FINDINGS if order.index(worst) >= order.index(threshold) else ExitCode.OK)


def _k8s(console, json_out: bool) -> None:
    from podium.cli.common import emit_json, emit_text
    from podium.health.integrations.k8s import (
        LABEL,
        kubernetes_client_available,
        manifests_yaml,
        render_manifests,
    )

    docs = render_manifests()
    if json_out:
        emit_json({"manifests": docs, "kubernetes_client": kubernetes_client_available()})
    else:
        emit_text(manifests_yaml(docs))
    if not kubernetes_client_available():
        console.print(
            "podium: the kubernetes Python client is not installed; rendered the DaemonSet manifests only "
            "(apply them with `kubectl apply -f -`)."
        )
        return
    try:
        from kubernetes import client, config

        config.load_kube_config()
        rows = client.CoreV1Api().list_node().items
    except Exception as e:  # no kubeconfig / unreachable API server: say so, manifests are still printed
        console.print(f"podium: rendered manifests; could not list nodes: {type(e).__name__}: {e}")
        return
    from rich.table import Table

    table = Table(title="Nodes by podium health verdict")
    table.add_column("node")
    table.add_column("verdict")
    table.add_column("action")
    for n in sorted(rows, key=lambda n: (n.metadata.labels or {}).get(LABEL, "zz")):
        labels = n.metadata.labels or {}
        table.add_row(n.metadata.name, labels.get(LABEL, "(not labelled)"), labels.get(LABEL + "-action", ""))
    console.print(table)


def _print_human(console, report, cluster: bool) -> None:
    from rich.table import Table

    colours = {"pass": "green", "warn": "yellow", "fail": "red", "unknown": "magenta", "skipped": "dim"}
    if cluster:
        table = Table(title="Nodes by verdict")
        for col in ("node", "verdict", "action", "failed / warned checks"):
            table.add_column(col)
        order = {"fail": 0, "warn": 1, "unknown": 2, "pass": 3}
        for n in sorted(report.nodes, key=lambda n: (order[n.verdict.value], n.host)):
            bad = [c.id for c in n.checks if c.status.value in ("fail", "warn")]
            v = n.verdict.value
            table.add_row(n.host, f"[{colours[v]}]{v}[/]", n.action.value, ", ".join(bad) or "-")
        console.print(table)
    else:
        for n in report.nodes:
            table = Table(title=f"{n.host}: {n.verdict.value}, action {n.action.value}")
            for col in ("check", "status", "title", "reason / evidence"):
                table.add_column(col)
            for c in n.checks:
                s = c.status.value
                detail = c.reason or "; ".join(e.summary for e in c.evidence[:3])
                table.add_row(c.id, f"[{colours[s]}]{s}[/]", c.title, detail[:120])
            console.print(table)
    for note in report.notes:
        console.print(f"note: {note}")
