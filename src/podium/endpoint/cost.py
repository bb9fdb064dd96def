"""Cost of measured traffic: per-token prices or a GPU-hour price, from the price table or flags."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, model_validator

from podium.endpoint.models import CostEstimate, EndpointBenchConfig
from podium.errors import InputError


class PriceEntry(BaseModel):
    """One row of src/podium/data/endpoint_prices.yaml."""

    model_config = ConfigDict(extra="forbid")

    key: str
    provider: str
    model: str
    input_usd_per_m: float | None = Field(None, ge=0)
    output_usd_per_m: float | None = Field(None, ge=0)
    gpu_hour_usd: float | None = Field(None, ge=0)
    source: str

    @model_validator(mode="after")
    def _one_basis(self) -> PriceEntry:
        per_token = self.input_usd_per_m is not None and self.output_usd_per_m is not None
        if per_token == (self.gpu_hour_usd is not None):
            raise ValueError(f"{self.key}: give either both per-token prices or gpu_hour_usd")
        return self


class PriceTable(BaseModel):
    """The bundled price table."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    updated: str
    entries: list[PriceEntry]

    def get(self, key: str) -> PriceEntry:
        for e in self.entries:
            if e.key == key:
                return e
        raise InputError(
            "--price", f"no price entry '{key}'; known: {', '.join(e.key for e in self.entries)}"
        )


def parse_price_table(text: str, source: str = "endpoint_prices.yaml") -> PriceTable:
    """Parse a price table document; InputError (naming the file) when it is not valid."""
    import yaml

    try:
        return PriceTable.model_validate(yaml.safe_load(text))
    except (yaml.YAMLError, ValueError) as e:
        raise InputError(source, f"invalid price table: {str(e).splitlines()[0]}") from None


@lru_cache(maxsize=1)
def price_table() -> PriceTable:
    text = resources.files("podium").joinpath("data", "endpoint_prices.yaml").read_text(encoding="utf-8")
    return parse_price_table(text)


def cost_basis(config: EndpointBenchConfig) -> CostEstimate:
    """The prices a run is costed at (no amounts yet)."""
    if config.price_input_per_m is not None or config.price_output_per_m is not None:
        if config.price_input_per_m is None or config.price_output_per_m is None:
            raise InputError("--price-input/--price-output", "give both per-million prices")
        return CostEstimate(
            basis="per-token",
            input_usd_per_m=config.price_input_per_m,
            output_usd_per_m=config.price_output_per_m,
            source="command-line flags",
        )
    if config.gpu_hour_usd is not None:
        return CostEstimate(
            basis="gpu-hour",
            gpu_hour_usd=config.gpu_hour_usd,
            gpu_count=config.gpu_count,
            source="command-line flags",
        )
    if config.price:
        e = price_table().get(config.price)
        if e.gpu_hour_usd is not None:
            return CostEstimate(
                basis="gpu-hour",
                gpu_hour_usd=e.gpu_hour_usd,
                gpu_count=config.gpu_count,
                price_key=e.key,
                source=e.source,
            )
        return CostEstimate(
            basis="per-token",
            input_usd_per_m=e.input_usd_per_m,
            output_usd_per_m=e.output_usd_per_m,
            price_key=e.key,
            source=e.source,
        )
    return CostEstimate(
        basis="none", reason="no price given (--price KEY, --price-input/--price-output or --gpu-hour-usd)"
    )


def estimate_cost(
    basis: CostEstimate, input_tokens: int, output_tokens: int, duration_s: float
) -> CostEstimate:
    """Cost of ``input_tokens``/``output_tokens`` served in ``duration_s`` at ``basis`` prices.

    Per-token: input x $/M in + output x $/M out. GPU-hour: GPUs x hours x $/GPU-hr (what a dedicated
    endpoint costs while the measured traffic ran). Blended $/M = cost / (input + output) x 1e6.
    """
    est = basis.model_copy()
    total = input_tokens + output_tokens
    if basis.basis == "none":
        return est
    if basis.basis == "per-token":
        usd = input_tokens / 1e6 * basis.input_usd_per_m + output_tokens / 1e6 * basis.output_usd_per_m
    else:
        usd = (basis.gpu_count or 1) * duration_s / 3600.0 * basis.gpu_hour_usd
    est.usd = round(usd, 8)
    est.blended_usd_per_m_tokens = round(usd / total * 1e6, 6) if total else None
    est.usd_per_m_output_tokens = round(usd / output_tokens * 1e6, 6) if output_tokens else None
    if not total:
        est.reason = "no tokens were served"
    return est
