"""Numerics consistency: the same seeded workload on every device, compared across devices.

Each device computes a chain of GEMMs, reductions and a few SGD training steps of a small MLP from
a fixed seed, and records a SHA-256 of every output's bytes plus a float64 summary of it.

* Devices of the same SKU must agree **bitwise**. The majority digest of each output is taken as
  correct; a device that differs is flagged (``fail``) as possible silent data corruption.
* Across SKUs, results may differ in the last bits (different kernels), so each SKU group's
  summaries are compared with the largest group's within a relative tolerance.
* A single device has nothing to compare with: ``unknown``.
``corrupt_rank`` flips one bit in one output of that rank, to show that the check catches it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from podium.bench.devices import Device, hostname, import_torch
from podium.bench.model import BenchResult
from podium.bench.references import sku_of
from podium.models.common import Status

DEFAULT_RTOL = 1e-3


class NumericsRecord(BaseModel):
    """What one device computed."""

    rank: int
    host: str
    device: str
    sku: str | None = None
    digests: dict[str, str]
    summaries: dict[str, float] = Field(description="float64 sum of each output, for cross-SKU tolerance")


def workload(torch: Any, device: str, seed: int = 1234, size: int = 256, dtype: Any = None) -> dict[str, Any]:
    """The seeded workload: outputs by name (tensors on CPU)."""
    dtype = dtype or torch.float32
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(size, size, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)
    ws = [
        torch.randn(size, size, generator=g, dtype=torch.float32).to(device=device, dtype=dtype) / size**0.5
        for _ in range(3)
    ]
    out: dict[str, Any] = {}
    h = x
    for i, w in enumerate(ws):
        h = torch.tanh(h @ w)
        out[f"gemm_chain_{i}"] = h
    v = torch.randn(1 << 16, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)
    out["reduce_sum"] = v.sum().reshape(1)
    out["reduce_norm"] = torch.linalg.vector_norm(v.float()).reshape(1)
    # a few training steps of a 2-layer MLP, plain SGD, fixed data
    w1 = (torch.randn(size, 64, generator=g) / size**0.5).to(device).requires_grad_()
    w2 = (torch.randn(64, 1, generator=g) / 8).to(device).requires_grad_()
    data = torch.randn(128, size, generator=g).to(device)
    target = torch.randn(128, 1, generator=g).to(device)
    for _ in range(3):
        loss = ((torch.relu(data @ w1) @ w2 - target) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w1 -= 0.1 * w1.grad
            w2 -= 0.1 * w2.grad
            w1.grad = w2.grad = None
    out["train_w1"] = w1.detach()
    out["train_w2"] = w2.detach()
    return {k: v.detach().to("cpu").contiguous() for k, v in out.items()}


def flip_one_bit(torch: Any, t: Any) -> Any:
    """A copy of ``t`` with the lowest mantissa bit of its first element flipped (a planted SDC)."""
    t = t.clone()
    as_int = t.view(torch.int32) if t.dtype == torch.float32 else t.view(torch.int16)
    as_int.view(-1)[0] ^= 1
    return t


def record_for(torch: Any, outputs: dict[str, Any], rank: int, host: str, device_name: str) -> NumericsRecord:
    digests = {
        k: hashlib.sha256(
            v.numpy().tobytes() if v.dtype != torch.bfloat16 else v.view(torch.int16).numpy().tobytes()
        ).hexdigest()
        for k, v in outputs.items()
    }
    summaries = {k: float(v.double().sum().item()) for k, v in outputs.items()}
    return NumericsRecord(
        rank=rank,
        host=host,
        device=device_name,
        sku=sku_of(device_name),
        digests=digests,
        summaries=summaries,
    )


def compute(
    devices: list[Device], first_rank: int = 0, corrupt_rank: int | None = None, repeat_cpu: int = 3
) -> list[NumericsRecord]:
    """Run the workload on every local device (on a CPU-only host, ``repeat_cpu`` times as separate ranks)."""
    torch = import_torch()
    targets = devices if devices[0].kind == "cuda" else devices * repeat_cpu
    records = []
    for i, dev in enumerate(targets):
        rank = first_rank + i
        outputs = workload(torch, dev.torch_device)
        if corrupt_rank == rank:
            outputs["gemm_chain_2"] = flip_one_bit(torch, outputs["gemm_chain_2"])
        records.append(record_for(torch, outputs, rank, hostname(), dev.name))
    return records


def compare(records: list[NumericsRecord], rtol: float = DEFAULT_RTOL) -> list[BenchResult]:
    """One result per device: ``pass`` when it agrees, ``fail`` (with the outputs) when it does not."""
    results: dict[int, BenchResult] = {}
    for r in records:
        results[r.rank] = BenchResult(
            benchmark="numerics",
            metric="mismatched_outputs",
            value=0.0,
            unit="outputs",
            host=r.host,
            device=r.device,
            sku=r.sku,
            params={"rank": r.rank, "outputs": len(r.digests), "rtol": rtol},
            verdict=Status.PASS,
        )
    if len(records) < 2:
        for res in results.values():
            res.verdict, res.reason = Status.UNKNOWN, "only one device: nothing to compare with"
        return list(results.values())
    groups: dict[str, list[NumericsRecord]] = {}
    for r in records:
        groups.setdefault(r.sku or r.device, []).append(r)
    majority_summary: dict[str, dict[str, float]] = {}
    for key, members in groups.items():
        names = members[0].digests.keys()
        if len(members) == 1:
            majority_summary[key] = members[0].summaries
            results[members[0].rank].params["bitwise_peers"] = 0
            continue
        majority = {}
        for name in names:
            digest, votes = Counter(m.digests.get(name) for m in members).most_common(1)[0]
            majority[name] = digest
            if votes * 2 <= len(members):
                for m in members:
                    _flag(
                        results[m.rank], name, f"no majority among {len(members)} {key} devices for '{name}'"
                    )
                continue
            for m in members:
                if m.digests.get(name) != digest:
                    _flag(
                        results[m.rank],
                        name,
                        f"'{name}' differs bitwise from {votes} of {len(members)} {key} devices",
                    )
        good = next((m for m in members if all(m.digests.get(n) == majority[n] for n in names)), members[0])
        majority_summary[key] = good.summaries
        for m in members:
            results[m.rank].params["bitwise_peers"] = len(members) - 1
    if len(groups) > 1:
        base_key = max(groups, key=lambda k: len(groups[k]))
        base = majority_summary[base_key]
        for key, members in groups.items():
            if key == base_key:
                continue
            for m in members:
                for name, val in m.summaries.items():
                    ref = base.get(name)
                    if ref is None:
                        continue
                    if abs(val - ref) > rtol * max(abs(ref), 1e-12):
                        _flag(
                            results[m.rank], name, f"'{name}' off by more than rtol={rtol:g} from {base_key}"
                        )
    cpu_repeat = all(r.device.startswith("cpu") for r in records)
    for res in results.values():
        if cpu_repeat:
            res.params["note"] = (
                "CPU-only: repeated runs on the host CPU (a determinism check, not cross-GPU)"
            )
        if res.params.get("bitwise_peers") == 0 and len(groups) == 1:
            res.verdict, res.reason = Status.UNKNOWN, "no other device of this SKU to compare bitwise"
    return sorted(results.values(), key=lambda r: r.params["rank"])


def _flag(res: BenchResult, output: str, why: str) -> None:
    res.verdict = Status.FAIL
    res.value = (res.value or 0.0) + 1
    res.params.setdefault("mismatches", []).append(output)
    res.reason = f"possible silent data corruption: {why}" if not res.reason else f"{res.reason}; {why}"
