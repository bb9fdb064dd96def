"""End-to-end `podium audit` on saved facts: exact verdicts, grouping, formats, resume, bad input.

Expected values come from the shipped bundle built from the real NVIDIA/OSV snapshots:
driver 535.104.05 (R535, data-center) has 30 advisories, first fixed together in 535.309.01;
runc 1.1.11 is hit by CVE-2024-21626 (fixed in 1.1.12); 535.309.01 and runc 1.3.6 have none.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from podium.models.facts import ComponentFact, NodeFacts


def node(host: str, driver: str, runc: str, **extra) -> dict:
    comps = [
        ComponentFact(
            name="nvidia-driver",
            version=driver,
            visible=True,
            source_command="nvidia-smi",
            details={"product_line": "datacenter"},
        ),
        ComponentFact(name="runc", version=runc, visible=True, source_command="runc --version"),
        ComponentFact(name="nvidia-container-toolkit", visible=False, reason="nvidia-ctk: not found"),
    ]
    comps += [ComponentFact(name=k.replace("_", "-"), version=v, visible=True) for k, v in extra.items()]
    return NodeFacts(host=host, collector_version="test", components=comps).model_dump(mode="json")


@pytest.fixture
def fleet_file(tmp_path):
    p = tmp_path / "fleet.json"
    p.write_text(
        json.dumps(
            [
                node("gpu-001", "535.104.05", "1.1.11"),
                node("gpu-002", "535.104.05", "1.1.11"),
                node("gpu-003", "535.309.01", "1.3.6", slurm="23.02.6"),
            ]
        )
    )
    return p


def audit(*args, cwd=None):
    return subprocess.run(["podium", "audit", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_audit_json_exact_verdicts_and_groups(fleet_file, tmp_path):
    r = audit("--facts", str(fleet_file), "--json", "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 1, r.stderr  # high findings, default --fail-on high
    rep = json.loads(r.stdout)
    checks = {(c["host"], c["id"]): c for c in rep["checks"]}
    drv = checks[("gpu-001", "advisory.nvidia-driver")]
    assert drv["status"] == "fail" and drv["severity"] == "high"
    assert drv["details"]["upgrade_to"] == "535.309.01" and drv["details"]["line"] == "R535"
    assert len(drv["details"]["cves"]) == 30 and "CVE-2024-0074" in drv["details"]["cves"]
    assert drv["remediation"] == "Upgrade nvidia-driver to 535.309.01."
    assert checks[("gpu-003", "advisory.nvidia-driver")]["status"] == "pass"
    runc = checks[("gpu-001", "advisory.runc")]
    assert runc["details"]["fixed_in"]["CVE-2024-21626"] == "1.1.12"
    assert checks[("gpu-003", "advisory.runc")]["status"] == "pass"
    # not visible is unknown with its reason, never pass
    nct = checks[("gpu-002", "advisory.nvidia-container-toolkit")]
    assert nct["status"] == "unknown" and nct["reason"] == "nvidia-ctk: not found"
    slurm = checks[("gpu-003", "advisory.slurm")]
    assert slurm["status"] == "fail" and "CVE-2023-49933" in slurm["details"]["cves"]
    # identical findings group across nodes
    g = next(g for g in rep["groups"] if g["id"] == "advisory.nvidia-driver" and g["status"] == "fail")
    assert g["node_count"] == 2 and g["hosts"] == ["gpu-001", "gpu-002"] and g["upgrade_to"] == "535.309.01"
    # the advisory detail is kept once per group, not repeated on every node
    assert len(g["findings"]) == 30 and "findings" not in drv["details"]
    assert {f["id"]: f["fixed_in"] for f in g["findings"]}[
        "CVE-2024-0074"
    ] == "535.161.07"  # NVIDIA-5520, R535 row
    assert rep["advisory_bundle"]["version"] and rep["advisory_bundle"]["stale"] in (True, False)
    assert rep["summary"]["unknown"] == 3


def test_audit_fail_on_controls_exit_code(fleet_file, tmp_path):
    assert (
        audit(
            "--facts", str(fleet_file), "--json", "--fail-on", "never", "--runs-dir", str(tmp_path)
        ).returncode
        == 0
    )
    r = audit("--facts", str(fleet_file), "--json", "--fail-on", "critical", "--runs-dir", str(tmp_path))
    has_critical = any(
        c["severity"] == "critical" and c["status"] in ("fail", "warn")
        for c in json.loads(r.stdout)["checks"]
    )
    assert r.returncode == (1 if has_critical else 0)
    r = audit("--facts", str(fleet_file), "--json", "--fail-on", "low", "--runs-dir", str(tmp_path))
    assert r.returncode == 1


def test_audit_table_verbosity_and_other_formats(fleet_file, tmp_path):
    t0 = audit("--facts", str(fleet_file), "--runs-dir", str(tmp_path)).stdout
    assert "FAIL" in t0 and "UNKNOWN" in t0 and "MIN VERSION" not in t0
    t1 = audit("--facts", str(fleet_file), "-v", "--runs-dir", str(tmp_path)).stdout
    assert "MIN VERSION" in t1 and "535.309.01" in t1 and "CVE-2024-0074" in t1
    t2 = audit("--facts", str(fleet_file), "-vv", "--runs-dir", str(tmp_path)).stdout
    assert "Upgrade nvidia-driver to 535.309.01." in t2 and "https://" in t2
    md = audit("--facts", str(fleet_file), "--format", "markdown", "--runs-dir", str(tmp_path)).stdout
    assert md.startswith("# podium audit") and "| FAIL | high | 2 | `advisory.nvidia-driver` |" in md
    sarif = json.loads(
        audit("--facts", str(fleet_file), "--format", "sarif", "--runs-dir", str(tmp_path)).stdout
    )
    assert sarif["version"] == "2.1.0"
    res = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in res} >= {"advisory.nvidia-driver", "advisory.runc"}
    assert all(r["level"] in ("error", "warning", "note") for r in res)


def test_audit_run_directory_and_resume(fleet_file, tmp_path):
    runs = tmp_path / "runs"
    r = audit("--facts", str(fleet_file), "--json", "--runs-dir", str(runs))
    run_dir = next(runs.iterdir())
    for f in ("run.json", "run.log", "facts.json", "report.json", "report.md"):
        assert (run_dir / f).is_file(), f
    record = json.loads((run_dir / "run.json").read_text())
    assert record["advisory_bundle_version"] and record["exit_code"] == 1
    assert [s["state"] for s in record["steps"]] == ["done", "done"]
    # resume: facts are not read again (the input file is gone), the report is rebuilt from kept facts
    fleet_file.unlink()
    again = audit("--resume", run_dir.name, "--json", "--runs-dir", str(runs))
    assert again.returncode == 1, again.stderr
    assert "resume: reusing facts for 3 node(s)" in again.stderr
    assert json.loads(again.stdout)["summary"] == json.loads(r.stdout)["summary"]


def test_audit_bad_input_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "facts.json"
    bad.write_text('[{"host": "x"}]')
    r = audit("--facts", str(bad), "--runs-dir", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and str(bad) in r.stderr and "not NodeFacts" in r.stderr
    r = audit("--profile", "nope", "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "unknown profile nope" in r.stderr
    r = audit("--resume", "no-such-run", "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "no such run" in r.stderr


def test_audit_local_on_this_machine(tmp_path):
    r = audit("--local", "--json", "--fail-on", "never", "--runs-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    drv = next(c for c in rep["checks"] if c["id"] == "advisory.nvidia-driver")
    assert drv["status"] == "unknown"  # no GPU here: unknown, never pass
    assert len(rep["nodes"]) == 1
