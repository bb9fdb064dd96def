"""SQLAlchemy 2 tables of the results store. Portable SQL: SQLite by default, Postgres by URL."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

SCHEMA_VERSION = 1


class Base(DeclarativeBase):
    pass


class RunRow(Base):
    """One run: the JSON one podium command printed (audit, health, bench...), a provider file or
    captured scheduler history, for one provider and cluster. The document is kept verbatim."""

    __tablename__ = "runs"
    __table_args__ = (UniqueConstraint("provider", "cluster", "sha256", name="uq_run_content"),)

    run_id: Mapped[str] = mapped_column(String(80), primary_key=True)
    provider: Mapped[str] = mapped_column(String(120), index=True)
    cluster: Mapped[str] = mapped_column(String(120))
    kind: Mapped[str] = mapped_column(String(40))
    collected_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source_path: Mapped[str] = mapped_column(Text, doc="File the run was read from, as given")
    sha256: Mapped[str] = mapped_column(String(64))
    podium_version: Mapped[str] = mapped_column(String(40))
    document: Mapped[str] = mapped_column(Text)

    findings: Mapped[list[FindingRow]] = relationship(back_populates="run", cascade="all, delete-orphan")
    measurements: Mapped[list[MeasurementRow]] = relationship(
        back_populates="run", cascade="all, delete-orphan"
    )


class FindingRow(Base):
    """One check result of a run (every status, so that a diff sees passes too)."""

    __tablename__ = "findings"
    __table_args__ = (Index("ix_findings_run_key", "run_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.run_id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(Text, doc="check id|host")
    check_id: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    severity: Mapped[str] = mapped_column(String(16))
    category: Mapped[str] = mapped_column(String(40))
    host: Mapped[str | None] = mapped_column(String(255))
    subject: Mapped[str | None] = mapped_column(Text)
    pointer: Mapped[str] = mapped_column(String(200))
    provenance: Mapped[str | None] = mapped_column(Text, doc="JSON Provenance of the first evidence")

    run: Mapped[RunRow] = relationship(back_populates="findings")


class MeasurementRow(Base):
    """One measured number of a run, with its reference and verdict."""

    __tablename__ = "measurements"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.run_id", ondelete="CASCADE"), index=True)
    benchmark: Mapped[str] = mapped_column(String(120))
    metric: Mapped[str] = mapped_column(String(120))
    value: Mapped[float | None] = mapped_column(Float)
    unit: Mapped[str | None] = mapped_column(String(40))
    host: Mapped[str | None] = mapped_column(String(255))
    device: Mapped[str | None] = mapped_column(String(255))
    reference: Mapped[float | None] = mapped_column(Float)
    verdict: Mapped[str] = mapped_column(String(16))
    pointer: Mapped[str] = mapped_column(String(200))
    provenance: Mapped[str | None] = mapped_column(Text)

    run: Mapped[RunRow] = relationship(back_populates="measurements")


class ScorecardRow(Base):
    __tablename__ = "scorecards"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(120), index=True)
    cluster: Mapped[str] = mapped_column(String(120))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    rubric_version: Mapped[str] = mapped_column(String(20))
    score: Mapped[float] = mapped_column(Float)
    tier: Mapped[str] = mapped_column(String(40))
    document: Mapped[str] = mapped_column(Text)


class RankingRow(Base):
    __tablename__ = "rankings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source: Mapped[str] = mapped_column(Text, index=True)
    rubric_version: Mapped[str] = mapped_column(String(20))
    document: Mapped[str] = mapped_column(Text)


class MetaRow(Base):
    __tablename__ = "podium_meta"

    key: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class EndpointProbeRow(Base):
    """One ``podium endpoint monitor`` probe: its outcome in the shared taxonomy and its latency."""

    __tablename__ = "endpoint_probes"
    __table_args__ = (Index("endpoint_probes_target_at", "target", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    target: Mapped[str] = mapped_column(String(400), doc="base URL + model")
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    outcome: Mapped[str] = mapped_column(String(40))
    http_status: Mapped[int | None] = mapped_column(Integer)
    ttft_ms: Mapped[float | None] = mapped_column(Float)
    e2e_ms: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)


class EndpointMonitorPlanRow(Base):
    """The planned window of a monitor, so that ``--resume`` keeps the original end time."""

    __tablename__ = "endpoint_monitor_plans"

    target: Mapped[str] = mapped_column(String(400), primary_key=True)
    start: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    end: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    interval_s: Mapped[float] = mapped_column(Float)
