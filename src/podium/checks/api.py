"""The public API the audit command calls: ``run_checks`` and ``list_checks``."""

from __future__ import annotations

import logging
import os

from podium.checks.evidence import result
from podium.checks.model import CheckContext, CheckInfo, CheckSpec, Profile
from podium.checks.registry import CHECKS
from podium.errors import UsageError
from podium.models.common import Status
from podium.models.facts import NodeFacts
from podium.models.results import CheckResult
from podium.runner import CommandRunner

log = logging.getLogger(__name__)

# 'versions' belongs to the advisory audit; it selects none of these checks
KNOWN_PROFILES = {"isolation", "config", "all", "versions"}


def select(profiles: list[str]) -> list[CheckSpec]:
    """The registered checks that the given profiles select (UsageError for an unknown profile)."""
    wanted: set[Profile] = set()
    for p in (x.strip().lower() for x in profiles):
        if p not in KNOWN_PROFILES:
            raise UsageError(f"unknown profile '{p}'; one of: {', '.join(sorted(KNOWN_PROFILES))}")
        if p == "all":
            wanted |= {Profile.ISOLATION, Profile.CONFIG}
        elif p != "versions":
            wanted.add(Profile(p))
    return [c for c in CHECKS if c.profile in wanted]


def run_checks(
    profiles: list[str],
    runner: CommandRunner,
    targets: list[str] | None = None,
    facts: NodeFacts | None = None,
    sysfs_root: str = "/",
    timeout_s: float = 2.0,
) -> list[CheckResult]:
    """Run every check of ``profiles`` ('isolation', 'config', 'all'; 'versions' selects none here).

    ``targets``: addresses or CIDRs the user declared for the exposure probes (expanded, capped at
    256 addresses); the node's default gateway is added, and the metadata check asks
    169.254.169.254. ``sysfs_root``: root of the node's filesystem for file reads (/sys, /proc,
    /etc, /boot); tests point it at a copied tree. ``timeout_s`` bounds each probe. A check that
    raises becomes an ``unknown`` result with the error as its reason: one broken check never
    hides the others.
    """
    return _run(select(profiles), runner, targets, facts, sysfs_root, timeout_s)


def run_checks_matching(
    patterns: list[str],
    runner: CommandRunner,
    targets: list[str] | None = None,
    facts: NodeFacts | None = None,
    sysfs_root: str = "/",
    timeout_s: float = 2.0,
    *,
    include_default_targets: bool = True,
) -> list[CheckResult]:
    """Run the checks whose id matches any shell-style pattern (e.g. 'exposure.*', 'slurm.munge-key').

    ``include_default_targets=False`` probes only ``targets``: no default gateway, no 169.254.169.254.
    """
    from fnmatch import fnmatchcase

    specs = [c for c in CHECKS if any(fnmatchcase(c.id, p) for p in patterns)]
    if not specs:
        raise UsageError(f"no check id matches {', '.join(patterns)} (see 'podium checks list')")
    return _run(specs, runner, targets, facts, sysfs_root, timeout_s, include_default_targets)


def _run(
    specs, runner, targets, facts, sysfs_root, timeout_s, include_default_targets=True
) -> list[CheckResult]:
    from podium.checks.exposure import expand_targets

    host = getattr(runner, "host", None) or (facts.host if facts else None) or os.uname().nodename
    ctx = CheckContext(
        runner=runner,
        targets=expand_targets(targets or []),
        facts=facts,
        root=sysfs_root,
        timeout_s=timeout_s,
        include_default_targets=include_default_targets,
        host=host,
    )
    results: list[CheckResult] = []
    for spec in specs:
        try:
            results.extend(spec.function(ctx))
        except Exception as e:  # a bug in one check must not lose the others' results
            log.exception("check %s crashed", spec.id)
            results.append(
                result(
                    spec.id,
                    spec.title,
                    spec.category,
                    Status.UNKNOWN,
                    host=ctx.host,
                    reason=f"check crashed: {type(e).__name__}: {e}",
                )
            )
    return results


def list_checks() -> list[CheckInfo]:
    """Every registered check with its id, category, profile, title, what it reads and what it sends."""
    return [c.info() for c in CHECKS]
