"""GEMM: a maximum-achievable-matmul sweep in the style of mamf-finder.

For each shape (M, N, K) the mean time of ``iters`` matmuls after ``warmup`` is turned into
TFLOP/s with ``2·M·N·K`` FLOPs per matmul (one multiply and one add per inner-product term).
Like mamf-finder v2, the L2 cache is flushed before each timed matmul on GPUs.
The best shape's TFLOP/s is the result; the median over shapes is kept too. GPUs more than
5% below the node median are flagged (:func:`flag_stragglers`).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from podium.bench.devices import NO_GPU, BenchUnavailable, Device, import_torch
from podium.bench.model import BenchResult, skipped
from podium.models.common import Status

GPU_DTYPES = ("bf16", "fp16", "fp8", "tf32")
CPU_DTYPES = ("fp32", "bf16")
STRAGGLER_THRESHOLD = 0.05

# Shapes per profile. GPU shapes follow mamf-finder's suggested ranges, coarsened.
SHAPES = {
    "smoke": {"cpu": [(128, 128, 128), (256, 256, 256)], "cuda": [(4096, 4096, 4096)]},
    "quick": {
        "cpu": [(256, 256, 256), (512, 512, 512)],
        "cuda": [(m, n, k) for m in (2048, 4096, 8192) for n in (4096, 8192) for k in (4096, 8192)],
    },
    "full": {
        "cpu": [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024)],
        "cuda": [
            (m, n, k)
            for m in range(1024, 16385, 3072)
            for n in (4096, 8192, 14336)
            for k in (4096, 8192, 13312)
        ],
    },
}


def gemm_flops(m: int, n: int, k: int) -> int:
    """FLOPs of one (M×K)·(K×N) matmul: 2·M·N·K."""
    return 2 * m * n * k


def tflops(m: int, n: int, k: int, seconds: float) -> float:
    return gemm_flops(m, n, k) / seconds / 1e12


def _operands(torch: Any, dtype: str, m: int, n: int, k: int, device: str):
    """Operands and the matmul callable for one dtype; raises BenchUnavailable where unsupported."""
    if dtype == "fp8":
        if not device.startswith("cuda"):
            raise BenchUnavailable(NO_GPU)
        if torch.cuda.get_device_capability(device) < (8, 9) or not hasattr(torch, "_scaled_mm"):
            raise BenchUnavailable("fp8 matmul needs compute capability >= 8.9")
        a = torch.randn(m, k, device=device).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        one = torch.tensor(1.0, device=device)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    tdtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}[
        dtype
    ]
    if dtype == "tf32":
        if not device.startswith("cuda"):
            raise BenchUnavailable(NO_GPU)
        torch.backends.cuda.matmul.allow_tf32 = True
    elif device.startswith("cuda") and dtype == "fp32":
        torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(m, k, dtype=tdtype, device=device)
    b = torch.randn(k, n, dtype=tdtype, device=device)
    c = torch.empty(m, n, dtype=tdtype, device=device)
    return lambda: torch.mm(a, b, out=c)


def time_shape(
    torch: Any, device: str, dtype: str, shape: tuple[int, int, int], warmup: int, iters: int
) -> list[float]:
    """Seconds per matmul for ``iters`` timed runs of one shape."""
    m, n, k = shape
    fn = _operands(torch, dtype, m, n, k, device)
    for _ in range(warmup):
        fn()
    times: list[float] = []
    if device.startswith("cuda"):
        # 256 MiB buffer: larger than any current L2, zeroed before each run to flush it (mamf-finder v2)
        flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device=device)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        torch.cuda.synchronize(device)
        for i in range(iters):
            flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize(device)
        times = [s.elapsed_time(e) / 1e3 for s, e in zip(starts, ends, strict=True)]
    else:
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return times


def sweep(
    device: Device, dtype: str, shapes: list[tuple[int, int, int]], warmup: int = 5, iters: int = 20
) -> BenchResult:
    """Sweep shapes on one device for one dtype: best and median TFLOP/s (mean over iterations)."""
    torch = import_torch()
    rows = []
    for shape in shapes:
        times = time_shape(torch, device.torch_device, dtype, shape, warmup, iters)
        mean_s = statistics.fmean(times)
        rows.append(
            {
                "m": shape[0],
                "n": shape[1],
                "k": shape[2],
                "mean_tflops": round(tflops(*shape, mean_s), 4),
                "median_tflops": round(tflops(*shape, statistics.median(times)), 4),
                "max_tflops": round(tflops(*shape, min(times)), 4),
            }
        )
    best = max(rows, key=lambda r: r["mean_tflops"])
    return BenchResult(
        benchmark="gemm",
        metric="tflops",
        value=best["mean_tflops"],
        unit="TFLOP/s",
        device=device.name,
        dtype=dtype,
        params={
            "device_index": device.index,
            "best_shape": f"{best['m']}x{best['n']}x{best['k']}",
            "median_over_shapes_tflops": round(statistics.median(r["mean_tflops"] for r in rows), 4),
            "warmup": warmup,
            "iters": iters,
        },
        breakdown=rows,
    )


def run(devices: list[Device], profile: str = "quick", dtypes: list[str] | None = None) -> list[BenchResult]:
    """GEMM sweep on every device; GPU dtypes that cannot run here are ``skipped`` with the reason."""
    results: list[BenchResult] = []
    on_gpu = devices[0].kind == "cuda"
    wanted = dtypes or list(GPU_DTYPES if on_gpu else CPU_DTYPES)
    shapes = SHAPES[profile]["cuda" if on_gpu else "cpu"]
    warmup, iters = (2, 5) if profile == "smoke" else (5, 20) if on_gpu or profile == "quick" else (10, 50)
    for dev in devices:
        for dtype in wanted:
            try:
                results.append(sweep(dev, dtype, shapes, warmup, iters))
            except BenchUnavailable as e:
                results.append(skipped("gemm", "tflops", str(e), device=dev.name, dtype=dtype))
    if not on_gpu and dtypes is None:
        for dtype in GPU_DTYPES:
            if dtype not in wanted:
                results.append(skipped("gemm", "tflops", NO_GPU, device=devices[0].name, dtype=dtype))
    return results


def flag_stragglers(results: list[BenchResult], threshold: float = STRAGGLER_THRESHOLD) -> list[BenchResult]:
    """Flag GPUs more than ``threshold`` below the median of their node (same host and dtype).

    A flagged GPU that graded ``pass`` or ``unknown`` becomes ``warn``; the reason names the median.
    """
    groups: dict[tuple, list[BenchResult]] = {}
    for r in results:
        if r.benchmark == "gemm" and r.value is not None:
            groups.setdefault((r.host, r.dtype), []).append(r)
    for group in groups.values():
        if len(group) < 2:
            continue
        median = statistics.median(r.value for r in group)
        for r in group:
            below = (median - r.value) / median if median else 0.0
            r.params["node_median_tflops"] = round(median, 4)
            r.params["below_node_median"] = round(below, 4)
            if below > threshold:
                r.params["straggler"] = True
                note = f"{100 * below:.1f}% below the node median {median:.4g} TFLOP/s"
                r.reason = f"{r.reason}; {note}" if r.reason else note
                if r.verdict in (Status.PASS, Status.UNKNOWN):
                    r.verdict = Status.WARN
    return results
