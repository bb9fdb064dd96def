"""podium endpoint monitor: taxonomy, uptime windows, resume, SQLite store, SVG plot."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from podium.endpoint.monitor import MonitorConfig, Probe, render_svg, run_monitor, summarise
from podium.endpoint.testservers.hostile import HostileServer, ServerOptions
from podium.store.probes import StoreProbeStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _p(minutes: float, outcome: str = "success", ttft: float | None = 100.0) -> Probe:
    return Probe(target="t", at=T0 + timedelta(minutes=minutes), outcome=outcome, ttft_ms=ttft, e2e_ms=ttft)


def test_summary_taxonomy_and_windows():
    # 2 days of probes every 10 minutes; the last hour has 2 failures out of 6, one 429 apart.
    probes = [_p(m) for m in range(0, 2 * 24 * 60, 10)]
    last = probes[-1].at
    probes[-1] = Probe(target="t", at=last, outcome="http_5xx")
    probes[-2] = Probe(target="t", at=last - timedelta(minutes=10), outcome="stream_cut")
    probes[-3] = Probe(target="t", at=last - timedelta(minutes=20), outcome="http_429")
    r = summarise("t", probes)
    assert r.probes == 288
    assert r.outcomes == {"http_429": 1, "http_5xx": 1, "stream_cut": 1, "success": 285}
    assert r.rate_limited == 1 and r.forbidden == 0
    assert r.availability == round(285 / 287, 6)
    w = {u.window: u for u in r.uptime}
    assert w["5m"].probes == 1 and w["5m"].availability == 0.0
    # Last hour: probes at -50..0 minutes = 6 probes; 429 left out -> 3 of 5 succeeded.
    assert w["1h"].probes == 6 and w["1h"].availability == 0.6
    assert w["1d"].probes == 144 and w["1d"].complete
    assert r.ttft_ms.p50 == 100.0
    assert len(r.over_time) == 24
    assert r.over_time[-1].failures == 3


def test_svg_plot_is_well_formed():
    import xml.etree.ElementTree as ET

    r = summarise("t", [_p(m, ttft=100 + m) for m in range(30)] + [_p(31, "timeout", None)])
    svg = render_svg(r)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert len(root.findall("{http://www.w3.org/2000/svg}polyline")) == 2
    assert "1 failed" in svg


def test_monitor_probes_store_and_resume(tmp_path):
    opts = ServerOptions(status_sequence=[200, 429, 403, 503, 401, 200])
    db = tmp_path / "monitor.sqlite"
    with HostileServer(opts) as s:
        cfg = MonitorConfig(base_url=s.base_url, model="ok", interval_s=0.02, duration_s=30, max_probes=3)
        store = StoreProbeStore.open(str(db))
        r1 = run_monitor(cfg, store)
        assert [p for p in r1.outcomes] == ["http_403", "http_429", "success"]
        assert r1.finished is False
        # Resume: the plan (end time) is kept in the store; three more probes append.
        r2 = run_monitor(cfg, StoreProbeStore.open(str(db)))
        cut = MonitorConfig(base_url=s.base_url, model="cut", interval_s=0.02, duration_s=30, max_probes=1)
        r3 = run_monitor(cut, StoreProbeStore.open(str(db)))
    assert r2.probes == 6
    assert r2.outcomes == {"http_401": 1, "http_403": 1, "http_429": 1, "http_5xx": 1, "success": 2}
    assert r2.availability == 0.5  # 2 of 4 (429 and 403 apart)
    assert r2.plan_end == r1.plan_end
    assert r3.outcomes == {"stream_cut": 1}
    rows = sqlite3.connect(db).execute("SELECT count(*) FROM endpoint_probes").fetchone()
    assert rows == (7,)


@pytest.mark.parametrize(
    ("mode", "outcome"), [("empty", "empty_response"), ("hang", "timeout"), ("status-402", "http_402")]
)
def test_probe_outcomes(tmp_path, mode, outcome):
    with HostileServer() as s:
        cfg = MonitorConfig(
            base_url=s.base_url, model=mode, interval_s=0.01, duration_s=10, timeout_s=0.5, max_probes=1
        )
        r = run_monitor(cfg, StoreProbeStore.open(str(tmp_path / "m.sqlite")))
    assert r.outcomes == {outcome: 1}
