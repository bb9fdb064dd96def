"""Scheduler history as reliability evidence: ``sacctmgr show event``, ``sinfo -R`` and ``sacct``.

Parsers are pure (text in, typed models out; :class:`~podium.errors.ParseError` on garbage).
:func:`reliability` turns the parsed history into node availability, MTBF, drain-to-return
time (how fast a failed node comes back: hot-swap speed) and the share of jobs lost to node
failure.
"""

from __future__ import annotations

import json
import re
import statistics
from datetime import datetime, timezone
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from podium.errors import ParseError

_UNKNOWN_TIMES = {"", "unknown", "none", "n/a", "invalid"}
FAILURE_STATES = ("DOWN", "DRAIN", "FAIL")

# libyaml's C loader when PyYAML has it: provider files and the rubric parse ~10x faster.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class NodeEvent(BaseModel):
    """One row of ``sacctmgr show event``: a node (or the cluster) in a state for a time span."""

    model_config = ConfigDict(extra="forbid")
    cluster: str
    node: str | None = Field(None, description="None for cluster-wide events")
    start: datetime
    end: datetime | None = Field(None, description="None while the event is still open")
    state: str
    reason: str
    user: str | None = None

    @property
    def is_failure(self) -> bool:
        return self.node is not None and any(s in self.state.upper() for s in FAILURE_STATES)

    def hours(self, until: datetime) -> float:
        return max(0.0, ((self.end or until) - self.start).total_seconds() / 3600)


class NodeReason(BaseModel):
    """One row of ``sinfo -R``: nodes that are down or drained now, and why."""

    model_config = ConfigDict(extra="forbid")
    nodes: list[str]
    reason: str
    user: str | None = None
    since: datetime | None = None
    state: str | None = None


class JobRecord(BaseModel):
    """One job (steps folded in) from ``sacct -P``."""

    model_config = ConfigDict(extra="forbid")
    job_id: str
    state: str
    start: datetime | None = None
    end: datetime | None = None
    nodes: list[str] = Field(default_factory=list)


class SchedulerReliability(BaseModel):
    """Reliability over a window, from scheduler history. None means the history cannot say."""

    model_config = ConfigDict(extra="forbid")
    window_start: datetime | None = None
    window_end: datetime | None = None
    node_count: int = 0
    node_hours: float = 0.0
    node_hours_down: float = 0.0
    availability_percent: float | None = None
    failures: int = 0
    mtbf_hours: float | None = Field(None, description="Node-hours up per failure event")
    drain_to_return_hours: float | None = Field(None, description="Median length of closed down/drain events")
    open_events: int = 0
    jobs_total: int = 0
    jobs_node_fail: int = 0
    jobs_failed: int = 0
    jobs_lost_percent: float | None = Field(None, description="NODE_FAIL jobs / all finished jobs, %")
    down_now: list[NodeReason] = Field(default_factory=list)
    events: list[NodeEvent] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list, description="Files the history was read from")

    def metric(self, name: str) -> float | None:
        value = getattr(self, name, None)
        return float(value) if isinstance(value, (int, float)) else None


# -------------------------------------------------------------------------------------- helpers
def parse_slurm_time(text: str) -> datetime | None:
    """Slurm's ISO-like time ('2026-11-30T01:54:20'); None for Unknown/None. Read as UTC."""
    t = text.strip()
    if t.lower() in _UNKNOWN_TIMES:
        return None
    try:
        value = datetime.fromisoformat(t)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def expand_hostlist(text: str) -> list[str]:
    """Expand a Slurm host list: 'n[1-3,7],gpu01' -> n1 n2 n3 n7 gpu01 (zero padding kept)."""
    text = text.strip()
    if not text or text.lower() in ("none assigned", "(null)", "none"):
        return []
    hosts: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", text):
        part = part.strip()
        m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", part)
        if not m:
            hosts.append(part)
            continue
        prefix, ranges, suffix = m.groups()
        for r in ranges.split(","):
            if "-" in r:
                a, b = r.split("-", 1)
                width = len(a) if a.startswith("0") else 0
                hosts.extend(f"{prefix}{i:0{width}d}{suffix}" for i in range(int(a), int(b) + 1))
            else:
                hosts.append(f"{prefix}{r}{suffix}")
    return hosts


def _table(text: str, source: str) -> list[dict[str, str]]:
    """Rows of a Slurm table: '|'- or '|#'-delimited with a header, or fixed width with a header."""
    lines = [ln.rstrip("\n") for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ParseError(source, "empty output")
    header = lines[0]
    if "|" in header:
        sep = "|#" if "|#" in header else "|"
        names = [h.strip() for h in header.split(sep)]
        rows = []
        for n, ln in enumerate(lines[1:], start=2):
            cells = ln.split(sep)
            if len(cells) < len(names) - 1:
                raise ParseError(
                    source, f"line {n}: {len(cells)} fields, header has {len(names)} (truncated?)"
                )
            rows.append({names[i]: (cells[i].strip() if i < len(cells) else "") for i in range(len(names))})
        return rows
    # Fixed width: column starts from the dashes line when present, else from the header words.
    body = lines[1:]
    if body and set(body[0].replace(" ", "")) == {"-"}:
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", body[0])]
        body = body[1:]
        names = [header[a:b].strip() for a, b in spans]
        cuts = [(a, spans[i + 1][0] if i + 1 < len(spans) else None) for i, (a, _b) in enumerate(spans)]
    else:
        starts = [m.start() for m in re.finditer(r"\S+", header)]
        names = header.split()
        cuts = [(a, starts[i + 1] if i + 1 < len(starts) else None) for i, a in enumerate(starts)]
    if len(names) < 2:
        raise ParseError(source, "no table header found")
    return [{names[i]: ln[a:b].strip() for i, (a, b) in enumerate(cuts)} for ln in body]


def _need(rows: list[dict[str, str]], columns: tuple[str, ...], source: str) -> None:
    if rows and not all(c in rows[0] for c in columns):
        missing = [c for c in columns if c not in rows[0]]
        raise ParseError(source, f"missing column(s) {', '.join(missing)}")


# -------------------------------------------------------------------------------------- parsers
def parse_sacctmgr_events(text: str, source: str = "sacctmgr show event") -> list[NodeEvent]:
    """Parse ``sacctmgr show event`` in its default table or with ``-P``."""
    rows = _table(text, source)
    if not rows:
        return []
    _need(rows, ("TimeStart", "State"), source)
    events = []
    for n, row in enumerate(rows, start=2):
        start = parse_slurm_time(row.get("TimeStart", ""))
        if start is None:
            raise ParseError(source, f"row {n}: bad TimeStart '{row.get('TimeStart')}'")
        events.append(
            NodeEvent(
                cluster=row.get("Cluster", ""),
                node=row.get("NodeName") or None,
                start=start,
                end=parse_slurm_time(row.get("TimeEnd", "")),
                state=row.get("State", ""),
                reason=row.get("Reason", ""),
                user=row.get("User") or None,
            )
        )
    return events


def parse_sinfo_reasons(text: str, source: str = "sinfo -R") -> list[NodeReason]:
    """Parse ``sinfo -R`` (default table), a '|' format with REASON/NODELIST columns, or ``sinfo --json``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise ParseError(source, f"not valid JSON: {e}") from None
        out = []
        for node in data.get("nodes", []):
            state = str(node.get("state") or "")
            down = any(s in state.upper() for s in FAILURE_STATES)
            if node.get("reason") or down:
                ts = node.get("reason_changed_at")
                out.append(
                    NodeReason(
                        nodes=[node.get("name", "")],
                        reason=node.get("reason") or "(no reason given)",
                        user=node.get("reason_set_by_user"),
                        since=datetime.fromtimestamp(ts, timezone.utc) if ts else None,
                        state=node.get("state"),
                    )
                )
        return out
    rows = _table(text, source)
    _need(rows, ("REASON",), source)
    out = []
    seen = set()
    for row in rows:
        reason = row.get("REASON", "")
        if not reason or reason.lower() == "none":
            continue
        key = (row.get("NODELIST") or row.get("HOSTNAMES"), reason)
        if key in seen:  # one row per partition in long sinfo formats
            continue
        seen.add(key)
        nodelist = row.get("NODELIST") or row.get("HOSTNAMES") or ""
        out.append(
            NodeReason(
                nodes=expand_hostlist(nodelist),
                reason=reason,
                user=row.get("USER") or None,
                since=parse_slurm_time(row.get("TIMESTAMP", "")),
                state=row.get("STATE") or None,
            )
        )
    return out


_STATE_WORST = ["NODE_FAIL", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED", "COMPLETED"]


def parse_sacct_jobs(text: str, source: str = "sacct -P") -> list[JobRecord]:
    """Parse ``sacct -P`` ('|' or '|#' delimited). Steps fold into their job; the job row's state wins."""
    rows = _table(text, source)
    _need(rows, ("JobID", "State"), source)
    jobs: dict[str, JobRecord] = {}
    top: set[str] = set()
    for row in rows:
        raw_id = row["JobID"]
        base = raw_id.split(".", 1)[0]
        state = row["State"].split()[0].upper() if row["State"] else "UNKNOWN"  # 'CANCELLED by 0'
        rec = jobs.get(base)
        nodes = expand_hostlist(row.get("NodeList", ""))
        if rec is None:
            rec = jobs[base] = JobRecord(job_id=base, state=state, nodes=nodes)
        if "." not in raw_id:
            top.add(base)
            rec.state, rec.nodes = state, nodes or rec.nodes
        elif base not in top and _rank(state) < _rank(rec.state):
            rec.state = state
        rec.start = rec.start or parse_slurm_time(row.get("Start", ""))
        rec.end = parse_slurm_time(row.get("End", "")) or rec.end
    return list(jobs.values())


def _rank(state: str) -> int:
    return _STATE_WORST.index(state) if state in _STATE_WORST else len(_STATE_WORST)


# ------------------------------------------------------------------------------------ reliability
def reliability(
    events: list[NodeEvent],
    jobs: list[JobRecord] | None = None,
    down_now: list[NodeReason] | None = None,
    node_count: int | None = None,
    window_start: datetime | None = None,
    window_end: datetime | None = None,
    sources: list[str] | None = None,
) -> SchedulerReliability:
    """Availability, MTBF, drain-to-return and jobs lost from parsed scheduler history."""
    jobs = jobs or []
    node_events = [e for e in events if e.is_failure]
    times = [e.start for e in events] + [e.end for e in events if e.end] + [j.end for j in jobs if j.end]
    start = window_start or (min(times) if times else None)
    end = window_end or (max(times) if times else None)
    nodes = {e.node for e in node_events} | {n for j in jobs for n in j.nodes}
    count = node_count or len(nodes)
    rel = SchedulerReliability(
        window_start=start, window_end=end, node_count=count, events=node_events, sources=sources or []
    )
    rel.down_now = down_now or []
    if start and end and end > start and count:
        node_hours = (end - start).total_seconds() / 3600 * count
        down = 0.0
        for e in node_events:
            s, t = max(e.start, start), min(e.end or end, end)
            down += max(0.0, (t - s).total_seconds() / 3600)
        rel.node_hours = round(node_hours, 6)
        rel.node_hours_down = round(down, 6)
        rel.availability_percent = round(100 * (1 - down / node_hours), 3)
        rel.failures = len(node_events)
        if node_events:
            rel.mtbf_hours = round((node_hours - down) / len(node_events), 6)
    closed = [e.hours(end or e.start) for e in node_events if e.end]
    rel.open_events = sum(1 for e in node_events if e.end is None)
    if closed:
        rel.drain_to_return_hours = round(statistics.median(closed), 6)
    finished = [j for j in jobs if j.state not in ("RUNNING", "PENDING", "REQUEUED", "SUSPENDED")]
    rel.jobs_total = len(finished)
    rel.jobs_node_fail = sum(1 for j in finished if j.state == "NODE_FAIL")
    rel.jobs_failed = sum(1 for j in finished if j.state == "FAILED")
    if finished:
        rel.jobs_lost_percent = round(100 * rel.jobs_node_fail / len(finished), 3)
    return rel


class SchedulerCapture(BaseModel):
    """``slurm/capture.yaml``: when the history was captured and how many nodes the cluster has."""

    model_config = ConfigDict(extra="forbid")
    captured_at: datetime | None = None
    window_start: datetime | None = None
    node_count: int | None = None
    note: str | None = None


SCHEDULER_FILES = {
    "events": ("sacctmgr-event.txt", "sacctmgr-show-event.txt"),
    "reasons": ("sinfo-R.txt", "sinfo-r.txt", "sinfo.json"),
    "jobs": ("sacct.txt", "sacct-P.txt"),
}


def scheduler_texts(folder: Path) -> dict[str, str]:
    """The captured scheduler files of a ``slurm/`` folder: file name -> text."""
    names = [n for group in SCHEDULER_FILES.values() for n in group] + ["capture.yaml"]
    return {n: (folder / n).read_text() for n in names if (folder / n).is_file()}


def scheduler_from_texts(texts: dict[str, str], prefix: str = "slurm/") -> SchedulerReliability:
    """Reliability from captured texts (file name -> text), e.g. from a folder or from the store."""

    def find(kind: str) -> str | None:
        return next((n for n in SCHEDULER_FILES[kind] if n in texts), None)

    meta = SchedulerCapture()
    if "capture.yaml" in texts:
        try:
            data = yaml.load(texts["capture.yaml"], Loader=_YAML_LOADER) or {}
            meta = SchedulerCapture.model_validate(data)
        except (yaml.YAMLError, ValueError) as e:
            raise ParseError(prefix + "capture.yaml", str(e).splitlines()[0]) from None
    sources, events, reasons, jobs = [], [], [], []
    if n := find("events"):
        events = parse_sacctmgr_events(texts[n], prefix + n)
        sources.append(prefix + n)
    if n := find("reasons"):
        reasons = parse_sinfo_reasons(texts[n], prefix + n)
        sources.append(prefix + n)
    if n := find("jobs"):
        jobs = parse_sacct_jobs(texts[n], prefix + n)
        sources.append(prefix + n)
    return reliability(
        events,
        jobs,
        reasons,
        node_count=meta.node_count,
        window_start=meta.window_start,
        window_end=meta.captured_at,
        sources=sources,
    )
