"""Fixtures for endpoint tests: the reference server in its own process, the hostile server."""

from __future__ import annotations

import json

import pytest

from podium.endpoint.testservers.reference import spawn


class RefServer:
    def __init__(self, proc, port, log_path):
        self.proc, self.port, self.log_path = proc, port, log_path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> dict:
        """Stop the server and return its log keyed by request id."""
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        return {r["id"]: r for r in map(json.loads, self.log_path.read_text().splitlines())}


@pytest.fixture
def reference_server(tmp_path):
    """Factory: reference_server('--ttft-ms', '50', ...) -> RefServer (stopped at teardown)."""
    started = []

    def start(*args: str) -> RefServer:
        log = tmp_path / f"ref-{len(started)}.jsonl"
        log.touch()
        proc, port = spawn([*args, "--log", str(log)])
        s = RefServer(proc, port, log)
        started.append(s)
        return s

    yield start
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait(10)
