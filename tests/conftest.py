"""Shared test helpers.

Tests that need a real service (Slurm, root for network namespaces, the LLM server, chromium)
call :func:`need`. Locally a missing service skips the test with its reason; in CI
(``PODIUM_REQUIRE_SERVICES=1``, set by scripts/test.sh when CI=true) it fails instead, so
nothing is silently skipped where the service is supposed to exist.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]


def need(condition: bool, reason: str) -> None:
    if condition:
        return
    if os.environ.get("PODIUM_REQUIRE_SERVICES") == "1":
        pytest.fail(f"required service missing in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
