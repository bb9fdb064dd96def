"""The results store: every run, finding and measurement with provenance.

SQLite by default (``~/.local/share/podium/podium.db``, or ``$PODIUM_DB``, or ``--db``); any
SQLAlchemy URL works, e.g. ``postgresql+psycopg://user@host/podium``. Runs are imported from
evaluation directories; the same document imported twice is stored once.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import create_engine, select
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from podium import __version__
from podium.errors import InputError
from podium.models.common import utcnow
from podium.rating.evidence import (
    CHECK_KINDS,
    EvaluationEvidence,
    _finding_key,
    collected_at,
    evaluation_from_documents,
    read_bench,
    read_checks,
    read_endpoint_bench,
    read_health,
)
from podium.rating.provider import ProviderFile
from podium.store.tables import (
    SCHEMA_VERSION,
    Base,
    FindingRow,
    MeasurementRow,
    MetaRow,
    RankingRow,
    RunRow,
    ScorecardRow,
)


def default_db_path() -> Path:
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "podium" / "podium.db"


def resolve_db_url(db: str | None) -> str:
    """``--db`` value (a path or a SQLAlchemy URL), else $PODIUM_DB, else the default SQLite file."""
    db = db or os.environ.get("PODIUM_DB") or str(default_db_path())
    if "://" in db:
        return db
    path = Path(db).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _aware(t: datetime | None) -> datetime | None:
    # SQLite returns naive datetimes; everything podium stores is UTC.
    return t.replace(tzinfo=timezone.utc) if t is not None and t.tzinfo is None else t


class RunSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run_id: str
    provider: str
    cluster: str
    kind: str
    collected_at: datetime | None
    imported_at: datetime
    source_path: str
    findings: int = Field(description="Results that are not a pass")
    measurements: int


class StoredFinding(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str
    check_id: str
    title: str
    status: str
    severity: str
    host: str | None
    subject: str | None
    provenance: dict | None = None


class StoredMeasurement(BaseModel):
    model_config = ConfigDict(extra="forbid")
    benchmark: str
    metric: str
    value: float | None
    unit: str | None
    host: str | None
    reference: float | None
    verdict: str
    provenance: dict | None = None


class RunDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run: RunSummary
    findings: list[StoredFinding]
    measurements: list[StoredMeasurement]


class MeasurementChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    benchmark: str
    metric: str
    host: str | None
    before: float | None
    after: float | None
    change_percent: float | None


class RunDiff(BaseModel):
    """What changed between two runs of the same kind for one provider and cluster."""

    model_config = ConfigDict(extra="forbid")
    before: RunSummary
    after: RunSummary
    hours_between: float | None
    new: list[StoredFinding] = Field(description="Findings in the later run only")
    fixed: list[StoredFinding] = Field(description="Findings in the earlier run only")
    still_open: list[StoredFinding]
    measurements: list[MeasurementChange] = Field(default_factory=list)


class Store:
    """Open with :meth:`open`; every method runs in its own transaction."""

    def __init__(self, url: str):
        self.url = url
        try:
            self.engine = create_engine(url, future=True)
            Base.metadata.create_all(self.engine)
        except (ArgumentError, NoSuchModuleError) as e:
            raise InputError("--db", f"not a usable database URL '{url}': {e}") from None
        except ModuleNotFoundError as e:
            raise InputError(
                "--db", f"database driver missing for '{url}': {e.name} is not installed"
            ) from None
        except OperationalError as e:
            raise InputError("--db", f"cannot open database '{url}': {str(e.orig).splitlines()[0]}") from None
        self.session = sessionmaker(self.engine, expire_on_commit=False)
        with self.session.begin() as s:
            if s.get(MetaRow, "schema_version") is None:
                s.add(MetaRow(key="schema_version", value=str(SCHEMA_VERSION)))

    @classmethod
    def open(cls, db: str | None = None) -> Store:
        return cls(resolve_db_url(db))

    # ------------------------------------------------------------------------------------- import
    def import_evaluation(self, ev: EvaluationEvidence, base: Path) -> list[str]:
        """Store every evidence document of an evaluation (its files under ``base``). Returns run ids."""
        docs: list[tuple[str, str, bytes]] = []
        for src in ev.sources:
            docs.append((src.kind, src.path, (base / src.path).read_bytes()))
        docs.append(
            ("provider", ev.provider_file or "(built-in default)", ev.provider.model_dump_json().encode())
        )
        if ev.slurm_texts:
            docs.append(("scheduler", "slurm/", json.dumps(ev.slurm_texts, sort_keys=True).encode()))
        return self.import_documents(ev.provider.name, ev.provider.cluster, docs)

    def import_documents(self, provider: str, cluster: str, docs: list[tuple[str, str, bytes]]) -> list[str]:
        ids = []
        with self.session.begin() as s:
            for kind, path, raw in docs:
                digest = hashlib.sha256(raw).hexdigest()
                run_id = (
                    f"{kind}-{digest[:12]}-{hashlib.sha256(f'{provider}|{cluster}'.encode()).hexdigest()[:6]}"
                )
                ids.append(run_id)
                if s.get(RunRow, run_id) is not None:
                    continue
                text = raw.decode("utf-8", "replace")
                data = json.loads(text)
                row = RunRow(
                    run_id=run_id,
                    provider=provider,
                    cluster=cluster,
                    kind=kind,
                    collected_at=collected_at(data),
                    imported_at=utcnow(),
                    source_path=path,
                    sha256=digest,
                    podium_version=__version__,
                    document=text,
                )
                self._rows(row, kind, path, data)
                s.add(row)
        return ids

    @staticmethod
    def _rows(row: RunRow, kind: str, path: str, data) -> None:
        if kind in CHECK_KINDS:
            checks = read_health(data, path) if kind == "health" else read_checks(data, path, kind)
            for c in checks:
                r = c.result
                prov = r.evidence[0].source if r.evidence and r.evidence[0].source else None
                row.findings.append(
                    FindingRow(
                        key=_finding_key(r),
                        check_id=r.id,
                        title=r.title,
                        status=r.status.value,
                        severity=r.severity.value,
                        category=r.category,
                        host=r.host,
                        subject=r.subject,
                        pointer=c.pointer,
                        provenance=prov.model_dump_json() if prov else None,
                    )
                )
        elif kind in ("bench", "endpoint-bench"):
            ms = read_bench(data, path) if kind == "bench" else read_endpoint_bench(data, path)
            for m in ms:
                row.measurements.append(
                    MeasurementRow(
                        benchmark=m.benchmark,
                        metric=m.metric,
                        value=m.value,
                        unit=m.unit,
                        host=m.host,
                        device=m.device,
                        reference=m.reference,
                        verdict=m.verdict.value,
                        pointer=m.pointer,
                        provenance=m.source.model_dump_json() if m.source else None,
                    )
                )

    def save_scorecard(self, card) -> None:
        with self.session.begin() as s:
            s.add(
                ScorecardRow(
                    provider=card.name,
                    cluster=card.cluster,
                    created_at=utcnow(),
                    rubric_version=card.rubric_version,
                    score=card.score,
                    tier=card.tier,
                    document=card.model_dump_json(),
                )
            )

    def save_ranking(self, ranking) -> None:
        with self.session.begin() as s:
            s.add(
                RankingRow(
                    created_at=ranking.generated_at,
                    source=ranking.source,
                    rubric_version=ranking.rubric_version,
                    document=ranking.model_dump_json(),
                )
            )

    def last_ranking(self, source: str):
        """The most recent ranking of the same source, for 'movement since the last ranking'."""
        from podium.rating.ranking import Ranking

        with self.session() as s:
            row = s.scalars(
                select(RankingRow)
                .where(RankingRow.source == source)
                .order_by(RankingRow.created_at.desc(), RankingRow.id.desc())
            ).first()
            return Ranking.model_validate_json(row.document) if row else None

    # -------------------------------------------------------------------------------------- reads
    def _summary(self, row: RunRow) -> RunSummary:
        return RunSummary(
            run_id=row.run_id,
            provider=row.provider,
            cluster=row.cluster,
            kind=row.kind,
            collected_at=_aware(row.collected_at),
            imported_at=_aware(row.imported_at),
            source_path=row.source_path,
            findings=sum(1 for f in row.findings if f.status not in ("pass",)),
            measurements=len(row.measurements),
        )

    def list_runs(self, provider: str | None = None, kind: str | None = None) -> list[RunSummary]:
        with self.session() as s:
            q = select(RunRow)
            if provider:
                q = q.where(RunRow.provider == provider)
            if kind:
                q = q.where(RunRow.kind == kind)
            rows = s.scalars(q).all()
            out = [self._summary(r) for r in rows]
        far = datetime.min.replace(tzinfo=timezone.utc)
        return sorted(out, key=lambda r: (r.provider, r.cluster, r.kind, r.collected_at or far, r.run_id))

    def _get(self, s: Session, run_id: str) -> RunRow:
        row = s.get(RunRow, run_id)
        if row is None:
            matches = s.scalars(select(RunRow).where(RunRow.run_id.startswith(run_id))).all()
            if len(matches) == 1:
                return matches[0]
            why = "is ambiguous" if matches else "is not in the store"
            raise InputError("run id", f"'{run_id}' {why} (see `podium runs list`)")
        return row

    def show(self, run_id: str) -> RunDetail:
        with self.session() as s:
            row = self._get(s, run_id)
            return RunDetail(
                run=self._summary(row),
                findings=[_finding_view(f) for f in row.findings],
                measurements=[
                    StoredMeasurement(
                        benchmark=m.benchmark,
                        metric=m.metric,
                        value=m.value,
                        unit=m.unit,
                        host=m.host,
                        reference=m.reference,
                        verdict=m.verdict,
                        provenance=json.loads(m.provenance) if m.provenance else None,
                    )
                    for m in row.measurements
                ],
            )

    def diff(self, before_id: str, after_id: str) -> RunDiff:
        """Findings new, fixed and still open, and measurement changes, between two runs."""
        with self.session() as s:
            a, b = self._get(s, before_id), self._get(s, after_id)
            if (a.provider, a.cluster, a.kind) != (b.provider, b.cluster, b.kind):
                raise InputError(
                    "runs diff",
                    f"{a.run_id} ({a.provider}/{a.cluster} {a.kind}) and {b.run_id} "
                    f"({b.provider}/{b.cluster} {b.kind}) are not runs of the same kind and cluster",
                )
            ta, tb = _aware(a.collected_at), _aware(b.collected_at)
            if ta and tb and ta > tb:
                a, b, ta, tb = b, a, tb, ta
            fa = {f.key: f for f in a.findings if f.status in ("fail", "warn")}
            fb = {f.key: f for f in b.findings if f.status in ("fail", "warn")}
            ma = {(m.benchmark, m.metric, m.host, m.pointer): m.value for m in a.measurements}
            changes = []
            for m in b.measurements:
                before = ma.get((m.benchmark, m.metric, m.host, m.pointer))
                pct = None
                if before not in (None, 0) and m.value is not None:
                    pct = round(100 * (m.value - before) / before, 2)
                changes.append(
                    MeasurementChange(
                        benchmark=m.benchmark,
                        metric=m.metric,
                        host=m.host,
                        before=before,
                        after=m.value,
                        change_percent=pct,
                    )
                )
            return RunDiff(
                before=self._summary(a),
                after=self._summary(b),
                hours_between=round((tb - ta).total_seconds() / 3600, 3) if ta and tb else None,
                new=[_finding_view(f) for k, f in fb.items() if k not in fa],
                fixed=[_finding_view(f) for k, f in fa.items() if k not in fb],
                still_open=[_finding_view(f) for k, f in fb.items() if k in fa],
                measurements=changes,
            )

    def evaluations(self) -> list[EvaluationEvidence]:
        """Rebuild every provider's evaluation from stored runs (for ``podium rank DB``)."""
        with self.session() as s:
            rows = s.scalars(select(RunRow)).all()
            groups: dict[tuple[str, str], list[RunRow]] = {}
            for r in rows:
                groups.setdefault((r.provider, r.cluster), []).append(r)
            out = []
            for (name, cluster), runs in sorted(groups.items()):
                provider_rows = sorted(
                    (r for r in runs if r.kind == "provider"), key=lambda r: _aware(r.imported_at)
                )
                provider = (
                    ProviderFile.model_validate_json(provider_rows[-1].document)
                    if provider_rows
                    else ProviderFile(name=name, cluster=cluster)
                )
                sched = sorted(
                    (r for r in runs if r.kind == "scheduler"), key=lambda r: _aware(r.imported_at)
                )
                docs = [
                    (f"{r.kind}/{r.run_id}.json", r.document.encode())
                    for r in runs
                    if r.kind not in ("provider", "scheduler")
                ]
                out.append(
                    evaluation_from_documents(
                        f"{self.url}#{name}/{cluster}",
                        provider,
                        provider_rows[-1].source_path if provider_rows else None,
                        docs,
                        json.loads(sched[-1].document) if sched else None,
                    )
                )
            return out


def _finding_view(f: FindingRow) -> StoredFinding:
    return StoredFinding(
        key=f.key,
        check_id=f.check_id,
        title=f.title,
        status=f.status,
        severity=f.severity,
        host=f.host,
        subject=f.subject,
        provenance=json.loads(f.provenance) if f.provenance else None,
    )
