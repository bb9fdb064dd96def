"""Failure taxonomy on the hostile server: bounded time and memory, a clear reason each."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from podium.endpoint.api import run_endpoint_bench
from podium.endpoint.models import EndpointBenchConfig
from podium.endpoint.testservers.hostile import HostileServer, ServerOptions

CASES = [
    ("ok", None, None),
    ("hang", "timeout", "no data for 1s"),
    ("trickle", "timeout", "no complete response within 2s"),
    ("malformed", "malformed_sse", "non-JSON SSE data: 'this is not json'"),
    ("forever", "response_too_large", "response body over the 1048576-byte cap"),
    ("huge-event", "response_too_large", "response body over the 1048576-byte cap"),
    ("huge-length", "response_too_large", "content-length 10000000000 over the 1048576 cap"),
    ("cut", "stream_cut", "connection closed mid-stream"),
    ("no-done", "stream_cut", "stream ended without [DONE] or finish_reason"),
    ("empty", "empty_response", "HTTP 200 stream carried no content tokens"),
    ("error-event", "error_event", "error in stream: model overloaded"),
    ("status-401", "http_401", None),
    ("status-402", "http_402", None),
    ("status-403", "http_403", None),
    ("status-404", "http_404", None),
    ("status-429", "http_429", None),
    ("status-400", "http_4xx", None),
    ("status-503", "http_5xx", None),
]


@pytest.fixture(scope="module")
def hostile():
    with HostileServer() as s:
        yield s


@pytest.mark.parametrize(("mode", "kind", "message"), CASES)
def test_failure_kinds(hostile, mode, kind, message):
    cfg = EndpointBenchConfig(
        base_url=hostile.base_url,
        model=mode,
        requests=1,
        timeout_s=2,
        idle_timeout_s=1,
        max_response_bytes=1 << 20,
    )
    tracemalloc.start()
    t0 = time.monotonic()
    report = run_endpoint_bench(cfg)
    elapsed = time.monotonic() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    lv = report.levels[0]
    assert elapsed < 3.5  # bounded by the 2 s request timeout
    assert peak < 8 * 1024 * 1024  # bounded by the 1 MiB body cap (plus bookkeeping)
    if kind is None:
        assert (lv.requests_ok, lv.requests_failed.count) == (1, 0)
        return
    assert lv.requests_ok == 0
    assert lv.requests_failed.reasons == {kind: 1}
    assert lv.error_rate == 1.0
    if message:
        assert lv.requests_failed.examples == [f"{kind}: {message}"]


def test_connection_refused_is_connect_error():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    report = run_endpoint_bench(
        EndpointBenchConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", requests=2)
    )
    assert report.levels[0].requests_failed.reasons == {"connect_error": 2}


def test_many_streams_forever_stay_bounded(hostile):
    """8 endless streams at once: all stop at the cap, memory stays bounded."""
    cfg = EndpointBenchConfig(
        base_url=hostile.base_url,
        model="forever",
        concurrency=[8],
        requests=8,
        timeout_s=60,  # generous: the cap, not the timeout, must stop them
        max_response_bytes=1 << 18,
    )
    tracemalloc.start()
    report = run_endpoint_bench(cfg)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert report.levels[0].requests_failed.reasons == {"response_too_large": 8}
    assert peak < 40 * 1024 * 1024


def test_wrong_key_is_401_and_key_not_in_error(hostile, monkeypatch):
    with HostileServer(ServerOptions(api_key="sk-right-0123456789", echo_key_in_errors=True)) as s:
        monkeypatch.setenv("PODIUM_TEST_WRONG_KEY", "sk-wrong-abcdefghij")
        cfg = EndpointBenchConfig(
            base_url=s.base_url, model="ok", requests=1, api_key_env="PODIUM_TEST_WRONG_KEY"
        )
        report = run_endpoint_bench(cfg)
    lv = report.levels[0]
    assert lv.requests_failed.reasons == {"http_401": 1}
    # The server echoed the key; podium's record must not.
    assert "sk-wrong-abcdefghij" not in report.model_dump_json()
    assert "[REDACTED]" in lv.requests_failed.examples[0]
