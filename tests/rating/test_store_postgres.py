"""The store on a real PostgreSQL (Debian's postgresql, a private cluster on a free loopback port)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from tests.conftest import need

from podium.rating.ranking import load_providers_dir, rank
from podium.rating.rubric import load_rubric
from podium.store.db import Store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "providers"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres_url():
    initdb = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    need(bool(initdb) and os.geteuid() == 0, "PostgreSQL server binaries (Debian postgresql) and root")
    pytest.importorskip("psycopg", reason="psycopg (dev extra) is not installed")
    bindir = Path(initdb[-1]).parent
    # initdb and the server run as the 'postgres' user (never as root), in a folder that user owns;
    # pytest's tmp_path sits under a root-only directory.
    tmp_path = Path(tempfile.mkdtemp(prefix="podium-pg-"))
    shutil.chown(tmp_path, "postgres")
    data, port = tmp_path / "pg", _free_port()

    def as_postgres(*argv: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *argv], check=True, capture_output=True, timeout=60
        )

    as_postgres(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "podium")
    opts = f"-p {port} -k {tmp_path} -c listen_addresses=127.0.0.1 -c fsync=off"
    as_postgres(
        str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(tmp_path / "pg.log"), "-w", "start"
    )
    try:
        as_postgres(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "podium", "podium")
        yield f"postgresql+psycopg://podium@127.0.0.1:{port}/podium"
    finally:
        as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.postgres
def test_store_round_trip_on_postgres(postgres_url):
    store = Store.open(postgres_url)
    evaluations = load_providers_dir(EXAMPLES)
    ids = [store.import_evaluation(ev, Path(ev.root)) for ev in evaluations]
    assert [store.import_evaluation(ev, Path(ev.root)) for ev in evaluations] == ids
    rubric = load_rubric()
    from_dir, _ = rank(evaluations, rubric, "dir")
    from_db, _ = rank(store.evaluations(), rubric, "db")
    assert [(p.name, p.tier, p.score) for p in from_db.providers] == [
        (p.name, p.tier, p.score) for p in from_dir.providers
    ]
    store.save_ranking(from_db)
    assert store.last_ranking("db").providers == from_db.providers
    audits = store.list_runs(provider="Borealis GPU Cloud (fictional)", kind="audit")
    diff = store.diff(audits[0].run_id, audits[1].run_id)
    assert (diff.hours_between, [f.check_id for f in diff.fixed]) == (336.0, ["advisory.runc"])
    # endpoint monitor probes live in the same store, with their plan (for --resume)
    from datetime import datetime, timedelta, timezone

    from podium.endpoint.monitor import Probe, summarise
    from podium.store.probes import StoreProbeStore

    probes = StoreProbeStore(store)
    t0 = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    probes.set_plan("http://x/v1|m", t0, t0 + timedelta(hours=1), 60.0)
    for i, outcome in enumerate(["success", "http_429", "timeout", "success"]):
        probes.add(Probe(target="http://x/v1|m", at=t0 + timedelta(minutes=i), outcome=outcome, e2e_ms=100.0))
    assert probes.plan("http://x/v1|m") == (t0, t0 + timedelta(hours=1), 60.0)
    got = probes.probes("http://x/v1|m")
    assert [p.outcome for p in got] == ["success", "http_429", "timeout", "success"]
    assert summarise("http://x/v1|m", got).availability == pytest.approx(2 / 3, abs=1e-6)  # 429 apart
