"""Facts fan-out through a real single-host Slurm (scripts/ci/slurm-start.sh, two slurmd: n1, n2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from tests.conftest import need


def test_facts_collect_slurm_one_task_per_node(tmp_path):
    need(
        os.environ.get("PODIUM_TEST_SLURM") == "1" and shutil.which("srun") is not None,
        "real Slurm not started (scripts/test.sh starts it as root)",
    )
    out = tmp_path / "facts.json"
    r = subprocess.run(
        ["podium", "facts", "collect", "--slurm", "--out", str(out), "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    facts = json.loads(out.read_text())
    assert sorted(f["host"] for f in facts) == ["n1", "n2"]
    assert all(f["method"] == "slurm" for f in facts)
    # each node saw the real Slurm it runs under
    for f in facts:
        slurm = next(c for c in f["components"] if c["name"] == "slurm")
        assert slurm["visible"] and slurm["version"].count(".") == 2
    # the fan-out's srun output is kept raw in the run directory
    raw = next(tmp_path.glob("*-facts-*/raw/srun-facts.txt")).read_text()
    assert "# command: srun --ntasks-per-node=1" in raw


def test_facts_collect_slurm_bad_nodelist_is_input_error(tmp_path):
    need(os.environ.get("PODIUM_TEST_SLURM") == "1", "real Slurm not started")
    r = subprocess.run(
        ["podium", "facts", "collect", "--slurm", "--nodes", "nosuch[1-2]", "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert r.stderr.strip().startswith("podium: error: --nodes:")
    assert "Invalid node name" in r.stderr


def test_audit_slurm_grades_every_node(tmp_path):
    need(os.environ.get("PODIUM_TEST_SLURM") == "1", "real Slurm not started")
    r = subprocess.run(
        ["podium", "audit", "--slurm", "--json", "--fail-on", "never", "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert sorted(n["host"] for n in rep["nodes"]) == ["n1", "n2"]
    slurm = [c for c in rep["checks"] if c["id"] == "advisory.slurm"]
    # Debian 12's Slurm 22.05.8 is hit by CVE-2023-49933 (fixed upstream in 22.05.11), on both nodes
    assert {c["host"] for c in slurm} == {"n1", "n2"} and all(c["status"] == "fail" for c in slurm)
    group = next(g for g in rep["groups"] if g["id"] == "advisory.slurm")
    assert group["node_count"] == 2
