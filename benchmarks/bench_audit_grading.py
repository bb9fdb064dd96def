"""Grade 10,000 node fact sets against the full shipped advisory bundle; target >= 2,000 nodes/s on 2 cores.

Run: python benchmarks/bench_audit_grading.py [--nodes 10000] [--json OUT]
The fleet is synthetic but realistic: versions drawn (seeded) from real releases, so grading hits the
same code paths as a real fleet, including the per-version memo.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from datetime import datetime, timezone

from podium.models.facts import ComponentFact, NodeFacts

DRIVERS = [
    "535.104.05",
    "535.161.08",
    "535.183.01",
    "550.90.07",
    "550.127.05",
    "560.35.03",
    "570.86.15",
    "570.133.20",
    "575.57.08",
    "580.65.06",
    "580.95.05",
    "470.256.02",
    "525.147.05",
]
RUNC = ["1.1.5", "1.1.11", "1.1.12", "1.1.14", "1.2.0", "1.2.3", "1.2.6", "1.3.0"]
CONTAINERD = ["1.6.20", "1.6.33", "1.7.11", "1.7.22", "1.7.27", "2.0.2", "2.0.5"]
NCT = ["1.14.6", "1.16.1", "1.16.2", "1.17.3", "1.17.4", "1.17.8", "1.18.0"]
SLURM = ["22.05.8", "23.02.6", "23.02.7", "23.11.4", "24.05.3", "24.11.1"]
MUNGE = ["0.5.13", "0.5.15", "0.5.16"]
K8S = ["1.26.9", "1.28.4", "1.29.2", "1.30.1", "1.31.0"]


def fleet(n: int, seed: int = 7) -> list[NodeFacts]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        comps = [
            ComponentFact(
                name="nvidia-driver",
                version=rnd.choice(DRIVERS),
                visible=True,
                details={"product_line": "datacenter"},
            ),
            ComponentFact(name="runc", version=rnd.choice(RUNC), visible=True),
            ComponentFact(name="containerd", version=rnd.choice(CONTAINERD), visible=True),
            ComponentFact(name="nvidia-container-toolkit", version=rnd.choice(NCT), visible=True),
            ComponentFact(name="slurm", version=rnd.choice(SLURM), visible=True),
            ComponentFact(name="munge", version=rnd.choice(MUNGE), visible=True),
            ComponentFact(name="kubernetes", version=rnd.choice(K8S), visible=True),
            ComponentFact(name="dcgm", visible=False, reason="not visible to the tenant"),
        ]
        out.append(NodeFacts(host=f"gpu-{i:05d}", collector_version="bench", components=comps))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--json")
    args = ap.parse_args()
    from podium.advisories.bundle import load_default
    from podium.audit.api import run_audit

    t0 = time.perf_counter()
    bundle = load_default()
    t_load = time.perf_counter() - t0
    facts = fleet(args.nodes)
    t0 = time.perf_counter()
    report = run_audit(facts, bundle=bundle)
    t_grade = time.perf_counter() - t0
    res = {
        "benchmark": "audit-grading",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "nodes": args.nodes,
        "advisories": len(bundle.advisories),
        "bundle_version": bundle.version,
        "bundle_load_s": round(t_load, 4),
        "grade_and_report_s": round(t_grade, 4),
        "nodes_per_s": round(args.nodes / t_grade, 1),
        "checks": len(report.checks),
        "groups": len(report.groups),
        "target_nodes_per_s": 2000,
    }
    print(json.dumps(res, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
