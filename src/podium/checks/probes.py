"""Bounded, rate-limited, read-only network probes (stdlib only).

Every probe opens at most one connection (or sends at most one datagram), has a hard time
limit, reads at most ``MAX_BODY`` bytes, sends no credentials and no payload beyond a plain
GET or the standard IPMI/RMCP discovery messages. docs/safety.md is the contract.
"""

from __future__ import annotations

import errno
import http.client
import socket
import ssl
import threading
import time

from pydantic import BaseModel, Field

from podium import __version__

MAX_BODY = 64 * 1024
USER_AGENT = f"podium/{__version__} (read-only probe; see docs/safety.md)"


class ProbeOutcome(BaseModel):
    """What one probe saw."""

    target: str
    port: int
    proto: str = Field(description="tcp | http | https | udp")
    request: str = Field(description="What was sent, e.g. 'GET https://10.0.0.5:10250/pods'")
    state: str = Field(
        description="answered | refused | timeout | unreachable | tls-error | protocol-error | error"
    )
    http_status: int | None = None
    body: str = Field("", description="First bytes of the answer (at most 64 KiB read)")
    detail: str | None = None
    elapsed_s: float = 0.0

    @property
    def reachable(self) -> bool:
        return self.state in ("answered", "tls-error", "protocol-error")


class RateLimiter:
    """Spaces probe starts so that at most ``rate_per_s`` begin per second (shared by all threads)."""

    def __init__(self, rate_per_s: float):
        self.interval = 1.0 / rate_per_s if rate_per_s > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()
        self.started = 0

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
            self.started += 1
        delay = start - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def _classify(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, ssl.SSLError):
        return "tls-error", f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timeout", "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "refused", "connection refused"
    if isinstance(exc, OSError) and exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL):
        return "unreachable", exc.strerror or str(exc)
    if isinstance(exc, (http.client.HTTPException, ConnectionResetError, EOFError)):
        return "protocol-error", f"{type(exc).__name__}: {exc}"
    return "error", f"{type(exc).__name__}: {exc}"


def tcp_connect(target: str, port: int, timeout: float) -> ProbeOutcome:
    """Open and close one TCP connection; sends nothing."""
    t0 = time.monotonic()
    out = ProbeOutcome(
        target=target, port=port, proto="tcp", request=f"TCP connect {target}:{port}", state="error"
    )
    try:
        with socket.create_connection((target, port), timeout=timeout):
            out.state = "answered"
    except Exception as e:  # every failure is an outcome, never an exception
        out.state, out.detail = _classify(e)
    out.elapsed_s = round(time.monotonic() - t0, 4)
    return out


def http_get(
    target: str,
    port: int,
    path: str,
    *,
    tls: bool,
    timeout: float,
    headers: dict[str, str] | None = None,
) -> ProbeOutcome:
    """One anonymous GET (no credentials, certificate not verified, at most 64 KiB read, hard deadline)."""
    scheme = "https" if tls else "http"
    host_part = f"[{target}]" if ":" in target else target
    t0 = time.monotonic()
    deadline = t0 + 2 * timeout
    out = ProbeOutcome(
        target=target,
        port=port,
        proto=scheme,
        request=f"GET {scheme}://{host_part}:{port}{path}",
        state="error",
    )
    conn: http.client.HTTPConnection | None = None
    try:
        if tls:
            context = ssl.create_default_context()
            # a probe asks "does it answer anonymously?"; trust is not the question here
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            conn = http.client.HTTPSConnection(target, port, timeout=timeout, context=context)
        else:
            conn = http.client.HTTPConnection(target, port, timeout=timeout)
        conn.request(
            "GET", path, headers={"User-Agent": USER_AGENT, "Connection": "close", **(headers or {})}
        )
        resp = conn.getresponse()
        out.http_status = resp.status
        chunks: list[bytes] = []
        size = 0
        while size < MAX_BODY and time.monotonic() < deadline:
            chunk = resp.read(min(8192, MAX_BODY - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        out.body = b"".join(chunks).decode("utf-8", "replace")
        out.state = "answered"
    except Exception as e:
        out.state, out.detail = _classify(e)
    finally:
        if conn is not None:
            conn.close()
    out.elapsed_s = round(time.monotonic() - t0, 4)
    return out


# ---------------------------------------------------------------- IPMI / RMCP (UDP 623)

# ASF Presence Ping (DMTF DSP0136 3.2.4.1): RMCP v1.0 header, class ASF, IANA 4542, type 0x80.
RMCP_PRESENCE_PING = bytes.fromhex("06 00 ff 06 00 00 11 be 80 00 00 00")
# IPMI v1.5 session-less Get Channel Authentication Capabilities (IPMI v2.0 spec 22.13), channel
# 0x0e (this one) with the v2.0-extended bit, privilege level 4. Read-only: opens no session.
IPMI_GET_CHANNEL_AUTH_CAPS = bytes.fromhex(
    "06 00 ff 07 00 00 00 00 00 00 00 00 00 09 20 18 c8 81 00 38 8e 04 b5"
)


class IpmiAnswer(BaseModel):
    """What a BMC said to the two discovery messages."""

    presence_pong: bool = False
    ipmi_v2: bool | None = None
    anonymous_login: bool | None = None
    null_usernames: bool | None = None
    non_null_usernames: bool | None = None
    auth_types: list[str] = Field(default_factory=list)


def parse_presence_pong(data: bytes) -> bool:
    """True for an ASF Presence Pong (RMCP class 6, IANA 4542, message type 0x40)."""
    return (
        len(data) >= 12
        and data[0] == 0x06
        and data[3] == 0x06
        and data[4:8] == b"\x00\x00\x11\xbe"
        and data[8] == 0x40
    )


def parse_channel_auth_caps(data: bytes) -> IpmiAnswer | None:
    """Parse a Get Channel Authentication Capabilities response; None if it is not one."""
    # RMCP (4) + session header auth type(1) seq(4) id(4) len(1) = 14, then the IPMI message:
    # rqAddr netFn/rqLUN chk1 rsAddr rqSeq cmd completion-code data... chk2
    if len(data) < 14 + 7 + 8 or data[3] != 0x07:
        return None
    msg = data[14:]
    if msg[5] != 0x38 or msg[6] != 0x00:  # command, completion code
        return None
    d = msg[7:]
    auth_support, status = d[1], d[2]
    names = [(0x01, "none"), (0x02, "md2"), (0x04, "md5"), (0x10, "password"), (0x20, "oem")]
    return IpmiAnswer(
        ipmi_v2=bool(auth_support & 0x80),
        auth_types=[n for bit, n in names if auth_support & bit],
        anonymous_login=bool(status & 0x01),
        null_usernames=bool(status & 0x02),
        non_null_usernames=bool(status & 0x04),
    )


def ipmi_discover(target: str, timeout: float, port: int = 623) -> tuple[ProbeOutcome, IpmiAnswer]:
    """Send the presence ping and the channel-auth query (2 datagrams), wait up to ``timeout`` for answers."""
    t0 = time.monotonic()
    out = ProbeOutcome(
        target=target,
        port=port,
        proto="udp",
        request=f"UDP {target}:{port} RMCP presence ping + IPMI Get Channel Auth Capabilities",
        state="timeout",
    )
    answer = IpmiAnswer()
    family = socket.AF_INET6 if ":" in target else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.settimeout(timeout)
            s.connect((target, port))
            s.send(RMCP_PRESENCE_PING)
            s.send(IPMI_GET_CHANNEL_AUTH_CAPS)
            deadline = t0 + timeout
            while time.monotonic() < deadline:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                try:
                    data = s.recv(512)
                except TimeoutError:
                    break
                out.state = "answered"
                if parse_presence_pong(data):
                    answer.presence_pong = True
                caps = parse_channel_auth_caps(data)
                if caps is not None:
                    answer = caps.model_copy(update={"presence_pong": answer.presence_pong})
                if answer.presence_pong and answer.ipmi_v2 is not None:
                    break
    except Exception as e:
        out.state, out.detail = _classify(e)
    out.elapsed_s = round(time.monotonic() - t0, 4)
    return out, answer
