"""Store round trip, `podium runs list|show|diff`, and time-to-fix from successive runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from podium.errors import InputError
from podium.rating.evidence import RunSnapshot, load_evaluation
from podium.rating.history import summarise, time_to_fix
from podium.rating.ranking import load_providers_dir, rank
from podium.rating.rubric import load_rubric
from podium.store.db import Store, resolve_db_url

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "providers"
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)


def audit_doc(at: datetime, runc_status: str, host: str = "gpu-001") -> dict:
    return {
        "kind": "audit",
        "collected_at": at.isoformat(),
        "checks": [
            {
                "id": "advisory.runc",
                "title": "runc is affected by CVE-2024-21626" if runc_status == "fail" else "runc ok",
                "status": runc_status,
                "severity": "high" if runc_status == "fail" else "none",
                "host": host,
                "subject": "runc 1.1.11" if runc_status == "fail" else "runc 1.1.12",
                "evidence": [
                    {
                        "summary": "runc --version",
                        "source": {"command": "runc --version", "host": host, "collected_at": at.isoformat()},
                    }
                ],
            },
            {"id": "advisory.containerd", "title": "containerd ok", "status": "pass", "host": host},
        ],
    }


@pytest.mark.parametrize(("gap", "hours"), [(timedelta(hours=1), 1.0), (timedelta(weeks=2), 336.0)])
def test_time_to_fix_an_hour_and_two_weeks_apart(tmp_path, gap, hours):
    d = tmp_path / "prov"
    (d / "history").mkdir(parents=True)
    (d / "history" / "audit-1.json").write_text(json.dumps(audit_doc(T0, "fail")))
    (d / "audit.json").write_text(json.dumps(audit_doc(T0 + gap, "pass")))
    ev = load_evaluation(d)
    fixes = time_to_fix(ev.history)
    assert [(f.key, f.hours, f.fixed, f.first_file, f.fixed_file) for f in fixes] == [
        ("advisory.runc|gpu-001", hours, True, "history/audit-1.json", "audit.json")
    ]
    card_item = next(
        i
        for c in __import__("podium.rating.scoring", fromlist=["x"])
        .score_evaluation(ev, load_rubric())
        .categories
        for i in c.items
        if i.id == "reliability.time_to_fix"
    )
    assert card_item.fraction == (1.0 if hours <= 24 else 0.25)


def test_open_findings_count_with_their_age():
    snaps = [
        RunSnapshot(kind="audit", file="a", at=T0, findings={"x|h": "X", "y|h": "Y"}),
        RunSnapshot(kind="audit", file="b", at=T0 + timedelta(hours=10), findings={"y|h": "Y", "z|h": "Z"}),
    ]
    fixes = time_to_fix(snaps, now=T0 + timedelta(hours=30))
    assert sorted((f.key, f.hours, f.fixed) for f in fixes) == [("x|h", 10.0, True), ("y|h", 30.0, False)]
    s = summarise(fixes)
    assert (s.fixed, s.open, s.median_hours) == (1, 1, 20.0)
    assert time_to_fix(snaps[:1]) == []  # one run: nothing to compare


def test_store_round_trip_and_rank_from_the_store(tmp_path):
    store = Store.open(str(tmp_path / "s.db"))
    evaluations = load_providers_dir(EXAMPLES)
    first = [store.import_evaluation(ev, Path(ev.root)) for ev in evaluations]
    again = [store.import_evaluation(ev, Path(ev.root)) for ev in evaluations]
    assert first == again  # idempotent: same documents, same run ids
    runs = store.list_runs()
    assert (
        len(runs) == sum(len(ids) for ids in first) == 48
    )  # 39 evidence files + 6 provider files + 5 slurm captures
    rubric = load_rubric()
    from_dir, _ = rank(evaluations, rubric, "dir")
    from_db, _ = rank(store.evaluations(), rubric, "db")
    assert [(p.name, p.tier, p.score, p.categories) for p in from_db.providers] == [
        (p.name, p.tier, p.score, p.categories) for p in from_dir.providers
    ]
    detail = store.show(next(r.run_id for r in runs if r.kind == "bench"))
    assert detail.measurements[0].provenance["command"].startswith("podium bench run")


def test_runs_cli_list_show_diff(tmp_path):
    src = tmp_path / "eval"
    shutil.copytree(EXAMPLES / "borealis", src)
    env = dict(os.environ, PODIUM_DB=str(tmp_path / "cli.db"))

    def podium(*args):
        res = subprocess.run(["podium", *args], capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout) if "--json" in args else res

    podium("runs", "import", str(src))
    audits = podium("runs", "list", "--kind", "audit", "--json")
    assert [r["collected_at"] for r in audits] == [
        "2026-11-01T09:00:00Z",
        "2026-11-15T09:00:00Z",
        "2026-11-28T06:00:00Z",
    ]
    diff = podium("runs", "diff", audits[0]["run_id"], audits[1]["run_id"][:18], "--json")
    assert diff["hours_between"] == 336.0
    assert [f["check_id"] for f in diff["fixed"]] == ["advisory.runc"]
    assert diff["new"] == [] and diff["still_open"] == []
    later = podium("runs", "diff", audits[1]["run_id"], audits[2]["run_id"], "--json")
    assert [f["check_id"] for f in later["new"]] == ["advisory.nvidia-driver"]
    shown = podium("runs", "show", audits[0]["run_id"], "--json")
    runc = next(f for f in shown["findings"] if f["check_id"] == "advisory.runc")
    assert (runc["status"], runc["severity"], runc["provenance"]["command"]) == (
        "fail",
        "high",
        "runc --version",
    )
    bad = subprocess.run(["podium", "runs", "show", "nope"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "'nope' is not in the store" in bad.stderr


def test_diff_refuses_runs_of_different_kinds(tmp_path):
    store = Store.open(str(tmp_path / "d.db"))
    ev = load_evaluation(EXAMPLES / "cirrus")
    store.import_evaluation(ev, EXAMPLES / "cirrus")
    runs = {r.kind: r.run_id for r in store.list_runs()}
    with pytest.raises(InputError, match="not runs of the same kind"):
        store.diff(runs["audit"], runs["bench"])


def test_db_url_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("PODIUM_DB", str(tmp_path / "env.db"))
    assert resolve_db_url(None) == f"sqlite:///{tmp_path / 'env.db'}"
    assert resolve_db_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    with pytest.raises(InputError, match="not a usable database URL"):
        Store("nosuchdialect://x")
