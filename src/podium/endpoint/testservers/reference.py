"""A ground-truth OpenAI-compatible streaming server with exactly scheduled chunks.

Run it in its own process (``python -m podium.endpoint.testservers.reference --log FILE``) so it
does not share a GIL with the client under test. It prints ``PORT <n>`` on stdout when ready.

What makes it ground truth:

* each request's arrival time comes from the kernel: ``SO_TIMESTAMPNS`` on the accepted socket,
  read with ``recvmsg`` (the time the first request bytes reached the socket, CLOCK_REALTIME);
* chunks are due at ``arrival + ttft`` and then every ``itl``; the server logs when each chunk was
  really handed to the kernel (the moment its ``send`` call began), so its own lateness is in the
  log and is not blamed on the client.

The log is JSON lines, one per request: ``id``, ``arrival_ns``, ``sent_ns`` (one per content
chunk), ``role_sent_ns``, ``tokens``. True TTFT = ``sent_ns[0] - arrival_ns``.

Behaviour flags: ``--ttft-ms``, ``--itl-ms``, ``--tokens`` (else the request's max_tokens),
``--no-role-chunk``, ``--no-usage``, ``--require-key-env VAR`` (401 without ``Bearer $VAR``),
``--ratelimit-headers``. It is a single-threaded ``selectors`` loop: no asyncio overhead.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import itertools
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time

_TS = struct.Struct("qq")
# Linux asm-generic value (SO_TIMESTAMPNS_OLD, 64-bit timespec on 64-bit hosts); Python does not export it.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


class _Conn:
    __slots__ = ("arrival_ns", "buf", "out", "sock", "streaming")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()
        self.arrival_ns = 0
        self.out = bytearray()
        self.streaming = False


class _Stream:
    __slots__ = (
        "api",
        "arrival_ns",
        "conn",
        "created",
        "id",
        "log",
        "model",
        "next_i",
        "role_sent_ns",
        "sent_ns",
        "template",
        "tokens",
    )

    def __init__(self, conn, rid, api, model, tokens, arrival_ns):
        self.conn = conn
        self.id = rid
        self.api = api
        self.model = model
        self.tokens = tokens
        self.arrival_ns = arrival_ns
        self.next_i = 0
        self.sent_ns: list[int] = []
        self.role_sent_ns = 0
        self.created = int(time.time())
        # Content chunks are the hot path: format bytes from a JSON template (json.dumps is 5x slower).
        head = {"id": rid, "object": "chat.completion.chunk" if api == "chat" else "text_completion"}
        head |= {"created": self.created, "model": model}
        prefix = json.dumps(head, separators=(",", ":"))[:-1].replace("%", "%%").encode()
        body = b',"choices":[{"index":0,"delta":{"content":" tok%d"},"finish_reason":null}]}'
        if api != "chat":
            body = b',"choices":[{"index":0,"text":" tok%d","finish_reason":null}]}'
        self.template = b"data: " + prefix + body + b"\n\n"


class ReferenceServer:
    """The server loop; see the module docstring."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.sel = selectors.DefaultSelector()
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((args.host, args.port))
        self.lsock.listen(4096)
        self.lsock.setblocking(False)
        self.sel.register(self.lsock, selectors.EVENT_READ, None)
        self.timers: list[tuple[int, int, _Stream]] = []
        self.seq = itertools.count()
        self.ids = itertools.count(1)
        self.log = open(args.log, "a", buffering=1 << 16) if args.log else None  # noqa: SIM115
        self.key = os.environ.get(args.require_key_env) if args.require_key_env else None
        self.running = True
        self.ttft_ns = int(args.ttft_ms * 1e6)
        self.itl_ns = int(args.itl_ms * 1e6)

    @property
    def port(self) -> int:
        return self.lsock.getsockname()[1]

    # ---- loop
    def serve(self) -> None:
        while self.running:
            timeout = 0.2  # wake up now and then to notice SIGTERM
            if self.timers:
                timeout = min(timeout, max(0.0, (self.timers[0][0] - time.time_ns()) / 1e9))
            for key, mask in self.sel.select(timeout):
                if key.data is None:
                    self._accept()
                elif mask & selectors.EVENT_READ:
                    self._read(key.data)
                elif mask & selectors.EVENT_WRITE:
                    self._flush(key.data)
            self._fire_due()
        if self.log:
            self.log.close()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.lsock.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Conn(sock)
            self.sel.register(sock, selectors.EVENT_READ, conn)

    def _close(self, conn: _Conn) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(conn.sock)
        conn.sock.close()

    def _read(self, conn: _Conn) -> None:
        try:
            data, anc, _flags, _addr = conn.sock.recvmsg(65536, socket.CMSG_SPACE(_TS.size))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        if not data:
            self._close(conn)
            return
        if not conn.buf:
            ts = 0
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = _TS.unpack(cdata[: _TS.size])
                    ts = sec * 1_000_000_000 + nsec
            conn.arrival_ns = ts or time.time_ns()
        conn.buf += data
        self._maybe_request(conn)

    def _maybe_request(self, conn: _Conn) -> None:
        end = conn.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(conn.buf[:end]).decode("latin-1").split("\r\n")
        headers = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0") or 0)
        if len(conn.buf) < end + 4 + length:
            return
        body = bytes(conn.buf[end + 4 : end + 4 + length])
        del conn.buf[: end + 4 + length]
        method, path = ([*head[0].split(" "), "", ""])[:2]
        self._handle(conn, method, path, headers, body)

    # ---- requests
    def _send_now(self, conn: _Conn, data: bytes) -> int:
        """Hand bytes to the kernel; returns the time the last byte was accepted (0 if buffered)."""
        if conn.out:
            conn.out += data
            return 0
        try:
            n = conn.sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError:
            self._close(conn)
            return 0
        if n < len(data):
            conn.out += data[n:]
            self.sel.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
            return 0
        return time.time_ns()

    def _flush(self, conn: _Conn) -> None:
        try:
            n = conn.sock.send(conn.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        del conn.out[:n]
        if not conn.out:
            self.sel.modify(conn.sock, selectors.EVENT_READ, conn)

    def _respond(self, conn: _Conn, status: str, obj: dict, extra: str = "") -> None:
        body = json.dumps(obj).encode()
        head = (
            f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"x-request-id: ref-{next(self.ids)}\r\n{extra}\r\n"
        )
        self._send_now(conn, head.encode() + body)

    def _handle(self, conn: _Conn, method: str, path: str, headers: dict, body: bytes) -> None:
        if self.key is not None and headers.get("authorization") != f"Bearer {self.key}":
            self._respond(
                conn,
                "401 Unauthorized",
                {"error": {"message": "invalid or missing API key", "type": "invalid_request_error"}},
            )
            return
        if method == "GET" and path.endswith("/models"):
            self._respond(
                conn, "200 OK", {"object": "list", "data": [{"id": "reference", "object": "model"}]}
            )
            return
        if method != "POST" or not (path.endswith("/chat/completions") or path.endswith("/completions")):
            self._respond(conn, "404 Not Found", {"error": {"message": f"no route {path}"}})
            return
        try:
            req = json.loads(body)
        except ValueError:
            self._respond(conn, "422 Unprocessable Entity", {"error": {"message": "body is not JSON"}})
            return
        api = "chat" if path.endswith("/chat/completions") else "completions"
        tokens = self.args.tokens or int(req.get("max_tokens") or 16)
        rid = f"ref-{next(self.ids)}"
        st = _Stream(conn, rid, api, str(req.get("model", "reference")), tokens, conn.arrival_ns)
        rl = ""
        if self.args.ratelimit_headers:
            rl = "x-ratelimit-limit-requests: 1000\r\nx-ratelimit-remaining-requests: 999\r\n"
        head = (
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
            f"x-request-id: {rid}\r\n{rl}\r\n"
        )
        data = head.encode()
        if api == "chat" and not self.args.no_role_chunk:
            data += _chunk(self._event(st, {"role": "assistant"}, None))
        t = self._send_now(conn, data)
        st.role_sent_ns = t
        heapq.heappush(self.timers, (st.arrival_ns + self.ttft_ns, next(self.seq), st))

    def _event(self, st: _Stream, delta: dict | None, finish: str | None, usage: dict | None = None) -> bytes:
        if st.api == "chat":
            choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
            obj = {"id": st.id, "object": "chat.completion.chunk", "created": st.created, "model": st.model}
        else:
            choice = {"index": 0, "text": (delta or {}).get("content", ""), "finish_reason": finish}
            obj = {"id": st.id, "object": "text_completion", "created": st.created, "model": st.model}
        obj["choices"] = [choice]
        if usage is not None:
            obj["usage"] = usage
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"

    def _fire_due(self) -> None:
        now = time.time_ns()
        due: dict[int, list[_Stream]] = {}
        while self.timers and self.timers[0][0] <= now:
            _, _, st = heapq.heappop(self.timers)
            due.setdefault(id(st.conn), []).append(st)
        for streams in due.values():
            if streams[0].conn.sock.fileno() == -1:
                continue  # the client went away: drop its streams
            # All chunks due for one connection go out in one send; each is logged at that time.
            data = bytearray()
            sent: list[_Stream] = []
            for st in streams:
                i = st.next_i
                data += _chunk(st.template % i)
                st.next_i = i + 1
                sent.append(st)
                if st.next_i >= st.tokens:
                    usage = None
                    if not self.args.no_usage:
                        usage = {
                            "prompt_tokens": 1,
                            "completion_tokens": st.tokens,
                            "total_tokens": st.tokens + 1,
                        }
                    data += _chunk(self._event(st, {}, "length", usage))
                    data += _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
            conn = streams[0].conn
            # Stamp before the send call: the bytes cannot reach the client earlier than this, so
            # a late stamp (this process descheduled) never makes the client look better than it is.
            t = time.time_ns()
            self._send_now(conn, bytes(data))
            for st in sent:
                st.sent_ns.append(t)
                if st.next_i >= st.tokens:
                    self._log(st)
                else:
                    heapq.heappush(
                        self.timers,
                        (st.arrival_ns + self.ttft_ns + st.next_i * self.itl_ns, next(self.seq), st),
                    )

    def _log(self, st: _Stream) -> None:
        if self.log:
            rec = {
                "id": st.id,
                "arrival_ns": st.arrival_ns,
                "role_sent_ns": st.role_sent_ns,
                "sent_ns": st.sent_ns,
            }
            rec["tokens"] = st.tokens
            self.log.write(json.dumps(rec) + "\n")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def spawn(args: list[str], python: str | None = None, env: dict | None = None):
    """Start the server in its own process; returns (Popen, port). Stop it with terminate()."""
    import subprocess

    proc = subprocess.Popen(
        [python or sys.executable, "-m", "podium.endpoint.testservers.reference", *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"reference server did not start: {line!r}")
    return proc, int(line.split()[1])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--ttft-ms", type=float, default=20.0)
    p.add_argument("--itl-ms", type=float, default=5.0)
    p.add_argument(
        "--tokens", type=int, default=0, help="Tokens per answer (default: the request's max_tokens)"
    )
    p.add_argument("--no-role-chunk", action="store_true")
    p.add_argument("--no-usage", action="store_true")
    p.add_argument("--require-key-env", default=None, help="Require 'Bearer $VAR' (the key is read from VAR)")
    p.add_argument("--ratelimit-headers", action="store_true")
    p.add_argument("--log", default=None, help="JSON-lines log of arrival and send times")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    server = ReferenceServer(parse_args(argv))

    def stop(*_):
        server.running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"PORT {server.port}", flush=True)
    server.serve()
    sys.exit(0)


if __name__ == "__main__":
    main()
