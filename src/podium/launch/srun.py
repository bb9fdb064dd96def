"""What every srun fan-out shares: how a node starts this same podium, and how the tasks' output
is taken apart again.

Used by ``podium facts collect --slurm`` (and so ``audit --slurm``) and ``podium health --slurm``.
"""

from __future__ import annotations

import json
import re
import sys


def podium_argv(python: str | None = None) -> list[str]:
    """How to start this same podium on another node: the same interpreter (shared install or venv)."""
    return [python or sys.executable, "-m", "podium"]


def task_outputs(text: str) -> list[str]:
    """Undo ``srun --label``: one string per task, in task order.

    Tasks write concurrently, so their lines interleave, and srun may forward one long line in
    several labelled chunks; a task's chunks are joined back without separators. Pretty-printed JSON
    stays valid that way, and a long single-line JSON document is made whole again.
    """
    tasks: dict[int, list[str]] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+): ?(.*)$", line)
        if m:
            tasks.setdefault(int(m.group(1)), []).append(m.group(2))
    return ["".join(chunks) for _, chunks in sorted(tasks.items())]


def json_documents(text: str) -> list[dict]:
    """Decode the JSON objects in one task's output one after another, skipping any other text."""
    dec = json.JSONDecoder()
    docs, i = [], 0
    while True:
        j = text.find("{", i)
        if j < 0:
            return docs
        try:
            doc, end = dec.raw_decode(text, j)
        except json.JSONDecodeError:
            i = j + 1
            continue
        docs.append(doc)
        i = end
