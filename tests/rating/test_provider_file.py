"""Provider files: a bad file is one line naming the file and the problem, exit 2."""

from __future__ import annotations

import os
import subprocess

import pytest

from podium.errors import InputError
from podium.rating.provider import load_provider

GOOD = """
name: Example (fictional)
declared:
  certifications:
    soc2_type2: {value: true, source: {url: "https://x.example/trust", date: 2026-10-01}}
"""

BAD = [
    ("name: [unclosed\n", "expected ',' or ']'"),  # libyaml and pure-Python wording differ
    ("- just\n- a list\n", "a provider file must be a YAML mapping"),
    ("declared: {}\n", "name: Field required"),
    (
        "name: X\ndeclared:\n  certifications:\n    soc2_type2: {value: true}\n",
        "declared.certifications.soc2_type2.source: Field required",
    ),
    (
        "name: X\ndeclared:\n  sla:\n    uptime_percent: {value: 99.9, source: {date: 2026-01-01}}\n",
        "declared.sla.uptime_percent.source: a source needs a url or a document",
    ),
    (
        "name: X\ndeclared:\n  pricing:\n    - {sku: H100, on_demand: -1, source: {url: u, date: 2026-01-01}}\n",
        "declared.pricing.0.on_demand: Input should be greater than or equal to 0",
    ),
    ("name: X\ndeclared:\n  sla:\n    uptime: 99\n", "declared.sla.uptime: Extra inputs are not permitted"),
]


def test_good_provider_file_and_fact_lookup(tmp_path):
    f = tmp_path / "provider.yaml"
    f.write_text(GOOD)
    p = load_provider(f)
    value, src = p.fact("certifications.soc2_type2")
    assert value is True and src.label() == "https://x.example/trust (2026-10-01)"
    assert p.fact("certifications.iso27001") == (None, None)


@pytest.mark.parametrize(("text", "problem"), BAD)
def test_bad_provider_file_names_file_and_problem(tmp_path, text, problem):
    f = tmp_path / "provider.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        load_provider(f)
    assert str(e.value).startswith(f"{f}: ")
    assert problem in str(e.value)
    assert "\n" not in str(e.value)


def test_cli_bad_provider_is_exit_2_one_line(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD[3][0])
    env = dict(os.environ, PODIUM_DB=str(tmp_path / "p.db"))
    for args in (
        ["score", str(tmp_path), "--provider", str(f)],
        ["evaluate", "--out", str(tmp_path / "ev"), "--provider", str(f)],
    ):
        res = subprocess.run(["podium", *args], capture_output=True, text=True, env=env)
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        assert lines == [f"podium: error: {f}: declared.certifications.soc2_type2.source: Field required"]
    assert not (tmp_path / "ev" / "runs").exists()  # nothing ran


def test_cli_bad_evidence_json_is_exit_2(tmp_path):
    (tmp_path / "audit.json").write_text('{"checks": [{"id": "x"}]}')
    res = subprocess.run(["podium", "score", str(tmp_path), "--no-store"], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.strip().startswith(
        "podium: error: audit.json: /checks/0: not a CheckResult: title: Field required"
    )
