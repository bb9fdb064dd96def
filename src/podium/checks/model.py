"""Models for the checks package: what a check declares, and the context it runs in."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from podium.checks.probes import RateLimiter
from podium.models.facts import NodeFacts
from podium.models.results import CheckResult
from podium.runner import CommandRunner


class Profile(str, Enum):
    """Which ``podium audit --profile`` runs a check."""

    ISOLATION = "isolation"
    CONFIG = "config"


class CheckInfo(BaseModel):
    """One check as ``podium checks list`` shows it: what it reads and what it sends."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Stable check id, e.g. 'ib.pkey.default-full'")
    category: str = Field(description="Area: infiniband, exposure, slurm, kubernetes, host")
    profile: str = Field(description="isolation | config")
    title: str
    reads: list[str] = Field(description="Files and commands the check reads (locally)")
    sends: str = Field(
        description="What goes over the network or to a service: to whom, how many, how fast; 'nothing' if local"
    )


class ChecksReport(BaseModel):
    """What ``podium checks run --json`` prints: the same ``checks`` list the audit report holds."""

    model_config = ConfigDict(extra="forbid")

    checks: list[CheckResult]


@dataclass
class CheckContext:
    """Everything a check function may use. Checks never reach beyond it."""

    runner: CommandRunner
    targets: list[str] = field(default_factory=list)
    facts: NodeFacts | None = None
    root: str = "/"
    timeout_s: float = 2.0
    # Probe budget (see docs/safety.md): at most this many new connections or datagrams per second,
    # and at most ``probe_workers`` in flight at once.
    probe_rate_per_s: float = 20.0
    probe_workers: int = 8
    include_default_targets: bool = True
    host: str = field(default_factory=lambda: os.uname().nodename)
    # one probe pacer for the whole run, shared by every exposure check (made on first use)
    limiter: RateLimiter | None = field(default=None, repr=False)
    # outputs several checks share (e.g. `scontrol show config`), run once per context
    _cache: dict = field(default_factory=dict, repr=False)

    def run_once(self, argv: list[str], timeout: float = 30.0):
        """Run a read-only command once per context; later calls get the same CommandOutput."""
        key = tuple(argv)
        if key not in self._cache:
            self._cache[key] = self.runner.run(argv, timeout=timeout)
        return self._cache[key]

    def path(self, absolute: str) -> str:
        """An absolute node path under ``root`` (tests point root at a copied tree)."""
        return os.path.join(self.root, absolute.lstrip("/"))


CheckFunction = Callable[[CheckContext], list[CheckResult]]


@dataclass(frozen=True)
class CheckSpec:
    """A registered check: its declaration and the function that runs it."""

    id: str
    category: str
    profile: Profile
    title: str
    reads: tuple[str, ...]
    sends: str
    function: CheckFunction

    def info(self) -> CheckInfo:
        return CheckInfo(
            id=self.id,
            category=self.category,
            profile=self.profile.value,
            title=self.title,
            reads=list(self.reads),
            sends=self.sends,
        )
