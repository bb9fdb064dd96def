"""Evidence for one evaluation: the JSON that podium's commands print, plus declared facts.

An evaluation directory holds what ``podium audit|checks|health|bench|endpoint bench|endpoint
audit --json`` printed (one file each; older runs of the same kind may sit beside them, e.g. in
``history/``), an optional ``provider.yaml`` and an optional ``slurm/`` folder with captured
``sacctmgr show event``, ``sinfo -R`` and ``sacct`` output. This module reads those files into
typed models; it grades nothing. Every check and measurement keeps the file and position it came
from, so that a report can link each number to its evidence.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from podium.errors import ParseError
from podium.models.common import Evidence, Provenance, Severity, Status
from podium.models.results import CheckResult
from podium.rating.provider import ProviderFile, default_provider, load_provider
from podium.rating.scheduler import SchedulerReliability

Kind = Literal["audit", "isolation", "health", "bench", "endpoint-bench", "endpoint-audit"]
CHECK_KINDS = ("audit", "isolation", "health", "endpoint-audit")
PROVIDER_FILE_NAMES = ("provider.yaml", "provider.yml")


class SourceFile(BaseModel):
    """One file that went into an evaluation."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="Path relative to the evaluation directory")
    kind: str
    sha256: str
    collected_at: datetime | None = None
    current: bool = Field(True, description="False for an older run of the same kind (history only)")


class SourcedCheck(BaseModel):
    """A CheckResult together with the file and position it was read from."""

    model_config = ConfigDict(extra="forbid")
    kind: str
    file: str
    pointer: str = Field(description="JSON pointer inside the file, e.g. '/checks/3'")
    result: CheckResult


class Measurement(BaseModel):
    """One measured number (a benchmark result or an endpoint load level), with its reference."""

    model_config = ConfigDict(extra="forbid")
    kind: str
    file: str
    pointer: str
    benchmark: str
    metric: str
    value: float | None
    unit: str | None = None
    host: str | None = None
    device: str | None = None
    reference: float | None = None
    verdict: Status = Status.UNKNOWN
    source: Provenance | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class RunSnapshot(BaseModel):
    """The findings (results that are not a pass) of one run, for time-to-fix."""

    model_config = ConfigDict(extra="forbid")
    kind: str
    file: str
    at: datetime | None
    findings: dict[str, str] = Field(default_factory=dict, description="finding key -> title")


class EvaluationEvidence(BaseModel):
    """Everything known about one provider and cluster, ready for scoring."""

    model_config = ConfigDict(extra="forbid")
    root: str
    provider: ProviderFile
    provider_file: str | None = None
    sources: list[SourceFile] = Field(default_factory=list)
    checks: list[SourcedCheck] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    history: list[RunSnapshot] = Field(default_factory=list)
    scheduler: SchedulerReliability | None = Field(None, description="From captured scheduler history")
    slurm_texts: dict[str, str] = Field(default_factory=dict, description="Captured scheduler outputs")
    notes: list[str] = Field(default_factory=list, description="Steps skipped, files ignored, and why")

    def kinds_present(self) -> set[str]:
        return {s.kind for s in self.sources if s.current}


# --------------------------------------------------------------------------------------- detection
_NAME_KINDS: list[tuple[str, Kind]] = [
    ("endpoint-bench", "endpoint-bench"),
    ("endpoint_bench", "endpoint-bench"),
    ("endpoint-audit", "endpoint-audit"),
    ("endpoint_audit", "endpoint-audit"),
    ("audit", "audit"),
    ("isolation", "isolation"),
    ("checks", "isolation"),
    ("health", "health"),
    ("bench", "bench"),
]


def detect_kind(name: str, data: Any) -> Kind | None:
    """Which command printed this JSON: from an explicit 'kind', the file name, then the shape."""
    if isinstance(data, dict) and isinstance(data.get("kind"), str):
        k = data["kind"].lower()
        if k in ("audit", "isolation", "health", "bench", "endpoint-bench", "endpoint-audit"):
            return k  # type: ignore[return-value]
    stem = name.lower()
    for prefix, kind in _NAME_KINDS:
        if stem.startswith(prefix):
            return kind
    if isinstance(data, list):
        # a bare list is `podium checks run` output only when its items look like CheckResults
        looks = all(isinstance(x, dict) and "id" in x and "status" in x for x in data)
        return "isolation" if looks else None
    if isinstance(data, dict):
        if "levels" in data:
            return "endpoint-bench"
        if "nodes" in data:
            return "health"
        if "results" in data:
            return "bench"
        if "checks" in data:
            # `podium audit --json` carries its advisory bundle; `podium checks run --json` is checks only.
            audit_keys = ("advisory_bundle", "advisory_bundle_version", "groups", "profiles")
            return "audit" if any(k in data for k in audit_keys) else "isolation"
    return None


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def collected_at(data: Any) -> datetime | None:
    """The time a run's JSON says it was collected (first of several common keys)."""
    if not isinstance(data, dict):
        return None
    for key in ("collected_at", "generated_at", "started_at", "finished_at", "created_at"):
        t = _parse_time(data.get(key))
        if t:
            return t
    prov = data.get("provenance")
    if isinstance(prov, dict):
        return _parse_time(prov.get("collected_at"))
    return None


# ------------------------------------------------------------------------------------------ readers
def _check(data: Any, file: str, pointer: str, kind: str) -> SourcedCheck:
    try:
        return SourcedCheck(kind=kind, file=file, pointer=pointer, result=CheckResult.model_validate(data))
    except ValidationError as e:
        from podium.rating.provider import validation_message

        raise ParseError(file, f"{pointer}: not a CheckResult: {validation_message(e)}") from None


def read_checks(data: Any, file: str, kind: str) -> list[SourcedCheck]:
    """Checks from an audit/isolation/endpoint-audit document: a list, or an object with 'checks'."""
    if isinstance(data, list):
        return [_check(c, file, f"/{i}", kind) for i, c in enumerate(data)]
    if isinstance(data, dict):
        # audit and `checks run` print 'checks'; `endpoint audit` prints 'results'
        for key in ("checks", "results"):
            if isinstance(data.get(key), list):
                return [_check(c, file, f"/{key}/{i}", kind) for i, c in enumerate(data[key])]
    raise ParseError(file, f"{kind} JSON needs a list of checks or an object with 'checks' or 'results'")


_VERDICTS = {"pass": Status.PASS, "warn": Status.WARN, "fail": Status.FAIL, "skipped": Status.SKIPPED}


def _status(v: Any) -> Status:
    return _VERDICTS.get(str(v).lower(), Status.UNKNOWN) if v is not None else Status.UNKNOWN


def read_health(data: Any, file: str) -> list[SourcedCheck]:
    """Node verdicts become ``health.node`` results; each node's own checks are kept as they are."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise ParseError(file, "health JSON needs an object with 'nodes'")
    out: list[SourcedCheck] = []
    for i, node in enumerate(data["nodes"]):
        if not isinstance(node, dict) or not node.get("host"):
            raise ParseError(file, f"/nodes/{i}: a node needs a 'host'")
        verdict, action = node.get("verdict"), node.get("action")
        reason = None if verdict in ("pass", "warn", "fail") else "health could not grade this node"
        gpu = [
            c
            for c in node.get("checks") or []
            if isinstance(c, dict) and str(c.get("id", "")).startswith("gpu.")
        ]
        if verdict == "pass" and gpu and all(c.get("status") in ("skipped", "unknown") for c in gpu):
            # A GPU node is not healthy on the strength of its CPU-side checks alone.
            verdict, reason = "unknown", "health passed, but no GPU check ran on this node (no GPU visible?)"
        out.append(
            SourcedCheck(
                kind="health",
                file=file,
                pointer=f"/nodes/{i}",
                result=CheckResult(
                    id="health.node",
                    title="Node health verdict",
                    status=_status(verdict),
                    severity=Severity.HIGH if _status(verdict) == Status.FAIL else Severity.NONE,
                    category="reliability",
                    host=str(node["host"]),
                    evidence=[
                        Evidence(
                            summary=f"verdict {node.get('verdict')}, action {action}", value=str(verdict)
                        )
                    ],
                    reason=reason,
                    details={"action": action},
                ),
            )
        )
        for j, c in enumerate(node.get("checks") or []):
            out.append(_check(c, file, f"/nodes/{i}/checks/{j}", "health"))
    return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):
        for key in ("value", "target", "expected"):
            if isinstance(v.get(key), (int, float)):
                return float(v[key])
    return None


def _provenance(v: Any) -> Provenance | None:
    if isinstance(v, dict):
        try:
            return Provenance.model_validate({k: v.get(k) for k in Provenance.model_fields if k in v})
        except ValidationError:
            return None
    return None


def read_bench(data: Any, file: str) -> list[Measurement]:
    """Bench results: benchmark, metric, value, unit, host, device, reference, verdict."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ParseError(file, "bench JSON needs an object with 'results'")
    out = []
    for i, r in enumerate(data["results"]):
        if not isinstance(r, dict) or not r.get("benchmark") or not r.get("metric"):
            raise ParseError(file, f"/results/{i}: a result needs 'benchmark' and 'metric'")
        ref = r.get("reference")
        out.append(
            Measurement(
                kind="bench",
                file=file,
                pointer=f"/results/{i}",
                benchmark=str(r["benchmark"]),
                metric=str(r["metric"]),
                value=_number(r.get("value")),
                unit=r.get("unit"),
                host=r.get("host"),
                device=r.get("device"),
                reference=_number(ref),
                verdict=_status(r.get("verdict")),
                source=_provenance(r.get("provenance") or r.get("source")),
                details={"reference": ref} if isinstance(ref, dict) else {},
            )
        )
    return out


def read_endpoint_bench(data: Any, file: str) -> list[Measurement]:
    """Each load level gives its error rate, output tokens/s and TTFT p99 as measurements."""
    if not isinstance(data, dict) or not isinstance(data.get("levels"), list):
        raise ParseError(file, "endpoint bench JSON needs an object with 'levels'")
    prov = _provenance(data.get("provenance"))
    model = data.get("model")
    out = []
    for i, lv in enumerate(data["levels"]):
        if not isinstance(lv, dict):
            raise ParseError(file, f"/levels/{i}: not an object")
        load = {"concurrency": lv.get("concurrency"), "rate": lv.get("rate"), "model": model}
        ttft = ((lv.get("metrics") or {}).get("ttft_ms") or {}).get("p99")
        for metric, value, unit in (
            ("error_rate", lv.get("error_rate"), "fraction"),
            ("output_tokens_per_s", lv.get("output_tokens_per_s"), "tok/s"),
            ("ttft_p99_ms", ttft, "ms"),
        ):
            if value is None:
                continue
            out.append(
                Measurement(
                    kind="endpoint-bench",
                    file=file,
                    pointer=f"/levels/{i}",
                    benchmark="endpoint",
                    metric=metric,
                    value=_number(value),
                    unit=unit,
                    host=data.get("base_url"),
                    source=prov,
                    details=load,
                )
            )
    return out


# ------------------------------------------------------------------------------------------ loading
def _finding_key(r: CheckResult) -> str:
    # Check id and host, not the subject: an upgrade from one vulnerable version to another
    # changes the subject but does not fix the finding.
    return f"{r.id}|{r.host or ''}"


def snapshot(kind: str, file: str, at: datetime | None, checks: list[SourcedCheck]) -> RunSnapshot:
    """The failing and warning results of one run, keyed so that runs can be compared."""
    findings = {
        _finding_key(c.result): c.result.title
        for c in checks
        if c.result.status in (Status.FAIL, Status.WARN)
    }
    return RunSnapshot(kind=kind, file=file, at=at, findings=findings)


# podium's own bookkeeping inside run and report folders: not evidence, not worth a note
_BOOKKEEPING_NAMES = {"run.json", "steps.json", "facts.json", "report.json", "scorecard.json", "ranking.json"}
_BOOKKEEPING_DIRS = {"raw", "results", "scorecards"}


def _bookkeeping(rel: Path) -> bool:
    return rel.name in _BOOKKEEPING_NAMES or any(part in _BOOKKEEPING_DIRS for part in rel.parts[:-1])


def load_evaluation(root: Path, provider_path: Path | None = None) -> EvaluationEvidence:
    """Read an evaluation directory (or one JSON file) into typed evidence."""
    root = Path(root)
    if not root.exists():
        raise ParseError(root, "no such evaluation directory or file")
    base = root if root.is_dir() else root.parent
    files = (
        sorted(f for f in root.rglob("*.json") if not _bookkeeping(f.relative_to(root)))
        if root.is_dir()
        else [root]
    )
    if provider_path is None and root.is_dir():
        provider_path = next((root / n for n in PROVIDER_FILE_NAMES if (root / n).is_file()), None)
    provider = load_provider(provider_path) if provider_path else default_provider(root.resolve().name)
    docs = [(str(f.relative_to(base)), f.read_bytes()) for f in files]
    slurm = None
    if root.is_dir() and (base / "slurm").is_dir():
        from podium.rating.scheduler import scheduler_texts

        slurm = scheduler_texts(base / "slurm")
    return evaluation_from_documents(
        str(root), provider, str(provider_path) if provider_path else None, docs, slurm
    )


def evaluation_from_documents(
    root: str,
    provider: ProviderFile | None,
    provider_file: str | None,
    docs: list[tuple[str, bytes]],
    slurm_texts: dict[str, str] | None = None,
) -> EvaluationEvidence:
    """Build evidence from documents (relative path, bytes): from a directory or from the store."""
    ev = EvaluationEvidence(
        root=root, provider=provider or default_provider(Path(root).name), provider_file=provider_file
    )
    if provider_file is None:
        ev.notes.append("no provider file: every declared fact (pricing, SLA, certifications...) is unknown")
    parsed: list[tuple[Kind, str, datetime | None, Any, str]] = []
    for rel, raw in docs:
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ParseError(rel, f"not valid JSON: {e}") from None
        kind = detect_kind(Path(rel).name, data)
        if kind is None:
            ev.notes.append(
                f"{rel}: not recognised as audit, isolation, health, bench or endpoint output; ignored"
            )
            continue
        parsed.append((kind, rel, collected_at(data), data, hashlib.sha256(raw).hexdigest()))

    def order(item):  # oldest first; a file without a time counts as the newest
        t = item[2]
        return (t is None, t or datetime.min.replace(tzinfo=timezone.utc), "history" not in item[1], item[1])

    parsed.sort(key=order)
    latest = {kind: rel for kind, rel, _t, _d, _h in parsed}
    for kind, rel, t, data, digest in parsed:
        current = latest[kind] == rel
        ev.sources.append(SourceFile(path=rel, kind=kind, sha256=digest, collected_at=t, current=current))
        if kind in CHECK_KINDS:
            checks = read_health(data, rel) if kind == "health" else read_checks(data, rel, kind)
            ev.history.append(snapshot(kind, rel, t, checks))
            if current:
                ev.checks.extend(checks)
        elif current:
            ev.measurements.extend(
                read_bench(data, rel) if kind == "bench" else read_endpoint_bench(data, rel)
            )
    if slurm_texts:
        from podium.rating.scheduler import scheduler_from_texts

        ev.scheduler = scheduler_from_texts(slurm_texts)
        ev.slurm_texts = dict(slurm_texts)
    return ev
