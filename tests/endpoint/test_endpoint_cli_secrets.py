"""The CLI (flags, --json, exit codes) and the rule that an API key appears in no file podium writes."""

from __future__ import annotations

import json

import pytest

from podium.cli.main import main
from podium.endpoint.testservers.hostile import HostileServer, ServerOptions

KEY = "sk-podium-secret-key-5f1e2d3c4b5a"


def _files_containing(root, needle: str) -> list[str]:
    hits = []
    for p in root.rglob("*"):
        if p.is_file() and needle.encode() in p.read_bytes():
            hits.append(str(p))
    return hits


def test_bench_json_shape(reference_server, tmp_path, capsys):
    srv = reference_server("--ttft-ms", "5", "--itl-ms", "1")
    argv = ["endpoint", "bench", "--base-url", srv.base_url, "--model", "ref", "--api", "chat"]
    argv += ["--concurrency", "1,2", "--requests", "4", "--input-tokens", "16", "--output-tokens", "4"]
    argv += ["--seed", "3", "--runs-dir", str(tmp_path / "runs"), "--price", "local/free", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)  # stdout is only JSON
    assert [lv["concurrency"] for lv in out["levels"]] == [1, 2]
    for lv in out["levels"]:
        for m in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"):
            assert set(lv["metrics"][m]) >= {"p50", "p90", "p99", "mean"}
            assert lv["metrics"][m]["p50"] is not None
        assert lv["requests_ok"] == 4
        assert lv["requests_failed"] == {"count": 0, "reasons": {}, "examples": []}
        assert lv["output_tokens_per_s"] > 0
        assert lv["token_count_source"] == "usage"
        assert lv["cost"]["usd"] == 0.0
    run_dir = tmp_path / "runs" / out["run_id"]
    lines = (run_dir / "requests.jsonl").read_text().splitlines()
    assert len(lines) == 8
    assert json.loads((run_dir / "report.json").read_text())["levels"][0]["requests_ok"] == 4


def test_duration_bound_level(reference_server, tmp_path, capsys):
    srv = reference_server("--ttft-ms", "5", "--itl-ms", "5")
    argv = ["endpoint", "bench", "--base-url", srv.base_url, "--model", "ref", "--concurrency", "2"]
    argv += ["--duration", "0.5", "--output-tokens", "4", "--runs-dir", str(tmp_path), "--json"]
    assert main(argv) == 0
    lv = json.loads(capsys.readouterr().out)["levels"][0]
    # Each request takes ~20 ms; two at a time for 0.5 s is about 50 requests.
    assert 20 <= lv["requests_ok"] <= 60
    assert 0.5 <= lv["duration_s"] < 0.7


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--concurrency", "a,b"], "--concurrency: expected integers"),
        (
            ["--api-key-env", "PODIUM_TEST_NO_SUCH_VAR"],
            "--api-key-env: environment variable PODIUM_TEST_NO_SUCH_VAR is not set",
        ),
        (["--api", "rest"], "--api:"),
        (["--rate", "-1"], "--rate: expected positive numbers"),
    ],
)
def test_bad_flags_exit_2(tmp_path, capsys, extra, message):
    argv = [
        "endpoint",
        "bench",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--runs-dir",
        str(tmp_path),
        *extra,
    ]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_key_in_no_output_file_log_or_store(tmp_path, monkeypatch, capsys):
    """The server rejects the key and echoes it back in its error; podium writes it nowhere."""
    monkeypatch.setenv("PODIUM_TEST_KEY", KEY)
    runs = tmp_path / "runs"
    opts = ServerOptions(api_key="sk-other-key-000000000", echo_key_in_errors=True)
    with HostileServer(opts) as s:
        common = [
            "--base-url",
            s.base_url,
            "--model",
            "ok",
            "--api-key-env",
            "PODIUM_TEST_KEY",
            "--runs-dir",
            str(runs),
        ]
        assert main(["endpoint", "bench", *common, "--requests", "2", "--json"]) == 0
        bench_out = capsys.readouterr()
        assert (
            main(
                [
                    "endpoint",
                    "monitor",
                    *common,
                    "--interval",
                    "0.01",
                    "--duration",
                    "5",
                    "--max-probes",
                    "2",
                    "--db",
                    str(tmp_path / "probes.sqlite"),
                    "--json",
                ]
            )
            == 0
        )
        monitor_out = capsys.readouterr()
        assert main(["endpoint", "audit", *common, "--fail-on", "never", "--json"]) == 0
        audit_out = capsys.readouterr()
    bench = json.loads(bench_out.out)
    assert bench["levels"][0]["requests_failed"]["reasons"] == {"http_401": 2}
    assert "[REDACTED]" in bench["levels"][0]["requests_failed"]["examples"][0]
    assert json.loads(monitor_out.out)["outcomes"] == {"http_401": 2}
    audit = {r["id"]: r["status"] for r in json.loads(audit_out.out)["results"]}
    assert audit["endpoint.auth.key-not-echoed"] == "fail"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {
        "requests.jsonl",
        "report.json",
        "run.log",
        "run.json",
        "monitor.json",
        "monitor.svg",
        "probes.sqlite",
        "audit.json",
    }
    assert _files_containing(tmp_path, KEY) == []
    assert _files_containing(tmp_path, KEY[-12:]) == []
    for captured in (bench_out, monitor_out, audit_out):
        assert KEY not in captured.out and KEY not in captured.err


def test_monitor_cli_resume(tmp_path, capsys):
    """An interrupted monitor run continues with --resume: same plan end, probes appended."""
    from pathlib import Path

    with HostileServer() as s:
        common = ["endpoint", "monitor", "--base-url", s.base_url, "--model", "ok", "--interval", "0.05"]
        common += ["--duration", "30", "--max-probes", "2", "--runs-dir", str(tmp_path), "--json"]
        assert main(common) == 0
        first = json.loads(capsys.readouterr().out)
        run_id = Path(first["plot"]).parent.name
        assert main([*common, "--resume", run_id]) == 0
        second = json.loads(capsys.readouterr().out)
    assert (first["probes"], second["probes"]) == (2, 4)
    assert second["plan_end"] == first["plan_end"]
    assert second["outcomes"] == {"success": 4}
    svg = (tmp_path / run_id / "monitor.svg").read_text()
    assert svg.startswith("<svg") and "4 probes" in svg
