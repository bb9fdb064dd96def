"""Entry point of one task under a scheduler: ``python -m podium.bench.worker``.

Writes ``<out>/task-<index>.json`` (a :class:`~podium.bench.suite.TaskOutput`) and prints the same
JSON on one stdout line prefixed with ``PODIUM_RESULT`` (how the Kubernetes launcher collects it
from pod logs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

MARKER = "PODIUM_RESULT "


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="podium.bench.worker")
    p.add_argument("--benchmark", required=True)
    p.add_argument("--profile", default="quick")
    p.add_argument("--opts", default="{}", help="benchmark options as JSON")
    p.add_argument("--out", default=None, help="directory for task-<index>.json")
    args = p.parse_args(argv)

    from podium.bench.suite import TaskOutput, run_in_task
    from podium.bench.suite import _task_index as task_index
    from podium.runner import LocalRunner

    raw_dir = Path(args.out) / f"raw-task-{task_index()}" if args.out else None
    try:
        out = run_in_task(args.benchmark, args.profile, json.loads(args.opts), LocalRunner(raw_dir=raw_dir))
    except Exception as e:  # a crash is reported as the task's error, never silently lost
        from podium.bench.devices import hostname

        out = TaskOutput(
            benchmark=args.benchmark, host=hostname(), task=task_index(), error=f"{type(e).__name__}: {e}"
        )
    text = out.model_dump_json()
    if args.out:
        path = Path(args.out)
        path.mkdir(parents=True, exist_ok=True)
        (path / f"task-{out.task}.json").write_text(text)
    sys.stdout.write(MARKER + text + "\n")
    sys.stdout.flush()
    return 0 if out.error is None else 1


if __name__ == "__main__":
    sys.exit(main())
