"""Helpers for health tests: build replay directories from the real fixtures."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def make_replay(root: Path, name: str, files: dict[str, str]) -> Path:
    """A node directory ``root/name`` with fixtures copied under the replay file names."""
    d = root / name
    d.mkdir(parents=True)
    for dst, src in files.items():
        target = d / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        source = FIX / src
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy(source, target)
    return d


def truncated(text: str) -> str:
    return text[: len(text) // 2]


def random_bytes(seed: int = 4, n: int = 4096) -> str:
    rnd = random.Random(seed)
    return bytes(rnd.getrandbits(8) for _ in range(n)).decode("latin-1")


@pytest.fixture
def fix() -> Path:
    return FIX
