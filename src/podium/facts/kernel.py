"""Kernel release ordering, for 'patched but not rebooted'."""

from __future__ import annotations

import re
from collections.abc import Iterable


def _key(release: str) -> tuple:
    # 6.1.0-31-amd64 vs 6.1.0-28-amd64: compare numeric runs in order, text runs as text
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.findall(r"\d+|[A-Za-z]+", release))


def newest_kernel(releases: Iterable[str]) -> str | None:
    rel = list(releases)
    return max(rel, key=_key) if rel else None
