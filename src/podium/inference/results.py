"""The sweep result file (``podium inference sweep --out``) and loading any result file for compare."""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from podium.errors import InputError, ParseError
from podium.inference.metrics import SweepPoint
from podium.inference.system import EconomicsSource, SystemDescription
from podium.models.common import Evidence

SWEEP_KIND = "podium.inference.sweep"


class CurveShape(BaseModel):
    """Whether the curve looks like a real throughput/latency trade-off, in concurrency order."""

    model_config = ConfigDict(extra="forbid")

    points: int
    throughput_rising: bool = Field(description="Total tok/s/GPU strictly rises with concurrency")
    interactivity_falling: bool = Field(description="InferenceX median interactivity strictly falls")
    interactivity_falling_vllm: bool = Field(
        False, description="vLLM-convention interactivity (output tok/s ÷ concurrency) strictly falls"
    )
    throughput_per_gpu: list[float] = Field(default_factory=list, description="In concurrency order")
    interactivity: list[float | None] = Field(
        default_factory=list, description="InferenceX median interactivity, in concurrency order"
    )
    interactivity_vllm: list[float | None] = Field(
        default_factory=list, description="vLLM-convention interactivity, in concurrency order"
    )


class SweepResult(BaseModel):
    """A concurrency sweep of one system: the points, their curve, and where every number came from."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["podium.inference.sweep"] = SWEEP_KIND
    schema_version: int = 1
    system: SystemDescription
    economics: EconomicsSource
    base_url: str | None = Field(None, description="Server measured (no credentials)")
    api: str | None = Field(None, description="chat | completions")
    concurrencies: list[int] = Field(default_factory=list)
    points: list[SweepPoint] = Field(default_factory=list)
    curve: CurveShape | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    host: str | None = None
    podium_version: str | None = None
    run_id: str | None = None
    run_dir: str | None = Field(None, description="Run directory holding the raw per-request records")
    notes: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list, description="Levels that could not be measured, with why")


def curve_shape(points: list[SweepPoint]) -> CurveShape:
    ordered = sorted(points, key=lambda p: p.concurrency)
    tput = [p.throughput_per_gpu.total for p in ordered]
    intv = [p.interactivity_inferencex.p50 for p in ordered]
    vllm = [p.interactivity_vllm.value for p in ordered]
    rising = len(tput) >= 2 and all(b > a for a, b in itertools.pairwise(tput))
    return CurveShape(
        points=len(ordered),
        throughput_rising=rising,
        interactivity_falling=_strictly_falling(intv),
        interactivity_falling_vllm=_strictly_falling(vllm),
        throughput_per_gpu=tput,
        interactivity=intv,
        interactivity_vllm=vllm,
    )


def _strictly_falling(values: list[float | None]) -> bool:
    return (
        len(values) >= 2
        and all(v is not None for v in values)
        and all(b < a for a, b in itertools.pairwise(values))  # type: ignore[operator]
    )


def load_result_file(path: str | Path) -> tuple[str, object]:
    """Read a result file: ('sweep', SweepResult) or ('inferencex', [InferenceXRow, ...])."""
    from podium.inference.inferencex import looks_like_row, parse_rows

    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    if not text.strip():
        raise ParseError(p, "empty file")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ParseError(p, f"not JSON: {e}") from None
    if isinstance(data, dict) and data.get("kind") == SWEEP_KIND:
        try:
            return "sweep", SweepResult.model_validate(data)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise ParseError(p, f"not a valid podium sweep result: {where}: {first['msg']}") from None
    if looks_like_row(data):
        return "inferencex", parse_rows(text, str(p))
    raise ParseError(p, "neither a podium sweep result nor an InferenceX agg_*.json row")
