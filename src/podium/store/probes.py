"""Endpoint monitor probes in the shared results store (SQLite by default, Postgres by URL).

Implements :class:`podium.endpoint.monitor.ProbeStore`, so long-running monitors land next to
every other run, finding and measurement.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import select

from podium.store.db import Store
from podium.store.tables import EndpointMonitorPlanRow, EndpointProbeRow


def _utc(t: datetime) -> datetime:
    # SQLite drops the zone on read; everything podium stores is UTC
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


class StoreProbeStore:
    """Probe rows in ``endpoint_probes``, monitor plans in ``endpoint_monitor_plans``."""

    def __init__(self, store: Store):
        self.store = store

    @classmethod
    def open(cls, db: str | None = None) -> StoreProbeStore:
        """``db``: a SQLite path or SQLAlchemy URL; default $PODIUM_DB or the user's results store."""
        return cls(Store.open(db))

    @property
    def location(self) -> str:
        return self.store.url

    def add(self, probe) -> None:
        with self.store.session.begin() as s:
            s.add(
                EndpointProbeRow(
                    target=probe.target,
                    at=probe.at,
                    outcome=probe.outcome,
                    http_status=probe.http_status,
                    ttft_ms=probe.ttft_ms,
                    e2e_ms=probe.e2e_ms,
                    error=probe.error,
                )
            )

    def probes(self, target: str) -> list:
        from podium.endpoint.monitor import Probe

        with self.store.session() as s:
            rows = s.scalars(
                select(EndpointProbeRow)
                .where(EndpointProbeRow.target == target)
                .order_by(EndpointProbeRow.at)
            ).all()
            return [
                Probe(
                    target=r.target,
                    at=_utc(r.at),
                    outcome=r.outcome,
                    http_status=r.http_status,
                    ttft_ms=r.ttft_ms,
                    e2e_ms=r.e2e_ms,
                    error=r.error,
                )
                for r in rows
            ]

    def plan(self, target: str) -> tuple[datetime, datetime, float] | None:
        with self.store.session() as s:
            row = s.get(EndpointMonitorPlanRow, target)
            return None if row is None else (_utc(row.start), _utc(row.end), row.interval_s)

    def set_plan(self, target: str, start: datetime, end: datetime, interval_s: float) -> None:
        with self.store.session.begin() as s:
            s.merge(EndpointMonitorPlanRow(target=target, start=start, end=end, interval_s=interval_s))

    def close(self) -> None:
        self.store.engine.dispose()
