"""Typed inputs and outputs of ``podium endpoint bench`` (the public, stable load-generator API).

Definitions (kept per request in ``requests.jsonl``; see docs/endpoint.md):

* **TTFT**: from the moment the request is handed to the socket to the arrival of the first SSE
  chunk that carries content (``delta.content``, ``delta.reasoning_content``/``reasoning`` or
  ``text``). A role-only first chunk does not count.
* **ITL**: the gaps between consecutive content-carrying chunks of one request.
* **TPOT**: ``(E2E - TTFT) / (output_tokens - 1)``; undefined for a 1-token answer.
* **E2E**: from handing the request to the socket to the end of the response body.
* **Queue time**: from the moment the schedule wanted the request sent to the moment it was sent.
  It is reported apart and never folded into latency (no coordinated omission hides here: the
  schedule is fixed up front, so a late send shows up as queue time, not as a missing request).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from podium.models.common import Provenance, utcnow

ApiKind = Literal["chat", "completions"]
ArrivalKind = Literal["poisson", "gamma"]
TokenCountSource = Literal["usage", "tokenizer", "chars-estimate", "mixed", "none"]

# Failure kinds: one taxonomy for bench, monitor and audit probes.
FAILURE_KINDS = (
    "http_401",
    "http_402",
    "http_403",
    "http_404",
    "http_429",
    "http_4xx",
    "http_5xx",
    "timeout",
    "connect_error",
    "tls_error",
    "stream_cut",
    "empty_response",
    "malformed_sse",
    "error_event",
    "response_too_large",
    "protocol_error",
)


class EndpointBenchConfig(BaseModel):
    """What to measure and how to load the endpoint. Never holds the API key itself."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(description="Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1")
    model: str = Field(description="Model name sent in each request")
    api: ApiKind = Field("chat", description="chat = /chat/completions, completions = /completions")
    api_key_env: str | None = Field(
        None, description="Name of the environment variable that holds the API key (never the key)"
    )
    concurrency: list[int] = Field(
        default_factory=lambda: [1],
        description="Closed-loop levels: this many requests in flight; one level per value",
    )
    max_concurrency: int | None = Field(None, ge=1, description="Open-loop cap on in-flight requests")
    rate: float | None = Field(
        None, description="Open-loop arrival rate in requests/s (one level); overrides closed-loop"
    )
    rates: list[float] = Field(default_factory=list, description="Several open-loop rate levels")
    arrival: ArrivalKind = Field("poisson", description="Inter-arrival distribution for --rate")
    burstiness: float = Field(1.0, gt=0, description="Gamma shape; 1.0 is Poisson, <1 is burstier")
    requests: int | None = Field(None, ge=1, description="Measured requests per level")
    duration_s: float | None = Field(None, gt=0, description="Duration of each level in seconds")
    warmup: int = Field(0, ge=0, description="Warm-up requests per level, not counted")
    input_tokens: int = Field(128, ge=1, description="Random dataset: mean input length (tokens)")
    output_tokens: int = Field(128, ge=1, description="Requested output length (max_tokens)")
    range_ratio: float = Field(0.0, ge=0, lt=1, description="Lengths drawn uniformly in [n(1-r), n(1+r)]")
    dataset: str = Field("random", description="'random', or a path to a JSONL or ShareGPT JSON file")
    dataset_format: Literal["auto", "jsonl", "sharegpt"] = "auto"
    seed: int = Field(0, description="Seed for prompts, lengths and arrivals")
    slo_ttft_ms: float | None = Field(None, gt=0, description="Goodput SLO on TTFT")
    slo_tpot_ms: float | None = Field(None, gt=0, description="Goodput SLO on TPOT")
    slo_e2e_ms: float | None = Field(None, gt=0, description="Goodput SLO on E2E")
    timeout_s: float = Field(300.0, gt=0, description="Whole-request timeout")
    idle_timeout_s: float = Field(60.0, gt=0, description="Longest gap allowed between received bytes")
    max_response_bytes: int = Field(16 * 1024 * 1024, ge=1024, description="Cap on one response body")
    ignore_eos: bool = Field(False, description="Send ignore_eos=true (vLLM/SGLang) to force output length")
    extra_body: dict = Field(default_factory=dict, description="Extra JSON fields merged into each request")
    tokenizer: str | None = Field(None, description="Local tokenizer path used when usage is missing")
    verify_tls: bool = True
    ca_file: str | None = None
    # Sweep until saturation (closed loop): double concurrency from concurrency[0].
    sweep: bool = Field(False, description="Double concurrency until saturation or errors")
    sweep_max_concurrency: int = Field(1024, ge=1)
    saturation_gain: float = Field(
        0.10, ge=0, description="Stop when output tok/s grows by less than this fraction"
    )
    max_error_rate: float = Field(0.05, ge=0, le=1, description="Stop the sweep above this failure rate")
    # Cost
    price: str | None = Field(
        None, description="Price-table key 'provider/model' (src/podium/data/endpoint_prices.yaml)"
    )
    price_input_per_m: float | None = Field(None, ge=0, description="USD per million input tokens")
    price_output_per_m: float | None = Field(None, ge=0, description="USD per million output tokens")
    gpu_hour_usd: float | None = Field(None, ge=0, description="Dedicated endpoint: USD per GPU-hour")
    gpu_count: int = Field(1, ge=1)

    @field_validator("concurrency")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        if not v or any(c < 1 for c in v):
            raise ValueError("concurrency needs at least one value, each at least 1")
        return v

    @model_validator(mode="after")
    def _stop_condition(self) -> EndpointBenchConfig:
        if self.requests is None and self.duration_s is None:
            self.requests = 100
        if any(r <= 0 for r in self.rate_levels()):
            raise ValueError("rates must be positive")
        return self

    def rate_levels(self) -> list[float]:
        return list(self.rates) if self.rates else ([self.rate] if self.rate is not None else [])


class LatencyStats(BaseModel):
    """Percentiles of one latency, in milliseconds (None when no sample)."""

    model_config = ConfigDict(extra="forbid")

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    mean: float | None = None
    min: float | None = None
    max: float | None = None
    count: int = 0


class LevelMetrics(BaseModel):
    """Latency metrics of one level."""

    model_config = ConfigDict(extra="forbid")

    ttft_ms: LatencyStats
    itl_ms: LatencyStats
    tpot_ms: LatencyStats
    e2e_ms: LatencyStats
    queue_ms: LatencyStats = Field(description="Client queue time (late sends), reported apart")


class FailureSummary(BaseModel):
    """Failed requests: how many, and why (kind -> count), with a few examples."""

    model_config = ConfigDict(extra="forbid")

    count: int = 0
    reasons: dict[str, int] = Field(default_factory=dict)
    examples: list[str] = Field(default_factory=list, description="Up to 5 redacted error messages")


class CostEstimate(BaseModel):
    """What the measured traffic would cost at the given prices."""

    model_config = ConfigDict(extra="forbid")

    basis: Literal["per-token", "gpu-hour", "none"]
    usd: float | None = Field(None, description="Cost of the measured traffic")
    blended_usd_per_m_tokens: float | None = Field(
        None, description="USD per million tokens (input+output) at the measured mix"
    )
    usd_per_m_output_tokens: float | None = None
    input_usd_per_m: float | None = None
    output_usd_per_m: float | None = None
    gpu_hour_usd: float | None = None
    gpu_count: int | None = None
    price_key: str | None = None
    source: str | None = Field(None, description="Where the price came from")
    reason: str | None = Field(None, description="Why no cost could be computed")


class BenchLevel(BaseModel):
    """One load level: a concurrency or an arrival rate."""

    model_config = ConfigDict(extra="forbid")

    index: int
    concurrency: int | None = Field(None, description="Closed-loop in-flight requests (or cap with rate)")
    rate: float | None = Field(None, description="Open-loop arrival rate, requests/s")
    requests_ok: int
    requests_failed: FailureSummary
    requests_total: int
    duration_s: float = Field(description="From first send to last completion of measured requests")
    metrics: LevelMetrics
    output_tokens_per_s: float
    input_tokens_per_s: float
    total_tokens_per_s: float
    requests_per_s: float
    output_tokens_total: int
    input_tokens_total: int
    goodput_requests_per_s: float | None = Field(None, description="Requests/s meeting every SLO given")
    goodput_fraction: float | None = None
    token_count_source: TokenCountSource
    error_rate: float
    cost: CostEstimate | None = None


class EndpointBenchReport(BaseModel):
    """Output of ``podium endpoint bench`` (``--json``)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    kind: Literal["endpoint-bench"] = "endpoint-bench"
    base_url: str
    model: str
    api: ApiKind
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    config: EndpointBenchConfig
    levels: list[BenchLevel] = Field(default_factory=list)
    token_count_source: TokenCountSource = "none"
    cost: CostEstimate | None = Field(None, description="Cost of the whole run, all levels")
    stopped_because: str | None = Field(None, description="Why a sweep stopped")
    run_id: str | None = None
    run_dir: str | None = None
    provenance: Provenance | None = None


class RequestRecord(BaseModel):
    """One request as measured; one JSON line in ``requests.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    level: int
    index: int
    warmup: bool = False
    ok: bool
    error_kind: str | None = None
    error: str | None = None
    http_status: int | None = None
    request_id: str | None = Field(None, description="Server request id (x-request-id or the body's id)")
    sent_unix_ns: int = Field(description="Wall clock when the request was handed to the socket")
    scheduled_offset_s: float = Field(description="When the schedule wanted it sent, from level start")
    queue_ms: float
    connect_ms: float = Field(0.0, description="Connection set-up paid by this request (0 when reused)")
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    tpot_ms: float | None = None
    itl_ms: list[float] = Field(default_factory=list)
    chunk_offsets_ms: list[float] = Field(
        default_factory=list, description="Arrival of each content chunk from send"
    )
    input_tokens: int | None = None
    output_tokens: int | None = None
    token_count_source: TokenCountSource = "none"
    output_chars: int = 0
    finish_reason: str | None = None
