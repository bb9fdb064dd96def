"""Kubernetes checks on JSON built to the real API schema (kubectl get ... -o json returns a v1 List).

Objects follow rbac.authorization.k8s.io/v1 ClusterRole/ClusterRoleBinding, apps/v1 DaemonSet/
Deployment, storage.k8s.io/v1 StorageClass and v1 Node (status.nodeInfo) as documented in the
Kubernetes API reference; the built-in roles (cluster-admin, system:kubelet-api-admin) have the
rules those clusters ship with. No cluster runs here, so these are constructed, not captured.
"""

from __future__ import annotations

import json

import pytest

from podium.checks import kubernetes as k8s
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.runner import ReplayRunner


def _list(items):
    return json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
    )


def _role(name, rules):
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    }


def _binding(name, role, subjects):
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    }


BUILTIN = [
    _role(
        "cluster-admin",
        [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ],
    ),
    _binding(
        "cluster-admin",
        "cluster-admin",
        [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}],
    ),
    _role(
        "system:kubelet-api-admin",
        [
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "proxy"]},
            {
                "apiGroups": [""],
                "resources": ["nodes/log", "nodes/metrics", "nodes/proxy", "nodes/stats"],
                "verbs": ["*"],
            },
        ],
    ),
    _binding(
        "kube-apiserver-kubelet-admin",
        "system:kubelet-api-admin",
        [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "kube-apiserver-kubelet-client"}],
    ),
    _role(
        "view", [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list", "watch"]}]
    ),
]
MONITORING = [
    _role(
        "prometheus",
        [
            {
                "apiGroups": [""],
                "resources": ["nodes", "nodes/proxy", "nodes/metrics"],
                "verbs": ["get", "list", "watch"],
            }
        ],
    ),
    _binding(
        "prometheus",
        "prometheus",
        [{"kind": "ServiceAccount", "name": "prometheus-k8s", "namespace": "monitoring"}],
    ),
]
BROAD = [
    _role("node-debug", [{"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get", "create"]}]),
    _binding(
        "everyone-node-debug",
        "node-debug",
        [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}],
    ),
]
CMD = "kubectl get clusterrolebindings,clusterroles -o json --request-timeout=10s"


def _run(items, check):
    return check(
        CheckContext(runner=ReplayRunner({CMD: _list(items)} if isinstance(items, list) else items), host="n")
    )


def test_builtin_rbac_passes():
    [r] = _run(BUILTIN, k8s.check_nodes_proxy_rbac)
    assert r.status == Status.PASS
    assert [g["binding"] for g in r.details["grants"]] == ["cluster-admin", "kube-apiserver-kubelet-admin"]


def test_monitoring_service_account_with_nodes_proxy_warns():
    [r] = _run(BUILTIN + MONITORING, k8s.check_nodes_proxy_rbac)
    assert (r.status, r.severity, r.subject) == (Status.WARN, Severity.HIGH, "prometheus")
    assert r.evidence[0].summary == "prometheus -> prometheus -> ServiceAccount monitoring/prometheus-k8s"


def test_broad_group_with_nodes_proxy_fails():
    [r] = _run(BUILTIN + MONITORING + BROAD, k8s.check_nodes_proxy_rbac)
    assert (r.status, r.severity) == (Status.FAIL, Severity.CRITICAL)
    assert r.subject == "everyone-node-debug, prometheus"


@pytest.mark.parametrize("text", ["", "{", "[]", '{"kind": "List"}', "<html>garbage</html>"])
def test_bad_kubectl_json(text):
    with pytest.raises(ParseError):
        k8s.parse_list(text, "kubectl")
    [r] = k8s.check_nodes_proxy_rbac(CheckContext(runner=ReplayRunner({CMD: text}), host="n"))
    assert r.status == Status.UNKNOWN


def test_without_kubectl_all_unknown_with_reason():
    ctx = CheckContext(runner=ReplayRunner({}), host="n")
    for check in (
        k8s.check_nodes_proxy_rbac,
        k8s.check_operators,
        k8s.check_rwx_storage,
        k8s.check_container_runtime,
    ):
        [r] = check(ctx)
        assert r.status == Status.UNKNOWN and "kubectl not found" in r.reason


def _ds(ns, name, labels=None, kind="DaemonSet"):
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
    }


def test_operators():
    items = [
        _ds("gpu-operator", "gpu-operator", {"app": "gpu-operator"}, "Deployment"),
        _ds("gpu-operator", "nvidia-device-plugin-daemonset", {"app": "nvidia-device-plugin-daemonset"}),
        _ds("kube-system", "kube-proxy", {"k8s-app": "kube-proxy"}),
    ]
    runner = ReplayRunner(
        {"kubectl get deployments,daemonsets -A -o json --request-timeout=10s": _list(items)}
    )
    [r] = k8s.check_operators(CheckContext(runner=runner, host="n"))
    assert (r.status, r.subject) == (Status.PASS, "gpu-operator, nvidia-device-plugin")
    runner2 = ReplayRunner(
        {"kubectl get deployments,daemonsets -A -o json --request-timeout=10s": _list(items[2:])}
    )
    [w] = k8s.check_operators(CheckContext(runner=runner2, host="n"))
    assert (w.status, w.severity) == (Status.WARN, Severity.MEDIUM)


def _sc(name, provisioner):
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
    }


def test_rwx_storage():
    cmd = "kubectl get storageclasses -o json --request-timeout=10s"
    [r] = k8s.check_rwx_storage(
        CheckContext(
            runner=ReplayRunner({cmd: _list([_sc("gp3", "ebs.csi.aws.com"), _sc("efs", "efs.csi.aws.com")])}),
            host="n",
        )
    )
    assert (r.status, r.subject) == (Status.PASS, "efs")
    [w] = k8s.check_rwx_storage(
        CheckContext(runner=ReplayRunner({cmd: _list([_sc("gp3", "ebs.csi.aws.com")])}), host="n")
    )
    assert (w.status, w.subject) == (Status.WARN, "1 classes, none RWX")


def _node(name, runtime):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"nodeInfo": {"containerRuntimeVersion": runtime, "kubeletVersion": "v1.30.2"}},
    }


def test_container_runtime():
    cmd = "kubectl get nodes -o json --request-timeout=10s"
    [r] = k8s.check_container_runtime(
        CheckContext(
            runner=ReplayRunner(
                {cmd: _list([_node("a", "containerd://1.7.18"), _node("b", "containerd://1.7.18")])}
            ),
            host="n",
        )
    )
    assert (r.status, r.details["runtimes"]) == (Status.PASS, {"containerd://1.7.18": ["a", "b"]})
    [w] = k8s.check_container_runtime(
        CheckContext(runner=ReplayRunner({cmd: _list([_node("a", "docker://20.10.7")])}), host="n")
    )
    assert w.status == Status.WARN


# config.toml as the NVIDIA Container Toolkit writes it (`nvidia-ctk config default` layout, shortened)
TOOLKIT_TOML = """\
#accept-nvidia-visible-devices-as-volume-mounts = false
disable-require = false
supported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"

[nvidia-container-cli]
environment = []
ldconfig = "@/sbin/ldconfig.real"
load-kmods = true

[nvidia-container-runtime]
log-level = "info"
mode = "{mode}"
runtimes = ["docker-runc", "runc", "crun"]

[nvidia-container-runtime.modes.cdi]
default-kind = "nvidia.com/gpu"
spec-dirs = ["/etc/cdi", "/var/run/cdi"]
"""


@pytest.mark.parametrize(
    ("mode", "status"), [("cdi", Status.PASS), ("auto", Status.PASS), ("legacy", Status.WARN)]
)
def test_toolkit_mode(tmp_path, mode, status):
    from podium.runner import LocalRunner

    d = tmp_path / "etc/nvidia-container-runtime"
    d.mkdir(parents=True)
    (d / "config.toml").write_text(TOOLKIT_TOML.format(mode=mode))
    [r] = k8s.check_toolkit_mode(CheckContext(runner=LocalRunner(), root=str(tmp_path), host="n"))
    assert (r.status, r.subject) == (status, mode)


def test_toolkit_mode_absent_and_garbage(tmp_path):
    from podium.runner import LocalRunner

    [s] = k8s.check_toolkit_mode(CheckContext(runner=LocalRunner(), root=str(tmp_path), host="n"))
    assert s.status == Status.SKIPPED
    with pytest.raises(ParseError):
        k8s.parse_toolkit_mode("[nvidia-container-runtime\nmode = ")
    with pytest.raises(ParseError):
        k8s.parse_toolkit_mode("")
    with pytest.raises(ParseError):
        k8s.parse_toolkit_mode('[nvidia-container-runtime]\nmode = "sideways"\n')
