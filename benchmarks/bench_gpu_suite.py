"""GPU check of podium bench on a lent GPU (e.g. one H200), as one command:

    python benchmarks/bench_gpu_suite.py [--quick] [--out benchmarks/results]

1. GEMM: podium's sweep (``podium.bench.gemm.sweep``) against an independent mamf-finder-style
   sweep written out here (finer shape grid, same timing rules: L2 flush, CUDA events, mean of
   iterations after warm-up). Best achievable = the higher of the two bests; target: podium >= 97%.
2. Copy bandwidth: podium's ``hbm.measure`` copy against a plain ``dst.copy_(src)`` loop timed as
   one block. Target: podium >= 95% of the plain copy.
3. Optionally (``--suite``) the whole ``quick`` suite through ``run_bench``.

Writes ``gpu_suite-<UTC date>-<gpu>.json`` with date, hardware and software versions, every
number and the two ratios. Exits 2 when there is no GPU.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path


def mamf_style_best(torch, dtype, shapes, warmup=10, iters=50):
    """Independent reference sweep: best mean TFLOP/s over shapes (mamf-finder v2 timing)."""
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    best = (0.0, None)
    for m, n, k in shapes:
        a = torch.randn(m, k, dtype=dtype, device="cuda")
        b = torch.randn(k, n, dtype=dtype, device="cuda")
        for _ in range(warmup):
            torch.mm(a, b)
        times = []
        for _ in range(iters):
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.mm(a, b)
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e) / 1e3)
        tf = 2 * m * n * k / statistics.fmean(times) / 1e12
        if tf > best[0]:
            best = (tf, f"{m}x{n}x{k}")
        del a, b
    return best


def plain_copy_gbps(torch, nbytes, iters=50):
    src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    for _ in range(5):
        dst.copy_(src)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        dst.copy_(src)
    torch.cuda.synchronize()
    return 2 * nbytes * iters / (time.perf_counter() - t0) / 1e9


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="fewer shapes (about 2 minutes on an H100/H200)")
    p.add_argument("--suite", action="store_true", help="also run podium's quick suite through run_bench")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("bench_gpu_suite: no NVIDIA GPU here; nothing measured", file=sys.stderr)
        return 2
    from podium import __version__
    from podium.bench import gemm, hbm
    from podium.bench.devices import local_devices
    from podium.bench.references import sku_of

    dev = local_devices()[0]
    props = torch.cuda.get_device_properties(0)
    out: dict = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hardware": {
            "gpu": dev.name,
            "sku": sku_of(dev.name),
            "sm": f"{props.major}.{props.minor}",
            "memory_gib": round(props.total_memory / 2**30, 1),
            "host": platform.node(),
            "cpu": platform.processor(),
        },
        "software": {
            "podium": __version__,
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "python": platform.python_version(),
        },
    }
    # 1. GEMM, bf16
    podium_shapes = gemm.SHAPES["quick"]["cuda"] if args.quick else gemm.SHAPES["full"]["cuda"]
    ref_shapes = [
        (m, n, k)
        for m in range(1024, 16385, 1024 if not args.quick else 2048)
        for n in (4096, 8192)
        for k in (4096, 8192)
    ]
    t0 = time.time()
    pod = gemm.sweep(dev, "bf16", podium_shapes, warmup=10, iters=50)
    ref_tf, ref_shape = mamf_style_best(torch, torch.bfloat16, ref_shapes)
    best = max(pod.value, ref_tf)
    out["gemm_bf16"] = {
        "podium_tflops": pod.value,
        "podium_best_shape": pod.params["best_shape"],
        "mamf_style_tflops": round(ref_tf, 2),
        "mamf_style_best_shape": ref_shape,
        "best_achievable_tflops": round(best, 2),
        "ratio": round(pod.value / best, 4),
        "target": 0.97,
        "seconds": round(time.time() - t0, 1),
    }
    # 2. copy bandwidth
    nbytes = 4 << 30
    pod_copy = next(r for r in hbm.measure(dev, nbytes, warmup=5, iters=50) if r.metric == "copy_gbps")
    plain = plain_copy_gbps(torch, nbytes)
    out["copy"] = {
        "podium_gbps": pod_copy.value,
        "plain_torch_copy_gbps": round(plain, 1),
        "ratio": round(pod_copy.value / plain, 4),
        "target": 0.95,
        "buffer_bytes": nbytes,
    }
    if args.suite:
        from podium.bench.api import run_bench

        report = run_bench("quick")
        out["quick_suite"] = [r.model_dump(mode="json", exclude={"breakdown"}) for r in report.results]
    out["verdict"] = {"gemm": out["gemm_bf16"]["ratio"] >= 0.97, "copy": out["copy"]["ratio"] >= 0.95}
    dest = Path(args.out)
    dest.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9]+", "-", dev.name).strip("-")
    path = dest / f"gpu_suite-{out['date'][:10]}-{name}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({"file": str(path), "gemm": out["gemm_bf16"], "copy": out["copy"]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
