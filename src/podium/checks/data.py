"""Versioned data the checks grade against (src/podium/data/checks/*.yaml, each entry with a source)."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml


@cache
def load(name: str) -> dict:
    """Load ``podium/data/checks/<name>.yaml``."""
    text = resources.files("podium").joinpath("data", "checks", f"{name}.yaml").read_text()
    return yaml.safe_load(text)
