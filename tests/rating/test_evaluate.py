"""`podium evaluate` on this machine: components that are missing are skipped, never passed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from podium.rating.evaluate import STEPS, evaluate, import_component
from podium.rating.rubric import load_rubric

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "providers"


def test_evaluate_cli_writes_an_honest_report(tmp_path):
    env = dict(os.environ, PODIUM_DB=str(tmp_path / "e.db"))
    out = tmp_path / "eval"
    res = subprocess.run(
        ["podium", "evaluate", "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    steps = {s["name"]: s for s in data["steps"]}
    assert list(steps) == list(STEPS)
    # every component is part of this build: each step really ran on this machine
    for name in ("audit", "isolation", "health", "bench"):
        assert steps[name]["state"] == "ran", (name, steps[name])
    if not Path("/dev/nvidia0").exists():
        # the bench ran on CPU only: no GPU performance evidence, so performance is a gap, not a score
        assert data["categories"]["performance"] is None
    # the real audit graded what this machine has (slurm, munge, ...): security has a score
    assert data["categories"]["security"] is not None
    assert "critical.no_attestation" in data["critical_failures"]  # no provider file: nothing declared
    assert data["name"].startswith("this cluster (")
    [run_dir] = list((out / "runs").iterdir())
    health_file = run_dir / "evidence" / "health.json"
    node = json.loads(health_file.read_text())["nodes"][0]
    gpu = [c for c in node["checks"] if c["id"].startswith("gpu.")]
    card = json.loads((out / "scorecard.json").read_text())
    item = next(i for c in card["categories"] for i in c["items"] if i["id"] == "reliability.health")
    if gpu and all(c["status"] == "skipped" for c in gpu):  # no GPU here: not a healthy GPU node
        assert item["status"] == "unknown"
        assert item["evidence"][0]["status"] == "unknown"
    notes = json.loads((out / "scorecard.json").read_text())["notes"]
    assert not any("not recognised" in n for n in notes)  # facts.json, steps.json are bookkeeping
    html = (out / "index.html").read_text()
    assert "component not installed" not in html and "this cluster (" in html
    [run] = list((out / "runs").iterdir())
    assert json.loads((run / "steps.json").read_text())[0]["name"] == "audit"
    assert (out / "scorecard.json").is_file() and (out / "scorecard.md").is_file()
    # the evaluate output folder scores again as it is (run.json, steps.json, facts.json are not evidence)
    again = subprocess.run(
        ["podium", "score", str(out), "--json", "--no-store"], capture_output=True, text=True, env=env
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["categories"] == data["categories"]
    stored = subprocess.run(["podium", "runs", "list", "--json"], capture_output=True, text=True, env=env)
    assert any(r["kind"] == "provider" for r in json.loads(stored.stdout))


def test_a_crashing_step_is_failed_and_the_rest_still_runs(tmp_path):
    bench_doc = json.loads((EXAMPLES / "aurora" / "bench.json").read_text())

    def boom(runner, backend, state):
        raise RuntimeError("nvidia-smi hung")

    def bench(runner, backend, state):
        return bench_doc

    def missing(runner, backend, state):
        return import_component("podium.no_such_component.api")

    result = evaluate(
        tmp_path / "o",
        EXAMPLES / "aurora" / "provider.yaml",
        "local",
        load_rubric(),
        skip={"isolation"},
        functions={"audit": missing, "isolation": boom, "health": boom, "bench": bench},
    )
    assert [(s.name, s.state, s.reason) for s in result.steps] == [
        ("audit", "skipped", "component not installed"),
        ("isolation", "skipped", "skipped with --skip"),
        ("health", "failed", "RuntimeError: nvidia-smi hung"),
        ("bench", "ran", None),
    ]
    cats = result.card.category_scores()
    assert cats["performance"] == 70.0  # the bench ran; the endpoint item is a gap
    assert cats["security"] == 10.0  # only the declared certifications: audit and isolation are gaps
    assert result.card.name == "Aurora Compute (fictional)"
    assert any("step health failed" in n for n in result.card.notes)


def test_evaluate_backend_slurm_covers_every_node(tmp_path):
    from tests.conftest import need

    need(
        os.environ.get("PODIUM_TEST_SLURM") == "1",
        "real Slurm from scripts/ci/slurm-start.sh (PODIUM_TEST_SLURM=1)",
    )
    env = dict(os.environ, PODIUM_DB=str(tmp_path / "e.db"))
    out = tmp_path / "eval"
    res = subprocess.run(
        ["podium", "evaluate", "--backend", "slurm", "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert {s["name"]: s["state"] for s in data["steps"]} == dict.fromkeys(STEPS, "ran")
    [run_dir] = list((out / "runs").iterdir())
    audit = json.loads((run_dir / "evidence" / "audit.json").read_text())
    health = json.loads((run_dir / "evidence" / "health.json").read_text())
    assert sorted(n["host"] for n in audit["nodes"]) == ["n1", "n2"]
    assert sorted(n["host"] for n in health["nodes"]) == ["n1", "n2"]
    card = json.loads((out / "scorecard.json").read_text())
    assert any("backend slurm: audit facts and health came from every node" in n for n in card["notes"])
