"""``podium endpoint monitor``: periodic probes over hours or days, stored, resumable, summarised.

Each probe is one small streamed completion on a fresh connection (so DNS, TCP and TLS failures
show). Its outcome is ``success`` or a failure kind from the shared taxonomy
(podium.endpoint.models.FAILURE_KINDS). Probes go to a :class:`ProbeStore`: the shared results
store (podium.store.probes.StoreProbeStore; SQLite by default, Postgres by URL).

Availability counts 429 (rate limited) and 403 (forbidden) apart: they say the caller hit a
quota or a policy, not that the endpoint was down, so they are left out of the uptime
denominator and reported on their own.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timedelta
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from podium.endpoint.metrics import latency_stats
from podium.endpoint.models import ApiKind, LatencyStats
from podium.models.common import utcnow

NOT_DOWN = ("http_429", "http_403")  # counted apart, not as downtime
WINDOWS = {"5m": timedelta(minutes=5), "1h": timedelta(hours=1), "1d": timedelta(days=1)}


class MonitorConfig(BaseModel):
    """What to probe and how often."""

    model_config = ConfigDict(extra="forbid")

    base_url: str
    model: str
    api: ApiKind = "chat"
    api_key_env: str | None = None
    interval_s: float = Field(60.0, gt=0)
    duration_s: float = Field(3600.0, gt=0)
    timeout_s: float = Field(30.0, gt=0)
    max_tokens: int = Field(8, ge=1)
    max_probes: int | None = Field(None, ge=1, description="Stop after this many probes in this session")
    verify_tls: bool = True
    ca_file: str | None = None


class Probe(BaseModel):
    """One probe's outcome."""

    model_config = ConfigDict(extra="forbid")

    target: str
    at: datetime
    outcome: str = Field(description="'success' or a failure kind")
    http_status: int | None = None
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    error: str | None = None


class ProbeStore(Protocol):
    """Where probes are kept: podium.store.probes.StoreProbeStore (the shared results store)."""

    def add(self, probe: Probe) -> None: ...

    def probes(self, target: str) -> list[Probe]: ...

    def plan(self, target: str) -> tuple[datetime, datetime, float] | None: ...

    def set_plan(self, target: str, start: datetime, end: datetime, interval_s: float) -> None: ...


class UptimeWindow(BaseModel):
    """Availability over the window ending at the last probe."""

    model_config = ConfigDict(extra="forbid")

    window: str
    probes: int
    availability: float | None = Field(None, description="success / (probes - 429 - 403); None without data")
    complete: bool = Field(description="True when probes cover the whole window")


class LatencyBucket(BaseModel):
    """Latency percentiles of the successful probes in one time bucket."""

    model_config = ConfigDict(extra="forbid")

    start: datetime
    probes: int
    failures: int
    ttft_ms: LatencyStats
    e2e_ms: LatencyStats


class MonitorReport(BaseModel):
    """Output of ``podium endpoint monitor``."""

    model_config = ConfigDict(extra="forbid")

    kind: str = "endpoint-monitor"
    target: str
    first_probe: datetime | None = None
    last_probe: datetime | None = None
    probes: int
    outcomes: dict[str, int] = Field(description="success and each failure kind, counted")
    rate_limited: int = Field(description="HTTP 429 probes (counted apart)")
    forbidden: int = Field(description="HTTP 403 probes (counted apart)")
    availability: float | None
    uptime: list[UptimeWindow]
    ttft_ms: LatencyStats
    e2e_ms: LatencyStats
    over_time: list[LatencyBucket]
    plan_end: datetime | None = None
    finished: bool = Field(description="True when the planned duration has passed")
    plot: str | None = Field(None, description="Path of the SVG plot")
    db: str | None = None


def target_key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')}#{model}"


def _availability(probes: list[Probe]) -> float | None:
    counted = [p for p in probes if p.outcome not in NOT_DOWN]
    if not counted:
        return None
    return round(sum(p.outcome == "success" for p in counted) / len(counted), 6)


def summarise(
    target: str, probes: list[Probe], plan_end: datetime | None = None, buckets: int = 24
) -> MonitorReport:
    """Pure: the report over stored probes (uptime windows end at the last probe)."""
    outcomes = Counter(p.outcome for p in probes)
    ok = [p for p in probes if p.outcome == "success"]
    uptime = []
    last = probes[-1].at if probes else None
    first = probes[0].at if probes else None
    for name, span in WINDOWS.items():
        inside = [p for p in probes if last is not None and p.at > last - span]
        uptime.append(
            UptimeWindow(
                window=name,
                probes=len(inside),
                availability=_availability(inside),
                complete=bool(first is not None and last - first >= span),
            )
        )
    over_time = []
    if probes:
        span_s = max((last - first).total_seconds(), 1e-6)
        width = span_s / buckets
        groups: dict[int, list[Probe]] = {}
        for p in probes:
            groups.setdefault(min(int((p.at - first).total_seconds() / width), buckets - 1), []).append(p)
        for i in sorted(groups):
            g = groups[i]
            good = [p for p in g if p.outcome == "success"]
            over_time.append(
                LatencyBucket(
                    start=first + timedelta(seconds=i * width),
                    probes=len(g),
                    failures=len(g) - len(good),
                    ttft_ms=latency_stats(p.ttft_ms for p in good if p.ttft_ms is not None),
                    e2e_ms=latency_stats(p.e2e_ms for p in good if p.e2e_ms is not None),
                )
            )
    return MonitorReport(
        target=target,
        first_probe=first,
        last_probe=last,
        probes=len(probes),
        outcomes=dict(sorted(outcomes.items())),
        rate_limited=outcomes.get("http_429", 0),
        forbidden=outcomes.get("http_403", 0),
        availability=_availability(probes),
        uptime=uptime,
        ttft_ms=latency_stats(p.ttft_ms for p in ok if p.ttft_ms is not None),
        e2e_ms=latency_stats(p.e2e_ms for p in ok if p.e2e_ms is not None),
        over_time=over_time,
        plan_end=plan_end,
        finished=bool(plan_end is not None and utcnow() >= plan_end),
    )


def render_svg(report: MonitorReport, width: int = 720, height: int = 300) -> str:
    """An SVG line plot of TTFT p50/p99 per bucket with red marks where probes failed."""
    pad_l, pad_r, pad_t, pad_b = 60, 20, 30, 40
    pw, ph = width - pad_l - pad_r, height - pad_t - pad_b
    pts = [(b, b.ttft_ms) for b in report.over_time]
    ymax = max([s.p99 for _, s in pts if s.p99 is not None] + [1.0]) * 1.1
    n = max(len(pts) - 1, 1)

    def xy(i: int, v: float) -> str:
        return f"{pad_l + pw * i / n:.1f},{pad_t + ph * (1 - v / ymax):.1f}"

    def line(attr: str, color: str) -> str:
        coords = [xy(i, getattr(s, attr)) for i, (_, s) in enumerate(pts) if getattr(s, attr) is not None]
        if not coords:
            return ""
        return f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(coords)}"/>'

    fails = "".join(
        f'<rect x="{pad_l + pw * i / n - 3:.1f}" y="{pad_t + ph - 8}" width="6" height="8" fill="#d62728">'
        f"<title>{b.failures} failed</title></rect>"
        for i, (b, _) in enumerate(pts)
        if b.failures
    )
    avail = "n/a" if report.availability is None else f"{report.availability:.2%}"
    title = f"{report.target}: TTFT over time (availability {avail}, {report.probes} probes)"
    first = report.first_probe.strftime("%Y-%m-%d %H:%M:%S") if report.first_probe else ""
    last = report.last_probe.strftime("%Y-%m-%d %H:%M:%S") if report.last_probe else ""
    from html import escape

    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">'
        f'<rect width="100%" height="100%" fill="white"/>'
        f'<text x="{pad_l}" y="18">{escape(title)}</text>'
        f'<line x1="{pad_l}" y1="{pad_t + ph}" x2="{pad_l + pw}" y2="{pad_t + ph}" stroke="#444"/>'
        f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + ph}" stroke="#444"/>'
        f'<text x="5" y="{pad_t + 10}">{ymax:.0f} ms</text><text x="5" y="{pad_t + ph}">0 ms</text>'
        f'<text x="{pad_l}" y="{height - 10}">{first}</text>'
        f'<text x="{pad_l + pw}" y="{height - 10}" text-anchor="end">{last}</text>'
        f"{line('p50', '#1f77b4')}{line('p99', '#ff7f0e')}{fails}"
        f'<text x="{pad_l + pw - 150}" y="{pad_t + 12}" fill="#1f77b4">TTFT p50</text>'
        f'<text x="{pad_l + pw - 80}" y="{pad_t + 12}" fill="#ff7f0e">TTFT p99</text>'
        "</svg>"
    )


async def probe_once(config: MonitorConfig, api_key: str | None) -> Probe:
    """One small streamed completion on a fresh connection."""
    from podium.endpoint.datasets import PromptItem
    from podium.endpoint.http import Connection
    from podium.endpoint.loadgen import LoadGenerator
    from podium.endpoint.models import EndpointBenchConfig
    from podium.endpoint.tokens import TokenCounter

    bench_cfg = EndpointBenchConfig(
        base_url=config.base_url,
        model=config.model,
        api=config.api,
        timeout_s=config.timeout_s,
        idle_timeout_s=config.timeout_s,
        output_tokens=config.max_tokens,
        verify_tls=config.verify_tls,
        ca_file=config.ca_file,
        max_response_bytes=1024 * 1024,
    )
    gen = LoadGenerator(bench_cfg, api_key, TokenCounter(None))
    item = PromptItem(prompt="Say hello.", input_tokens_estimate=3, output_tokens=config.max_tokens)
    at = utcnow()
    conn = Connection(gen.target, gen.ssl)
    try:
        await gen._exchange(conn, gen.payload(item), 0, 0, False, item, 0.0, 0.0)
    finally:
        conn.close()
    gen.flush()
    r = gen.records[0]
    return Probe(
        target=target_key(config.base_url, config.model),
        at=at,
        outcome="success" if r.ok else (r.error_kind or "unknown"),
        http_status=r.http_status,
        ttft_ms=r.ttft_ms,
        e2e_ms=r.e2e_ms,
        error=r.error,
    )


def run_monitor(config: MonitorConfig, store: ProbeStore, on_probe=None) -> MonitorReport:
    """Probe every ``interval_s`` until the planned end (kept in the store, so a rerun resumes)."""
    from podium.endpoint.api import read_api_key

    api_key = read_api_key(config.api_key_env)
    target = target_key(config.base_url, config.model)
    plan = store.plan(target)
    now = utcnow()
    if plan is None or now >= plan[1]:
        plan = (now, now + timedelta(seconds=config.duration_s), config.interval_s)
        store.set_plan(target, *plan)
    start, end, interval = plan

    async def loop() -> None:
        done = 0
        while True:
            t = utcnow()
            if t >= end or (config.max_probes is not None and done >= config.max_probes):
                return
            p = await probe_once(config, api_key)
            store.add(p)
            done += 1
            if on_probe:
                on_probe(p)
            # Next slot on the plan's grid, so a resumed monitor keeps the same cadence.
            elapsed = (utcnow() - start).total_seconds()
            next_at = start + timedelta(seconds=(int(elapsed / interval) + 1) * interval)
            wait = (next_at - utcnow()).total_seconds()
            if next_at >= end:
                return
            if wait > 0:
                await asyncio.sleep(wait)

    asyncio.run(loop())
    return summarise(target, store.probes(target), plan_end=end)
