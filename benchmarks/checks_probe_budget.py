"""How long the exposure probes take under their rate limit, and the rate they actually keep.

Runs every exposure.* check against a CIDR of loopback addresses (127.0.0.0/N answers every
connect with RST, UDP with ICMP port unreachable) inside a fresh network namespace with only
'lo' up, so nothing leaves this machine. Needs root and `ip netns`.

    python benchmarks/checks_probe_budget.py [--cidr 127.0.0.0/26] [--timeout 2]

Prints one JSON line: targets, probes started, wall seconds, starts per second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def inner(cidr: str, timeout: float) -> None:
    from podium.checks.exposure import expand_targets
    from podium.checks.model import CheckContext
    from podium.checks.registry import BY_ID
    from podium.runner import LocalRunner

    targets = expand_targets([cidr])
    ctx = CheckContext(
        runner=LocalRunner(), targets=targets, timeout_s=timeout, include_default_targets=False
    )
    t0 = time.monotonic()
    results = []
    for cid in [c for c in BY_ID if c.startswith("exposure.") and c != "exposure.nfs-exports"]:
        results += BY_ID[cid].function(ctx)
    wall = time.monotonic() - t0
    started = ctx.limiter.started if ctx.limiter else 0
    print(
        json.dumps(
            {
                "cidr": cidr,
                "targets": len(targets),
                "probes_started": started,
                "wall_s": round(wall, 2),
                "starts_per_s": round(started / wall, 2) if wall else None,
                "limit_per_s": ctx.probe_rate_per_s,
                "non_pass": sum(r.status.value != "pass" for r in results),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cidr", default="127.0.0.0/26")
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--inner", action="store_true")
    args = ap.parse_args()
    if args.inner:
        inner(args.cidr, args.timeout)
        return
    ns = f"pdmbench{os.getpid() % 10000}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                ns,
                sys.executable,
                __file__,
                "--inner",
                "--cidr",
                args.cidr,
                "--timeout",
                str(args.timeout),
            ],
            check=True,
        )
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=True)


if __name__ == "__main__":
    main()
