"""InferenceX (formerly InferenceMAX) ``agg_*.json`` result rows: import and export.

The row format is the one written by SemiAnalysisAI/InferenceX ``utils/process_result.py``
(read at commit 77f3e680728b4026bb0b9e05dca7ba6cb5502362): one JSON object per benchmark run
with ``hw``, ``conc``, ``image``, ``model``, ``infmax_model_prefix``, ``framework``,
``precision``, ``spec_decoding``, ``disagg``, ``isl``, ``osl``, ``is_multinode``, ``tp``,
``ep``, ``dp_attention``, ``tput_per_gpu`` (total tok/s ÷ GPUs), ``output_tput_per_gpu``,
``input_tput_per_gpu``, and for every ``*_ms`` metric of the benchmark client the same name
without ``_ms`` **in seconds** (``median_ttft``, ``p99_e2el``, ...), plus for every TPOT
statistic an ``*_intvty`` = 1000 / TPOT_ms. Older rows lack ``input_tput_per_gpu``, ``isl``
and ``osl``; newer ones may carry more keys, which are kept as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from podium.errors import ParseError
from podium.inference.metrics import (
    CostPerMillion,
    InteractivityInferenceX,
    InteractivityVllm,
    Percentiles,
    SweepPoint,
    ThroughputPerGpu,
    TokensPerMegawatt,
)
from podium.inference.system import SystemDescription

# Keys InferenceX writes per latency metric (value in seconds); p99.9 only when the client had it.
_STAT_PREFIXES = {"p50": "median", "p90": "p90", "p99": "p99", "mean": "mean"}
_LATENCY = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_ms"}


class InferenceXRow(BaseModel):
    """One InferenceX aggregated result row. Unknown keys are kept (``extra='allow'``)."""

    model_config = ConfigDict(extra="allow")

    hw: str = Field(description="Hardware label, e.g. 'b200', 'mi355x'")
    conc: int = Field(ge=1, description="Client max concurrency")
    model: str | None = None
    framework: str | None = None
    precision: str
    tput_per_gpu: float = Field(ge=0, description="Total (input + output) tok/s per GPU")
    output_tput_per_gpu: float = Field(ge=0)
    input_tput_per_gpu: float | None = Field(None, ge=0)
    image: str | None = None
    infmax_model_prefix: str | None = None
    spec_decoding: str | None = None
    disagg: bool | None = None
    isl: int | None = None
    osl: int | None = None
    is_multinode: bool | None = None
    tp: int | None = None
    ep: int | None = None
    dp_attention: str | bool | None = None

    def extra(self, key: str) -> Any:
        return (self.model_extra or {}).get(key)

    def as_dict(self) -> dict[str, Any]:
        """The row as InferenceX writes it (only the keys it had)."""
        return self.model_dump(mode="json", exclude_unset=True)


def parse_rows(text: str, source: str = "<text>") -> list[InferenceXRow]:
    """Parse one row (an object) or a list of rows. Garbage raises :class:`ParseError`."""
    if not text.strip():
        raise ParseError(source, "empty file, expected an InferenceX agg_*.json row")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ParseError(source, f"not JSON: {e}") from None
    items = data if isinstance(data, list) else [data]
    rows = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ParseError(source, f"row {i}: expected an object, got {type(item).__name__}")
        try:
            rows.append(InferenceXRow.model_validate(item))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise ParseError(source, f"row {i}: not an InferenceX row: {where}: {first['msg']}") from None
    if not rows:
        raise ParseError(source, "no rows")
    return rows


def looks_like_row(data: Any) -> bool:
    """True for a dict (or non-empty list of dicts) carrying the InferenceX row's key fields."""
    first = data[0] if isinstance(data, list) and data else data
    return isinstance(first, dict) and {"hw", "conc", "tput_per_gpu"} <= set(first)


def _seconds_to_ms(v: Any) -> float | None:
    return float(v) * 1000.0 if isinstance(v, (int, float)) else None


def row_to_point(row: InferenceXRow) -> SweepPoint:
    """An InferenceX row as a podium curve point (price and power are applied later)."""
    raw = row.as_dict()
    lat: dict[str, Percentiles] = {}
    for ix_name, ms_name in _LATENCY.items():
        lat[ms_name] = Percentiles(
            **{
                ours: _seconds_to_ms(raw.get(f"{theirs}_{ix_name}"))
                for ours, theirs in _STAT_PREFIXES.items()
            }
        )
    inp = row.input_tput_per_gpu
    if inp is None:
        inp = max(row.tput_per_gpu - row.output_tput_per_gpu, 0.0)
    intv = InteractivityInferenceX(
        **{
            ours: (
                float(raw[f"{theirs}_intvty"])
                if isinstance(raw.get(f"{theirs}_intvty"), (int, float))
                else None
            )
            for ours, theirs in _STAT_PREFIXES.items()
        }
    )
    # vLLM convention from the row: per-GPU output rate × GPUs ÷ concurrency. For single-node
    # rows GPUs = tp; disaggregated rows normalise output by decode GPUs only.
    gpus = raw.get("num_decode_gpu") or row.tp
    vllm = row.output_tput_per_gpu * gpus / row.conc if gpus else None
    return SweepPoint(
        concurrency=row.conc,
        requests_ok=0,
        requests_failed=0,
        throughput_per_gpu=ThroughputPerGpu(
            total=row.tput_per_gpu, output=row.output_tput_per_gpu, input=inp
        ),
        interactivity_inferencex=intv,
        interactivity_vllm=InteractivityVllm(value=vllm),
        ttft_ms=lat["ttft_ms"],
        tpot_ms=lat["tpot_ms"],
        itl_ms=lat["itl_ms"],
        e2e_ms=lat["e2e_ms"],
        cost_per_million_tokens=CostPerMillion(reason="not computed yet"),
        tokens_per_mw=TokensPerMegawatt(reason="not computed yet"),
        token_count_source="inferencex-row",
    )


def row_system(row: InferenceXRow) -> SystemDescription:
    """The system a row describes (GPUs = tp for single-node rows, prefill + decode for multinode)."""
    raw = row.as_dict()
    gpus = None
    if raw.get("num_prefill_gpu") and raw.get("num_decode_gpu"):
        gpus = int(raw["num_prefill_gpu"]) + int(raw["num_decode_gpu"])
    return SystemDescription(
        hw=row.hw,
        gpu_count=gpus or row.tp or 1,
        tp=row.tp or 1,
        ep=row.ep or 1,
        engine=row.framework or "unknown",
        engine_version=row.image,
        model=row.model or "unknown",
        precision=row.precision,
        isl=row.isl or 1,
        osl=row.osl or 1,
    )


def point_to_row(
    system: SystemDescription, point: SweepPoint, model_prefix: str | None = None
) -> dict[str, Any]:
    """Export one podium point in the InferenceX row format (key order as process_result.py writes it)."""
    row: dict[str, Any] = {
        "hw": system.hw,
        "conc": point.concurrency,
        "image": system.engine_version,
        "model": system.model,
        "infmax_model_prefix": model_prefix or Path(system.model).name.lower(),
        "framework": system.engine,
        "precision": system.precision,
        "spec_decoding": "none",
        "disagg": False,
        "isl": system.isl,
        "osl": system.osl,
        "is_multinode": False,
        "tp": system.tp,
        "ep": system.ep,
        "dp_attention": "false",
        "tput_per_gpu": point.throughput_per_gpu.total,
        "output_tput_per_gpu": point.throughput_per_gpu.output,
        "input_tput_per_gpu": point.throughput_per_gpu.input,
    }
    for ix_name, ms_name in _LATENCY.items():
        pct: Percentiles = getattr(point, ms_name)
        for ours in ("mean", "p50", "p90", "p99"):
            v = getattr(pct, ours)
            if v is None:
                continue
            row[f"{_STAT_PREFIXES[ours]}_{ix_name}"] = v / 1000.0
            if ix_name == "tpot":
                iv = getattr(point.interactivity_inferencex, ours)
                if iv is not None:
                    row[f"{_STAT_PREFIXES[ours]}_intvty"] = iv
    return row


def row_filename(row: dict[str, Any]) -> str:
    """A file name in InferenceX's ``agg_<result>.json`` style."""
    prefix = str(row.get("infmax_model_prefix") or "model").replace("/", "_")
    parts = [
        prefix,
        f"{round((row.get('isl') or 0) / 1024)}k{round((row.get('osl') or 0) / 1024)}k"
        if (row.get("isl") or 0) >= 1024
        else f"isl{row.get('isl')}-osl{row.get('osl')}",
        str(row.get("precision")),
        str(row.get("framework")),
        f"tp{row.get('tp')}-ep{row.get('ep')}",
        f"conc{row.get('conc')}",
        str(row.get("hw")),
    ]
    safe = "_".join(p.replace(" ", "-") for p in parts)
    return "agg_" + "".join(c if c.isalnum() or c in "._-" else "-" for c in safe) + ".json"
