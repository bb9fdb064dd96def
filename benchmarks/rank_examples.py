"""Time `podium rank examples/providers` (the README's first command) end to end.

Run: python benchmarks/rank_examples.py [--runs 5]. Prints wall times of the CLI (fresh process,
as a user runs it) with and without the store, and of the library call alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def cli(args: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(["podium", *args], check=True, capture_output=True, env=env, cwd=REPO)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    n = ap.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PODIUM_DB=str(Path(tmp) / "bench.db"))
        out = str(Path(tmp) / "out")
        first = cli(["rank", "examples/providers", "--out", out], env)  # empty store: imports everything
        stored = [cli(["rank", "examples/providers", "--out", out], env) for _ in range(n)]
        nostore = [cli(["rank", "examples/providers", "--out", out, "--no-store"], env) for _ in range(n)]
        from podium.rating.ranking import load_providers_dir, rank
        from podium.rating.rubric import load_rubric
        from podium.report.write import write_ranking

        lib = []
        for _ in range(n):
            t0 = time.perf_counter()
            rubric = load_rubric()
            ranking, cards = rank(load_providers_dir(REPO / "examples" / "providers"), rubric, "bench")
            write_ranking(ranking, cards, rubric, Path(tmp) / "lib")
            lib.append(time.perf_counter() - t0)
    print(f"podium rank examples/providers, {n} runs, 6 providers, {os.cpu_count()} CPUs")
    print(f"  CLI, first run (empty store):  {first:.2f} s")
    print(f"  CLI, store:     median {statistics.median(stored):.2f} s  (min {min(stored):.2f})")
    print(f"  CLI, --no-store: median {statistics.median(nostore):.2f} s  (min {min(nostore):.2f})")
    print(f"  library (load + score + rank + write report): median {statistics.median(lib):.3f} s")


if __name__ == "__main__":
    main()
