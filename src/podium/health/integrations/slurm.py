"""Slurm: a HealthCheckProgram / prolog / epilog mode that drains failing nodes (like NHC), and a
fan-out of ``podium health --json`` over nodes with srun."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass

from podium.errors import InputError
from podium.health.models import HealthReport, NodeHealth, Verdict
from podium.launch.srun import json_documents, podium_argv, task_outputs
from podium.models.common import Status
from podium.runner import CommandRunner

REASON_PREFIX = "podium:"
_UNUSABLE = {
    "down",
    "drain",
    "drng",
    "drained",
    "draining",
    "fail",
    "failg",
    "maint",
    "futr",
    "future",
    "unk",
    "npc",
    "inval",
}


def drain_reason(node: NodeHealth, limit: int = 200) -> str:
    """'podium: fail, action drain: ib.counters, kernel.xid.79' (Slurm keeps reasons short)."""
    bad = [c.id for c in node.checks if c.status == Status.FAIL] or [
        c.id for c in node.checks if c.status == Status.WARN
    ]
    text = f"{REASON_PREFIX} {node.verdict.value}, action {node.action.value}: {', '.join(bad)}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def node_name(explicit: str | None = None) -> str:
    """The Slurm node name: --node, else SLURMD_NODENAME (set for prolog/epilog/healthcheck), else hostname -s."""
    return explicit or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


@dataclass
class SlurmAction:
    node: str
    did: str  # drained | resumed | none
    reason: str | None = None
    command: str | None = None


def current_reason(runner: CommandRunner, node: str) -> tuple[str | None, str | None]:
    """(state, reason) of a node from ``scontrol show node -o``."""
    out = runner.run(["scontrol", "show", "node", node, "-o"], timeout=15)
    if not out.ok:
        raise InputError(f"scontrol show node {node}", out.why_not())
    state = re.search(r"\bState=(\S+)", out.stdout)
    reason = re.search(r"\bReason=(.*?)(?: \[[^\]]*\])?(?=\s+\w+=|\s*$)", out.stdout)
    return (state.group(1) if state else None), (reason.group(1).strip() if reason else None)


def apply_healthcheck(
    runner: CommandRunner, node: NodeHealth, slurm_node: str, drain_on: set[Verdict]
) -> SlurmAction:
    """Drain the node when its verdict is in ``drain_on``; resume it when it is healthy again and
    the drain was podium's own (reason starts with 'podium:'), never someone else's."""
    if node.verdict in drain_on:
        reason = drain_reason(node)
        argv = ["scontrol", "update", f"nodename={slurm_node}", "state=drain", f"reason={reason}"]
        out = runner.run(argv, timeout=15)
        if not out.ok:
            raise InputError("scontrol update", out.why_not())
        return SlurmAction(slurm_node, "drained", reason, " ".join(argv))
    state, reason = current_reason(runner, slurm_node)
    if (
        node.verdict == Verdict.PASS
        and reason
        and reason.startswith(REASON_PREFIX)
        and state
        and "DRAIN" in state.upper()
    ):
        argv = ["scontrol", "update", f"nodename={slurm_node}", "state=resume"]
        out = runner.run(argv, timeout=15)
        if not out.ok:
            raise InputError("scontrol update", out.why_not())
        return SlurmAction(slurm_node, "resumed", reason, " ".join(argv))
    return SlurmAction(slurm_node, "none", reason)


def fan_out(
    runner: CommandRunner,
    health_args: list[str],
    nodes: str | None = None,
    partition: str | None = None,
    timeout: float = 600,
) -> HealthReport:
    """Run ``podium health --json <health_args>`` once per node with srun and merge the reports."""
    from podium import __version__

    sinfo = ["sinfo", "-h", "-N", "-o", "%N %t"]
    if partition:
        sinfo += ["-p", partition]
    if nodes:
        sinfo += ["-n", nodes]
    out = runner.run(sinfo, timeout=30)
    if not out.ok:
        raise InputError("sinfo", out.why_not())
    states = dict(line.split(None, 1) for line in out.stdout.splitlines() if len(line.split()) == 2)
    # srun cannot place a task on a down/drained node; those are reported, not checked
    unusable = {n: st for n, st in states.items() if st.rstrip("*~#!%$@^-").lower() in _UNUSABLE}
    names = sorted(n for n in states if n not in unusable)
    if not names:
        raise InputError(
            "sinfo", f"no node can run a task ({', '.join(f'{n}:{s}' for n, s in states.items()) or 'none'})"
        )
    argv = [
        "srun",
        "--label",
        f"--nodes={len(names)}",
        "--ntasks-per-node=1",
        f"--nodelist={','.join(names)}",
        "--kill-on-bad-exit=0",
    ]
    if partition:
        argv.append(f"--partition={partition}")
    argv += [*podium_argv(), "health", "--json", "--fail-on", "never", *health_args]
    res = runner.run(argv, timeout=timeout, name="srun-podium-health")
    report = HealthReport(tool_version=__version__)
    for task_output in task_outputs(res.stdout):
        for doc in json_documents(task_output):
            for n in doc.get("nodes", []):
                report.nodes.append(NodeHealth.model_validate(n))
    seen = {n.host for n in report.nodes}
    missing = [n for n in names if n not in seen]
    if missing and len(report.nodes) < len(names):
        report.notes.append(
            f"no report from {len(names) - len(report.nodes)} node(s) ({res.why_not() if not res.ok else 'srun'})"
        )
    if unusable:
        report.notes.append(
            "not checked (node state): " + ", ".join(f"{n} {st}" for n, st in sorted(unusable.items()))
        )
    report.nodes.sort(key=lambda n: n.host)
    return report
