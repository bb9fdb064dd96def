"""Kernel release ordering, for 'patched but not rebooted'."""

from __future__ import annotations

from collections.abc import Iterable

from podium.advisories.versions import is_valid, version_key


def newest_kernel(releases: Iterable[str]) -> str | None:
    """The newest of kernel releases such as '6.1.0-31-amd64', by podium's one version comparator."""
    rel = [r for r in releases if is_valid("generic", r)]
    return max(rel, key=lambda r: version_key("generic", r)) if rel else None
