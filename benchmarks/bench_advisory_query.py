"""Throughput of podium.advisories.match.query, and bundle load time.

    python benchmarks/bench_advisory_query.py [--queries 200000]

Prints one JSON line with: bundle load (cold, ms), first-query cost per component (uncached, ms),
cached query throughput (queries/s) over a mix of real component versions, host and podium version.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

MIX = [
    ("nvidia-driver", "535.104.05"),
    ("nvidia-driver", "550.90.07"),
    ("nvidia-driver", "580.95.05"),
    ("nvidia-driver", "470.82.01"),
    ("nvidia-container-toolkit", "1.16.1"),
    ("gpu-operator", "24.6.1"),
    ("runc", "1.1.11"),
    ("containerd", "1.7.2"),
    ("kubernetes", "1.27.1"),
    ("slurm", "23.02.6"),
    ("munge", "0.5.15"),
    ("cuda-toolkit", "12.4.1"),
    ("doca-host", "2.9.1"),
    ("mlnx-ofed", "24.10-1.1.4.0"),
    ("dcgm", "3.3.9"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=200_000)
    args = parser.parse_args()

    from podium import __version__
    from podium.advisories.bundle import SHIPPED_BUNDLE, load_bundle
    from podium.advisories.match import query

    t0 = time.perf_counter()
    bundle = load_bundle(SHIPPED_BUNDLE)
    load_ms = (time.perf_counter() - t0) * 1000

    first: dict[str, float] = {}
    for comp, ver in MIX:
        t = time.perf_counter()
        query(comp, ver, bundle=bundle)
        first[f"{comp} {ver}"] = round((time.perf_counter() - t) * 1000, 2)

    # Uncached cost: every node on a different driver patch level (worst case for the memo).
    distinct = [f"{b}.{m}.{p:02d}" for b in (535, 550, 570, 580) for m in range(40, 240, 4) for p in (1, 5)]
    t = time.perf_counter()
    for v in distinct:
        query("nvidia-driver", v, bundle=bundle)
    distinct_ms = (time.perf_counter() - t) * 1000 / len(distinct)

    rng = random.Random(0)
    work = [rng.choice(MIX) for _ in range(args.queries)]
    t = time.perf_counter()
    for comp, ver in work:
        query(comp, ver, bundle=bundle)
    elapsed = time.perf_counter() - t
    print(
        json.dumps(
            {
                "bundle_version": bundle.version,
                "bundle_load_ms": round(load_ms, 1),
                "first_query_ms": first,
                "distinct_driver_versions": len(distinct),
                "uncached_driver_query_ms": round(distinct_ms, 3),
                "cached_queries": args.queries,
                "cached_queries_per_s": round(args.queries / elapsed),
                "host": platform.node(),
                "python": platform.python_version(),
                "podium": __version__,
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
    )


if __name__ == "__main__":
    main()
