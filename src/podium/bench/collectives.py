"""Collectives through ``torch.distributed``: NCCL on GPUs, gloo on CPUs.

Bandwidths follow nccl-tests' PERFORMANCE.md:

* ``algbw = S / t`` with S the operation's size in bytes and t its time (GB/s = 1e9 B/s).
  S is the buffer of all_reduce/broadcast, the *total* gathered output of all_gather, the *total*
  input of reduce_scatter, and the whole send buffer of alltoall (as nccl-tests sizes them).
* ``busbw = algbw · factor(n)`` over n ranks: all_reduce 2(n−1)/n; all_gather, reduce_scatter and
  alltoall (n−1)/n; broadcast 1. busbw is comparable to the hardware's link bandwidth.

Times are the slowest rank's mean per iteration (max over ranks, like a synchronised collective).
Ranks come from torchrun/srun (RANK/WORLD_SIZE or SLURM_PROCID/SLURM_NTASKS) or, on one host,
from processes this module spawns.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from podium.bench.devices import hostname, import_torch
from podium.bench.model import BenchResult

OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")
SIZES = {
    "smoke": {"cpu": [1 << 16, 1 << 20], "cuda": [1 << 20, 1 << 26, 1 << 30]},
    "quick": {"cpu": [1 << 16, 1 << 20, 1 << 22], "cuda": [1 << p for p in range(20, 34, 2)]},
    "full": {"cpu": [1 << p for p in range(12, 25, 2)], "cuda": [1 << p for p in range(10, 34)]},
}


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' busbw/algbw ratio for ``op`` on ``n`` ranks."""
    if n < 1:
        raise ValueError("n must be >= 1")
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    if op in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    raise ValueError(f"unknown collective '{op}'")


def algbw_gbps(size_bytes: int, seconds: float) -> float:
    return size_bytes / seconds / 1e9


def busbw_gbps(op: str, size_bytes: int, seconds: float, n: int) -> float:
    return algbw_gbps(size_bytes, seconds) * bus_factor(op, n)


def _op_call(torch: Any, dist: Any, op: str, size_bytes: int, world: int, device: str):
    """Buffers and the call for one op. ``size_bytes`` is S as defined above; float32 elements."""
    count = max(world, size_bytes // 4 // world * world)  # divisible by world for the split ops
    f32 = torch.float32
    if op == "all_reduce":
        x = torch.ones(count, dtype=f32, device=device)
        return lambda: dist.all_reduce(x)
    if op == "broadcast":
        x = torch.ones(count, dtype=f32, device=device)
        return lambda: dist.broadcast(x, 0)
    if op == "all_gather":
        out = torch.empty(count, dtype=f32, device=device)
        inp = torch.ones(count // world, dtype=f32, device=device)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: gather(out, inp)
    if op == "reduce_scatter":
        inp = torch.ones(count, dtype=f32, device=device)
        out = torch.empty(count // world, dtype=f32, device=device)
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        return lambda: scatter(out, inp)
    if op == "alltoall":
        inp = torch.ones(count, dtype=f32, device=device)
        out = torch.empty(count, dtype=f32, device=device)
        return lambda: dist.all_to_all_single(out, inp)
    raise ValueError(f"unknown collective '{op}'")


def rank_main(
    rank: int, world: int, init_method: str, spec: dict[str, Any], out_path: str | None
) -> list[dict]:
    """Body of one rank: time every (op, size); rank 0 writes the rows to ``out_path``."""
    torch = import_torch()
    import torch.distributed as dist

    backend = spec.get("backend") or ("nccl" if torch.cuda.is_available() else "gloo")
    device = "cpu"
    if backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", os.environ.get("SLURM_LOCALID", rank)))
        torch.cuda.set_device(local % torch.cuda.device_count())
        device = f"cuda:{torch.cuda.current_device()}"
    dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world)
    rows = []
    try:
        for op in spec["ops"]:
            for size in spec["sizes"]:
                fn = _op_call(torch, dist, op, size, world, device)
                for _ in range(spec.get("warmup", 2)):
                    fn()
                if device != "cpu":
                    torch.cuda.synchronize()
                dist.barrier()
                iters = spec.get("iters", 5)
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                if device != "cpu":
                    torch.cuda.synchronize()
                elapsed = torch.tensor(
                    [(time.perf_counter() - t0) / iters], dtype=torch.float64, device=device
                )
                dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
                t = float(elapsed.item())
                rows.append(
                    {
                        "op": op,
                        "size_bytes": size,
                        "time_us": round(t * 1e6, 3),
                        "algbw_gbps": round(algbw_gbps(size, t), 6),
                        "busbw_gbps": round(busbw_gbps(op, size, t, world), 6),
                    }
                )
        hosts: list[str] = [""] * world
        dist.all_gather_object(hosts, hostname())
        if rank == 0 and out_path:
            device_name = torch.cuda.get_device_name() if device != "cpu" else "cpu"
            Path(out_path).write_text(
                json.dumps(
                    {
                        "rows": rows,
                        "world": world,
                        "backend": backend,
                        "device": device_name,
                        "hosts": hosts,
                    }
                )
            )
    finally:
        dist.destroy_process_group()
    return rows


def _spawn_entry(rank: int, world: int, init_method: str, spec: dict, out_path: str) -> None:
    rank_main(rank, world, init_method, spec, out_path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_rank() -> tuple[int, int, str] | None:
    """(rank, world, init_method) when launched by torchrun or srun with several tasks; else None."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env and int(env["WORLD_SIZE"]) > 1:
        rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
    elif "SLURM_PROCID" in env and int(env.get("SLURM_NTASKS", "1")) > 1:
        rank, world = int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"])
    else:
        return None
    addr = env.get("MASTER_ADDR", "127.0.0.1")
    port = env.get("MASTER_PORT", "29500")
    return rank, world, f"tcp://{addr}:{port}"


def measure(spec: dict[str, Any], local_world: int = 2) -> dict[str, Any] | None:
    """Run the collectives; returns rank 0's rows (None on other ranks of a launched job)."""
    torch = import_torch()
    launched = env_rank()
    with tempfile.TemporaryDirectory(prefix="podium-coll-") as tmp:
        out_path = str(Path(tmp) / "rows.json")
        if launched:
            rank, world, init = launched
            rows = rank_main(rank, world, init, spec, out_path if rank == 0 else None)
            if rank != 0:
                return None
            return json.loads(Path(out_path).read_text()) if rows is not None else None
        import torch.multiprocessing as mp

        world = local_world
        if torch.cuda.is_available():
            world = (
                min(local_world, torch.cuda.device_count()) if spec.get("backend") == "nccl" else local_world
            )
        init = f"tcp://127.0.0.1:{free_port()}"
        mp.spawn(_spawn_entry, args=(world, init, spec, out_path), nprocs=world, join=True)
        return json.loads(Path(out_path).read_text())


def to_results(data: dict[str, Any], on_gpu: bool) -> list[BenchResult]:
    """One result per op: busbw at the largest size (what references quote), all sizes in the breakdown."""
    out = []
    for op in dict.fromkeys(r["op"] for r in data["rows"]):
        rows = [r for r in data["rows"] if r["op"] == op]
        largest = max(rows, key=lambda r: r["size_bytes"])
        params: dict[str, Any] = {
            "op": op,
            "ranks": data["world"],
            "backend": data["backend"],
            "size_bytes": largest["size_bytes"],
            "algbw_gbps": largest["algbw_gbps"],
            "avg_busbw_gbps": round(sum(r["busbw_gbps"] for r in rows) / len(rows), 6),
            "nodes": len(set(data["hosts"])),
        }
        if on_gpu:
            params["gpus"] = data["world"]
        out.append(
            BenchResult(
                benchmark="collectives",
                metric="busbw_gbps",
                value=largest["busbw_gbps"],
                unit="GB/s",
                host=",".join(dict.fromkeys(data["hosts"])),
                device=data.get("device"),
                params=params,
                breakdown=rows,
            )
        )
    return out


def run(profile: str = "quick", local_world: int = 2, ops: list[str] | None = None) -> list[BenchResult]:
    torch = import_torch()
    on_gpu = torch.cuda.is_available()
    spec = {
        "ops": list(ops or OPS),
        "sizes": SIZES[profile]["cuda" if on_gpu else "cpu"],
        "backend": "nccl" if on_gpu else "gloo",
        "warmup": 2 if profile == "smoke" else 5,
        "iters": 3 if profile == "smoke" else 20,
    }
    if on_gpu and env_rank() is None:
        local_world = torch.cuda.device_count()
    data = measure(spec, local_world=local_world)
    return [] if data is None else to_results(data, on_gpu)
