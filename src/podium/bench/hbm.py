"""Memory bandwidth: device-to-device copy, a STREAM-like triad, pinned host<->device copies.

Bytes counted per operation follow STREAM: copy ``b = a`` moves 2·S bytes (read a, write b),
triad ``a = b + s·c`` moves 3·S bytes. Host<->device copies move S bytes. GB/s = 1e9 bytes/s.
On a machine without a GPU the copy and triad run on host memory (a memcpy-class path), and the
host<->device transfers are ``skipped``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from podium.bench.devices import NO_GPU, Device, import_torch
from podium.bench.model import BenchResult, skipped

BYTES_MOVED = {"copy": 2, "triad": 3, "h2d": 1, "d2h": 1}
SIZES = {
    "smoke": {"cpu": 32 << 20, "cuda": 1 << 30},
    "quick": {"cpu": 128 << 20, "cuda": 4 << 30},
    "full": {"cpu": 512 << 20, "cuda": 8 << 30},
}


def bandwidth_gbps(op: str, nbytes: int, seconds: float) -> float:
    """GB/s for one operation on buffers of ``nbytes`` each (STREAM byte counting)."""
    return BYTES_MOVED[op] * nbytes / seconds / 1e9


def _time(torch: Any, fn, device: str, warmup: int, iters: int) -> list[float]:
    for _ in range(warmup):
        fn()
    times = []
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
        for _ in range(iters):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
    else:
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return times


def measure(device: Device, nbytes: int, warmup: int = 3, iters: int = 10) -> list[BenchResult]:
    """copy, triad (and on GPUs pinned h2d/d2h) bandwidth on one device; best of ``iters`` runs."""
    torch = import_torch()
    dev = device.torch_device
    n = nbytes // 4
    a = torch.empty(n, dtype=torch.float32, device=dev).fill_(1.0)
    b = torch.empty_like(a).fill_(2.0)
    c = torch.empty_like(a).fill_(0.5)
    ops = {
        "copy": lambda: b.copy_(a),
        "triad": lambda: torch.add(b, c, alpha=3.0, out=a),
    }
    if device.kind == "cuda":
        host = torch.empty(n, dtype=torch.float32, pin_memory=True)
        ops["h2d"] = lambda: a.copy_(host, non_blocking=True)
        ops["d2h"] = lambda: host.copy_(a, non_blocking=True)
    results = []
    for op, fn in ops.items():
        times = _time(torch, fn, dev, warmup, iters)
        best = bandwidth_gbps(op, n * 4, min(times))
        results.append(
            BenchResult(
                benchmark="hbm" if device.kind == "cuda" else "host_memory",
                metric=f"{op}_gbps",
                value=round(best, 3),
                unit="GB/s",
                device=device.name,
                params={
                    "device_index": device.index,
                    "buffer_bytes": n * 4,
                    "bytes_moved_per_op": BYTES_MOVED[op] * n * 4,
                    "median_gbps": round(bandwidth_gbps(op, n * 4, statistics.median(times)), 3),
                    "iters": iters,
                },
            )
        )
    if device.kind != "cuda":
        for op in ("h2d", "d2h"):
            results.append(skipped("hbm", f"{op}_gbps", NO_GPU, device=device.name))
    return results


def run(devices: list[Device], profile: str = "quick") -> list[BenchResult]:
    kind = "cuda" if devices[0].kind == "cuda" else "cpu"
    nbytes = SIZES[profile][kind]
    iters = 5 if profile == "smoke" else 10
    out: list[BenchResult] = []
    for dev in devices:
        out.extend(measure(dev, nbytes, warmup=2, iters=iters))
    return out
