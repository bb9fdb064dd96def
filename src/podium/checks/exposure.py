"""Network exposure seen from a tenant node: control planes, metadata, BMCs, NFS, Slurm daemons.

Targets are only what the user declares (``--targets``: addresses or CIDRs, at most
``MAX_TARGETS`` addresses) plus, by default, this node's default gateway; the metadata check
also asks the well-known link-local address 169.254.169.254. Probes live in
:mod:`podium.checks.probes`; this module picks targets, runs probes under the rate limit and
grades what came back with pure functions.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import struct
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

from podium.checks import probes
from podium.checks.evidence import from_command, from_probe, result
from podium.checks.model import CheckContext
from podium.checks.probes import ProbeOutcome, RateLimiter
from podium.errors import InputError, ParseError
from podium.models.common import Evidence, Severity, Status
from podium.models.results import CheckResult

CATEGORY = "exposure"
MAX_TARGETS = 256
METADATA_ADDRESS = "169.254.169.254"
SLURM_DEFAULT_PORTS = {6817: "slurmctld", 6819: "slurmdbd"}


# ---------------------------------------------------------------- targets (pure)


def expand_targets(specs: list[str], cap: int = MAX_TARGETS) -> list[str]:
    """Expand '10.0.0.5', '10.0.0.0/28', 'a,b' into addresses; more than ``cap`` is an InputError."""
    addresses: list[str] = []
    seen: set[str] = set()
    for spec in specs:
        for item in (s.strip() for s in spec.split(",")):
            if not item:
                continue
            try:
                if "/" in item:
                    net = ipaddress.ip_network(item, strict=False)
                    if net.num_addresses > cap:
                        raise InputError(
                            "--targets", f"{item} has {net.num_addresses} addresses; the cap is {cap}"
                        )
                    hosts = list(net.hosts()) if net.num_addresses > 2 else list(net)
                    new = [str(h) for h in hosts]
                else:
                    new = [str(ipaddress.ip_address(item))]
            except ValueError:
                raise InputError("--targets", f"'{item}' is not an IP address or CIDR") from None
            for a in new:
                if a not in seen:
                    seen.add(a)
                    addresses.append(a)
            if len(addresses) > cap:
                raise InputError("--targets", f"expands to more than {cap} addresses")
    return addresses


def parse_default_gateway(route_text: str, source: str = "/proc/net/route") -> str | None:
    """The IPv4 default gateway from /proc/net/route (None when there is no default route)."""
    lines = route_text.strip().splitlines()
    if not lines or not lines[0].split() or lines[0].split()[0] != "Iface":
        raise ParseError(source, "missing 'Iface Destination Gateway ...' header")
    for line in lines[1:]:
        cols = line.split()
        if len(cols) < 4:
            raise ParseError(source, f"short line: {line[:60]!r}")
        try:
            dest, gw, flags = int(cols[1], 16), int(cols[2], 16), int(cols[3], 16)
        except ValueError:
            raise ParseError(source, f"bad hex in line: {line[:60]!r}") from None
        if dest == 0 and flags & 0x2 and gw:
            return socket.inet_ntoa(struct.pack("<I", gw))
    return None


def probe_targets(ctx: CheckContext) -> list[str]:
    """User targets plus, by default, the default gateway (metadata is added per check)."""
    targets = list(ctx.targets)
    if ctx.include_default_targets:
        text = ctx.runner.read_file(ctx.path("/proc/net/route"))
        try:
            gw = parse_default_gateway(text) if text else None
        except ParseError:
            gw = None
        if gw and gw not in targets:
            targets.append(gw)
    return targets


def _limiter(ctx: CheckContext) -> RateLimiter:
    if ctx.limiter is None:
        ctx.limiter = RateLimiter(ctx.probe_rate_per_s)
    return ctx.limiter


def run_probes(ctx: CheckContext, jobs: list[Callable[[], object]]) -> list:
    """Run probe callables with at most ``probe_workers`` in flight and ``probe_rate_per_s`` starts/s."""
    lim = _limiter(ctx)

    def paced(job):
        lim.wait()
        return job()

    if not jobs:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(ctx.probe_workers, len(jobs)))) as pool:
        return list(pool.map(paced, jobs))


# ---------------------------------------------------------------- graders (pure)


class Verdict(BaseModel):
    status: Status
    severity: Severity = Severity.NONE
    summary: str


def _json(body: str) -> dict | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def grade_kubelet_pods(out: ProbeOutcome) -> Verdict:
    """Kubelet GET /pods: a pod list without credentials is a fail."""
    if out.state != "answered":
        return Verdict(status=Status.PASS, summary=f"{out.request}: {out.state}")
    data = _json(out.body)
    if out.http_status == 200 and data is not None and data.get("kind") == "PodList":
        n = len(data.get("items") or [])
        sev = Severity.CRITICAL if out.port == 10250 else Severity.HIGH
        return Verdict(
            status=Status.FAIL, severity=sev, summary=f"{out.request}: 200, anonymous PodList with {n} pods"
        )
    if out.http_status == 403 and "system:anonymous" in out.body:
        # authenticated as system:anonymous, then denied by authorization: anonymous-auth is still on
        return Verdict(
            status=Status.WARN,
            severity=Severity.LOW,
            summary=f"{out.request}: 403 for system:anonymous (anonymous authentication on, authorization denies)",
        )
    if out.http_status in (401, 403):
        return Verdict(
            status=Status.PASS, summary=f"{out.request}: {out.http_status} (authentication required)"
        )
    return Verdict(
        status=Status.WARN,
        severity=Severity.LOW,
        summary=f"{out.request}: answered {out.http_status} (kubelet port reachable from this node)",
    )


def grade_apiserver(version: ProbeOutcome, api: ProbeOutcome) -> Verdict:
    """Kubernetes API: anonymous /api is a fail, anonymous /version alone discloses the version."""
    if version.state != "answered" and api.state != "answered":
        return Verdict(status=Status.PASS, summary=f"{version.request}: {version.state}")
    v = _json(version.body) if version.http_status == 200 else None
    a = _json(api.body) if api.http_status == 200 else None
    if a is not None and a.get("kind") == "APIVersions":
        return Verdict(
            status=Status.FAIL,
            severity=Severity.HIGH,
            summary=f"{api.request}: 200 APIVersions without credentials (anonymous access enabled)",
        )
    if v is not None and "gitVersion" in v:
        return Verdict(
            status=Status.WARN,
            severity=Severity.LOW,
            summary=f"{version.request}: 200 gitVersion {v.get('gitVersion')} without credentials",
        )
    return Verdict(
        status=Status.PASS,
        summary=f"{version.request}: {version.http_status}; {api.request}: {api.http_status} (credentials required)",
    )


def grade_etcd(out: ProbeOutcome) -> Verdict:
    """etcd GET /version answered without a client certificate is a fail."""
    if out.state == "tls-error" and out.proto == "https":
        return Verdict(status=Status.PASS, summary=f"{out.request}: TLS refused without a client certificate")
    if out.state != "answered":
        return Verdict(status=Status.PASS, summary=f"{out.request}: {out.state}")
    data = _json(out.body)
    if out.http_status == 200 and data is not None and "etcdserver" in data:
        return Verdict(
            status=Status.FAIL,
            severity=Severity.CRITICAL,
            summary=f"{out.request}: 200 etcdserver {data.get('etcdserver')} without a client certificate",
        )
    return Verdict(
        status=Status.WARN,
        severity=Severity.LOW,
        summary=f"{out.request}: answered {out.http_status} on the etcd port",
    )


def grade_metadata(out: ProbeOutcome) -> Verdict:
    """Instance metadata answering a token-less GET means IMDSv1 (SSRF can read credentials)."""
    if out.state != "answered":
        return Verdict(status=Status.PASS, summary=f"{out.request}: {out.state} (no metadata service)")
    if out.http_status == 200:
        return Verdict(
            status=Status.FAIL,
            severity=Severity.MEDIUM,
            summary=f"{out.request}: 200 without a session token (IMDSv1 enabled)",
        )
    if out.http_status == 401:
        return Verdict(
            status=Status.PASS, summary=f"{out.request}: 401 (session token required, IMDSv2 only)"
        )
    return Verdict(
        status=Status.PASS,
        summary=f"{out.request}: {out.http_status} (token-less GET refused; the service requires a header or token)",
    )


def grade_redfish(out: ProbeOutcome) -> Verdict:
    """A Redfish service root reachable from a tenant node means the BMC network is not isolated."""
    if out.state != "answered":
        return Verdict(status=Status.PASS, summary=f"{out.request}: {out.state}")
    data = _json(out.body)
    if data is not None and ("RedfishVersion" in data or "@odata.id" in data):
        return Verdict(
            status=Status.FAIL,
            severity=Severity.HIGH,
            summary=f"{out.request}: {out.http_status} Redfish service root (RedfishVersion {data.get('RedfishVersion')})",
        )
    return Verdict(status=Status.PASS, summary=f"{out.request}: {out.http_status} (not a Redfish service)")


def grade_ipmi(out: ProbeOutcome, answer: probes.IpmiAnswer) -> Verdict:
    """Any RMCP/IPMI answer from a tenant node is a fail; anonymous login makes it critical."""
    if out.state != "answered" or not (answer.presence_pong or answer.ipmi_v2 is not None):
        return Verdict(status=Status.PASS, summary=f"{out.request}: {out.state}")
    if answer.anonymous_login or answer.null_usernames:
        return Verdict(
            status=Status.FAIL,
            severity=Severity.CRITICAL,
            summary=f"UDP {out.target}:623: BMC answers; anonymous/null-user login enabled (auth {answer.auth_types})",
        )
    return Verdict(
        status=Status.FAIL,
        severity=Severity.HIGH,
        summary=f"UDP {out.target}:623: BMC answers IPMI (v2.0: {answer.ipmi_v2}, auth {answer.auth_types})",
    )


class NfsExport(BaseModel):
    path: str
    clients: list[str]


def parse_showmount(text: str, source: str = "showmount -e") -> list[NfsExport]:
    """Parse ``showmount -e HOST``: 'Export list for HOST:' then 'PATH CLIENT[,CLIENT...]' lines."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not lines[0].startswith("Export list for "):
        raise ParseError(source, "missing 'Export list for HOST:' header")
    exports = []
    for line in lines[1:]:
        parts = line.split(None, 1)
        if not parts[0].startswith("/"):
            raise ParseError(source, f"export path does not start with '/': {line[:60]!r}")
        clients = parts[1].replace(",", " ").split() if len(parts) > 1 else []
        exports.append(NfsExport(path=parts[0], clients=clients))
    return exports


def parse_exports_file(text: str) -> dict[str, list[str]]:
    """/etc/exports: {path: [client(options), ...]} (comments and continuations handled)."""
    text = re.sub(r"\\\n", " ", text)
    entries: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith('"'):
            path, _, rest = line[1:].partition('"')
        else:
            path, _, rest = line.partition(" ")
        entries[path] = rest.split()
    return entries


# ---------------------------------------------------------------- checks


def _per_target(
    ctx: CheckContext,
    spec_id: str,
    title: str,
    verdicts: list[tuple[str, Verdict, list[Evidence]]],
    remediation: str,
    references: list[str],
) -> list[CheckResult]:
    """One result per exposed target; a single pass result when nothing was exposed."""
    if not verdicts:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason="no targets: pass --targets (addresses or CIDR) and/or keep the default gateway",
            )
        ]
    bad = [(t, v, ev) for t, v, ev in verdicts if v.status != Status.PASS]
    if not bad:
        ev = [e for _, _, evs in verdicts for e in evs][:32]
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                evidence=ev,
                details={"targets": [t for t, _, _ in verdicts]},
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            v.status,
            v.severity,
            host=ctx.host,
            subject=t,
            evidence=ev,
            remediation=remediation,
            references=references,
        )
        for t, v, ev in bad
    ]


def _ev(ctx: CheckContext, out: ProbeOutcome, summary: str) -> Evidence:
    return from_probe(
        out.request, ctx.host, summary, value=out.http_status if out.http_status is not None else out.state
    )


def check_kubelet(ctx: CheckContext) -> list[CheckResult]:
    """Anonymous kubelet API (10250 HTTPS /pods) and read-only port (10255 HTTP /pods)."""
    spec_id, title = "exposure.kubelet", "Kubelet anonymous access (10250 /pods, read-only 10255)"
    targets = probe_targets(ctx)
    jobs = []
    for t in targets:
        jobs.append(lambda t=t: probes.http_get(t, 10250, "/pods", tls=True, timeout=ctx.timeout_s))
        jobs.append(lambda t=t: probes.http_get(t, 10255, "/pods", tls=False, timeout=ctx.timeout_s))
    outs = run_probes(ctx, jobs)
    verdicts = []
    for out in outs:
        v = grade_kubelet_pods(out)
        verdicts.append((f"{out.target}:{out.port}", v, [_ev(ctx, out, v.summary)]))
    return _per_target(
        ctx,
        spec_id,
        title,
        verdicts,
        "Set kubelet --anonymous-auth=false, --authorization-mode=Webhook and --read-only-port=0; "
        "firewall 10250/10255 from tenant networks.",
        ["https://kubernetes.io/docs/reference/access-authn-authz/kubelet-authn-authz/"],
    )


def check_apiserver(ctx: CheckContext) -> list[CheckResult]:
    """Kubernetes API server anonymous access (6443: GET /version, GET /api)."""
    spec_id, title = "exposure.k8s-api", "Kubernetes API anonymous access (/version, /api)"
    targets = probe_targets(ctx)
    jobs = []
    for t in targets:
        jobs.append(lambda t=t: probes.http_get(t, 6443, "/version", tls=True, timeout=ctx.timeout_s))
        jobs.append(lambda t=t: probes.http_get(t, 6443, "/api", tls=True, timeout=ctx.timeout_s))
    outs = run_probes(ctx, jobs)
    verdicts = []
    for i in range(0, len(outs), 2):
        version, api = outs[i], outs[i + 1]
        v = grade_apiserver(version, api)
        ev = [_ev(ctx, version, v.summary), _ev(ctx, api, f"{api.request}: {api.http_status or api.state}")]
        verdicts.append((f"{version.target}:6443", v, ev))
    return _per_target(
        ctx,
        spec_id,
        title,
        verdicts,
        "Run kube-apiserver with --anonymous-auth=false (or restrict anonymous to health endpoints) and do not "
        "expose the API server to tenant networks that are not its cluster's.",
        ["https://kubernetes.io/docs/reference/access-authn-authz/authentication/#anonymous-requests"],
    )


def check_etcd(ctx: CheckContext) -> list[CheckResult]:
    """etcd client port 2379 answering GET /version without a client certificate."""
    spec_id, title = "exposure.etcd", "etcd reachable without client certificate (2379)"
    targets = probe_targets(ctx)
    outs = run_probes(
        ctx,
        [lambda t=t: probes.http_get(t, 2379, "/version", tls=False, timeout=ctx.timeout_s) for t in targets],
    )
    # a TLS-only etcd closes a plain-HTTP request: ask again over TLS without a client certificate
    retry = [
        i
        for i, o in enumerate(outs)
        if o.state in ("protocol-error",) or (o.state == "answered" and o.http_status == 400)
    ]
    if retry:
        again = run_probes(
            ctx,
            [
                lambda t=outs[i].target: probes.http_get(t, 2379, "/version", tls=True, timeout=ctx.timeout_s)
                for i in retry
            ],
        )
        for i, o in zip(retry, again, strict=True):
            outs[i] = o
    verdicts = []
    for out in outs:
        v = grade_etcd(out)
        verdicts.append((f"{out.target}:2379", v, [_ev(ctx, out, v.summary)]))
    return _per_target(
        ctx,
        spec_id,
        title,
        verdicts,
        "Require client certificates on etcd (--client-cert-auth=true, --trusted-ca-file) and never expose 2379 "
        "to tenant networks.",
        ["https://etcd.io/docs/v3.5/op-guide/security/"],
    )


def check_metadata(ctx: CheckContext) -> list[CheckResult]:
    """Cloud instance metadata (169.254.169.254) answering without a session token (IMDSv1)."""
    spec_id, title = "exposure.metadata-imdsv1", "Instance metadata answers without a token (IMDSv1)"
    if not ctx.include_default_targets and METADATA_ADDRESS not in ctx.targets:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason=f"default targets disabled and {METADATA_ADDRESS} not among --targets",
            )
        ]
    out = run_probes(
        ctx,
        [
            lambda: probes.http_get(
                METADATA_ADDRESS, 80, "/latest/meta-data/", tls=False, timeout=ctx.timeout_s
            )
        ],
    )[0]
    v = grade_metadata(out)
    ev = [_ev(ctx, out, v.summary)]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            v.status,
            v.severity,
            host=ctx.host,
            subject=METADATA_ADDRESS,
            evidence=ev,
            remediation=None
            if v.status == Status.PASS
            else "Require session tokens (IMDSv2: HttpTokens=required, hop limit 1) so that SSRF in a workload "
            "cannot read instance credentials.",
            references=[
                "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-service.html"
            ],
            details={"http_status": out.http_status, "state": out.state},
        )
    ]


def check_bmc_ipmi(ctx: CheckContext) -> list[CheckResult]:
    """BMC answering IPMI/RMCP on UDP 623 (presence ping + Get Channel Auth Capabilities)."""
    spec_id, title = "exposure.bmc-ipmi", "BMC reachable over IPMI (UDP 623)"
    targets = probe_targets(ctx)
    outs = run_probes(ctx, [lambda t=t: probes.ipmi_discover(t, ctx.timeout_s) for t in targets])
    verdicts = []
    for out, answer in outs:
        v = grade_ipmi(out, answer)
        ev = [from_probe(out.request, ctx.host, v.summary, value=out.state)]
        verdicts.append((f"{out.target}:623/udp", v, ev))
    return _per_target(
        ctx,
        spec_id,
        title,
        verdicts,
        "Put BMCs on a management network that tenant nodes cannot route to; disable IPMI-over-LAN or at least "
        "anonymous and null-user logins and cipher 0.",
        [
            "https://www.dmtf.org/standards/asf",
            "IPMI v2.0 specification, 22.13 Get Channel Authentication Capabilities",
        ],
    )


def check_bmc_redfish(ctx: CheckContext) -> list[CheckResult]:
    """BMC Redfish service root (HTTPS 443 GET /redfish/v1/, no credentials)."""
    spec_id, title = "exposure.bmc-redfish", "BMC reachable over Redfish (HTTPS /redfish/v1/)"
    targets = probe_targets(ctx)
    outs = run_probes(
        ctx,
        [
            lambda t=t: probes.http_get(t, 443, "/redfish/v1/", tls=True, timeout=ctx.timeout_s)
            for t in targets
        ],
    )
    verdicts = []
    for out in outs:
        v = grade_redfish(out)
        verdicts.append((f"{out.target}:443", v, [_ev(ctx, out, v.summary)]))
    return _per_target(
        ctx,
        spec_id,
        title,
        verdicts,
        "Put BMCs on a management network that tenant nodes cannot route to.",
        ["https://www.dmtf.org/standards/redfish"],
    )


def check_nfs(ctx: CheckContext) -> list[CheckResult]:
    """NFS exports visible from this node (``showmount -e``) and no_root_squash in local /etc/exports."""
    spec_id, title = "exposure.nfs-exports", "NFS exports open to everyone or without root squash"
    results: list[CheckResult] = []
    exports_path = ctx.path("/etc/exports")
    text = ctx.runner.read_file(exports_path)
    if text:
        entries = parse_exports_file(text)
        risky = {p: cl for p, cl in entries.items() if any("no_root_squash" in c for c in cl)}
        for path, clients in risky.items():
            results.append(
                result(
                    spec_id,
                    title,
                    CATEGORY,
                    Status.FAIL,
                    Severity.HIGH,
                    host=ctx.host,
                    subject=f"{ctx.host}:{path}",
                    evidence=[
                        Evidence(
                            summary=f"/etc/exports: {path} {' '.join(clients)}",
                            value="no_root_squash",
                            source=None,
                        )
                    ],
                    remediation="Remove no_root_squash: root on any client becomes root on the export.",
                    references=["https://man7.org/linux/man-pages/man5/exports.5.html"],
                )
            )
    targets = probe_targets(ctx)
    if not targets:
        return results or [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason="no targets and no local /etc/exports",
            )
        ]
    lim = _limiter(ctx)
    checked = []
    for t in targets:
        lim.wait()
        out = ctx.runner.run(["showmount", "-e", t], timeout=ctx.timeout_s + 3)
        if out.error == "not found":
            results.append(
                result(
                    spec_id,
                    title,
                    CATEGORY,
                    Status.UNKNOWN,
                    host=ctx.host,
                    reason="showmount not found (install nfs-common) to list remote exports",
                )
            )
            break
        if not out.ok:
            checked.append(from_command(out, f"{t}: no export list ({out.why_not()[:80]})"))
            continue
        try:
            exports = parse_showmount(out.stdout)
        except ParseError as e:
            results.append(
                result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, subject=t, reason=str(e))
            )
            continue
        open_all = [e for e in exports if any(c in ("*", "(everyone)", "0.0.0.0/0") for c in e.clients)]
        ev = from_command(out, f"{t}: {len(exports)} exports, {len(open_all)} open to everyone")
        if open_all:
            results.append(
                result(
                    spec_id,
                    title,
                    CATEGORY,
                    Status.WARN,
                    Severity.MEDIUM,
                    host=ctx.host,
                    subject=f"{t}: " + ", ".join(e.path for e in open_all),
                    evidence=[ev],
                    remediation="Export to the tenant's own client addresses only, never '*'.",
                    references=["https://man7.org/linux/man-pages/man5/exports.5.html"],
                )
            )
        else:
            checked.append(ev)
    if not results:
        results.append(result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, evidence=checked))
    return results


def slurm_ports(ctx: CheckContext) -> dict[int, str]:
    """Default Slurm ports, plus the ones this node's slurm.conf names (when scontrol is here)."""
    ports = dict(SLURM_DEFAULT_PORTS)
    out = ctx.run_once(["scontrol", "show", "config"], timeout=15)
    if out.ok:
        from podium.checks.slurm import parse_scontrol_config

        try:
            conf = parse_scontrol_config(out.stdout)
        except ParseError:
            return ports
        for key, name in (("SlurmctldPort", "slurmctld"), ("AccountingStoragePort", "slurmdbd")):
            value = conf.get(key, "")
            first = value.split("-")[0]
            if first.isdigit() and int(first) > 0:
                ports[int(first)] = name
    return ports


def check_slurm_ports(ctx: CheckContext) -> list[CheckResult]:
    """slurmctld / slurmdbd ports reachable (TCP connect only) on the declared targets."""
    spec_id, title = "exposure.slurm-daemons", "Slurm controller / slurmdbd reachable"
    targets = probe_targets(ctx)
    ports = slurm_ports(ctx) if targets else {}
    jobs = [lambda t=t, p=p: probes.tcp_connect(t, p, ctx.timeout_s) for t in targets for p in sorted(ports)]
    outs = run_probes(ctx, jobs)
    verdicts = []
    for out in outs:
        daemon = ports[out.port]
        if out.state == "answered":
            v = Verdict(
                status=Status.WARN,
                severity=Severity.LOW,
                summary=f"{daemon} port {out.target}:{out.port} accepts connections from this node",
            )
        else:
            v = Verdict(status=Status.PASS, summary=f"{daemon} port {out.target}:{out.port}: {out.state}")
        verdicts.append((f"{out.target}:{out.port} ({daemon})", v, [_ev(ctx, out, v.summary)]))
    return _per_target(
        ctx,
        spec_id,
        title,
        verdicts,
        "Expected for your own cluster's controller; any other cluster's slurmctld/slurmdbd must not be "
        "reachable from this tenant network.",
        ["https://slurm.schedmd.com/network.html"],
    )
