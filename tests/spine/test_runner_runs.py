"""The spine: runner, run directories and resume, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from podium.errors import InputError
from podium.runner import LocalRunner, ReplayRunner
from podium.runs import RunDirectory


def test_local_runner_missing_tool_is_not_found(tmp_path):
    out = LocalRunner(raw_dir=tmp_path / "raw").run(["podium-no-such-tool-xyz", "--version"])
    assert not out.ran and out.error == "not found"


def test_local_runner_keeps_raw_output_and_times_out(tmp_path):
    r = LocalRunner(raw_dir=tmp_path / "raw")
    out = r.run(["uname", "-r"], name="uname")
    assert out.ok and out.stdout.strip()
    raw = (tmp_path / "raw" / "uname.txt").read_text()
    assert "# command: uname -r" in raw and out.stdout.strip() in raw
    slow = r.run([sys.executable, "-c", "import time; time.sleep(5)"], timeout=0.3)
    assert slow.error == "timed out after 0.3s" and not slow.ok


def test_replay_runner_answers_by_command_line():
    r = ReplayRunner({"runc --version": "runc version 1.1.12\n"})
    assert r.run(["runc", "--version"]).stdout.startswith("runc version")
    assert r.run(["containerd", "--version"]).error == "not found"


def test_run_directory_steps_and_resume(tmp_path):
    run = RunDirectory.create("audit", ["audit", "--local"], root=tmp_path)
    with run.step("facts"):
        run.write_json("facts.json", {"a": 1})
    with pytest.raises(RuntimeError), run.step("grade"):
        raise RuntimeError("boom")
    run.close(3)
    again = RunDirectory.resume(run.record.run_id, root=tmp_path)
    assert again.done_steps() == ["facts"]
    assert not again.is_done("grade")
    assert json.loads((tmp_path / run.record.run_id / "facts.json").read_text()) == {"a": 1}
    assert "step grade failed: boom" in (tmp_path / run.record.run_id / "run.log").read_text()


def test_resume_unknown_run_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no such run"):
        RunDirectory.resume("20260101T000000Z-audit-abcdef", root=tmp_path)
    with pytest.raises(InputError, match="not a valid run id"):
        RunDirectory.resume("../etc", root=tmp_path)


def test_cli_exit_codes():
    ok = subprocess.run(["podium", "--version"], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("podium ")
    bad = subprocess.run(["podium", "schema", "NoSuchModel"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "unknown model" in bad.stderr
    usage = subprocess.run(["podium", "--no-such-flag"], capture_output=True, text=True)
    assert usage.returncode == 2


def test_secrets_never_reach_run_files(tmp_path):
    from podium.secrets import register_secret

    register_secret("sk-test-SECRET-0123456789")
    run = RunDirectory.create("endpoint", ["--x", "sk-test-SECRET-0123456789"], root=tmp_path)
    run.log.info("calling with key sk-test-SECRET-0123456789")
    run.write_json("out.json", {"k": "Authorization: Bearer sk-test-SECRET-0123456789"})
    run.close(0)
    for f in (tmp_path / run.record.run_id).rglob("*"):
        if f.is_file():
            assert "SECRET-0123456789" not in f.read_text(), f
