"""Passive health check time per node (target: <= 5 s without active tests).

Measures ``run_health`` on a full replay directory built from the real fixtures (8x H100 nvidia-smi -q,
NVLink status, the gpud H100 sysfs IB tree, a 254 KB boot dmesg, fabric manager log, DCGM JSON, syslog)
and a live ``--quick`` run on this machine. Prints JSON and writes it to benchmarks/results/.

    python benchmarks/bench_health_passive.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
NODE = {
    "nvidia-smi-q.txt": "nvidia-smi-text/gpud_nvidia-smi-query.535.161.08.out.0.valid",
    "nvidia-smi-nvlink.txt": "nvidia-smi-text/gpud_nvidia-smi.nvlink.status.a100",
    "sys/class/infiniband": "sysfs-infiniband/gpud_sys-class-infiniband-h100.0",
    "dmesg.txt": "dmesg/gpud_dmesg.decode.iso.log.1",
    "syslog.txt": "dmesg/azure_0flap_syslog",
    "fabricmanager.log": "fabric-manager/gpud_fabricmanager.log",
    "dcgmi-diag.json": "dcgm/podium_dcgm4_diag_memory_fail.json",
}


def build_node(root: Path) -> Path:
    d = root / "bench-node"
    for dst, src in NODE.items():
        (d / dst).parent.mkdir(parents=True, exist_ok=True)
        s = FIX / src
        shutil.copytree(s, d / dst) if s.is_dir() else shutil.copy(s, d / dst)
    return d


def timed(fn, repeat: int) -> dict:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return {
        "repeat": repeat,
        "median_s": round(statistics.median(samples), 4),
        "p90_s": round(sorted(samples)[int(0.9 * (len(samples) - 1))], 4),
        "max_s": round(max(samples), 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    from podium import __version__
    from podium.health.api import run_health

    with tempfile.TemporaryDirectory() as tmp:
        node = build_node(Path(tmp))
        report = run_health(replay_dir=node)  # warm imports and caches once
        replay = timed(lambda: run_health(replay_dir=node), args.repeat)
        checks = len(report.nodes[0].checks)
    live = timed(lambda: run_health(mode="quick"), max(3, args.repeat // 4))
    result = {
        "benchmark": "health_passive",
        "target_s": 5.0,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "podium": __version__,
        "host": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": __import__("os").cpu_count(),
        },
        "replay_full_node": {**replay, "checks": checks, "inputs": sorted(NODE)},
        "live_quick_this_host": {
            **live,
            "note": "no NVIDIA GPU here: GPU checks skip; host, kernel log, IB probes run",
        },
        "meets_target": replay["max_s"] <= 5.0 and live["max_s"] <= 5.0,
    }
    print(json.dumps(result, indent=2))
    out = ROOT / "benchmarks" / "results" / f"health_passive_{datetime.now(timezone.utc):%Y%m%d}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
