"""Metric definitions (pure functions over per-request records).

See podium.endpoint.models for the exact definitions of TTFT, ITL, TPOT, E2E and queue time.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise

from podium.endpoint.models import FailureSummary, LatencyStats, LevelMetrics, RequestRecord


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default) of an ascending list; q in [0, 100]."""
    if not sorted_values:
        raise ValueError("percentile of an empty list")
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def latency_stats(values: Iterable[float]) -> LatencyStats:
    """p50/p90/p99/mean/min/max of some milliseconds; all None when there is no sample."""
    v = sorted(values)
    if not v:
        return LatencyStats()
    return LatencyStats(
        p50=round(percentile(v, 50), 4),
        p90=round(percentile(v, 90), 4),
        p99=round(percentile(v, 99), 4),
        mean=round(sum(v) / len(v), 4),
        min=round(v[0], 4),
        max=round(v[-1], 4),
        count=len(v),
    )


def ttft_and_itl(sent_ns: int, content_ns: list[int]) -> tuple[float | None, list[float]]:
    """TTFT (ms) = first content chunk - send; ITL (ms) = gaps between content chunks."""
    if not content_ns:
        return None, []
    ttft = (content_ns[0] - sent_ns) / 1e6
    itl = [(b - a) / 1e6 for a, b in pairwise(content_ns)]
    return ttft, itl


def tpot_ms(e2e_ms: float | None, ttft_ms: float | None, output_tokens: int | None) -> float | None:
    """TPOT = (E2E - TTFT) / (tokens - 1); None for fewer than 2 tokens."""
    if e2e_ms is None or ttft_ms is None or not output_tokens or output_tokens < 2:
        return None
    return (e2e_ms - ttft_ms) / (output_tokens - 1)


def meets_slos(
    r: RequestRecord, slo_ttft_ms: float | None, slo_tpot_ms: float | None, slo_e2e_ms: float | None
) -> bool:
    """A request counts toward goodput when it succeeded and met every SLO given."""
    if not r.ok:
        return False
    if slo_ttft_ms is not None and (r.ttft_ms is None or r.ttft_ms > slo_ttft_ms):
        return False
    if slo_tpot_ms is not None and r.tpot_ms is not None and r.tpot_ms > slo_tpot_ms:
        return False
    return not (slo_e2e_ms is not None and (r.e2e_ms is None or r.e2e_ms > slo_e2e_ms))


def level_metrics(records: list[RequestRecord]) -> LevelMetrics:
    """Latency stats over the successful requests (queue time over all sent requests)."""
    ok = [r for r in records if r.ok]
    return LevelMetrics(
        ttft_ms=latency_stats(r.ttft_ms for r in ok if r.ttft_ms is not None),
        itl_ms=latency_stats(x for r in ok for x in r.itl_ms),
        tpot_ms=latency_stats(r.tpot_ms for r in ok if r.tpot_ms is not None),
        e2e_ms=latency_stats(r.e2e_ms for r in ok if r.e2e_ms is not None),
        queue_ms=latency_stats(r.queue_ms for r in records),
    )


def failure_summary(records: list[RequestRecord]) -> FailureSummary:
    failed = [r for r in records if not r.ok]
    reasons = Counter(r.error_kind or "unknown" for r in failed)
    examples: list[str] = []
    for r in failed:
        msg = f"{r.error_kind}: {r.error}"
        if msg not in examples:
            examples.append(msg)
        if len(examples) == 5:
            break
    return FailureSummary(count=len(failed), reasons=dict(sorted(reasons.items())), examples=examples)


def combined_source(sources: Iterable[str]) -> str:
    """One token-count source for many requests ('mixed' when they differ)."""
    s = {x for x in sources if x != "none"}
    if not s:
        return "none"
    return s.pop() if len(s) == 1 else "mixed"
