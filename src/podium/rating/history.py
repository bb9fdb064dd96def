"""Time-to-fix: a finding seen in one run and gone in a later run of the same kind was fixed.

Runs are compared per kind (audit with audit, isolation with isolation...). A finding is keyed by
check id, host and subject. A finding still open at the last run counts with its age so far,
so a provider that never fixes anything does not look fast.
"""

from __future__ import annotations

import statistics
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from podium.rating.evidence import RunSnapshot


class FixTime(BaseModel):
    """One finding's life across runs."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(description="check id|host")
    title: str
    kind: str
    first_seen: datetime
    first_file: str
    fixed_at: datetime | None = None
    fixed_file: str | None = None
    hours: float = Field(description="Hours to fix, or hours open so far when not fixed")
    fixed: bool


class FixTimeSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fixed: int = 0
    open: int = 0
    median_hours: float | None = Field(None, description="Median over fixed and still-open findings")
    fastest_hours: float | None = None
    slowest_hours: float | None = None

    def metric(self, name: str) -> float | None:
        value = getattr(self, name, None)
        return float(value) if isinstance(value, (int, float)) else None


def time_to_fix(snapshots: list[RunSnapshot], now: datetime | None = None) -> list[FixTime]:
    """Every finding's time-to-fix from successive runs (runs without a time are ignored)."""
    out: list[FixTime] = []
    by_kind: dict[str, list[RunSnapshot]] = {}
    for s in snapshots:
        if s.at is not None:
            by_kind.setdefault(s.kind, []).append(s)
    for kind, runs in sorted(by_kind.items()):
        runs.sort(key=lambda s: s.at)
        if len(runs) < 2:
            continue
        open_: dict[str, tuple[datetime, str, str]] = {}
        for run in runs:
            for key, title in run.findings.items():
                open_.setdefault(key, (run.at, title, run.file))
            for key in [k for k in open_ if k not in run.findings]:
                seen, title, file = open_.pop(key)
                out.append(
                    FixTime(
                        key=key,
                        title=title,
                        kind=kind,
                        first_seen=seen,
                        first_file=file,
                        fixed_at=run.at,
                        fixed_file=run.file,
                        hours=round((run.at - seen).total_seconds() / 3600, 3),
                        fixed=True,
                    )
                )
        until = max(now or runs[-1].at, runs[-1].at)
        for key, (seen, title, file) in open_.items():
            if seen == runs[-1].at:
                continue  # first seen in the last run: no age to speak of yet
            out.append(
                FixTime(
                    key=key,
                    title=title,
                    kind=kind,
                    first_seen=seen,
                    first_file=file,
                    hours=round((until - seen).total_seconds() / 3600, 3),
                    fixed=False,
                )
            )
    return out


def summarise(fixes: list[FixTime]) -> FixTimeSummary:
    """Counts and the median hours (open findings count with their age so far)."""
    if not fixes:
        return FixTimeSummary()
    hours = [f.hours for f in fixes]
    return FixTimeSummary(
        fixed=sum(f.fixed for f in fixes),
        open=sum(not f.fixed for f in fixes),
        median_hours=round(statistics.median(hours), 3),
        fastest_hours=min(hours),
        slowest_hours=max(hours),
    )
