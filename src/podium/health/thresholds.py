"""The health thresholds table (data/health_thresholds.yaml)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from podium.errors import InputError


@lru_cache(maxsize=4)
def load_thresholds(path: str | None = None) -> dict[str, Any]:
    """The bundled thresholds, or a user's file with the same keys."""
    try:
        if path:
            text = Path(path).read_text(encoding="utf-8")
        else:
            text = (
                resources.files("podium").joinpath("data/health_thresholds.yaml").read_text(encoding="utf-8")
            )
        data = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as e:
        raise InputError(path or "health_thresholds.yaml", f"cannot read thresholds: {e}") from None
    if not isinstance(data, dict) or "idle_power_ceiling_w" not in data:
        raise InputError(path or "health_thresholds.yaml", "not a podium thresholds file")
    return data


def idle_power_ceiling(thresholds: dict[str, Any], product_name: str | None) -> float | None:
    """Idle power ceiling (W) for a GPU model, or None when the table has none for it."""
    if not product_name:
        return None
    for row in thresholds["idle_power_ceiling_w"]["by_model"]:
        if re.search(row["match"], product_name, re.IGNORECASE):
            return float(row["watts"])
    return None
