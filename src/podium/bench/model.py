"""Typed results of the benchmark suite."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from podium.models.common import Provenance, Status


class Reference(BaseModel):
    """What a result is judged against: a sourced target with tolerances (ReFrame-style)."""

    model_config = ConfigDict(extra="forbid")

    sku: str = Field(description="Canonical SKU, e.g. 'H100'")
    benchmark: str
    metric: str
    target: float
    unit: str
    pass_within: float = Field(0.05, description="Fraction short of target that still passes")
    warn_within: float = Field(0.15, description="Fraction short of target that still warns; beyond fails")
    higher_is_better: bool = True
    scope: str = Field("per_gpu", description="per_gpu | node | per_nic | per_link")
    gpus: int | None = Field(None, description="GPU count the reference was measured with (collectives)")
    dtype: str | None = None
    op: str | None = Field(None, description="Collective operation, e.g. 'all_reduce'")
    source: str = Field(description="Where the number comes from (URL, repository@commit, datasheet)")
    note: str | None = None


class BenchResult(BaseModel):
    """One measured number, its breakdown, the reference it was judged against and the verdict."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str = Field(description="gemm | hbm | collectives | nccl_tests | ib_write_bw | storage | ...")
    metric: str = Field(description="e.g. tflops, busbw_gbps, copy_gbps, tokens_per_s, iops")
    value: float | None = Field(None, description="None when the benchmark could not run")
    unit: str = ""
    host: str | None = None
    device: str | None = Field(
        None, description="Device name as reported, e.g. 'NVIDIA H100 80GB HBM3' or 'cpu'"
    )
    sku: str | None = Field(None, description="Canonical SKU the device maps to, when known")
    dtype: str | None = None
    params: dict[str, Any] = Field(default_factory=dict, description="Shape, message size, world size...")
    breakdown: list[dict[str, Any]] = Field(
        default_factory=list, description="Per-GPU / per-node / per-size values behind `value`"
    )
    reference: Reference | None = None
    verdict: Status = Status.UNKNOWN
    reason: str | None = Field(None, description="Why the verdict is unknown/skipped, or what failed")
    raw_output: str | None = Field(None, description="Raw output file, relative to the run directory")
    provenance: Provenance | None = None

    def key(self) -> tuple:
        return (self.benchmark, self.metric, self.dtype, self.host, self.device)


class BenchReport(BaseModel):
    """All results of one ``podium bench`` run."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    suite: list[str] = Field(default_factory=list)
    backend: str = "local"
    results: list[BenchResult] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.verdict.value] = out.get(r.verdict.value, 0) + 1
        return out


def skipped(benchmark: str, metric: str, reason: str, **kw: Any) -> BenchResult:
    """A benchmark that could not run here: ``skipped`` with its reason, never a pass."""
    return BenchResult(benchmark=benchmark, metric=metric, verdict=Status.SKIPPED, reason=reason, **kw)
