"""Prometheus text exposition for the node-exporter textfile collector (``--prometheus FILE``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from podium.health.models import Action, HealthReport, Verdict
from podium.models.common import Status


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render_prometheus(report: HealthReport) -> str:
    """Metrics text: verdict, action and per-check status as 0/1 gauges, plus counts and timings."""
    lines = [
        "# HELP podium_health_verdict 1 for the node's current podium health verdict, 0 for the others.",
        "# TYPE podium_health_verdict gauge",
    ]
    for n in report.nodes:
        for v in Verdict:
            lines.append(
                f'podium_health_verdict{{host="{_esc(n.host)}",verdict="{v.value}"}} {int(n.verdict == v)}'
            )
    lines += [
        "# HELP podium_health_action 1 for the action podium recommends for the node.",
        "# TYPE podium_health_action gauge",
    ]
    for n in report.nodes:
        for a in Action:
            lines.append(
                f'podium_health_action{{host="{_esc(n.host)}",action="{a.value}"}} {int(n.action == a)}'
            )
    lines += [
        "# HELP podium_health_check_status 1 for each check's current status.",
        "# TYPE podium_health_check_status gauge",
    ]
    for n in report.nodes:
        for c in n.checks:
            lines.append(
                f'podium_health_check_status{{host="{_esc(n.host)}",check="{_esc(c.id)}",status="{c.status.value}"}} 1'
            )
    lines += ["# HELP podium_health_checks Number of checks by status.", "# TYPE podium_health_checks gauge"]
    for n in report.nodes:
        for s in Status:
            count = sum(1 for c in n.checks if c.status == s)
            lines.append(f'podium_health_checks{{host="{_esc(n.host)}",status="{s.value}"}} {count}')
    lines += [
        "# HELP podium_health_duration_seconds Time the health run took.",
        "# TYPE podium_health_duration_seconds gauge",
    ]
    for n in report.nodes:
        lines.append(f'podium_health_duration_seconds{{host="{_esc(n.host)}"}} {n.duration_s or 0:g}')
    lines += [
        "# HELP podium_health_last_run_timestamp_seconds Unix time of the health run.",
        "# TYPE podium_health_last_run_timestamp_seconds gauge",
    ]
    for n in report.nodes:
        lines.append(
            f'podium_health_last_run_timestamp_seconds{{host="{_esc(n.host)}"}} {n.collected_at.timestamp():.3f}'
        )
    return "\n".join(lines) + "\n"


def write_textfile(report: HealthReport, path: Path) -> None:
    """Write atomically (temp file + rename) so node-exporter never reads half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(render_prometheus(report))
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
