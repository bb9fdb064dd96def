"""Exposure helpers: target expansion and cap, default gateway, graders, IPMI messages, rate limit."""

from __future__ import annotations

import time

import pytest
from tests.conftest import FIXTURES

from podium.checks import exposure, probes
from podium.checks.model import CheckContext
from podium.errors import InputError, ParseError
from podium.models.common import Severity, Status
from podium.runner import ReplayRunner


def test_expand_targets():
    assert exposure.expand_targets(["10.0.0.5", "10.0.0.0/30,10.0.0.5", " 192.168.1.1 "]) == [
        "10.0.0.5",
        "10.0.0.1",
        "10.0.0.2",
        "192.168.1.1",
    ]
    assert exposure.expand_targets(["10.1.0.0/31"]) == ["10.1.0.0", "10.1.0.1"]
    assert len(exposure.expand_targets(["10.2.0.0/24"])) == 254
    assert exposure.expand_targets([]) == []


@pytest.mark.parametrize("spec", ["10.0.0.0/23", "10.0.0.0/8", "not-an-ip", "10.0.0.300", "host.example.com"])
def test_expand_targets_rejects(spec):
    with pytest.raises(InputError) as e:
        exposure.expand_targets([spec])
    assert str(e.value).startswith("--targets: ")


def test_expand_targets_cap_over_several_specs():
    with pytest.raises(InputError, match="more than 256"):
        exposure.expand_targets(["10.0.0.0/24", "10.0.1.0/25", "10.0.2.0/25"])


# /proc/net/route of a typical VM: default via 10.0.2.2 on eth0 (gateway little-endian hex)
ROUTE = (
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t0202000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
    "eth0\t0002000A\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
)


def test_default_gateway():
    assert exposure.parse_default_gateway(ROUTE) == "10.0.2.2"
    assert exposure.parse_default_gateway(ROUTE.splitlines(True)[0] + ROUTE.splitlines(True)[2]) is None
    with pytest.raises(ParseError):
        exposure.parse_default_gateway("")
    with pytest.raises(ParseError):
        exposure.parse_default_gateway(ROUTE[:90])
    with pytest.raises(ParseError):
        exposure.parse_default_gateway("garbage\n")


def test_default_gateway_is_added_to_targets(tmp_path):
    (tmp_path / "proc/net").mkdir(parents=True)
    (tmp_path / "proc/net/route").write_text(ROUTE)
    from podium.runner import LocalRunner

    ctx = CheckContext(runner=LocalRunner(), targets=["10.9.9.9"], root=str(tmp_path))
    assert exposure.probe_targets(ctx) == ["10.9.9.9", "10.0.2.2"]
    ctx.include_default_targets = False
    assert exposure.probe_targets(ctx) == ["10.9.9.9"]


def _out(**kw) -> probes.ProbeOutcome:
    base = {
        "target": "10.0.0.5",
        "port": 10250,
        "proto": "https",
        "request": "GET https://10.0.0.5:10250/pods",
        "state": "answered",
    }
    return probes.ProbeOutcome(**(base | kw))


def test_grade_kubelet():
    assert exposure.grade_kubelet_pods(_out(state="refused")).status == Status.PASS
    assert exposure.grade_kubelet_pods(_out(http_status=401, body="Unauthorized")).status == Status.PASS
    v = exposure.grade_kubelet_pods(_out(http_status=200, body='{"kind":"PodList","items":[{},{},{}]}'))
    assert (v.status, v.severity) == (Status.FAIL, Severity.CRITICAL) and "3 pods" in v.summary
    anon = exposure.grade_kubelet_pods(
        _out(
            http_status=403,
            body="Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource=proxy)",
        )
    )
    assert (anon.status, anon.severity) == (Status.WARN, Severity.LOW)
    odd = exposure.grade_kubelet_pods(_out(http_status=200, body="<html>"))
    assert (odd.status, odd.severity) == (Status.WARN, Severity.LOW)


def test_grade_metadata_and_etcd():
    md = dict(
        target="169.254.169.254",
        port=80,
        proto="http",
        request="GET http://169.254.169.254:80/latest/meta-data/",
    )
    assert exposure.grade_metadata(_out(**md, http_status=200, body="ami-id")).status == Status.FAIL
    assert exposure.grade_metadata(_out(**md, http_status=401)).status == Status.PASS
    # Azure IMDS answers 400 without the 'Metadata: true' header: not IMDSv1-style exposure
    assert exposure.grade_metadata(_out(**md, http_status=400)).status == Status.PASS
    assert exposure.grade_metadata(_out(**md, state="timeout")).status == Status.PASS
    e = dict(port=2379, proto="https", request="GET https://10.0.0.5:2379/version")
    assert exposure.grade_etcd(_out(**e, state="tls-error")).status == Status.PASS


# Get Channel Authentication Capabilities response of a BMC (IPMI v2.0 spec 22.13), as bytes on the wire
AUTH_CAPS_ANON = bytes.fromhex("0600ff07 00 00000000 00000000 10 811c63 20 00 38 00 01 97 07 02 000000 00 00")


def test_ipmi_messages():
    assert probes.IPMI_GET_CHANNEL_AUTH_CAPS[-1] == (-sum(probes.IPMI_GET_CHANNEL_AUTH_CAPS[17:22])) & 0xFF
    caps = probes.parse_channel_auth_caps(AUTH_CAPS_ANON)
    assert caps.model_dump() == {
        "presence_pong": False,
        "ipmi_v2": True,
        "anonymous_login": True,
        "null_usernames": True,
        "non_null_usernames": True,
        "auth_types": ["none", "md2", "md5", "password"],
    }
    v = exposure.grade_ipmi(_out(target="10.0.0.9", port=623, proto="udp", request="UDP"), caps)
    assert (v.status, v.severity) == (Status.FAIL, Severity.CRITICAL)
    assert probes.parse_channel_auth_caps(b"") is None
    assert probes.parse_channel_auth_caps(AUTH_CAPS_ANON[:20]) is None
    assert probes.parse_channel_auth_caps(b"\x00" * 40) is None
    assert not probes.parse_presence_pong(probes.RMCP_PRESENCE_PING)


def test_rate_limiter_paces_starts():
    lim = probes.RateLimiter(20.0)
    t0 = time.monotonic()
    for _ in range(11):
        lim.wait()
    assert time.monotonic() - t0 >= 0.49  # 10 intervals of 50 ms
    assert lim.started == 11


def test_probe_to_closed_loopback_port_is_refused():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    out = probes.tcp_connect("127.0.0.1", port, 1.0)
    assert out.state == "refused" and not out.reachable
    h = probes.http_get("127.0.0.1", port, "/", tls=True, timeout=1.0)
    assert h.state == "refused" and h.request == f"GET https://127.0.0.1:{port}/"


def test_showmount_parser_on_real_outputs():
    world = exposure.parse_showmount((FIXTURES / "nfs/showmount_world.txt").read_text())
    assert [(e.path, e.clients) for e in world] == [("/var/nfsshare", ["*"])]
    subnet = exposure.parse_showmount((FIXTURES / "nfs/showmount_subnet.txt").read_text())
    assert [(e.path, e.clients) for e in subnet] == [("/data/nfs/local", ["192.168.200.0/24"])]
    for bad in ("", "clnt_create: RPC: Program not registered\n", "Export list for x:\nnot-a-path *\n"):
        with pytest.raises(ParseError):
            exposure.parse_showmount(bad)


def test_nfs_check_with_real_showmount_output_and_exports_file(tmp_path):
    exports = "# shared scratch\n/scratch 10.0.0.0/8(rw,sync,no_root_squash)\n/home *(ro)\n"
    runner = ReplayRunner(
        {"showmount -e 192.168.28.18": (FIXTURES / "nfs/showmount_world.txt").read_text()},
        files={str(tmp_path / "etc/exports"): exports},
    )
    ctx = CheckContext(
        runner=runner, targets=["192.168.28.18"], root=str(tmp_path), include_default_targets=False, host="n"
    )
    results = exposure.check_nfs(ctx)
    assert [(r.status, r.severity, r.subject) for r in results] == [
        (Status.FAIL, Severity.HIGH, "n:/scratch"),
        (Status.WARN, Severity.MEDIUM, "192.168.28.18: /var/nfsshare"),
    ]
    ctx2 = CheckContext(
        runner=ReplayRunner({}),
        targets=["192.168.28.18"],
        root=str(tmp_path / "x"),
        include_default_targets=False,
        host="n",
    )
    [u] = exposure.check_nfs(ctx2)
    assert u.status == Status.UNKNOWN and "showmount not found" in u.reason


def test_no_targets_is_skipped(tmp_path):
    ctx = CheckContext(runner=ReplayRunner({}), root=str(tmp_path), host="n")
    [r] = exposure.check_kubelet(ctx)
    assert r.status == Status.SKIPPED and "no targets" in r.reason
