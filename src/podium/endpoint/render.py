"""Human-readable tables for endpoint reports (Rich; printed on stderr by the CLI)."""

from __future__ import annotations

from podium.endpoint.models import EndpointBenchReport, LatencyStats


def _ms(s: LatencyStats) -> str:
    """p50/p99 in milliseconds, compact."""
    if s.p50 is None:
        return "-"
    return f"{s.p50:.4g}/{s.p99:.4g}"


def bench_table(report: EndpointBenchReport):
    """One row per level: load, successes, latencies (p50/p99 ms), throughput, blended cost."""
    from rich.table import Table

    t = Table(
        title=f"{report.model} ({report.api}); tokens from {report.token_count_source}; latencies p50/p99 ms",
        title_justify="left",
    )
    for col in ("level", "ok", "failed", "TTFT", "ITL", "TPOT", "E2E", "out tok/s", "req/s", "$/M"):
        t.add_column(col, justify="right", no_wrap=col != "failed", min_width=6 if col == "failed" else None)
    for lv in report.levels:
        load = f"rate {lv.rate:g}/s" if lv.rate is not None else f"conc {lv.concurrency}"
        failed = str(lv.requests_failed.count)
        if lv.requests_failed.reasons:
            failed += " (" + ", ".join(f"{k} {v}" for k, v in lv.requests_failed.reasons.items()) + ")"
        cost = lv.cost.blended_usd_per_m_tokens if lv.cost else None
        t.add_row(
            load,
            str(lv.requests_ok),
            failed,
            _ms(lv.metrics.ttft_ms),
            _ms(lv.metrics.itl_ms),
            _ms(lv.metrics.tpot_ms),
            _ms(lv.metrics.e2e_ms),
            f"{lv.output_tokens_per_s:.1f}",
            f"{lv.requests_per_s:.2f}",
            f"{cost:.4f}" if cost is not None else "-",
        )
    if report.stopped_because:
        t.caption = f"sweep stopped: {report.stopped_because}"
    return t
