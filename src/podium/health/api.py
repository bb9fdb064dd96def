"""Public API: ``run_health`` grades this node (or replayed nodes) and returns a HealthReport."""

from __future__ import annotations

import time
from pathlib import Path

from podium import __version__
from podium.errors import UsageError
from podium.health.active import run_active
from podium.health.collect import collect_node
from podium.health.evaluate import evaluate_passive
from podium.health.inputs import NodeInputs
from podium.health.models import HealthReport, NodeHealth
from podium.health.replay import load_node, node_dirs
from podium.health.thresholds import load_thresholds
from podium.health.verdict import node_verdict
from podium.runner import CommandRunner, LocalRunner

MODES = ("quick", "full", "burnin")


def grade_node(
    inputs: NodeInputs,
    mode: str = "quick",
    expected_gpus: int | None = None,
    expected_ib_rate_gbps: float | None = None,
    thresholds_path: str | None = None,
    runner: CommandRunner | None = None,
    burnin_s: float | None = None,
) -> NodeHealth:
    """Grade one node's inputs (passive, plus active checks when mode is full/burnin and live)."""
    t0 = time.monotonic()
    thresholds = load_thresholds(thresholds_path)
    checks = evaluate_passive(inputs, thresholds, expected_gpus, expected_ib_rate_gbps)
    if mode in ("full", "burnin") and not inputs.replay and runner is not None:
        checks += run_active(runner, inputs.host, mode, burnin_s, inputs.no_gpu_reason)
    verdict, action = node_verdict(checks)
    return NodeHealth(
        host=inputs.host,
        verdict=verdict,
        action=action,
        mode="replay" if inputs.replay else mode,
        duration_s=round(time.monotonic() - t0, 4),
        checks=checks,
    )


def run_health(
    mode: str = "quick",
    runner: CommandRunner | None = None,
    replay_dir: Path | None = None,
    burnin_s: float | None = None,
    expected_gpus: int | None = None,
    *,
    expected_ib_rate_gbps: float | None = None,
    required_mounts: list[str] | None = None,
    thresholds_path: str | None = None,
) -> HealthReport:
    """Health of this node (``runner``, default a LocalRunner) or of the nodes captured in ``replay_dir``.

    ``mode``: quick (passive only, ≤ 5 s), full (+ dcgmi diag -r 3, 60 s GEMM, memory test, NCCL),
    burnin (+ dcgmi diag -r 4 and a GEMM stress of ``burnin_s`` seconds). Replays are passive only.
    """
    if mode not in MODES:
        raise UsageError(f"unknown health mode {mode!r}; use one of {', '.join(MODES)}")
    if mode == "burnin" and not burnin_s and replay_dir is None:
        raise UsageError("burn-in needs a duration (burnin_s > 0)")
    report = HealthReport(tool_version=__version__)
    if replay_dir is not None:
        for d in node_dirs(Path(replay_dir)):
            inputs = load_node(d)
            report.nodes.append(
                grade_node(inputs, mode, expected_gpus, expected_ib_rate_gbps, thresholds_path)
            )
        if mode != "quick":
            report.notes.append("replay grades captured outputs only; active checks need a live node")
        return report
    runner = runner or LocalRunner()
    t0 = time.monotonic()
    inputs = collect_node(runner, load_thresholds(thresholds_path), required_mounts)
    node = grade_node(inputs, mode, expected_gpus, expected_ib_rate_gbps, thresholds_path, runner, burnin_s)
    node.duration_s = round(time.monotonic() - t0, 4)
    report.nodes.append(node)
    return report
