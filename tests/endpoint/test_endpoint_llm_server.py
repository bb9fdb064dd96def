"""End to end against a real OpenAI-compatible server: `transformers serve` with SmolLM2-135M on CPU,
started by scripts/ci/llm-server.sh (scripts/test.sh exports PODIUM_TEST_LLM_URL). Kept short: CI has 2 cores."""

from __future__ import annotations

import json
import os

import pytest
from tests.conftest import need

from podium.cli.main import main

pytestmark = pytest.mark.llm

URL = os.environ.get("PODIUM_TEST_LLM_URL")
MODEL = os.environ.get("PODIUM_TEST_LLM_MODEL", "")


def test_bench_json_against_transformers_serve(tmp_path, capsys):
    need(bool(URL), "PODIUM_TEST_LLM_URL not set (start it with scripts/ci/llm-server.sh start)")
    argv = ["endpoint", "bench", "--base-url", URL, "--model", MODEL, "--api", "chat"]
    argv += ["--concurrency", "1,2", "--requests", "2", "--input-tokens", "16", "--output-tokens", "6"]
    argv += ["--seed", "1", "--runs-dir", str(tmp_path), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert [lv["concurrency"] for lv in out["levels"]] == [1, 2]
    for lv in out["levels"]:
        assert lv["requests_ok"] == 2, lv["requests_failed"]
        # transformers serve sends usage with the final chunk.
        assert lv["token_count_source"] == "usage"
        assert lv["output_tokens_total"] <= 2 * 6
        ttft, itl = lv["metrics"]["ttft_ms"], lv["metrics"]["itl_ms"]
        # Its role-only first chunk leaves at once (~15 ms); real first tokens take longer on 2 cores.
        assert ttft["p50"] > 30.0
        assert itl["count"] >= 1
    records = [json.loads(x) for x in (tmp_path / out["run_id"] / "requests.jsonl").read_text().splitlines()]
    assert len(records) == 4
    assert all(r["request_id"] for r in records)  # x-request-id header


def test_completions_api_against_transformers_serve(tmp_path, capsys):
    need(bool(URL), "PODIUM_TEST_LLM_URL not set (start it with scripts/ci/llm-server.sh start)")
    argv = ["endpoint", "bench", "--base-url", URL, "--model", MODEL, "--api", "completions"]
    argv += [
        "--requests",
        "1",
        "--input-tokens",
        "8",
        "--output-tokens",
        "4",
        "--runs-dir",
        str(tmp_path),
        "--json",
    ]
    assert main(argv) == 0
    lv = json.loads(capsys.readouterr().out)["levels"][0]
    assert lv["requests_ok"] + lv["requests_failed"]["count"] == 1
    if lv["requests_ok"] == 0:
        pytest.fail(f"completions failed: {lv['requests_failed']}")


def test_audit_finds_no_auth_on_transformers_serve(tmp_path, capsys):
    need(bool(URL), "PODIUM_TEST_LLM_URL not set (start it with scripts/ci/llm-server.sh start)")
    code = main(
        [
            "endpoint",
            "audit",
            "--base-url",
            URL,
            "--model",
            MODEL,
            "--timeout",
            "120",
            "--runs-dir",
            str(tmp_path),
            "--json",
        ]
    )
    res = {r["id"]: r["status"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert code == 1
    # transformers serve has no API-key option: a real "auth not enforced" endpoint.
    assert res["endpoint.auth.no-key"] == "fail"
    assert res["endpoint.auth.wrong-key"] == "fail"
    assert res["endpoint.side-route.metrics"] == "pass"  # 404
    assert res["endpoint.request-id"] == "pass"  # x-request-id
    assert res["endpoint.usage.in-response"] == "pass"
