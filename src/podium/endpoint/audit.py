"""``podium endpoint audit``: security and operability checks on an OpenAI-compatible endpoint.

Probing (I/O) is kept apart from grading: :func:`collect_observations` talks to the endpoint and
returns plain :class:`Observation` values; the ``grade_*`` functions turn them into
:class:`~podium.models.results.CheckResult` (pass | warn | fail | unknown). A check that could not
run is ``unknown`` with a reason, never a pass.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import ssl
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field

from podium import __version__
from podium.endpoint.http import Response, Target, make_ssl_context, request_once
from podium.models.common import Evidence, Provenance, Severity, Status, utcnow
from podium.models.results import CheckResult, ResultSummary
from podium.secrets import redact, register_secret

CATEGORY = "endpoint-security"
AUDIT_ORIGIN = "https://podium-audit.invalid"
# Side routes that inference servers (vLLM, TGI, SageMaker containers, FastAPI) expose next to the API.
SIDE_ROUTES = {
    "/metrics": Severity.MEDIUM,
    "/tokenize": Severity.MEDIUM,
    "/pause": Severity.HIGH,
    "/invocations": Severity.HIGH,
    "/docs": Severity.LOW,
}
USAGE_ROUTES = ("/usage", "/organization/usage/completions", "/dashboard/billing/usage")


@dataclass
class Exchange:
    """What one probe request saw (headers lower-cased, body truncated)."""

    method: str
    url: str
    status: int | None
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    error: str | None = None
    usage_in_stream: bool = False

    @classmethod
    def of(cls, method: str, url: str, resp: Response) -> Exchange:
        text = resp.body[:4096].decode("utf-8", "replace")
        if resp.events:
            text = b"\n".join(e for _, e in resp.events[:50]).decode("utf-8", "replace")[:4096]
        usage = any(b'"usage"' in e and b'"completion_tokens"' in e for _, e in resp.events)
        return cls(
            method,
            url,
            resp.status or None,
            dict(resp.headers),
            text,
            f"{resp.error_kind}: {resp.error}" if resp.error_kind else None,
            usage,
        )


@dataclass
class TlsObservation:
    """TLS facts of the endpoint."""

    scheme: str
    version: str | None = None
    cipher: str | None = None
    verified: bool | None = None
    verify_error: str | None = None
    not_after: datetime | None = None
    legacy: dict[str, str] = field(default_factory=dict)  # 'TLSv1' -> accepted|refused|unsupported-locally


@dataclass
class Observation:
    """Everything the audit saw; graded by :func:`grade`."""

    base_url: str
    tls: TlsObservation
    no_key: Exchange
    wrong_key: Exchange
    wrong_key_value: str
    with_key: Exchange | None
    side_routes: dict[str, Exchange]
    cors: Exchange
    usage_routes: dict[str, Exchange]
    real_key: str | None = None


class EndpointAuditReport(BaseModel):
    """Output of ``podium endpoint audit``."""

    model_config = ConfigDict(extra="forbid")

    kind: str = "endpoint-audit"
    base_url: str
    model: str
    collected_at: datetime = Field(default_factory=utcnow)
    results: list[CheckResult]
    summary: ResultSummary
    provenance: Provenance | None = None


# ---------------------------------------------------------------- probing (I/O)
def _root_url(base_url: str) -> str:
    t = Target.parse(base_url)
    return f"{t.scheme}://{t.host_header}"


def _tls_observation(base_url: str, ca_file: str | None, timeout: float) -> TlsObservation:
    t = Target.parse(base_url)
    obs = TlsObservation(scheme=t.scheme)
    if t.scheme != "https":
        return obs
    ctx = ssl.create_default_context(cafile=ca_file)
    try:
        with (
            socket.create_connection((t.host, t.port), timeout) as raw,
            ctx.wrap_socket(raw, server_hostname=t.host) as s,
        ):
            obs.version, obs.cipher, obs.verified = s.version(), s.cipher()[0], True
            cert = s.getpeercert()
            if cert and cert.get("notAfter"):
                obs.not_after = datetime.fromtimestamp(
                    ssl.cert_time_to_seconds(cert["notAfter"]), timezone.utc
                )
    except ssl.SSLCertVerificationError as e:
        obs.verified, obs.verify_error = False, e.verify_message or str(e)
        # Still learn the version with verification off.
        loose = make_ssl_context(verify=False)
        try:
            with socket.create_connection((t.host, t.port), timeout) as raw, loose.wrap_socket(raw) as s:
                obs.version, obs.cipher = s.version(), s.cipher()[0]
        except (OSError, ssl.SSLError):
            pass
    except (OSError, ssl.SSLError) as e:
        obs.verified, obs.verify_error = None, f"TLS handshake failed: {e}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        legacy = (("TLSv1", ssl.TLSVersion.TLSv1), ("TLSv1.1", ssl.TLSVersion.TLSv1_1))
    for name, ver in legacy:
        obs.legacy[name] = _try_legacy(t.host, t.port, ver, timeout)
    return obs


def _try_legacy(host: str, port: int, version: ssl.TLSVersion, timeout: float) -> str:
    """'accepted', 'refused', or 'unsupported-locally' (this OpenSSL cannot offer that version)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with warnings.catch_warnings():  # offering a deprecated version is the point of this probe
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = version
            ctx.maximum_version = version
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    except (ValueError, ssl.SSLError):
        return "unsupported-locally"
    try:
        with socket.create_connection((host, port), timeout) as raw, ctx.wrap_socket(raw) as s:
            return "accepted" if s.version() in ("TLSv1", "TLSv1.1") else "refused"
    except ssl.SSLError as e:
        if "NO_PROTOCOLS_AVAILABLE" in str(e).upper() or "no protocols available" in str(e):
            return "unsupported-locally"
        return "refused"
    except OSError:
        return "refused"


async def _collect(
    base_url: str,
    model: str,
    api: str,
    api_key: str | None,
    ca_file: str | None,
    verify: bool,
    timeout: float,
) -> Observation:
    t = Target.parse(base_url)
    ctx = make_ssl_context(verify, ca_file) if t.scheme == "https" else None
    path = "/chat/completions" if api == "chat" else "/completions"
    body: dict = {"model": model, "max_tokens": 4, "stream": True, "stream_options": {"include_usage": True}}
    if api == "chat":
        body["messages"] = [{"role": "user", "content": "Say hi."}]
    else:
        body["prompt"] = "Say hi."
    payload = json.dumps(body).encode()
    json_h = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "User-Agent": f"podium/{__version__}",
    }

    async def req(method: str, url_base: str, p: str, headers: dict, data: bytes = b"") -> Exchange:
        resp = await request_once(
            url_base, method, p, headers, data, timeout_s=timeout, max_body=256 * 1024, ssl_context=ctx
        )
        return Exchange.of(method, url_base + p, resp)

    wrong = "sk-podium-audit-" + secrets.token_hex(12)
    register_secret(wrong)
    no_key = await req("POST", base_url, path, json_h, payload)
    wrong_key = await req("POST", base_url, path, {**json_h, "Authorization": f"Bearer {wrong}"}, payload)
    with_key = None
    if api_key:
        with_key = await req(
            "POST", base_url, path, {**json_h, "Authorization": f"Bearer {api_key}"}, payload
        )
    root = _root_url(base_url)
    side: dict[str, Exchange] = {}
    for route in SIDE_ROUTES:
        # Try at the server root and under the API prefix; keep the most open answer.
        seen = []
        for b in dict.fromkeys([root, base_url.rstrip("/")]):
            method = "POST" if route in ("/tokenize", "/pause", "/invocations") else "GET"
            data = json.dumps({"model": model, "prompt": "hi"}).encode() if method == "POST" else b""
            seen.append(
                await req(method, b, route, {"Content-Type": "application/json"} if data else {}, data)
            )
        side[route] = next((x for x in seen if x.status and 200 <= x.status < 300), seen[0])
    cors_h = {
        "Origin": AUDIT_ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization",
    }
    cors = await req("OPTIONS", base_url, path, cors_h)
    usage: dict[str, Exchange] = {}
    auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    for route in USAGE_ROUTES:
        usage[route] = await req("GET", base_url, route, auth)
    tls = await asyncio.to_thread(_tls_observation, base_url, ca_file, timeout)
    return Observation(base_url, tls, no_key, wrong_key, wrong, with_key, side, cors, usage, api_key)


def collect_observations(
    base_url: str,
    model: str,
    api: str = "chat",
    api_key: str | None = None,
    ca_file: str | None = None,
    verify_tls: bool = True,
    timeout_s: float = 15.0,
) -> Observation:
    """Probe the endpoint (a dozen small requests, each on a fresh connection)."""
    return asyncio.run(_collect(base_url, model, api, api_key, ca_file, verify_tls, timeout_s))


# ---------------------------------------------------------------- grading (pure)
def _ev(x: Exchange, summary: str | None = None) -> Evidence:
    what = f"{x.method} {x.url} -> {x.status if x.status is not None else x.error}"
    return Evidence(summary=redact(summary or what), value=x.status)


def _result(cid: str, title: str, status: Status, severity: Severity, host: str, **kw) -> CheckResult:
    return CheckResult(
        id=cid,
        title=title,
        status=status,
        severity=severity if status != Status.PASS else Severity.NONE,
        category=CATEGORY,
        host=host,
        **kw,
    )


def grade_tls(tls: TlsObservation, host: str, now: datetime | None = None) -> list[CheckResult]:
    now = now or utcnow()
    if tls.scheme != "https":
        msg = "the endpoint is plain HTTP: keys and prompts cross the network unencrypted"
        return [
            _result(
                "endpoint.tls.version",
                "TLS in use",
                Status.FAIL,
                Severity.HIGH,
                host,
                evidence=[Evidence(summary=msg)],
                remediation="Serve the API over HTTPS (TLS 1.2 or 1.3).",
            ),
        ]
    out = []
    if tls.version is None:
        out.append(
            _result(
                "endpoint.tls.version",
                "TLS version",
                Status.UNKNOWN,
                Severity.HIGH,
                host,
                reason=tls.verify_error or "no TLS handshake",
            )
        )
    else:
        ok = tls.version in ("TLSv1.2", "TLSv1.3")
        out.append(
            _result(
                "endpoint.tls.version",
                "TLS version is 1.2 or newer",
                Status.PASS if ok else Status.FAIL,
                Severity.HIGH,
                host,
                evidence=[Evidence(summary=f"negotiated {tls.version} ({tls.cipher})", value=tls.version)],
            )
        )
    if tls.verified is None:
        out.append(
            _result(
                "endpoint.tls.certificate",
                "Certificate valid",
                Status.UNKNOWN,
                Severity.HIGH,
                host,
                reason=tls.verify_error,
            )
        )
    elif not tls.verified:
        out.append(
            _result(
                "endpoint.tls.certificate",
                "Certificate valid",
                Status.FAIL,
                Severity.HIGH,
                host,
                evidence=[Evidence(summary=f"verification failed: {tls.verify_error}")],
                remediation="Use a certificate from a trusted CA, valid for this host name and not expired.",
            )
        )
    else:
        days = (tls.not_after - now).days if tls.not_after else None
        status = Status.PASS if days is None or days >= 14 else Status.WARN
        out.append(
            _result(
                "endpoint.tls.certificate",
                "Certificate valid",
                status,
                Severity.MEDIUM,
                host,
                evidence=[
                    Evidence(
                        summary=f"verified; expires {tls.not_after:%Y-%m-%d} ({days} days)"
                        if tls.not_after
                        else "verified",
                        value=days,
                    )
                ],
            )
        )
    accepted = [v for v, s in tls.legacy.items() if s == "accepted"]
    unsupported = [v for v, s in tls.legacy.items() if s == "unsupported-locally"]
    ev = [Evidence(summary=f"{v}: {s}") for v, s in tls.legacy.items()]
    if accepted:
        out.append(
            _result(
                "endpoint.tls.legacy-refused",
                "TLS 1.0/1.1 refused",
                Status.FAIL,
                Severity.MEDIUM,
                host,
                evidence=ev,
                remediation="Disable TLS 1.0 and 1.1.",
            )
        )
    elif unsupported:
        out.append(
            _result(
                "endpoint.tls.legacy-refused",
                "TLS 1.0/1.1 refused",
                Status.UNKNOWN,
                Severity.MEDIUM,
                host,
                evidence=ev,
                reason=f"this machine's OpenSSL cannot offer {', '.join(unsupported)}",
            )
        )
    else:
        out.append(
            _result(
                "endpoint.tls.legacy-refused",
                "TLS 1.0/1.1 refused",
                Status.PASS,
                Severity.MEDIUM,
                host,
                evidence=ev,
            )
        )
    return out


def _grade_auth(cid: str, title: str, x: Exchange, host: str) -> CheckResult:
    if x.status is None:
        return _result(
            cid,
            title,
            Status.UNKNOWN,
            Severity.CRITICAL,
            host,
            reason=redact(x.error or "no response"),
            evidence=[_ev(x)],
        )
    if x.status in (401, 403):
        return _result(cid, title, Status.PASS, Severity.CRITICAL, host, evidence=[_ev(x)])
    if 200 <= x.status < 300:
        return _result(
            cid,
            title,
            Status.FAIL,
            Severity.CRITICAL,
            host,
            evidence=[
                _ev(x, f"{x.method} {x.url} answered {x.status}: the API serves requests without a valid key")
            ],
            remediation="Require an API key on every route and answer 401 without one.",
        )
    return _result(
        cid,
        title,
        Status.WARN,
        Severity.MEDIUM,
        host,
        evidence=[_ev(x)],
        reason=f"expected 401/403, got {x.status}",
    )


def _echoed(secret: str, x: Exchange) -> bool:
    hay = x.body + "\n" + "\n".join(f"{k}: {v}" for k, v in x.headers.items())
    return secret in hay or secret[-12:] in hay


def grade(obs: Observation, now: datetime | None = None) -> list[CheckResult]:
    """All endpoint-audit checks over one observation."""
    host = Target.parse(obs.base_url).host_header
    out = grade_tls(obs.tls, host, now)
    out.append(
        _grade_auth("endpoint.auth.no-key", "Request without a key is refused (401/403)", obs.no_key, host)
    )
    out.append(
        _grade_auth(
            "endpoint.auth.wrong-key", "Request with a wrong key is refused (401/403)", obs.wrong_key, host
        )
    )
    echoes = [x for x in (obs.no_key, obs.wrong_key) if _echoed(obs.wrong_key_value, x)]
    if obs.real_key and obs.with_key is not None and _echoed(obs.real_key, obs.with_key):
        echoes.append(obs.with_key)
    if obs.wrong_key.status is None:
        out.append(
            _result(
                "endpoint.auth.key-not-echoed",
                "API key never echoed in responses",
                Status.UNKNOWN,
                Severity.HIGH,
                host,
                reason="no response to the wrong-key request",
            )
        )
    else:
        out.append(
            _result(
                "endpoint.auth.key-not-echoed",
                "API key never echoed in responses",
                Status.FAIL if echoes else Status.PASS,
                Severity.HIGH,
                host,
                evidence=[
                    _ev(x, f"{x.method} {x.url} -> {x.status}: key echoed in the response") for x in echoes
                ]
                or [_ev(obs.wrong_key)],
                remediation="Never include the presented key (or its tail) in error messages or headers."
                if echoes
                else None,
            )
        )
    for route, sev in SIDE_ROUTES.items():
        x = obs.side_routes[route]
        cid = f"endpoint.side-route.{route.strip('/')}"
        title = f"{route} not open without auth"
        if x.status is None:
            out.append(
                _result(cid, title, Status.UNKNOWN, sev, host, reason=redact(x.error or "no response"))
            )
        elif 200 <= x.status < 300:
            out.append(
                _result(
                    cid,
                    title,
                    Status.FAIL,
                    sev,
                    host,
                    evidence=[_ev(x, f"{x.method} {x.url} answered {x.status} without a key")],
                    remediation=f"Remove {route} from the public listener or require auth on it.",
                )
            )
        else:
            out.append(_result(cid, title, Status.PASS, sev, host, evidence=[_ev(x)]))
    ok_resp = next(
        (x for x in (obs.with_key, obs.no_key) if x is not None and x.status and 200 <= x.status < 300), None
    )
    any_resp = next(
        (x for x in (obs.with_key, obs.wrong_key, obs.no_key) if x is not None and x.status), None
    )
    # Rate-limit headers: OpenAI style x-ratelimit-*, or IETF RateLimit / RateLimit-Policy (and draft RateLimit-Limit).
    sample = ok_resp or any_resp
    if sample is None:
        out.append(
            _result(
                "endpoint.ratelimit-headers",
                "Rate-limit headers present",
                Status.UNKNOWN,
                Severity.LOW,
                host,
                reason="no HTTP response",
            )
        )
    else:
        rl = sorted(
            k
            for k in sample.headers
            if k.startswith("x-ratelimit-")
            or k in ("ratelimit", "ratelimit-policy", "ratelimit-limit", "ratelimit-remaining")
        )
        status = Status.PASS if rl else (Status.WARN if ok_resp else Status.UNKNOWN)
        out.append(
            _result(
                "endpoint.ratelimit-headers",
                "Rate-limit headers present",
                status,
                Severity.LOW,
                host,
                evidence=[
                    Evidence(
                        summary=f"{sample.method} {sample.url}: {', '.join(rl) or 'no rate-limit headers'}"
                    )
                ],
                reason=None if rl or ok_resp else "no successful response to inspect (give --api-key-env)",
            )
        )
    acao = obs.cors.headers.get("access-control-allow-origin")
    acac = obs.cors.headers.get("access-control-allow-credentials", "").lower() == "true"
    if obs.cors.status is None:
        out.append(
            _result(
                "endpoint.cors",
                "CORS not wildcard with credentials",
                Status.UNKNOWN,
                Severity.MEDIUM,
                host,
                reason=redact(obs.cors.error or ""),
            )
        )
    else:
        bad = acac and acao in ("*", AUDIT_ORIGIN)
        out.append(
            _result(
                "endpoint.cors",
                "CORS not wildcard with credentials",
                Status.FAIL if bad else Status.PASS,
                Severity.MEDIUM,
                host,
                evidence=[
                    Evidence(
                        summary=f"preflight from {AUDIT_ORIGIN}: allow-origin={acao!r} allow-credentials={acac}"
                    )
                ],
                remediation="Do not combine a wildcard or reflected origin with Access-Control-Allow-Credentials: true."
                if bad
                else None,
            )
        )
    ids = ("x-request-id", "request-id", "x-amzn-requestid", "openai-request-id", "x-trace-id", "cf-ray")
    if sample is None:
        out.append(
            _result(
                "endpoint.request-id",
                "Request ids returned",
                Status.UNKNOWN,
                Severity.LOW,
                host,
                reason="no HTTP response",
            )
        )
    else:
        found = [k for k in ids if k in sample.headers]
        out.append(
            _result(
                "endpoint.request-id",
                "Request ids returned",
                Status.PASS if found else Status.WARN,
                Severity.LOW,
                host,
                evidence=[
                    Evidence(
                        summary=f"{sample.method} {sample.url}: {', '.join(found) or 'no request-id header'}"
                    )
                ],
            )
        )
    if ok_resp is None:
        out.append(
            _result(
                "endpoint.usage.in-response",
                "Token usage reported in responses",
                Status.UNKNOWN,
                Severity.LOW,
                host,
                reason="no successful completion to inspect",
            )
        )
    else:
        out.append(
            _result(
                "endpoint.usage.in-response",
                "Token usage reported in responses",
                Status.PASS if ok_resp.usage_in_stream else Status.WARN,
                Severity.LOW,
                host,
                evidence=[
                    Evidence(
                        summary="usage in the streamed response"
                        if ok_resp.usage_in_stream
                        else "no usage object in the stream (stream_options.include_usage asked)"
                    )
                ],
            )
        )
    present = {
        r: x
        for r, x in obs.usage_routes.items()
        if x.status is not None and x.status != 404 and x.status < 500
    }
    if present:
        out.append(
            _result(
                "endpoint.usage.endpoint",
                "Usage endpoint present",
                Status.PASS,
                Severity.LOW,
                host,
                evidence=[_ev(x) for x in present.values()],
            )
        )
    else:
        out.append(
            _result(
                "endpoint.usage.endpoint",
                "Usage endpoint present",
                Status.UNKNOWN,
                Severity.LOW,
                host,
                evidence=[_ev(x) for x in obs.usage_routes.values()],
                reason="no known usage route answered; not every API has one",
            )
        )
    return out


def run_endpoint_audit(
    base_url: str,
    model: str,
    api: str = "chat",
    api_key_env: str | None = None,
    ca_file: str | None = None,
    verify_tls: bool = True,
    timeout_s: float = 15.0,
) -> EndpointAuditReport:
    """Probe and grade; the report's results use the shared CheckResult model."""
    import socket as _socket

    from podium.endpoint.api import read_api_key

    key = read_api_key(api_key_env)
    started = utcnow()
    obs = collect_observations(base_url, model, api, key, ca_file, verify_tls, timeout_s)
    results = grade(obs)
    return EndpointAuditReport(
        base_url=base_url,
        model=model,
        collected_at=started,
        results=results,
        summary=ResultSummary.of(results),
        provenance=Provenance(
            command=f"podium endpoint audit --base-url {base_url} --model {model}",
            host=_socket.gethostname(),
            collected_at=started,
            tool_version=f"podium {__version__}",
        ),
    )
