"""Run a benchmark in this process, on this host."""

from __future__ import annotations

from typing import Any

from podium.bench.suite import TaskOutput, run_in_task
from podium.runner import LocalRunner
from podium.runs import RunDirectory


class LocalLauncher:
    """Runs each benchmark as one task in this process (collectives spawn their own ranks)."""

    name = "local"

    def __init__(self, run: RunDirectory):
        self.run = run

    def run_benchmark(self, name: str, profile: str, opts: dict[str, Any]) -> list[TaskOutput]:
        return [run_in_task(name, profile, opts, LocalRunner(raw_dir=self.run.raw_dir))]
