"""Fan facts collection out through the engines a cluster already runs: Slurm (srun) and Kubernetes.

Each node runs ``podium facts collect --local --out -`` and prints one line of JSON; the lines are
merged here. podium never schedules anything itself.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path

import yaml

from podium.errors import InputError
from podium.launch.srun import podium_argv, task_outputs
from podium.models.facts import NodeFacts
from podium.runner import CommandRunner

POD_LABEL = "app.kubernetes.io/name=podium-facts"


def node_command(python: str | None = None) -> list[str]:
    """What each node runs: the same interpreter/podium as the caller (shared software stacks)."""
    return [*podium_argv(python), "facts", "collect", "--local", "--out", "-", "--compact"]


def parse_fanout_stdout(text: str, source: str) -> tuple[list[NodeFacts], list[str]]:
    """Split the merged stdout of all nodes into NodeFacts; bad lines are reported, not fatal."""
    facts, problems = [], []
    for i, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            problems.append(f"{source} line {i}: not JSON: {line[:120]}")
            continue
        try:
            facts.append(NodeFacts.model_validate(data))
        except ValueError as e:
            problems.append(f"{source} line {i}: not NodeFacts: {str(e).splitlines()[0]}")
    return facts, problems


def collect_slurm(
    runner: CommandRunner,
    nodes: str | None = None,
    partition: str | None = None,
    timeout: float = 600,
    python: str | None = None,
) -> tuple[list[NodeFacts], list[str]]:
    """One task per node through srun. ``nodes`` is a Slurm nodelist (n[1-4]) or a count."""
    # --label: srun otherwise interleaves the tasks' long JSON lines at arbitrary byte boundaries
    argv = ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--immediate=60", "--label"]
    if nodes and nodes.isdigit():
        argv += ["-N", nodes]
    elif nodes:
        argv += ["--nodelist", nodes]
        argv += ["-N", str(_count_nodelist(runner, nodes))]
    else:
        argv += ["-N", str(_count_partition_nodes(runner, partition))]
    if partition:
        argv += ["--partition", partition]
    argv += node_command(python)
    out = runner.run(argv, timeout=timeout, name="srun-facts")
    if not out.ran:
        raise InputError("--slurm", out.why_not())
    facts, problems = parse_fanout_stdout("\n".join(task_outputs(out.stdout)), "srun")
    if not facts:  # nothing came back at all: a usage problem (bad nodelist, no partition), not a finding
        raise InputError(
            "--nodes" if nodes else "--slurm", out.why_not() if out.returncode else "no node printed facts"
        )
    for f in facts:
        f.method = "slurm"
    if out.returncode != 0:
        problems.append(out.why_not())
    return facts, problems


def _count_nodelist(runner: CommandRunner, nodelist: str) -> int:
    out = runner.run(["scontrol", "show", "hostnames", nodelist], timeout=30)
    if not out.ok:
        raise InputError("--nodes", f"scontrol could not expand '{nodelist}': {out.why_not()}")
    return len(out.stdout.split())


def _count_partition_nodes(runner: CommandRunner, partition: str | None) -> int:
    argv = ["sinfo", "-h", "-N", "-o", "%N", "--states=idle,mixed,allocated,completing"]
    if partition:
        argv += ["-p", partition]
    out = runner.run(argv, timeout=30)
    if not out.ok:
        raise InputError("--slurm", f"cannot list nodes: {out.why_not()}")
    n = len(set(out.stdout.split()))
    if n == 0:
        raise InputError("--slurm", "no usable nodes (idle/mixed/allocated) in the partition")
    return n


def render_k8s_pod(node: str, image: str, namespace: str = "default") -> dict:
    """A privileged pod pinned to one GPU node that prints that node's facts and exits.

    hostPID/hostNetwork and the host's / mounted read-only let the collectors see the host's
    tools; podium only reads.
    """
    name = "podium-facts-" + "".join(ch if ch.isalnum() else "-" for ch in node.lower())[:40].strip("-")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "podium-facts"},
        },
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "hostPID": True,
            "hostNetwork": True,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "facts",
                    "image": image,
                    "command": ["chroot", "/host", *node_command("python3")[0:1]],
                    "args": [*node_command("python3")[1:]],
                    "securityContext": {"privileged": True},
                    "volumeMounts": [{"name": "host", "mountPath": "/host", "readOnly": True}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }
            ],
            "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        },
    }


def collect_k8s(
    runner: CommandRunner,
    image: str,
    selector: str = "nvidia.com/gpu.present=true",
    namespace: str = "default",
    timeout: float = 300,
) -> tuple[list[NodeFacts], list[str]]:
    """One privileged pod per GPU node via kubectl; logs are the facts; pods are deleted after."""
    out = runner.run(["kubectl", "get", "nodes", "-l", selector, "-o", "jsonpath={.items[*].metadata.name}"])
    if not out.ok:
        raise InputError("--k8s", out.why_not())
    nodes = out.stdout.split()
    if not nodes:
        raise InputError("--k8s", f"no nodes match the selector {selector}")
    facts, problems, names = [], [], []
    for node in nodes:
        pod = render_k8s_pod(node, image, namespace)
        names.append(pod["metadata"]["name"])
        _apply(runner, pod, problems)
    for name in names:
        runner.run(
            [
                "kubectl",
                "wait",
                "-n",
                namespace,
                "--for=jsonpath={.status.phase}=Succeeded",
                f"pod/{name}",
                f"--timeout={int(timeout)}s",
            ],
            timeout=timeout + 10,
        )
        logs = runner.run(
            ["kubectl", "logs", "-n", namespace, f"pod/{name}"], timeout=60, name=f"logs-{name}"
        )
        got, bad = parse_fanout_stdout(logs.stdout if logs.ok else "", f"pod/{name}")
        for f in got:
            f.method = "k8s"
        facts += got
        problems += bad if logs.ok else [logs.why_not()]
        runner.run(["kubectl", "delete", "-n", namespace, f"pod/{name}", "--wait=false"], timeout=60)
    return facts, problems


def _apply(runner: CommandRunner, manifest: dict, problems: list[str]) -> None:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(manifest, f)
    out = runner.run(["kubectl", "apply", "-f", f.name], timeout=60)
    if not out.ok:
        problems.append(out.why_not())


def load_facts_files(paths: Sequence[str]) -> list[NodeFacts]:
    """Read saved facts: a NodeFacts object, a list of them, or JSON lines. Bad files -> InputError."""
    facts: list[NodeFacts] = []
    for p in paths:
        try:
            text = Path(p).read_text(encoding="utf-8")
        except OSError as e:
            raise InputError(p, e.strerror or str(e)) from None
        if not text.strip():
            raise InputError(p, "empty file")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            got, bad = parse_fanout_stdout(text, "")
            if bad or not got:
                raise InputError(p, bad[0].strip() if bad else "not JSON") from None
            facts += got
            continue
        items = (
            data if isinstance(data, list) else data.get("nodes", [data]) if isinstance(data, dict) else None
        )
        if items is None:
            raise InputError(p, "expected a NodeFacts object or a list of them")
        for i, item in enumerate(items):
            try:
                facts.append(NodeFacts.model_validate(item))
            except ValueError as e:
                first = str(e).splitlines()
                raise InputError(p, f"item {i} is not NodeFacts: {' '.join(first[:3])}") from None
    return facts


def shell_preview(argv: Sequence[str]) -> str:
    return shlex.join(argv)
