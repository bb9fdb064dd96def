"""Per-point inference metrics: throughput per GPU, interactivity (two conventions), $/M tokens, tokens/MW.

Formulas follow the InferenceX methodology (SemiAnalysisAI/InferenceX-app, "Formulas"):

- tokens per GPU-hour (millions) = tok/s/GPU × 3600 / 10⁶
- cost per million tokens         = $/GPU-hr ÷ (tok/s/GPU × 3600 / 10⁶)
- tokens per all-in MW (tok/s/MW) = tok/s/GPU × 1000 / kW per GPU
- joules per token                = kW per GPU × 1000 / tok/s/GPU

Interactivity has two conventions, and both are kept and labelled:

- **InferenceX** (``interactivity_inferencex``): ``1000 / TPOT_ms``, tok/s/user, per percentile
  (InferenceX's utils/process_result.py maps each ``*_tpot_ms`` onto ``*_intvty``; the charts use
  the median). Note that p99 interactivity is ``1000 / p99 TPOT``, the slow tail.
- **vLLM** (``interactivity_vllm``): ``output_throughput / concurrency``, tok/s/user, which also
  counts time to first token and client gaps in the per-user rate.

Everything here is pure: numbers in, numbers out.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from podium.inference.system import EconomicsSource, SystemDescription

SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1_000_000.0


class Percentiles(BaseModel):
    """p50/p90/p99/mean of one latency metric, in milliseconds."""

    model_config = ConfigDict(extra="ignore")

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    mean: float | None = None


class LevelMeasurement(BaseModel):
    """What the load generator measured at one concurrency level (input to :func:`compute_point`)."""

    model_config = ConfigDict(extra="ignore")

    concurrency: int = Field(ge=1)
    requests_ok: int = Field(0, ge=0)
    requests_failed: int = Field(0, ge=0)
    duration_s: float | None = Field(None, description="Wall time of the measured window")
    ttft_ms: Percentiles = Field(default_factory=Percentiles)
    tpot_ms: Percentiles = Field(default_factory=Percentiles)
    itl_ms: Percentiles = Field(default_factory=Percentiles)
    e2e_ms: Percentiles = Field(default_factory=Percentiles)
    output_tokens_per_s: float = Field(ge=0)
    total_tokens_per_s: float = Field(ge=0)
    input_tokens_per_s: float | None = Field(None, ge=0)
    token_count_source: str | None = None
    records_path: str | None = Field(None, description="Per-request records, relative to the run dir")


class ThroughputPerGpu(BaseModel):
    """Tokens per second per GPU."""

    model_config = ConfigDict(extra="forbid")

    total: float
    output: float
    input: float


class CostPerMillion(BaseModel):
    """USD per million tokens, by token basis; null fields carry the reason in ``reason``."""

    model_config = ConfigDict(extra="forbid")

    total: float | None = None
    output: float | None = None
    input: float | None = None
    reason: str | None = None


class TokensPerMegawatt(BaseModel):
    """Tokens per second per all-in MW, by token basis."""

    model_config = ConfigDict(extra="forbid")

    total: float | None = None
    output: float | None = None
    input: float | None = None
    joules_per_token: float | None = Field(None, description="All-in J per (total) token")
    reason: str | None = None


class InteractivityInferenceX(BaseModel):
    """InferenceX convention: 1000 / TPOT_ms, per TPOT percentile (tok/s/user)."""

    model_config = ConfigDict(extra="forbid")

    convention: str = "inferencex: 1000 / TPOT_ms"
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    mean: float | None = None


class InteractivityVllm(BaseModel):
    """vLLM convention: output tokens/s ÷ concurrency (tok/s/user)."""

    model_config = ConfigDict(extra="forbid")

    convention: str = "vllm: output_throughput / concurrency"
    value: float | None = None


class SweepPoint(BaseModel):
    """One concurrency level of a sweep, with every derived metric."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int
    requests_ok: int
    requests_failed: int
    throughput_per_gpu: ThroughputPerGpu
    interactivity_inferencex: InteractivityInferenceX
    interactivity_vllm: InteractivityVllm
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    itl_ms: Percentiles
    e2e_ms: Percentiles
    cost_per_million_tokens: CostPerMillion
    tokens_per_mw: TokensPerMegawatt
    token_count_source: str | None = None
    records_path: str | None = None

    def interactivity(self, convention: str = "inferencex") -> float | None:
        """The x axis of the curve: InferenceX median (default) or the vLLM convention."""
        if convention == "vllm":
            return self.interactivity_vllm.value
        return self.interactivity_inferencex.p50


def _finite_positive(x: float | None) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def cost_per_million_tokens(price_usd_per_gpu_hour: float, tokens_per_s_per_gpu: float) -> float | None:
    """$/GPU-hr ÷ (tok/s/GPU × 3600 / 10⁶). None when the throughput is zero or missing."""
    if not _finite_positive(tokens_per_s_per_gpu) or not _finite_positive(price_usd_per_gpu_hour):
        return None
    return price_usd_per_gpu_hour / (tokens_per_s_per_gpu * SECONDS_PER_HOUR / TOKENS_PER_MILLION)


def tokens_per_megawatt(tokens_per_s_per_gpu: float, power_kw_per_gpu: float) -> float | None:
    """tok/s/GPU × 1000 ÷ kW per GPU (tokens per second per all-in MW)."""
    if not _finite_positive(power_kw_per_gpu) or tokens_per_s_per_gpu is None:
        return None
    return tokens_per_s_per_gpu * 1000.0 / power_kw_per_gpu


def joules_per_token(power_kw_per_gpu: float, tokens_per_s_per_gpu: float) -> float | None:
    """kW per GPU × 1000 ÷ tok/s/GPU."""
    if not _finite_positive(tokens_per_s_per_gpu) or not _finite_positive(power_kw_per_gpu):
        return None
    return power_kw_per_gpu * 1000.0 / tokens_per_s_per_gpu


def interactivity_from_tpot_ms(tpot_ms: float | None) -> float | None:
    """InferenceX interactivity: 1000 / TPOT_ms (None for a missing or non-positive TPOT)."""
    if not _finite_positive(tpot_ms):
        return None
    return 1000.0 / float(tpot_ms)  # type: ignore[arg-type]


def cost_block(tput: ThroughputPerGpu, price: float | None) -> CostPerMillion:
    if price is None:
        return CostPerMillion(
            reason="no price: give --price SYSTEM=USD_PER_GPU_HOUR or price_usd_per_gpu_hour"
        )
    out = CostPerMillion(
        total=cost_per_million_tokens(price, tput.total),
        output=cost_per_million_tokens(price, tput.output),
        input=cost_per_million_tokens(price, tput.input),
    )
    if out.total is None:
        out.reason = "zero throughput: no tokens were served at this point"
    return out


def power_block(tput: ThroughputPerGpu, power_kw: float | None) -> TokensPerMegawatt:
    if power_kw is None:
        return TokensPerMegawatt(reason="no power figure: give power_kw_per_gpu or --power SYSTEM=KW")
    return TokensPerMegawatt(
        total=tokens_per_megawatt(tput.total, power_kw),
        output=tokens_per_megawatt(tput.output, power_kw),
        input=tokens_per_megawatt(tput.input, power_kw),
        joules_per_token=joules_per_token(power_kw, tput.total),
    )


def compute_point(
    system: SystemDescription, level: LevelMeasurement, economics: EconomicsSource | None = None
) -> SweepPoint:
    """Turn one measured level into a curve point for ``system``."""
    gpus = system.gpus
    input_tps = level.input_tokens_per_s
    if input_tps is None:
        input_tps = max(level.total_tokens_per_s - level.output_tokens_per_s, 0.0)
    tput = ThroughputPerGpu(
        total=level.total_tokens_per_s / gpus,
        output=level.output_tokens_per_s / gpus,
        input=input_tps / gpus,
    )
    price = economics.price_usd_per_gpu_hour if economics else system.price_usd_per_gpu_hour
    power = economics.power_kw_per_gpu if economics else system.power_kw_per_gpu
    return SweepPoint(
        concurrency=level.concurrency,
        requests_ok=level.requests_ok,
        requests_failed=level.requests_failed,
        throughput_per_gpu=tput,
        interactivity_inferencex=InteractivityInferenceX(
            p50=interactivity_from_tpot_ms(level.tpot_ms.p50),
            p90=interactivity_from_tpot_ms(level.tpot_ms.p90),
            p99=interactivity_from_tpot_ms(level.tpot_ms.p99),
            mean=interactivity_from_tpot_ms(level.tpot_ms.mean),
        ),
        interactivity_vllm=InteractivityVllm(value=level.output_tokens_per_s / level.concurrency),
        ttft_ms=level.ttft_ms,
        tpot_ms=level.tpot_ms,
        itl_ms=level.itl_ms,
        e2e_ms=level.e2e_ms,
        cost_per_million_tokens=cost_block(tput, price),
        tokens_per_mw=power_block(tput, power),
        token_count_source=level.token_count_source,
        records_path=level.records_path,
    )


def level_from_report_level(level: Any) -> LevelMeasurement:
    """Adapt one level of an endpoint bench report (pydantic model or dict) to :class:`LevelMeasurement`.

    Reads the documented field names of ``podium endpoint bench --json``: ``concurrency``,
    ``metrics.{ttft_ms,itl_ms,tpot_ms,e2e_ms}.{p50,p90,p99,mean}``, ``output_tokens_per_s``,
    ``total_tokens_per_s``, ``input_tokens_per_s``, ``requests_ok``, ``requests_failed``.
    """
    data = level.model_dump(mode="json") if hasattr(level, "model_dump") else dict(level)
    metrics = data.get("metrics") or {}
    failed = data.get("requests_failed", 0)
    if isinstance(failed, dict):  # failures may come as {count, reasons}
        failed = failed.get("count", sum(v for v in failed.values() if isinstance(v, int)))
    elif isinstance(failed, list):
        failed = len(failed)
    concurrency = data.get("concurrency")
    if concurrency is None:
        concurrency = (
            (data.get("level") or {}).get("concurrency") if isinstance(data.get("level"), dict) else None
        )
    return LevelMeasurement(
        concurrency=concurrency,
        requests_ok=data.get("requests_ok", 0),
        requests_failed=failed or 0,
        duration_s=data.get("duration_s"),
        ttft_ms=metrics.get("ttft_ms") or data.get("ttft_ms") or {},
        tpot_ms=metrics.get("tpot_ms") or data.get("tpot_ms") or {},
        itl_ms=metrics.get("itl_ms") or data.get("itl_ms") or {},
        e2e_ms=metrics.get("e2e_ms") or data.get("e2e_ms") or {},
        output_tokens_per_s=data.get("output_tokens_per_s") or metrics.get("output_tokens_per_s") or 0.0,
        total_tokens_per_s=data.get("total_tokens_per_s") or metrics.get("total_tokens_per_s") or 0.0,
        input_tokens_per_s=data.get("input_tokens_per_s", metrics.get("input_tokens_per_s")),
        token_count_source=data.get("token_count_source"),
        records_path=data.get("records_path"),
    )
