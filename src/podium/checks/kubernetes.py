"""Kubernetes isolation and configuration: nodes/proxy RBAC, GPU/network operators, RWX storage,
container runtime, and the NVIDIA Container Toolkit mode (CDI or legacy).

Parsers take the JSON that ``kubectl get ... -o json`` prints (the Kubernetes API List schema).
Without kubectl or cluster access the checks are ``unknown`` with the reason.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel

from podium.checks.data import load
from podium.checks.evidence import from_command, from_file, result
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.models.results import CheckResult

CATEGORY = "kubernetes"
BROAD_GROUPS = {"system:authenticated", "system:unauthenticated", "system:serviceaccounts"}
# bindings that Kubernetes itself creates for nodes/proxy access (kube-apiserver -> kubelet, admins)
EXPECTED_BINDINGS = {("cluster-admin", "Group", "system:masters")}
EXPECTED_ROLES_FOR_APISERVER = {"system:kubelet-api-admin"}


def parse_list(text: str, source: str) -> list[dict]:
    """A Kubernetes List (``kubectl get ... -o json``): its items."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ParseError(source, f"not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ParseError(source, "not a Kubernetes List (no 'items' array)")
    return data["items"]


def _rule_grants_nodes_proxy_get(rule: dict) -> bool:
    groups = rule.get("apiGroups") or []
    resources = rule.get("resources") or []
    verbs = rule.get("verbs") or []
    return (
        ("" in groups or "*" in groups)
        and ("nodes/proxy" in resources or "*" in resources or "nodes/*" in resources)
        and ("get" in verbs or "*" in verbs)
    )


class NodesProxyGrant(BaseModel):
    binding: str
    role: str
    subject_kind: str
    subject: str
    broad: bool


def find_nodes_proxy_grants(
    items: list[dict], source: str = "clusterrolebindings,clusterroles"
) -> list[NodesProxyGrant]:
    """ClusterRoleBindings whose ClusterRole allows GET on nodes/proxy (kubelet API through the API server)."""
    roles = {}
    for it in items:
        if not isinstance(it, dict) or "kind" not in it:
            raise ParseError(source, "item without 'kind'")
        if it["kind"] == "ClusterRole":
            roles[it.get("metadata", {}).get("name")] = it.get("rules") or []
    granting = {name for name, rules in roles.items() if any(_rule_grants_nodes_proxy_get(r) for r in rules)}
    grants = []
    for it in items:
        if it["kind"] != "ClusterRoleBinding":
            continue
        ref = it.get("roleRef") or {}
        if ref.get("kind") != "ClusterRole" or ref.get("name") not in granting:
            continue
        for s in it.get("subjects") or []:
            name = s.get("name", "")
            if s.get("kind") == "ServiceAccount":
                name = f"{s.get('namespace', '?')}/{name}"
            grants.append(
                NodesProxyGrant(
                    binding=it.get("metadata", {}).get("name", "?"),
                    role=ref["name"],
                    subject_kind=s.get("kind", "?"),
                    subject=name,
                    broad=s.get("kind") == "Group" and s.get("name") in BROAD_GROUPS,
                )
            )
    return grants


def _unexpected(g: NodesProxyGrant) -> bool:
    if (g.role, g.subject_kind, g.subject) in EXPECTED_BINDINGS:
        return False
    # the API server's own kubelet client identity
    return not (g.role in EXPECTED_ROLES_FOR_APISERVER and g.subject_kind == "User")


def _kubectl(ctx: CheckContext, spec_id: str, title: str, *args: str):
    out = ctx.runner.run(["kubectl", *args, "-o", "json", "--request-timeout=10s"], timeout=20)
    if out.error == "not found":
        return (
            None,
            out,
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                reason="kubectl not found; no Kubernetes access from this node",
            ),
        )
    if not out.ok:
        return (
            None,
            out,
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                reason=f"no Kubernetes access: {out.why_not()}",
            ),
        )
    try:
        return parse_list(out.stdout, out.command), out, None
    except ParseError as e:
        return None, out, result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))


def check_nodes_proxy_rbac(ctx: CheckContext) -> list[CheckResult]:
    """RBAC bindings granting GET on nodes/proxy (full kubelet API, including exec, via the API server)."""
    spec_id, title = "k8s.rbac.nodes-proxy", "RBAC grants nodes/proxy GET"
    items, out, early = _kubectl(ctx, spec_id, title, "get", "clusterrolebindings,clusterroles")
    if early:
        return [early]
    try:
        grants = find_nodes_proxy_grants(items)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    flagged = [g for g in grants if _unexpected(g)]
    details = {"grants": [g.model_dump() for g in grants]}
    if not flagged:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                evidence=[
                    from_command(
                        out, f"{len(grants)} bindings grant nodes/proxy, all built-in", value=len(grants)
                    )
                ],
                details=details,
            )
        ]
    broad = [g for g in flagged if g.broad]
    ev = [
        from_command(out, f"{g.binding} -> {g.role} -> {g.subject_kind} {g.subject}", value=g.subject)
        for g in flagged
    ][:32]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.FAIL if broad else Status.WARN,
            Severity.CRITICAL if broad else Severity.HIGH,
            host=ctx.host,
            subject=", ".join(sorted({g.binding for g in flagged})),
            evidence=ev,
            remediation="nodes/proxy GET reaches the kubelet API (pods, logs, and exec via websocket upgrade) on every node. "
            "Remove it from roles bound to users, monitoring service accounts or broad groups; scrape metrics via nodes/metrics instead.",
            references=["https://kubernetes.io/docs/concepts/security/rbac-good-practices/#nodes-proxy"],
            details=details,
        )
    ]


_OPERATORS = {
    "gpu-operator": re.compile(r"gpu-operator"),
    "network-operator": re.compile(r"network-operator"),
    "nvidia-device-plugin": re.compile(r"nvidia-device-plugin"),
    "dcgm-exporter": re.compile(r"dcgm-exporter"),
}


def find_operators(items: list[dict]) -> dict[str, list[str]]:
    """Known GPU/network operators among Deployments/DaemonSets (by name or app label)."""
    found: dict[str, list[str]] = {}
    for it in items:
        meta = it.get("metadata") or {}
        names = [meta.get("name", ""), *list((meta.get("labels") or {}).values())]
        for op, pattern in _OPERATORS.items():
            if any(pattern.search(str(n)) for n in names):
                found.setdefault(op, []).append(
                    f"{it.get('kind', '?')} {meta.get('namespace', '?')}/{meta.get('name', '?')}"
                )
    return found


def check_operators(ctx: CheckContext) -> list[CheckResult]:
    """NVIDIA GPU operator (or device plugin) and network operator present."""
    spec_id, title = "k8s.operators", "GPU and network operators present"
    items, out, early = _kubectl(ctx, spec_id, title, "get", "deployments,daemonsets", "-A")
    if early:
        return [early]
    found = find_operators(items)
    ev = [from_command(out, f"{op}: {', '.join(objs[:3])}", value=op) for op, objs in found.items()]
    if "gpu-operator" in found or "nvidia-device-plugin" in found:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                subject=", ".join(sorted(found)),
                evidence=ev,
                details={"found": found},
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.WARN,
            Severity.MEDIUM,
            host=ctx.host,
            subject="no GPU operator or device plugin",
            evidence=ev or [from_command(out, "no known operator found")],
            remediation="Install the NVIDIA GPU Operator (device plugin, DCGM exporter, toolkit) and, for RDMA, the Network Operator.",
            references=["https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/"],
            details={"found": found},
        )
    ]


def check_rwx_storage(ctx: CheckContext) -> list[CheckResult]:
    """A StorageClass whose provisioner supports ReadWriteMany (shared datasets/checkpoints)."""
    spec_id, title = "k8s.storage.rwx", "ReadWriteMany storage class available"
    items, out, early = _kubectl(ctx, spec_id, title, "get", "storageclasses")
    if early:
        return [early]
    known = {p["name"]: p["source"] for p in load("rwx_provisioners")["provisioners"]}
    classes = [(it.get("metadata", {}).get("name", "?"), it.get("provisioner", "")) for it in items]
    rwx = [(n, p) for n, p in classes if p in known]
    ev = [from_command(out, f"StorageClass {n}: provisioner {p}", value=p) for n, p in classes][:32]
    if rwx:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                subject=", ".join(n for n, _ in rwx),
                evidence=ev,
                references=[known[p] for _, p in rwx],
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.WARN,
            Severity.LOW,
            host=ctx.host,
            subject=f"{len(classes)} classes, none RWX",
            evidence=ev,
            remediation="Offer a shared-filesystem StorageClass (NFS, Lustre/FSx, Filestore, CephFS, Weka, VAST...) for multi-node training.",
        )
    ]


def check_container_runtime(ctx: CheckContext) -> list[CheckResult]:
    """Container runtimes the nodes report (status.nodeInfo.containerRuntimeVersion)."""
    spec_id, title = "k8s.container-runtime", "Container runtime of the nodes"
    items, out, early = _kubectl(ctx, spec_id, title, "get", "nodes")
    if early:
        return [early]
    runtimes: dict[str, list[str]] = {}
    for it in items:
        info = (it.get("status") or {}).get("nodeInfo") or {}
        runtimes.setdefault(info.get("containerRuntimeVersion", "unknown"), []).append(
            it.get("metadata", {}).get("name", "?")
        )
    ev = [from_command(out, f"{rt}: {len(nodes)} nodes", value=rt) for rt, nodes in runtimes.items()]
    if "unknown" in runtimes or not runtimes:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                reason="nodes without status.nodeInfo.containerRuntimeVersion",
                evidence=ev,
            )
        ]
    if any(rt.startswith("docker://") for rt in runtimes):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject=", ".join(runtimes),
                evidence=ev,
                remediation="dockershim was removed in Kubernetes 1.24; move nodes to containerd or CRI-O.",
                details={"runtimes": runtimes},
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.PASS,
            host=ctx.host,
            subject=", ".join(runtimes),
            evidence=ev,
            details={"runtimes": runtimes},
        )
    ]


def parse_toolkit_mode(text: str, source: str = "/etc/nvidia-container-runtime/config.toml") -> str:
    """The [nvidia-container-runtime] mode in the toolkit's config.toml ('auto' when unset)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: the stdlib has no TOML reader
        tomllib = None
    if tomllib is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ParseError(source, f"not TOML: {e}") from None
    else:
        data = _toml_sections(text)
    section = data.get("nvidia-container-runtime")
    if section is None:
        raise ParseError(source, "no [nvidia-container-runtime] section")
    mode = section.get("mode", "auto")
    if mode not in ("auto", "cdi", "legacy", "csv"):
        raise ParseError(source, f"unknown mode {mode!r}")
    return mode


def check_toolkit_mode(ctx: CheckContext) -> list[CheckResult]:
    """NVIDIA Container Toolkit mode: CDI (declarative device specs) or the legacy prestart hook."""
    spec_id, title = "k8s.container-toolkit-mode", "NVIDIA Container Toolkit mode (CDI or legacy)"
    path = ctx.path("/etc/nvidia-container-runtime/config.toml")
    text = ctx.runner.read_file(path)
    if text is None:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason=f"{path} absent (NVIDIA Container Toolkit not installed on this node)",
            )
        ]
    try:
        mode = parse_toolkit_mode(text, path)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    ev = [from_file(path, ctx.host, f"mode = {mode}", value=mode)]
    refs = ["https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html"]
    if mode == "legacy":
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject="legacy",
                evidence=ev,
                remediation='Generate CDI specs (nvidia-ctk cdi generate) and set mode = "cdi" (or auto); the legacy hook mounts devices from a prestart hook in the container\'s namespace.',
                references=refs,
            )
        ]
    return [
        result(
            spec_id, title, CATEGORY, Status.PASS, host=ctx.host, subject=mode, evidence=ev, references=refs
        )
    ]


def _toml_sections(text: str) -> dict:
    """Enough TOML for the toolkit config on Python 3.10: [section] headers and key = "string" lines."""
    data: dict = {}
    section: dict | None = None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"^\[([^\]]+)\]$", line)
        if m:
            section = data.setdefault(m.group(1).strip(), {})
            continue
        m = re.match(r"^([A-Za-z0-9_.-]+)\s*=\s*(.+)$", line)
        if not m:
            raise ParseError("config.toml", f"not TOML: {line[:60]!r}")
        if section is not None:
            section[m.group(1)] = m.group(2).strip().strip('"')
    return data
