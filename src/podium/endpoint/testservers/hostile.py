"""A configurable, misbehaving OpenAI-compatible server for failure, monitor and audit tests.

The request's ``model`` picks the behaviour of a completion request:

==================  ====================================================================
``ok``              a normal short stream (role-only chunk, 3 content chunks, usage, [DONE])
``hang``            accepts the request and never answers
``trickle``         headers, then one SSE comment byte every 0.2 s, forever
``malformed``       one good chunk, then ``data: this is not json``
``forever``         content chunks as fast as it can, never ending
``huge-event``      one event that never ends (no blank line), megabytes long
``huge-length``     a JSON answer announcing Content-Length 10 GB
``cut``             two content chunks, then the connection is closed mid-stream
``no-done``         content chunks, then the body ends without finish_reason or [DONE]
``empty``           HTTP 200 stream with a role chunk and a finish chunk, no content
``error-event``     a ``data: {"error": ...}`` event
``status-NNN``      HTTP NNN with a JSON error (e.g. status-429, status-503)
==================  ====================================================================

Server options (constructor) shape what the audit sees: a required API key, whether errors echo
the key back (a bug the audit must catch), open side routes, CORS, rate-limit and request-id
headers, a usage route, and TLS (give an ``ssl.SSLContext``). It runs on its own event loop in
a background thread: ``with HostileServer() as s: s.base_url``.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from dataclasses import dataclass, field


@dataclass
class ServerOptions:
    """How the server behaves outside the per-request ``model`` modes."""

    api_key: str | None = None
    echo_key_in_errors: bool = False
    open_side_routes: tuple[str, ...] = ()
    cors_wildcard_with_credentials: bool = False
    ratelimit_headers: bool = False
    ietf_ratelimit_headers: bool = False
    request_id_header: bool = True
    usage_route: bool = False
    ssl_context: ssl.SSLContext | None = None
    status_sequence: list[int] = field(default_factory=list)  # for monitor tests: statuses in turn


SIDE_ROUTES = ("/metrics", "/tokenize", "/pause", "/invocations", "/docs")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(delta: dict | None = None, finish: str | None = None, usage: dict | None = None) -> bytes:
    obj: dict = {
        "id": "h-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }
    if usage:
        obj["usage"] = usage
    return _chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")


class HostileServer:
    """See the module docstring."""

    def __init__(self, options: ServerOptions | None = None, host: str = "127.0.0.1"):
        self.options = options or ServerOptions()
        self.host = host
        self.port = 0
        self.requests_seen = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._seq = 0

    @property
    def base_url(self) -> str:
        scheme = "https" if self.options.ssl_context else "http"
        return f"{scheme}://{self.host}:{self.port}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        fut.result(10)
        return self

    def __exit__(self, *exc) -> None:
        async def stop():
            self._server.close()
            for t in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                t.cancel()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, 0, ssl=self.options.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]

    # ---- one connection
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = ([*lines[0].split(" "), "", ""])[:2]
                headers = {}
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    if k:
                        headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(n) if n else b""
                self.requests_seen += 1
                keep = await self._route(method, path.split("?")[0], headers, body, writer)
                await writer.drain()
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()

    def _common_headers(self, headers: dict) -> str:
        o = self.options
        out = ""
        if o.request_id_header:
            self._seq += 1
            out += f"x-request-id: hostile-{self._seq}\r\n"
        if o.ratelimit_headers:
            out += "x-ratelimit-limit-requests: 60\r\nx-ratelimit-remaining-requests: 59\r\nx-ratelimit-reset-requests: 1s\r\n"
        if o.ietf_ratelimit_headers:
            out += 'RateLimit-Policy: "default";q=60;w=60\r\nRateLimit: "default";r=59;t=1\r\n'
        if o.cors_wildcard_with_credentials and headers.get("origin"):
            out += "access-control-allow-origin: *\r\naccess-control-allow-credentials: true\r\n"
        elif headers.get("origin"):
            out += "vary: origin\r\n"
        return out

    def _json(self, writer, status: int, obj: dict, headers: dict) -> None:
        body = json.dumps(obj).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n".encode()
            + self._common_headers(headers).encode()
            + b"\r\n"
            + body
        )

    def _authorized(self, headers: dict) -> bool:
        key = self.options.api_key
        return key is None or headers.get("authorization") == f"Bearer {key}"

    def _auth_error(self, writer, headers: dict) -> None:
        msg = "invalid API key"
        if self.options.echo_key_in_errors:
            msg += f": {headers.get('authorization', '')}"
        self._json(writer, 401, {"error": {"message": msg, "type": "invalid_request_error"}}, headers)

    async def _route(self, method: str, path: str, headers: dict, body: bytes, writer) -> bool:
        o = self.options
        side = next((r for r in SIDE_ROUTES if path == r or path.endswith(r)), None)
        if side:
            if side in o.open_side_routes:
                self._json(writer, 200, {"route": side, "open": True}, headers)
            elif not self._authorized(headers):
                self._auth_error(writer, headers)
            else:
                self._json(writer, 404, {"error": {"message": "not found"}}, headers)
            return True
        if method == "OPTIONS":
            writer.write(b"HTTP/1.1 204 No Content\r\n" + self._common_headers(headers).encode() + b"\r\n")
            return True
        if not self._authorized(headers):
            self._auth_error(writer, headers)
            return True
        if path.endswith("/models"):
            self._json(writer, 200, {"object": "list", "data": [{"id": "ok"}]}, headers)
            return True
        if path.endswith("/usage") or path.endswith("/organization/usage/completions"):
            if o.usage_route:
                self._json(writer, 200, {"object": "page", "data": []}, headers)
            else:
                self._json(writer, 404, {"error": {"message": "not found"}}, headers)
            return True
        if not (path.endswith("/chat/completions") or path.endswith("/completions")):
            self._json(writer, 404, {"error": {"message": f"no route {path}"}}, headers)
            return True
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            self._json(writer, 422, {"error": {"message": "bad JSON"}}, headers)
            return True
        if o.status_sequence:
            status = o.status_sequence.pop(0)
            if status != 200:
                self._json(writer, status, {"error": {"message": f"scripted {status}"}}, headers)
                return True
        return await self._completion(str(req.get("model", "ok")), headers, writer)

    async def _completion(self, mode: str, headers: dict, writer) -> bool:
        if mode.startswith("status-"):
            self._json(writer, int(mode[7:]), {"error": {"message": f"scripted {mode}"}}, headers)
            return True
        if mode == "hang":
            await asyncio.sleep(3600)
            return False
        if mode == "huge-length":
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10000000000\r\n\r\n{"
            )
            await writer.drain()
            await asyncio.sleep(3600)
            return False
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
            + self._common_headers(headers).encode()
            + b"\r\n"
            + _event({"role": "assistant"})
        )
        await writer.drain()
        if mode == "trickle":
            while True:
                writer.write(_chunk(b":"))
                await writer.drain()
                await asyncio.sleep(0.2)
        if mode == "forever":
            piece = _event({"content": " more"}) * 64
            while True:
                writer.write(piece)
                await writer.drain()
        if mode == "huge-event":
            blob = _chunk(b"data: " + b"x" * 65536)
            while True:
                writer.write(blob)
                await writer.drain()
        if mode == "empty":
            writer.write(_event({}, "stop") + _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
            return True
        if mode == "error-event":
            err = {"error": {"message": "model overloaded", "type": "server_error"}}
            writer.write(_chunk(b"data: " + json.dumps(err).encode() + b"\n\n") + b"0\r\n\r\n")
            return True
        writer.write(_event({"content": "Hello"}))
        if mode == "malformed":
            writer.write(_chunk(b"data: this is not json\n\n") + b"0\r\n\r\n")
            return True
        writer.write(_event({"content": " there"}))
        await writer.drain()
        if mode == "cut":
            await asyncio.sleep(0.05)
            writer.transport.abort()
            return False
        if mode == "no-done":
            writer.write(b"0\r\n\r\n")
            return True
        usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
        writer.write(
            _event({"content": "!"}) + _event({}, "stop", usage) + _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
        )
        return True


def self_signed_context(tmpdir, hostname: str = "127.0.0.1", days: int = 30, expired: bool = False):
    """A server SSLContext with a fresh self-signed certificate (needs ``cryptography``).

    Returns (server context, path of the certificate PEM to trust on the client side).
    """
    import datetime
    import ipaddress
    from pathlib import Path

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = (
        (now - datetime.timedelta(days=60), now - datetime.timedelta(days=1))
        if expired
        else (
            now - datetime.timedelta(minutes=5),
            now + datetime.timedelta(days=days),
        )
    )
    try:
        san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(hostname))])
    except ValueError:
        san = x509.SubjectAlternativeName([x509.DNSName(hostname)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(san, critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    d = Path(tmpdir)
    cert_path, key_path = d / "cert.pem", d / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_path, key_path)
    return ctx, str(cert_path)
