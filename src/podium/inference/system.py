"""What was measured: the serving system (GPU SKU, layout, engine, precision, workload, price, power).

A sweep result carries one :class:`SystemDescription`. Price and power are what turn a
throughput curve into $/M tokens and tokens per MW; when the user gives none, the
published defaults in ``podium/data/inference/gpu_economics.yaml`` are used and the
result says so (:class:`EconomicsSource`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from podium.errors import InputError


class SystemDescription(BaseModel):
    """One serving deployment, described the way InferenceX rows describe it."""

    model_config = ConfigDict(extra="forbid")

    hw: str = Field(
        description="GPU SKU label, lower case as InferenceX writes it: 'h200', 'b200', 'mi355x', 'cpu'"
    )
    gpu_count: int | None = Field(
        None, ge=1, description="GPUs serving the deployment; defaults to tp × pp × dp"
    )
    tp: int = Field(1, ge=1, description="Tensor-parallel size")
    pp: int = Field(1, ge=1, description="Pipeline-parallel size")
    dp: int = Field(1, ge=1, description="Data-parallel replicas")
    ep: int = Field(1, ge=1, description="Expert-parallel size (MoE)")
    engine: str = Field(description="Serving engine: vllm, sglang, trtllm, transformers, ...")
    engine_version: str | None = Field(None, description="Engine version or container image")
    model: str = Field(description="Model served (Hugging Face id or local path)")
    precision: str = Field(description="Weights/compute precision: bf16, fp8, fp4, int4, ...")
    isl: int = Field(ge=1, description="Input sequence length per request, tokens")
    osl: int = Field(ge=1, description="Output sequence length per request, tokens")
    price_usd_per_gpu_hour: float | None = Field(
        None, gt=0, description="All-in price (TCO or rental) in USD per GPU-hour"
    )
    power_kw_per_gpu: float | None = Field(
        None, gt=0, description="All-in provisioned power per GPU in kW (GPU + host + network + facility)"
    )
    notes: list[str] = Field(default_factory=list, description="Caveats, e.g. 'randomly initialised weights'")

    @model_validator(mode="after")
    def _fill_gpu_count(self) -> SystemDescription:
        self.hw = self.hw.strip().lower()
        self.precision = self.precision.strip().lower()
        if self.gpu_count is None:
            self.gpu_count = self.tp * self.pp * self.dp
        return self

    @property
    def gpus(self) -> int:
        return int(self.gpu_count or 1)


class EconomicsSource(BaseModel):
    """Where a price or power figure came from."""

    model_config = ConfigDict(extra="forbid")

    price_usd_per_gpu_hour: float | None = None
    price_source: Literal["system", "flag", "default-table", "none"] = "none"
    power_kw_per_gpu: float | None = None
    power_source: Literal["system", "flag", "default-table", "none"] = "none"
    reference: str | None = Field(None, description="Citation of the default table when it was used")


class GpuEconomicsEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    price_usd_per_gpu_hour: float = Field(gt=0)
    power_kw_per_gpu: float = Field(gt=0)


class GpuEconomicsTable(BaseModel):
    """The bundled default price/power table (data file, with its source)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    as_of: str
    source: dict[str, str]
    gpus: dict[str, GpuEconomicsEntry]

    def citation(self) -> str:
        return f"{self.source.get('name', '?')} ({self.as_of}); {self.source.get('url', '')}".strip()


@lru_cache(maxsize=1)
def default_economics() -> GpuEconomicsTable:
    """Load ``podium/data/inference/gpu_economics.yaml``."""
    text = resources.files("podium").joinpath("data/inference/gpu_economics.yaml").read_text()
    return GpuEconomicsTable.model_validate(yaml.safe_load(text))


def resolve_economics(
    hw: str,
    system_price: float | None = None,
    system_power: float | None = None,
    flag_price: float | None = None,
    flag_power: float | None = None,
) -> EconomicsSource:
    """Pick price and power: a flag wins over the system file, which wins over the default table."""
    table = default_economics()
    entry = table.gpus.get(hw.strip().lower())
    out = EconomicsSource()
    for attr, flag, own in (
        ("price_usd_per_gpu_hour", flag_price, system_price),
        ("power_kw_per_gpu", flag_power, system_power),
    ):
        src = attr.split("_")[0] + "_source"
        if flag is not None:
            setattr(out, attr, flag)
            setattr(out, src, "flag")
        elif own is not None:
            setattr(out, attr, own)
            setattr(out, src, "system")
        elif entry is not None:
            setattr(out, attr, getattr(entry, attr))
            setattr(out, src, "default-table")
            out.reference = table.citation()
    return out


def load_system(path: str | Path) -> SystemDescription:
    """Read a system description from a YAML or JSON file; bad input is one-line InputError."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as e:
        raise InputError(p, f"not valid {'JSON' if p.suffix == '.json' else 'YAML'}: {e}") from None
    if not isinstance(data, dict):
        raise InputError(p, "expected a mapping of system fields")
    try:
        return SystemDescription.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(root)"
        raise InputError(p, f"{where}: {first['msg']}") from None
