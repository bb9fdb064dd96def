"""Metric definitions against the ground-truth reference server (known send times)."""

from __future__ import annotations

import itertools
import json

import pytest

from podium.endpoint.api import run_endpoint_bench
from podium.endpoint.metrics import percentile
from podium.endpoint.models import EndpointBenchConfig
from podium.runs import RunDirectory


def _bench(base_url: str, tmp_path, **kw):
    run = RunDirectory.create("endpoint-bench", root=tmp_path / "runs")
    cfg = EndpointBenchConfig(base_url=base_url, model="ref", **kw)
    report = run_endpoint_bench(cfg, run)
    run.close(0)
    records = [json.loads(x) for x in (run.path / "requests.jsonl").read_text().splitlines()]
    return report, records, run


def test_ttft_itl_tpot_match_server_send_times(reference_server, tmp_path):
    srv = reference_server("--ttft-ms", "40", "--itl-ms", "20")
    report, records, _ = _bench(srv.base_url, tmp_path, concurrency=[4], requests=16, output_tokens=5)
    truth = srv.stop()
    lv = report.levels[0]
    assert (lv.requests_ok, lv.requests_failed.count, lv.requests_total) == (16, 0, 16)
    assert lv.token_count_source == "usage"
    assert lv.output_tokens_total == 16 * 5
    ttft_err, itl_err = [], []
    for r in records:
        t = truth[r["request_id"]]
        true_ttft = (t["sent_ns"][0] - t["arrival_ns"]) / 1e6
        ttft_err.append(r["ttft_ms"] - true_ttft)
        gaps = [(b - a) / 1e6 for a, b in itertools.pairwise(t["sent_ns"])]
        assert len(r["itl_ms"]) == len(gaps) == 4
        itl_err += [abs(c - g) for c, g in zip(r["itl_ms"], gaps, strict=True)]
        # The role-only first chunk (sent at arrival) is never the TTFT: content comes >= 40 ms later.
        assert r["ttft_ms"] >= 40.0
        assert r["tpot_ms"] == pytest.approx((r["e2e_ms"] - r["ttft_ms"]) / 4, abs=1e-3)
        assert r["output_tokens"] == 5
    # Kernel receive stamps vs the server's post-send stamps: the error is the send path plus the
    # loopback, well under a millisecond; a client starved of CPU for a whole ITL would show +20 ms.
    assert min(ttft_err) >= -0.05  # causality: same clock, send stamped first, receipt stamped last
    assert percentile(sorted(ttft_err), 50) <= 1.0
    assert percentile(sorted(ttft_err), 90) <= 5.0
    assert percentile(sorted(itl_err), 50) <= 1.0
    assert lv.metrics.itl_ms.p50 == pytest.approx(20.0, abs=1.5)
    assert lv.metrics.tpot_ms.p50 == pytest.approx(20.0, abs=1.5)
    assert lv.metrics.ttft_ms.p50 == pytest.approx(40.0, abs=2.0)


def test_role_only_first_chunk_is_not_ttft(reference_server, tmp_path):
    """Role chunk at arrival, content 120 ms later: TTFT is ~120 ms, not ~0."""
    srv = reference_server("--ttft-ms", "120", "--itl-ms", "1", "--tokens", "2")
    report, records, _ = _bench(srv.base_url, tmp_path, concurrency=[1], requests=2, output_tokens=2)
    assert all(120.0 <= r["ttft_ms"] < 140.0 for r in records)
    assert report.levels[0].metrics.ttft_ms.min >= 120.0


def test_completions_api_and_tokens_without_usage(reference_server, tmp_path):
    srv = reference_server("--ttft-ms", "5", "--itl-ms", "1", "--no-usage")
    report, records, _ = _bench(
        srv.base_url, tmp_path, api="completions", concurrency=[2], requests=4, output_tokens=4
    )
    lv = report.levels[0]
    assert lv.requests_ok == 4
    # Each chunk is " tokN" (5 chars): 4 chunks = 20 chars = 5 tokens at 4 chars/token.
    assert lv.token_count_source == "chars-estimate"
    assert [r["output_tokens"] for r in records] == [5, 5, 5, 5]
    assert report.token_count_source == "chars-estimate"


def test_levels_per_concurrency_and_throughput(reference_server, tmp_path):
    srv = reference_server("--ttft-ms", "10", "--itl-ms", "10")
    report, records, _ = _bench(srv.base_url, tmp_path, concurrency=[1, 4], requests=8, output_tokens=5)
    assert [lv.concurrency for lv in report.levels] == [1, 4]
    one, four = report.levels
    # 8 requests of ~50 ms: ~0.4 s serially, ~0.1 s four at a time.
    assert four.requests_per_s > 2.5 * one.requests_per_s
    assert one.output_tokens_per_s == pytest.approx(40 / one.duration_s, rel=1e-3)
    assert len(records) == 16 and {r["level"] for r in records} == {0, 1}


def test_open_loop_rate_records_queue_time_apart(reference_server, tmp_path):
    srv = reference_server("--ttft-ms", "5", "--itl-ms", "1")
    report, records, _ = _bench(srv.base_url, tmp_path, rate=40.0, requests=20, output_tokens=3, seed=7)
    lv = report.levels[0]
    assert lv.rate == 40.0 and lv.concurrency is None
    assert lv.requests_ok == 20
    assert lv.metrics.queue_ms.count == 20
    # Same seed, same schedule.
    offs = [r["scheduled_offset_s"] for r in sorted(records, key=lambda r: r["index"])]
    _report2, records2, _ = _bench(srv.base_url, tmp_path, rate=40.0, requests=20, output_tokens=3, seed=7)
    assert offs == [r["scheduled_offset_s"] for r in sorted(records2, key=lambda r: r["index"])]


def test_open_loop_cap_turns_lateness_into_queue_time(reference_server, tmp_path):
    """At 100 req/s with one slot and 30 ms requests, sends fall behind: queue time grows, none dropped."""
    srv = reference_server("--ttft-ms", "30", "--itl-ms", "1")
    report, _records, _ = _bench(
        srv.base_url, tmp_path, rate=100.0, max_concurrency=1, requests=10, output_tokens=2
    )
    lv = report.levels[0]
    assert lv.requests_total == 10 and lv.requests_ok == 10
    assert lv.metrics.queue_ms.max > 100.0
    # Latency excludes queueing: TTFT stays near the server's 30 ms.
    assert lv.metrics.ttft_ms.p50 < 45.0


def test_goodput_against_slos(reference_server, tmp_path):
    srv = reference_server("--ttft-ms", "30", "--itl-ms", "1")
    report, _, _ = _bench(
        srv.base_url, tmp_path, concurrency=[2], requests=6, output_tokens=3, slo_ttft_ms=10.0
    )
    assert report.levels[0].goodput_fraction == 0.0
    report, _, _ = _bench(
        srv.base_url, tmp_path, concurrency=[2], requests=6, output_tokens=3, slo_ttft_ms=500.0
    )
    assert report.levels[0].goodput_fraction == 1.0


def test_sweep_stops_on_saturation(reference_server, tmp_path):
    srv = reference_server("--ttft-ms", "5", "--itl-ms", "2")
    report, _, _ = _bench(
        srv.base_url,
        tmp_path,
        concurrency=[1],
        sweep=True,
        sweep_max_concurrency=8,
        requests=8,
        output_tokens=4,
    )
    assert [lv.concurrency for lv in report.levels][:2] == [1, 2]
    assert report.stopped_because is not None


def test_cost_per_run_and_blended(reference_server, tmp_path):
    srv = reference_server("--ttft-ms", "1", "--itl-ms", "1")
    report, _, _ = _bench(
        srv.base_url,
        tmp_path,
        concurrency=[1],
        requests=4,
        output_tokens=5,
        price_input_per_m=1.0,
        price_output_per_m=3.0,
    )
    lv = report.levels[0]
    # usage: prompt_tokens=1, completion_tokens=5 per request -> 4 in, 20 out.
    assert (lv.input_tokens_total, lv.output_tokens_total) == (4, 20)
    assert lv.cost.usd == pytest.approx((4 * 1.0 + 20 * 3.0) / 1e6)
    assert lv.cost.blended_usd_per_m_tokens == pytest.approx(64 / 24)
    assert report.cost.usd == pytest.approx(lv.cost.usd)
