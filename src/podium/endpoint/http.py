"""A small HTTP/1.1 client on raw asyncio protocols, built for timing streamed responses.

Why not httpx/aiohttp: at hundreds of concurrent streams on two cores, every microsecond between
"bytes reached the socket" and "podium stamped them" is error in TTFT and ITL. This client reads
raw non-blocking sockets with ``recvmsg`` and takes each read's arrival time from the kernel
(``SO_TIMESTAMPNS``), so its own event-loop lag is not measured; it decodes chunked bodies incrementally,
splits server-sent events without parsing their JSON (that happens after the response ends), and
enforces hard caps on header size, body size, total time and idle time so a hostile server cannot
make podium use unbounded memory or hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl as _ssl
import struct
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 64 * 1024
# Linux asm-generic SO_TIMESTAMPNS (64-bit timespec on 64-bit hosts); Python does not export it.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_TIMESPEC = struct.Struct("qq")
_CMSG_SPACE = socket.CMSG_SPACE(_TIMESPEC.size)


class HttpError(Exception):
    """A transport-level failure, with a failure kind from podium.endpoint.models.FAILURE_KINDS."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class Response:
    """A finished (or failed) response. ``events`` are (arrival ns, raw SSE event bytes)."""

    status: int = 0
    reason: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    events: list[tuple[int, bytes]] = field(default_factory=list)
    sent_ns: int = 0
    first_byte_ns: int = 0
    end_ns: int = 0
    body_bytes: int = 0
    complete: bool = False
    error_kind: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Target:
    """Where requests go, parsed once from a base URL."""

    scheme: str
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, base_url: str) -> Target:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


def build_request(target: Target, method: str, path: str, headers: dict[str, str], body: bytes) -> bytes:
    """Serialise one HTTP/1.1 request (keep-alive)."""
    lines = [f"{method} {target.base_path}{path} HTTP/1.1", f"Host: {target.host_header}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _kernel_ns(anc) -> int:
    for level, kind, cdata in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= _TIMESPEC.size:
            sec, nsec = _TIMESPEC.unpack_from(cdata)
            return sec * 1_000_000_000 + nsec
    return 0


class _ResponseParser:
    """Parses one response at a time on a kept-alive connection; fed (bytes, arrival ns)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_abort):
        self.loop = loop
        self._abort = on_abort
        self.closed = False
        self._resp: Response | None = None
        self._waiter: asyncio.Future | None = None
        self._buf = bytearray()
        self._state = "idle"
        self._chunk_left = 0
        self._length_left = -1  # -1: until close (or chunked)
        self._chunked = False
        self._sse = False
        self._sse_buf = bytearray()
        self._body = bytearray()
        self._keep_body = True
        self._max_body = 0
        self.keep_alive = True
        self._last_data_ns = 0

    def connection_lost(self) -> None:
        self.closed = True
        if self._resp is not None and self._state != "done":
            if self._state == "body" and not self._chunked and self._length_left < 0:
                self._finish(self._last_data_ns)  # body delimited by close
            else:
                where = "before the response" if self._state == "head" else "mid-stream"
                self._fail("stream_cut", f"connection closed {where}")

    def feed(self, data: bytes, now: int) -> None:
        """Bytes read in one go; ``now`` is when they reached the socket (kernel time if known)."""
        resp = self._resp
        if resp is None or self._state == "done":
            return
        self._last_data_ns = now
        if not resp.first_byte_ns:
            resp.first_byte_ns = now
        self._buf += data
        try:
            if self._state == "head":
                self._parse_head(now)
            if self._state == "body":
                self._parse_body(now)
        except HttpError as e:
            self._fail(e.kind, str(e))

    # ---- parsing
    def _parse_head(self, now: int) -> None:
        end = self._buf.find(b"\r\n\r\n")
        if end < 0 or end > MAX_HEADER_BYTES:
            if len(self._buf) > MAX_HEADER_BYTES:
                raise HttpError("protocol_error", "response headers larger than 64 KiB")
            return
        head = bytes(self._buf[:end]).decode("latin-1")
        del self._buf[: end + 4]
        lines = head.split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpError("protocol_error", f"bad status line: {lines[0][:80]!r}")
        resp = self._resp
        resp.status = int(parts[1])
        resp.reason = parts[2] if len(parts) > 2 else ""
        for line in lines[1:]:
            k, sep, v = line.partition(":")
            if sep:
                resp.headers[k.strip().lower()] = v.strip()
        h = resp.headers
        self._chunked = "chunked" in h.get("transfer-encoding", "").lower()
        cl = h.get("content-length")
        self._length_left = -1
        if not self._chunked and cl is not None:
            if not cl.isdigit():
                raise HttpError("protocol_error", f"bad content-length {cl[:20]!r}")
            self._length_left = int(cl)
            if self._length_left > self._max_body:
                raise HttpError("response_too_large", f"content-length {cl} over the {self._max_body} cap")
        self._sse = h.get("content-type", "").startswith("text/event-stream")
        self.keep_alive = h.get("connection", "").lower() != "close" and (
            self._chunked or self._length_left >= 0
        )
        self._state = "body"
        if resp.status in (204, 304) or self._length_left == 0:
            self._finish(now)

    def _parse_body(self, now: int) -> None:
        buf = self._buf
        if not self._chunked:
            if self._length_left >= 0:
                take = min(len(buf), self._length_left)
                self._on_body(bytes(buf[:take]), now)
                del buf[:take]
                self._length_left -= take
                if self._length_left == 0:
                    self._finish(now)
            else:
                self._on_body(bytes(buf), now)
                buf.clear()
            return
        # One pass over whole chunks with locals; the data of every chunk completed in this read
        # goes to _on_body once (one SSE split per read, not per chunk).
        pos, n = 0, len(buf)
        out = bytearray()
        left = self._chunk_left
        find = buf.find
        finished = False
        try:
            while True:
                if left > 0:  # inside a chunk's data
                    take = min(n - pos, left)
                    if take <= 0:
                        break
                    out += buf[pos : pos + take]
                    pos += take
                    left -= take
                    if left:
                        break
                    left = -2
                if left == -2:  # CRLF after the data
                    if n - pos < 2:
                        break
                    if buf[pos] != 13 or buf[pos + 1] != 10:
                        raise HttpError("protocol_error", "chunk not followed by CRLF")
                    pos += 2
                    left = 0
                    continue
                end = find(b"\r\n", pos)
                if end < 0:
                    if n - pos > 1024:
                        raise HttpError("protocol_error", "chunk size line too long")
                    break
                if left == -3:  # trailer lines after the last chunk, up to an empty line
                    finished = end == pos
                    pos = end + 2
                    if finished:
                        break
                    continue
                size_text = buf[pos:end]
                semi = size_text.find(b";")
                if semi >= 0:
                    size_text = size_text[:semi]
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise HttpError("protocol_error", f"bad chunk size {bytes(size_text[:20])!r}") from None
                pos = end + 2
                left = size if size else -3
        finally:
            self._chunk_left = left
            del buf[:pos]
        if out:
            self._on_body(bytes(out), now)
        if finished:
            self._finish(now)

    def _on_body(self, data: bytes, now: int) -> None:
        resp = self._resp
        resp.body_bytes += len(data)
        if resp.body_bytes > self._max_body:
            raise HttpError("response_too_large", f"response body over the {self._max_body}-byte cap")
        if self._sse and 200 <= resp.status < 300:
            sb = self._sse_buf
            sb += data
            if b"\r" in data:  # CRLF-framed events: normalise so one separator search suffices
                sb[:] = sb.replace(b"\r\n", b"\n")
            start = 0
            while True:
                end = sb.find(b"\n\n", start)
                if end < 0:
                    break
                resp.events.append((now, bytes(sb[start:end])))
                start = end + 2
            if start:
                del sb[:start]
        elif self._keep_body:
            self._body += data

    # ---- completion
    def _finish(self, now: int) -> None:
        resp = self._resp
        if resp is None:
            return
        resp.end_ns = now
        resp.complete = True
        if self._sse_buf.strip():
            resp.events.append((now, bytes(self._sse_buf)))
        resp.body = bytes(self._body)
        self._state = "done"
        self._settle()

    def _fail(self, kind: str, message: str) -> None:
        resp = self._resp
        if resp is None:
            return
        resp.end_ns = time.time_ns()
        resp.error_kind, resp.error = kind, message
        resp.body = bytes(self._body)
        self._state = "done"
        self.keep_alive = False
        self._abort()
        self._settle()

    def _settle(self) -> None:
        w = self._waiter
        self._waiter = None
        if w is not None and not w.done():
            w.set_result(self._resp)

    # ---- one exchange
    def start(self, max_body: int, keep_body: bool, sent_ns: int) -> tuple[Response, asyncio.Future]:
        self._resp = resp = Response()
        self._waiter = self.loop.create_future()
        self._buf.clear()
        self._sse_buf.clear()
        self._body = bytearray()
        self._state = "head"
        self._chunk_left = 0
        self._max_body = max_body
        self._keep_body = keep_body
        resp.sent_ns = self._last_data_ns = sent_ns
        return resp, self._waiter

    def idle_ns(self, now: int) -> int:
        return now - self._last_data_ns

    def expire(self, kind: str, message: str) -> None:
        if self._state != "done":
            self._fail(kind, message)


class Connection:
    """One kept-alive HTTP/1.1 connection on a raw non-blocking socket; one request at a time.

    Arrival times come from the kernel: ``SO_TIMESTAMPNS`` on the socket, read with ``recvmsg``,
    is when the bytes reached this host's socket (CLOCK_REALTIME), so the client's own event-loop
    lag is not added to TTFT or ITL. The send time is stamped right before the ``send`` call.
    TLS runs through ``ssl.MemoryBIO`` so the same raw-socket timestamps apply to HTTPS.
    """

    def __init__(self, target: Target, ssl_context: _ssl.SSLContext | None, connect_timeout_s: float = 10.0):
        self.target = target
        self.ssl_context = ssl_context if target.scheme == "https" else None
        self.connect_timeout_s = connect_timeout_s
        self._sock: socket.socket | None = None
        self._parser: _ResponseParser | None = None
        self._tls: _ssl.SSLObject | None = None
        self._in: _ssl.MemoryBIO | None = None
        self._out: _ssl.MemoryBIO | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.kernel_timestamps = False

    @property
    def usable(self) -> bool:
        p = self._parser
        return self._sock is not None and p is not None and not p.closed and p.keep_alive

    async def connect(self) -> float:
        """Open the connection if needed; returns the seconds spent connecting (0 when reused)."""
        if self.usable:
            return 0.0
        self.close()
        loop = self._loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        try:
            await asyncio.wait_for(self._open(loop), self.connect_timeout_s)
        except asyncio.TimeoutError:
            self.close()
            raise HttpError("timeout", f"connect timed out after {self.connect_timeout_s:g}s") from None
        except _ssl.SSLError as e:
            self.close()
            raise HttpError(
                "tls_error", f"TLS: {getattr(e, 'verify_message', None) or e.reason or e}"
            ) from None
        except OSError as e:
            self.close()
            raise HttpError("connect_error", f"connect: {e.strerror or e}") from None
        return time.perf_counter() - t0

    async def _open(self, loop: asyncio.AbstractEventLoop) -> None:
        t = self.target
        infos = await loop.getaddrinfo(t.host, t.port, type=socket.SOCK_STREAM)
        if not infos:
            raise OSError(f"cannot resolve {t.host}")
        family, stype, proto, _, addr = infos[0]
        sock = socket.socket(family, stype, proto)
        sock.setblocking(False)
        self._sock = sock
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self.kernel_timestamps = True
        except OSError:
            self.kernel_timestamps = False
        await loop.sock_connect(sock, addr)
        if self.ssl_context is not None:
            self._in, self._out = _ssl.MemoryBIO(), _ssl.MemoryBIO()
            self._tls = self.ssl_context.wrap_bio(self._in, self._out, server_hostname=t.host)
            while True:
                try:
                    self._tls.do_handshake()
                    break
                except _ssl.SSLWantReadError:
                    pending = self._out.read()
                    if pending:
                        await loop.sock_sendall(sock, pending)
                    data = await loop.sock_recv(sock, 65536)
                    if not data:
                        raise _ssl.SSLError("connection closed during the TLS handshake") from None
                    self._in.write(data)
            pending = self._out.read()
            if pending:
                await loop.sock_sendall(sock, pending)
        self._parser = _ResponseParser(loop, self._abort)
        loop.add_reader(sock.fileno(), self._on_readable)

    def _on_readable(self) -> None:
        sock, parser = self._sock, self._parser
        if sock is None or parser is None:
            return
        while True:
            try:
                # TCP reports one arrival time per read (its receive queue merges small segments
                # and keeps the latest stamp), so a client that reads late still sees a late time
                # for merged segments: keeping up matters, and this loop does little else.
                data, anc, _flags, _addr = sock.recvmsg(262144, _CMSG_SPACE)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._lost()
                return
            if not data:
                if self._tls is not None:
                    self._in.write_eof()
                    self._drain_tls(time.time_ns())
                self._lost()
                return
            now = _kernel_ns(anc) or time.time_ns()
            if self._tls is None:
                parser.feed(data, now)
            else:
                self._in.write(data)
                if not self._drain_tls(now):
                    return
            if self._sock is None or len(data) < 262144:
                return  # drained (the selector calls again if more arrives)

    def _drain_tls(self, now: int) -> bool:
        while True:
            try:
                plain = self._tls.read(262144)
            except _ssl.SSLWantReadError:
                return True
            except (_ssl.SSLZeroReturnError, _ssl.SSLEOFError):
                self._lost()
                return False
            except _ssl.SSLError as e:
                self._parser.expire("tls_error", f"TLS: {e.reason or e}")
                return False
            if not plain:
                return True
            self._parser.feed(plain, now)
            if self._sock is None:
                return False

    def _lost(self) -> None:
        parser = self._parser
        self._detach()
        if parser is not None:
            parser.connection_lost()

    def _abort(self) -> None:
        self._detach()
        if self._parser is not None:
            self._parser.closed = True

    def _detach(self) -> None:
        sock = self._sock
        self._sock = None
        if sock is not None:
            if self._loop is not None:
                with contextlib.suppress(Exception):
                    self._loop.remove_reader(sock.fileno())
            sock.close()

    def _send(self, payload: bytes) -> None:
        sock = self._sock
        if self._tls is not None:
            self._tls.write(payload)
            payload = self._out.read()
        try:
            n = sock.send(payload)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError as e:
            raise HttpError("connect_error", f"send: {e.strerror or e}") from None
        if n < len(payload):
            rest = payload[n:]
            self._loop.create_task(self._loop.sock_sendall(sock, rest))

    async def exchange(
        self,
        payload: bytes,
        *,
        timeout_s: float,
        idle_timeout_s: float,
        max_body: int,
        keep_body: bool = True,
    ) -> Response:
        """Send one serialised request and wait for the whole response (or its failure)."""
        parser = self._parser
        loop = asyncio.get_running_loop()
        sent_ns = time.time_ns()
        resp, fut = parser.start(max_body, keep_body, sent_ns)
        self._send(payload)
        deadline = loop.time() + timeout_s
        idle_ns = int(idle_timeout_s * 1e9)

        def watchdog() -> None:
            if fut.done():
                return
            if loop.time() >= deadline:
                parser.expire("timeout", f"no complete response within {timeout_s:g}s")
                return
            if parser.idle_ns(time.time_ns()) >= idle_ns:
                parser.expire("timeout", f"no data for {idle_timeout_s:g}s")
                return
            handle[0] = loop.call_later(
                min(idle_timeout_s / 4, 1.0, max(deadline - loop.time(), 0)), watchdog
            )

        handle = [loop.call_later(min(idle_timeout_s / 4, 1.0, timeout_s), watchdog)]
        try:
            return await fut
        finally:
            handle[0].cancel()
            if not resp.complete:
                self.close()

    def close(self) -> None:
        if self._parser is not None:
            self._parser.closed = True
        self._detach()
        self._tls = self._in = self._out = None


def make_ssl_context(verify: bool = True, ca_file: str | None = None) -> _ssl.SSLContext:
    """A client TLS context: TLS 1.2+; verification on unless the user turned it off."""
    ctx = _ssl.create_default_context(cafile=ca_file)
    ctx.minimum_version = _ssl.TLSVersion.TLSv1_2
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = _ssl.CERT_NONE
    return ctx


async def request_once(
    base_url: str,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    *,
    timeout_s: float = 30.0,
    max_body: int = 1024 * 1024,
    ssl_context: _ssl.SSLContext | None = None,
) -> Response:
    """One request on a fresh connection; transport failures come back as ``error_kind``."""
    target = Target.parse(base_url)
    conn = Connection(target, ssl_context or (make_ssl_context() if target.scheme == "https" else None))
    try:
        await conn.connect()
        payload = build_request(target, method, path, {"Connection": "close", **(headers or {})}, body)
        return await conn.exchange(payload, timeout_s=timeout_s, idle_timeout_s=timeout_s, max_body=max_body)
    except HttpError as e:
        return Response(error_kind=e.kind, error=str(e))
    finally:
        conn.close()
