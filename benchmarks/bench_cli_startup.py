"""Cold start of `podium --help` (target <= 0.3 s): median of N fresh interpreter runs.

Run: python benchmarks/bench_cli_startup.py [--runs 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import time
from datetime import datetime, timezone


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    exe = shutil.which("podium")
    if exe is None:
        raise SystemExit("podium is not on PATH: pip install -e . first")
    times = {}
    for argv in (["--help"], ["audit", "--help"], ["--version"]):
        samples = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run([exe, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            samples.append(time.perf_counter() - t0)
        times[" ".join(["podium", *argv])] = {
            "median_s": round(statistics.median(samples), 4),
            "max_s": round(max(samples), 4),
        }
    res = {
        "benchmark": "cli-startup",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "runs": args.runs,
        "results": times,
        "target_s": 0.3,
    }
    print(json.dumps(res, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
