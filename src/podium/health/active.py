"""Active checks and burn-in: DCGM diag, a torch GEMM stress with checksums, a GPU memory test and a
single-node NCCL all-reduce. On a node without an NVIDIA GPU each reports ``skipped: no NVIDIA GPU``.

torch is optional (the ``bench`` extra) and imported lazily.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from podium.health.checks.base import check, provenance
from podium.health.checks.services import check_dcgm
from podium.health.dcgm import parse_dcgm_diag
from podium.health.models import Action
from podium.models.common import Status
from podium.models.results import CheckResult
from podium.runner import CommandRunner

ACTIVE_IDS = ("active.dcgm-diag", "active.gemm-stress", "active.gpu-memory", "active.nccl-allreduce")
_DCGM_TIMEOUT = {1: 300, 2: 900, 3: 3600, 4: 10800}


def skipped_all(host: str, reason: str) -> list[CheckResult]:
    return [
        check(
            cid,
            cid.split(".", 1)[1] + " skipped",
            Status.SKIPPED,
            prov=provenance("podium health", host),
            reason=reason,
        )
        for cid in ACTIVE_IDS
    ]


def run_dcgm_diag(runner: CommandRunner, host: str, level: int) -> CheckResult:
    """``dcgmi diag -r LEVEL -j`` when DCGM is installed."""
    out = runner.run(
        ["dcgmi", "diag", "-r", str(level), "-j"], timeout=_DCGM_TIMEOUT[level], name=f"dcgmi-diag-r{level}"
    )
    prov = out.provenance()
    if not out.ran:
        return check(
            "active.dcgm-diag",
            "DCGM diagnostic skipped",
            Status.SKIPPED,
            prov=prov,
            reason=f"dcgmi {out.error}",
        )
    from podium.errors import ParseError

    try:
        diag = parse_dcgm_diag(out.stdout, out.command)
    except ParseError as e:
        return check(
            "active.dcgm-diag",
            "DCGM diagnostic output unreadable",
            Status.UNKNOWN,
            prov=prov,
            reason=f"{out.why_not() if not out.ok else ''} {e.problem}".strip(),
        )
    r = check_dcgm(diag, prov)
    return r.model_copy(update={"id": "active.dcgm-diag"})


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None, "torch is not installed (pip install 'podium[bench]')"
    if not torch.cuda.is_available():
        return None, "torch sees no CUDA device"
    return torch, None


def gemm_checksum_loop(
    torch: Any,
    device: str,
    duration_s: float,
    size: int = 8192,
    watch=None,
    matmul=None,
    min_iterations: int = 2,
) -> dict[str, Any]:
    """Repeat one bf16 GEMM on fixed inputs for ``duration_s``; every result's checksum must equal the
    first one (a silent data corruption shows up as a different sum). ``watch()`` is polled for
    throttle reasons. ``matmul`` replaces ``a @ b`` (tests inject a faulty one). Works on CPU too,
    with float32."""
    matmul = matmul or (lambda x, y: x @ y)
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    g = torch.Generator(device="cpu").manual_seed(1234)
    a = torch.randn(size, size, generator=g).to(device=device, dtype=dtype)
    b = torch.randn(size, size, generator=g).to(device=device, dtype=dtype)
    ref = None
    iters = mismatches = 0
    throttles: set[str] = set()
    t0 = time.monotonic()
    flop_time = 0.0
    while True:
        t1 = time.monotonic()
        c = matmul(a, b)
        s = float(c.double().sum().item())  # .item() synchronises the device
        flop_time += time.monotonic() - t1
        iters += 1
        if ref is None:
            ref = s
        elif s != ref:
            mismatches += 1
        if watch is not None and iters % 10 == 0:
            throttles |= set(watch())
        if time.monotonic() - t0 >= duration_s and iters >= min_iterations:
            break
    tflops = 2 * size**3 * iters / flop_time / 1e12 if flop_time else 0.0
    return {
        "iterations": iters,
        "mismatches": mismatches,
        "checksum": ref,
        "tflops": round(tflops, 2),
        "throttle_reasons": sorted(throttles),
        "size": size,
        "dtype": str(dtype),
    }


def _throttle_watch(index: int):
    from podium.health.nvml import nvml_available

    if not nvml_available():
        return None
    import pynvml as n

    n.nvmlInit()
    h = n.nvmlDeviceGetHandleByIndex(index)

    def watch() -> list[str]:
        from podium.health.nvml import _REASONS

        bits = n.nvmlDeviceGetCurrentClocksEventReasons(h)
        return [
            name
            for bit, name in _REASONS.items()
            if bits & bit
            and name
            in ("hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown", "hw_power_brake_slowdown")
        ]

    return watch


def run_gemm_stress(host: str, duration_s: float) -> CheckResult:
    torch, why = _torch_cuda()
    prov = provenance(f"podium GEMM stress {duration_s:g}s", host)
    if torch is None:
        return check("active.gemm-stress", "GEMM stress skipped", Status.SKIPPED, prov=prov, reason=why)
    per_gpu = {}
    for i in range(torch.cuda.device_count()):
        per_gpu[i] = gemm_checksum_loop(torch, f"cuda:{i}", duration_s, watch=_throttle_watch(i))
    bad = {i: r for i, r in per_gpu.items() if r["mismatches"]}
    thr = {i: r for i, r in per_gpu.items() if r["throttle_reasons"]}
    status = Status.FAIL if bad else Status.WARN if thr else Status.PASS
    return check(
        "active.gemm-stress",
        "GEMM results differ between iterations" if bad else "GEMM stress stable",
        status,
        prov=prov,
        action=Action.RMA if bad else Action.NONE,
        evidence=[
            (
                f"GPU {i}: {r['iterations']} iterations, {r['mismatches']} checksum mismatches, "
                f"{r['tflops']} TFLOPS, throttle {r['throttle_reasons'] or 'none'}",
                r["tflops"],
            )
            for i, r in per_gpu.items()
        ],
        details={"per_gpu": per_gpu},
    )


_PATTERN = 0x5A5A5A5A5A5A5A5A


def pattern_check(torch: Any, device: str, n_words: int, chunk_words: int = 1 << 28, corrupt=None) -> int:
    """Write ``n_words`` 64-bit words (address XOR pattern) chunk by chunk, read each back, count
    mismatches. ``corrupt(tensor)`` lets tests flip bits between the write and the read."""
    errors = 0
    for start in range(0, n_words, chunk_words):
        m = min(chunk_words, n_words - start)
        addr = torch.arange(start, start + m, device=device, dtype=torch.int64)
        stored = addr ^ _PATTERN
        if corrupt is not None:
            corrupt(stored)
        errors += int(((stored ^ _PATTERN) != addr).sum().item())
        del addr, stored
    return errors


def run_memory_test(host: str, fraction: float = 0.8) -> CheckResult:
    """Fill most of each GPU's free memory with a position-dependent pattern and read it back."""
    torch, why = _torch_cuda()
    prov = provenance("podium GPU memory test", host)
    if torch is None:
        return check("active.gpu-memory", "GPU memory test skipped", Status.SKIPPED, prov=prov, reason=why)
    ev, failed = [], False
    for i in range(torch.cuda.device_count()):
        free, _total = torch.cuda.mem_get_info(i)
        n = int(free * fraction) // 8
        errors = pattern_check(torch, f"cuda:{i}", n)
        torch.cuda.empty_cache()
        failed |= errors > 0
        ev.append((f"GPU {i}: {n * 8 / 2**30:.1f} GiB tested, {errors} mismatches", errors))
    return check(
        "active.gpu-memory",
        "GPU memory errors" if failed else "GPU memory test clean",
        Status.FAIL if failed else Status.PASS,
        prov=prov,
        action=Action.RMA if failed else Action.NONE,
        evidence=ev,
    )


def allreduce_worker(
    rank: int, world: int, port: int, result_path: str, backend: str = "nccl", numel: int = 64 * 1024 * 1024
) -> None:
    """One rank of the all-reduce test (256 MiB fp32 by default). ``backend='gloo'`` runs on CPU."""
    import json
    import os

    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    cuda = backend == "nccl"
    if cuda:
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, rank=rank, world_size=world)
    x = torch.ones(numel, device=f"cuda:{rank}" if cuda else "cpu", dtype=torch.float32)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    for _ in range(3):
        dist.all_reduce(x)
        x.fill_(1.0)
    sync()
    iters = 10
    t0 = time.monotonic()
    for _ in range(iters):
        dist.all_reduce(x)
    sync()
    dt = (time.monotonic() - t0) / iters
    x.fill_(1.0)
    dist.all_reduce(x)
    correct = bool(torch.all(x == float(world)).item())
    size = x.numel() * 4
    busbw = size / dt * 2 * (world - 1) / world / 1e9 if world > 1 else 0.0
    if rank == 0:
        with open(result_path, "w") as fh:
            json.dump({"busbw_gbps": round(busbw, 2), "correct": correct, "world": world, "bytes": size}, fh)
    dist.destroy_process_group()


def run_nccl_allreduce(host: str) -> CheckResult:
    torch, why = _torch_cuda()
    prov = provenance("podium single-node NCCL all-reduce (torch.distributed)", host)
    if torch is None:
        return check(
            "active.nccl-allreduce", "NCCL all-reduce skipped", Status.SKIPPED, prov=prov, reason=why
        )
    import json
    import socket
    import tempfile

    import torch.multiprocessing as mp

    world = torch.cuda.device_count()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/result.json"
        mp.spawn(allreduce_worker, args=(world, port, path), nprocs=world, join=True)
        res = json.loads(Path(path).read_text())
    ok = res["correct"]
    return check(
        "active.nccl-allreduce",
        f"NCCL all-reduce over {world} GPU(s)" + ("" if ok else ": wrong result"),
        Status.PASS if ok else Status.FAIL,
        prov=prov,
        action=Action.NONE if ok else Action.DRAIN,
        evidence=[(f"bus bandwidth {res['busbw_gbps']} GB/s, {res['bytes']} bytes", res["busbw_gbps"])],
        details=res,
    )


def run_active(
    runner: CommandRunner, host: str, mode: str, burnin_s: float | None, no_gpu_reason: str | None
) -> list[CheckResult]:
    """Active checks for ``--full`` (dcgmi -r 3 + 60 s GEMM) and ``--burnin`` (dcgmi -r 4 + N s GEMM)."""
    if no_gpu_reason:
        return skipped_all(host, no_gpu_reason)
    level = 4 if mode == "burnin" else 3
    duration = burnin_s if burnin_s is not None else 60.0
    return [
        run_dcgm_diag(runner, host, level),
        run_gemm_stress(host, duration),
        run_memory_test(host),
        run_nccl_allreduce(host),
    ]
