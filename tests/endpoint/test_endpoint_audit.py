"""podium endpoint audit against loopback servers: a well-run TLS endpoint and a badly run one."""

from __future__ import annotations

import ssl
import warnings
from datetime import datetime, timedelta, timezone

import pytest

from podium.endpoint.audit import TlsObservation, grade_tls, run_endpoint_audit
from podium.endpoint.testservers.hostile import HostileServer, ServerOptions, self_signed_context
from podium.models.common import Status

KEY = "sk-podium-test-good-0123456789"


def _statuses(report) -> dict[str, str]:
    return {r.id: r.status.value for r in report.results}


@pytest.fixture
def tls(tmp_path):
    pytest.importorskip("cryptography", reason="the TLS tests generate a certificate with 'cryptography'")
    return self_signed_context(tmp_path)


def test_well_run_tls_endpoint_passes(tls, monkeypatch):
    ctx, cert = tls
    monkeypatch.setenv("PODIUM_TEST_KEY", KEY)
    opts = ServerOptions(api_key=KEY, ssl_context=ctx, ratelimit_headers=True, usage_route=True)
    with HostileServer(opts) as s:
        report = run_endpoint_audit(s.base_url, "ok", api_key_env="PODIUM_TEST_KEY", ca_file=cert)
    assert _statuses(report) == {
        "endpoint.tls.version": "pass",
        "endpoint.tls.certificate": "pass",
        "endpoint.tls.legacy-refused": "pass",
        "endpoint.auth.no-key": "pass",
        "endpoint.auth.wrong-key": "pass",
        "endpoint.auth.key-not-echoed": "pass",
        "endpoint.side-route.metrics": "pass",
        "endpoint.side-route.tokenize": "pass",
        "endpoint.side-route.pause": "pass",
        "endpoint.side-route.invocations": "pass",
        "endpoint.side-route.docs": "pass",
        "endpoint.ratelimit-headers": "pass",
        "endpoint.cors": "pass",
        "endpoint.request-id": "pass",
        "endpoint.usage.in-response": "pass",
        "endpoint.usage.endpoint": "pass",
    }
    version = next(r for r in report.results if r.id == "endpoint.tls.version")
    assert version.evidence[0].value in ("TLSv1.2", "TLSv1.3")
    assert KEY not in report.model_dump_json()


def test_untrusted_certificate_fails(tls, monkeypatch):
    ctx, _cert = tls
    with HostileServer(ServerOptions(ssl_context=ctx)) as s:
        report = run_endpoint_audit(s.base_url, "ok")  # no --ca-file: the self-signed cert is not trusted
    res = {r.id: r for r in report.results}
    assert res["endpoint.tls.certificate"].status == Status.FAIL
    assert "self-signed" in res["endpoint.tls.certificate"].evidence[0].summary
    # Requests could not be made over an untrusted TLS connection: unknown, never pass.
    assert res["endpoint.auth.no-key"].status == Status.UNKNOWN
    assert "tls_error" in res["endpoint.auth.no-key"].reason


def test_expired_certificate_fails(tmp_path):
    pytest.importorskip("cryptography")
    ctx, cert = self_signed_context(tmp_path, expired=True)
    with HostileServer(ServerOptions(ssl_context=ctx)) as s:
        report = run_endpoint_audit(s.base_url, "ok", ca_file=cert)
    res = {r.id: r for r in report.results}
    assert res["endpoint.tls.certificate"].status == Status.FAIL
    assert "expired" in res["endpoint.tls.certificate"].evidence[0].summary


def test_legacy_tls_accepted_fails(tmp_path):
    pytest.importorskip("cryptography")
    ctx, cert = self_signed_context(tmp_path)
    with warnings.catch_warnings():  # TLS 1.0 is deprecated: that is the point of this server
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version = ssl.TLSVersion.TLSv1
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    with HostileServer(ServerOptions(ssl_context=ctx)) as s:
        report = run_endpoint_audit(s.base_url, "ok", ca_file=cert)
    res = {r.id: r for r in report.results}["endpoint.tls.legacy-refused"]
    # Debian's OpenSSL 3 can still speak TLS 1.0 at security level 0, so the probe can tell.
    assert res.status == Status.FAIL
    assert [e.summary for e in res.evidence] == ["TLSv1: accepted", "TLSv1.1: accepted"]


def test_badly_run_endpoint_fails_each_check():
    opts = ServerOptions(
        api_key=None,
        open_side_routes=("/metrics", "/docs", "/pause"),
        cors_wildcard_with_credentials=True,
        request_id_header=False,
    )
    with HostileServer(opts) as s:
        report = run_endpoint_audit(s.base_url, "ok")
    st = _statuses(report)
    assert st["endpoint.tls.version"] == "fail"  # plain HTTP
    assert st["endpoint.auth.no-key"] == "fail"
    assert st["endpoint.auth.wrong-key"] == "fail"
    assert st["endpoint.side-route.metrics"] == "fail"
    assert st["endpoint.side-route.docs"] == "fail"
    assert st["endpoint.side-route.pause"] == "fail"
    assert st["endpoint.side-route.tokenize"] == "pass"  # 404 there
    assert st["endpoint.cors"] == "fail"
    assert st["endpoint.request-id"] == "warn"
    assert st["endpoint.ratelimit-headers"] == "warn"
    assert st["endpoint.usage.endpoint"] == "unknown"
    assert report.summary.fail == 7


def test_key_echoed_in_errors_fails(monkeypatch):
    with HostileServer(ServerOptions(api_key=KEY, echo_key_in_errors=True, ietf_ratelimit_headers=True)) as s:
        report = run_endpoint_audit(s.base_url, "ok")
    res = {r.id: r for r in report.results}
    assert res["endpoint.auth.key-not-echoed"].status == Status.FAIL
    assert res["endpoint.auth.wrong-key"].status == Status.PASS
    # IETF RateLimit headers count; seen on the 401 answer even without a key.
    assert res["endpoint.ratelimit-headers"].status == Status.PASS
    # The wrong key podium made up is redacted in everything podium writes.
    assert "sk-podium-audit-" not in report.model_dump_json()


def test_certificate_expiring_soon_warns():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    obs = TlsObservation(
        scheme="https",
        version="TLSv1.3",
        cipher="X",
        verified=True,
        not_after=now + timedelta(days=5),
        legacy={"TLSv1": "refused", "TLSv1.1": "refused"},
    )
    res = {r.id: r for r in grade_tls(obs, "h", now)}
    assert res["endpoint.tls.certificate"].status == Status.WARN
    assert res["endpoint.tls.certificate"].evidence[0].value == 5
    obs.legacy = {"TLSv1": "unsupported-locally", "TLSv1.1": "refused"}
    res = {r.id: r for r in grade_tls(obs, "h", now)}
    assert res["endpoint.tls.legacy-refused"].status == Status.UNKNOWN
