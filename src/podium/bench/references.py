"""Per-SKU references (``src/podium/data/bench_references.yaml``): SKU detection and lookup."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from podium.bench.model import Reference
from podium.errors import InputError

DATA_FILE = "bench_references.yaml"


@lru_cache(maxsize=4)
def load_table(text: str | None = None) -> dict[str, Any]:
    """The parsed reference table (the bundled one unless ``text`` is given)."""
    if text is None:
        text = resources.files("podium").joinpath("data", DATA_FILE).read_text()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InputError(DATA_FILE, f"not valid YAML: {e}") from None
    if not isinstance(data, dict) or "references" not in data or "skus" not in data:
        raise InputError(DATA_FILE, "needs 'skus' and 'references' sections")
    for i, entry in enumerate(data["references"]):
        if not entry.get("source"):
            raise InputError(
                DATA_FILE, f"reference #{i} ({entry.get('sku')}/{entry.get('benchmark')}) has no source"
            )
    return data


def sku_of(device_name: str | None, table: dict[str, Any] | None = None) -> str | None:
    """Canonical SKU for a device name ('NVIDIA H100 80GB HBM3' -> 'H100'); None when unknown."""
    if not device_name:
        return None
    table = table or load_table()
    for sku, spec in table["skus"].items():
        for pattern in spec.get("match", []):
            if re.search(pattern, device_name, re.IGNORECASE):
                return sku
    return None


def peak_bf16_tflops(sku: str | None, table: dict[str, Any] | None = None) -> tuple[float | None, str | None]:
    """Theoretical dense BF16 TFLOP/s of a SKU and its source, for MFU; (None, None) when not known."""
    if not sku:
        return None, None
    spec = (table or load_table())["skus"].get(sku, {})
    return spec.get("peak_bf16_tflops"), spec.get("peak_source")


def find_reference(
    sku: str | None,
    benchmark: str,
    metric: str,
    *,
    dtype: str | None = None,
    op: str | None = None,
    gpus: int | None = None,
    table: dict[str, Any] | None = None,
) -> tuple[Reference | None, str]:
    """The reference for this result, or None and the reason there is none."""
    if not sku:
        return None, "device is not a known SKU; no reference"
    table = table or load_table()
    for entry in table["references"]:
        if (entry["sku"], entry["benchmark"], entry["metric"]) != (sku, benchmark, metric):
            continue
        if entry.get("dtype") is not None and entry["dtype"] != dtype:
            continue
        if entry.get("op") is not None and entry["op"] != op:
            continue
        if entry.get("gpus") is not None and entry["gpus"] != gpus:
            continue
        return Reference.model_validate(entry), ""
    what = "/".join(x for x in (benchmark, metric, dtype, op) if x)
    if gpus is not None:
        what += f" with {gpus} GPUs"
    return None, f"no reference for {sku} {what}"
