"""The HTTP/1.1 client on raw bytes from a loopback socket server: framing edge cases."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from podium.endpoint.http import request_once
from podium.endpoint.sse import decode_stream

SSE = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


def _serve_once(raw: bytes) -> int:
    """A one-shot server: reads the request head, writes ``raw`` in small pieces, closes."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)

    def run():
        conn, _ = ls.accept()
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += conn.recv(4096)
        try:
            for i in range(0, len(raw), 7):  # split everywhere, including inside CRLFs
                conn.sendall(raw[i : i + 7])
        except OSError:
            pass  # the client gave up first (e.g. headers over its cap): that is the point
        conn.close()
        ls.close()

    threading.Thread(target=run, daemon=True).start()
    return ls.getsockname()[1]


def _get(raw: bytes):
    port = _serve_once(raw)
    return asyncio.run(request_once(f"http://127.0.0.1:{port}/v1", "GET", "/x", timeout_s=5))


def _chunked(body: str, ext: str = "") -> bytes:
    out = b""
    for part in (body[:30], body[30:]):
        data = part.encode()
        out += b"%x%s\r\n%s\r\n" % (len(data), ext.encode(), data)
    return out + b"0\r\nx-trailer: 1\r\n\r\n"


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        + _chunked(SSE, ";ext=1"),
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
        % (len(SSE), SSE.encode()),
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n" + SSE.encode(),
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        + _chunked(SSE.replace("\n", "\r\n")),
    ],
    ids=["chunked-ext-trailer", "content-length", "until-close", "crlf-events"],
)
def test_framings_give_the_same_events(raw):
    resp = _get(raw)
    assert resp.error_kind is None and resp.complete
    d = decode_stream(resp.events, "chat")
    assert d.error_kind is None
    assert d.text == "ab" and d.done and d.finish_reason == "stop"
    assert all(t > 0 for t, _ in resp.events)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"garbage\r\n\r\n", "protocol_error"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "protocol_error"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nabcdeXX", "protocol_error"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", "stream_cut"),
        (b"HTTP/1.1 200 OK\r\n" + b"x-big: " + b"a" * 70000 + b"\r\n\r\n", "protocol_error"),
        (b"", "stream_cut"),
    ],
    ids=[
        "bad-status-line",
        "bad-chunk-size",
        "no-crlf-after-chunk",
        "short-body",
        "huge-headers",
        "closed-at-once",
    ],
)
def test_broken_responses_fail_with_a_kind(raw, kind):
    resp = _get(raw)
    assert resp.error_kind == kind


def test_non_sse_body_kept_with_status():
    resp = _get(
        b'HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 13\r\nx-request-id: r1\r\n\r\n{"error":"x"}'
    )
    assert (resp.status, resp.body, resp.headers["x-request-id"]) == (404, b'{"error":"x"}', "r1")


def test_connect_refused_and_bad_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    resp = asyncio.run(request_once(f"http://127.0.0.1:{port}/v1", "GET", "/x", timeout_s=2))
    assert resp.error_kind == "connect_error"
    with pytest.raises(ValueError, match="not an http"):
        asyncio.run(request_once("ftp://x/v1", "GET", "/x"))
