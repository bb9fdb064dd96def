"""Scheduler reliability parsers on real Slurm outputs, and on a live Slurm with accounting."""

from __future__ import annotations

import os
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from tests.conftest import need

from podium.errors import ParseError
from podium.rating.scheduler import (
    expand_hostlist,
    parse_sacct_jobs,
    parse_sacctmgr_events,
    parse_sinfo_reasons,
    reliability,
)

D = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"


def utc(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc)


CI_EVENTS = [
    (None, "", "Cluster Registered TRES", utc("2026-11-30T01:54:17"), None),
    ("n1", "DRAIN", "podium test: gpu xid 79", utc("2026-11-30T01:54:20"), utc("2026-11-30T01:54:23")),
    ("n2", "DOWN", "node_fail test", utc("2026-11-30T01:54:24"), utc("2026-11-30T01:54:25")),
    ("n2", "DOWN", "simulated node failure", utc("2026-11-30T01:54:34"), utc("2026-11-30T01:54:34")),
]


@pytest.mark.parametrize("name", ["podium-ci_sacctmgr-show-event.txt", "podium-ci_sacctmgr-show-event-P.txt"])
def test_sacctmgr_events_table_and_pipe(name):
    events = parse_sacctmgr_events((D / name).read_text())
    assert [(e.node, e.state, e.reason, e.start, e.end) for e in events] == CI_EVENTS
    assert [e.is_failure for e in events] == [False, True, True, True]


def test_sinfo_reasons_default_pipe_and_json():
    [r] = parse_sinfo_reasons((D / "podium-ci_sinfo-R.txt").read_text())
    assert (r.nodes, r.reason, r.user, r.since) == (
        ["n1"],
        "xid 79: GPU fell off",
        "root",
        utc("2026-11-30T01:54:47"),
    )
    [g] = parse_sinfo_reasons((D / "gcm_sample-sinfo-output.txt").read_text())
    assert (g.nodes, g.reason, g.state, g.since) == (
        ["node0201"],
        "replace",
        "drained*",
        utc("2022-06-02T05:54:34"),
    )
    [j] = parse_sinfo_reasons((D / "rivos_sinfo_out.json").read_text())
    assert (j.nodes, j.reason, j.state) == (["cs5.example.company.com"], "(no reason given)", "down")


def test_sacct_jobs_fold_steps_and_read_both_delimiters():
    jobs = parse_sacct_jobs((D / "podium-ci_sacct-P.txt").read_text())
    assert [(j.job_id, j.state, j.nodes) for j in jobs] == [
        ("1", "COMPLETED", ["n1", "n2"]),
        ("2", "COMPLETED", ["n1"]),
        ("3", "NODE_FAIL", ["n2"]),
    ]
    [gcm] = parse_sacct_jobs((D / "gcm_sample-sacct-output.txt").read_text())
    assert (gcm.job_id, gcm.state, gcm.nodes) == ("8012944_24093", "COMPLETED", ["node077"])
    [running] = parse_sacct_jobs((D / "gcm_sample-sacct-running-output.txt").read_text())
    assert (running.job_id, running.state, running.end) == ("6539191_195", "RUNNING", None)


def test_reliability_from_the_captured_history():
    events = parse_sacctmgr_events((D / "podium-ci_sacctmgr-show-event-P.txt").read_text())
    jobs = parse_sacct_jobs((D / "podium-ci_sacct-P.txt").read_text())
    r = reliability(events, jobs, node_count=2)
    # window 01:54:17-01:54:34 = 17 s x 2 nodes = 34 node-s; down 3 + 1 + 0 = 4 node-s
    assert r.availability_percent == round(100 * (1 - 4 / 34), 3) == 88.235
    assert r.failures == 3
    assert r.mtbf_hours == round(30 / 3 / 3600, 6)
    assert r.drain_to_return_hours == round(1 / 3600, 6)
    assert (r.jobs_total, r.jobs_node_fail, r.jobs_lost_percent) == (3, 1, 33.333)
    assert reliability([], []).availability_percent is None  # no history: unknown, not 100%


def test_hostlist_expansion():
    assert expand_hostlist("gpu-[001-003,007],login1") == [
        "gpu-001",
        "gpu-002",
        "gpu-003",
        "gpu-007",
        "login1",
    ]
    assert expand_hostlist("n[1-2]") == ["n1", "n2"]
    assert expand_hostlist("None assigned") == []


@pytest.mark.parametrize(
    ("parser", "text", "problem"),
    [
        (parse_sacctmgr_events, "", "empty output"),
        (
            parse_sacctmgr_events,
            "Cluster|NodeName|TimeStart|TimeEnd|State\nci|n1|yesterday|Unknown|DOWN\n",
            "bad TimeStart",
        ),
        (parse_sacct_jobs, "JobID|State|Start\n1\n", "truncated"),
        (parse_sacct_jobs, "Account|User\nx|y\n", r"missing column\(s\) JobID, State"),
        (parse_sinfo_reasons, "{not json", "not valid JSON"),
        (parse_sinfo_reasons, "garbage\n", "no table header"),
    ],
)
def test_garbage_is_a_parse_error(parser, text, problem):
    with pytest.raises(ParseError, match=problem):
        parser(text)


def _slurm(*argv: str) -> str:
    return subprocess.run(
        argv, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30
    ).stdout


@pytest.mark.slurm
def test_live_slurm_drain_resume_job_and_events():
    need(
        os.environ.get("PODIUM_TEST_SLURM") == "1" and bool(os.environ.get("SLURM_CONF")),
        "real Slurm not started (scripts/test.sh starts it)",
    )
    reason = f"podium-rating-{os.getpid()}"
    _slurm("scontrol", "update", "nodename=n1", "state=drain", f"reason={reason}")
    try:
        time.sleep(1.5)
        reasons = parse_sinfo_reasons(_slurm("sinfo", "-R"))
        assert any(r.nodes == ["n1"] and reason[:20] == r.reason for r in reasons)
    finally:
        _slurm("scontrol", "update", "nodename=n1", "state=resume")
    job = (
        _slurm("sbatch", "--parsable", "-w", "n1", "-o", "/dev/null", "--wrap", "true").strip().split(";")[0]
    )
    deadline = time.monotonic() + 40
    events, jobs = [], []
    while time.monotonic() < deadline:
        events = parse_sacctmgr_events(_slurm("sacctmgr", "-P", "show", "event"))
        jobs = parse_sacct_jobs(
            _slurm("sacct", "-P", "-X", "-j", job, "-o", "JobID,State,Start,End,NodeList")
        )
        mine = [e for e in events if e.reason == reason]
        if mine and mine[0].end is not None and jobs and jobs[0].state == "COMPLETED":
            break
        time.sleep(0.5)
    [ev] = [e for e in events if e.reason == reason]
    assert (ev.node, ev.state) == ("n1", "DRAIN")
    assert ev.end is not None and 1.0 <= (ev.end - ev.start).total_seconds() <= 30
    assert [(j.job_id, j.state, j.nodes) for j in jobs] == [(job, "COMPLETED", ["n1"])]
    rel = reliability([ev], jobs, node_count=2)
    assert rel.failures == 1 and rel.jobs_lost_percent == 0.0
    assert rel.drain_to_return_hours == round((ev.end - ev.start).total_seconds() / 3600, 6)
