"""The README's first command: `podium rank examples/providers` on the shipped fictional providers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from podium.rating.ranking import load_providers_dir, packaged_examples, rank
from podium.rating.rubric import load_rubric
from podium.rating.scoring import score_evaluation

from .helpers import check

REPO = Path(__file__).resolve().parents[2]

EXAMPLES = REPO / "examples" / "providers"
EXPECTED = [
    (1, "Aurora Compute (fictional)", "Platinum", 90.48, []),
    (2, "Borealis GPU Cloud (fictional)", "Gold", 73.0, []),
    (3, "Cirrus Metal (fictional)", "Silver", 87.2, ["critical.no_attestation"]),
    (4, "Dunmore AI Infrastructure (fictional)", "Bronze", 47.58, ["critical.container_escape"]),
    (
        5,
        "Ember Neocloud (fictional)",
        "Underperforming",
        74.14,
        ["critical.cross_tenant", "critical.container_escape"],
    ),
    (6, "Fjord Compute (fictional)", "Underperforming", 13.2, ["critical.no_attestation"]),
]


def run(*args, cwd=None, env_db=None, tmp_path=None):
    import os

    env = dict(os.environ, PODIUM_DB=str(env_db or (tmp_path / "podium.db")))
    return subprocess.run(["podium", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_examples_are_packaged_and_fictional():
    assert packaged_examples().resolve() == EXAMPLES.resolve() or (packaged_examples() / "aurora").is_dir()
    for sub in sorted(EXAMPLES.iterdir()):
        text = (sub / "provider.yaml").read_text()
        assert text.startswith("# FICTIONAL example provider"), sub
        assert "fictional: true" in text


def test_rank_examples_full_tier_list(tmp_path):
    res = run(
        "rank", "examples/providers", "--json", "--out", str(tmp_path / "out"), cwd=REPO, tmp_path=tmp_path
    )
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    got = [(p["rank"], p["name"], p["tier"], p["score"], p["critical_failures"]) for p in data["providers"]]
    assert got == EXPECTED
    first = data["providers"][0]
    assert set(first["categories"]) == {c.id for c in load_rubric().categories}
    fjord = data["providers"][-1]["categories"]
    assert fjord["performance"] is None and fjord["storage"] is None and fjord["security"] == 40.0
    assert data["podium"] == [p[1] for p in EXPECTED[:3]]
    assert data["tiers"]["Underperforming"] == [EXPECTED[4][1], EXPECTED[5][1]]
    for name in ("index.html", "ranking.md", "ranking.json"):
        assert (tmp_path / "out" / name).stat().st_size > 1000
    assert (
        json.loads((tmp_path / "out" / "ranking.json").read_text())["providers"][0]["name"] == EXPECTED[0][1]
    )


def test_rank_movement_since_last_ranking(tmp_path):
    db = tmp_path / "m.db"
    first = run("rank", str(EXAMPLES), "--json", "--out", str(tmp_path / "a"), env_db=db)
    assert all(p["movement"] is None for p in json.loads(first.stdout)["providers"])
    second = run("rank", str(EXAMPLES), "--json", "--out", str(tmp_path / "b"), env_db=db)
    data = json.loads(second.stdout)
    assert [p["movement"] for p in data["providers"]] == [0] * 6
    assert data["previous_generated_at"] is not None


def test_movement_when_a_provider_fixes_its_critical_failure(tmp_path):
    import shutil

    root = tmp_path / "providers"
    shutil.copytree(EXAMPLES, root)
    db = tmp_path / "move.db"
    before = json.loads(run("rank", str(root), "--json", "--out", str(tmp_path / "a"), env_db=db).stdout)
    cirrus = root / "cirrus" / "provider.yaml"
    text = cirrus.read_text().replace(
        "    soc2_type2:\n      value: false", "    soc2_type2:\n      value: true"
    )
    assert text != cirrus.read_text()
    cirrus.write_text(text)
    after = json.loads(run("rank", str(root), "--json", "--out", str(tmp_path / "b"), env_db=db).stdout)
    moves = {p["name"].split()[0]: (p["rank"], p["tier"], p["movement"]) for p in after["providers"]}
    assert moves["Cirrus"] == (2, "Platinum", 1)
    assert moves["Borealis"] == (3, "Gold", -1)
    assert moves["Aurora"] == (1, "Platinum", 0)
    assert before["providers"][2]["name"].startswith("Cirrus")


def test_rank_examples_flag_and_missing_examples_dir_fall_back(tmp_path):
    a = run(
        "rank",
        "--examples",
        "--json",
        "--no-store",
        "--out",
        str(tmp_path / "x"),
        cwd=tmp_path,
        tmp_path=tmp_path,
    )
    b = run(
        "rank",
        "examples/providers",
        "--json",
        "--no-store",
        "--out",
        str(tmp_path / "y"),
        cwd=tmp_path,
        tmp_path=tmp_path,
    )
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert [p["name"] for p in json.loads(a.stdout)["providers"]] == [e[1] for e in EXPECTED]
    assert json.loads(b.stdout)["providers"] == json.loads(a.stdout)["providers"]
    assert "using the copy shipped with podium" in b.stderr
    neither = run("rank", cwd=tmp_path, tmp_path=tmp_path)
    assert neither.returncode == 2


def test_score_json_has_summary_and_to_next_tier(tmp_path):
    res = run("score", str(EXAMPLES / "borealis"), "--json", "--peers", str(EXAMPLES), tmp_path=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert (data["name"], data["tier"], data["score"]) == ("Borealis GPU Cloud (fictional)", "Gold", 73.0)
    assert data["critical_failures"] == []
    assert data["to_next_tier"]["target"] == "Platinum"
    assert data["to_next_tier"]["points_needed"] == 12.0
    assert [f["cost"] for f in data["to_next_tier"]["fixes"]][:3] == ["low", "low", "low"]
    assert data["categories"]["security"] == 50.0
    below = run(
        "score", str(EXAMPLES / "borealis"), "--fail-below", "Platinum", "--no-store", tmp_path=tmp_path
    )
    assert below.returncode == 1


def test_container_escape_caps_an_otherwise_platinum_provider():
    rubric = load_rubric()
    evs = {e.provider.name.split()[0]: e for e in load_providers_dir(EXAMPLES)}
    aurora = evs["Aurora"]
    base = score_evaluation(aurora, rubric)
    aurora.checks.append(
        check(
            "audit",
            "advisory.nvidia-container-toolkit",
            "fail",
            "critical",
            n=9,
            references=["CVE-2025-23266"],
        )
    )
    capped = score_evaluation(aurora, rubric)
    assert base.tier == "Platinum"
    assert capped.tier == "Bronze"
    assert capped.score < base.score


def test_time_to_fix_in_examples_one_hour_and_two_weeks():
    _ranking, cards = rank(load_providers_dir(EXAMPLES), load_rubric(), "x")
    by = {c.name.split()[0]: c for c in cards}
    assert [(f.key, f.hours, f.fixed) for f in by["Aurora"].fix_times] == [
        ("advisory.nvidia-driver|gpu-001", 1.0, True)
    ]
    assert [(f.key, f.hours, f.fixed) for f in by["Borealis"].fix_times] == [
        ("advisory.runc|gpu-001", 336.0, True)
    ]
    dunmore = by["Dunmore"].fix_times
    assert {(f.key, f.fixed) for f in dunmore} == {
        ("advisory.nvidia-driver|gpu-001", False),
        ("advisory.runc|gpu-001", False),
    }
    assert {f.hours for f in dunmore} == {476.0}


def test_rank_is_fast(tmp_path):
    import time

    t0 = time.monotonic()
    res = run("rank", str(EXAMPLES), "--out", str(tmp_path / "o"), tmp_path=tmp_path)
    assert res.returncode == 0
    # not a benchmark (see benchmarks/rank_examples.py): a guard against minutes
    assert time.monotonic() - t0 < 30
    assert Path(tmp_path / "o" / "index.html").is_file()
