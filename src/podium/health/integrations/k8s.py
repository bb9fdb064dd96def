"""Kubernetes: a DaemonSet that runs ``podium health`` on every GPU node and labels the node
``podium.io/health=pass|warn|fail|unknown`` (plus a ``PodiumHealthy`` node condition)."""

from __future__ import annotations

from typing import Any

import yaml

from podium.health.models import NodeHealth, Verdict
from podium.runner import CommandRunner

LABEL = "podium.io/health"
ACTION_LABEL = "podium.io/health-action"
CONDITION = "PodiumHealthy"


def kubernetes_client_available() -> bool:
    try:
        import kubernetes  # noqa: F401
    except ImportError:
        return False
    return True


def render_manifests(
    image: str = "ghcr.io/podium/podium:latest",
    namespace: str = "podium",
    interval_s: int = 300,
    node_selector: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, ClusterRole/Binding (patch nodes) and the DaemonSet."""
    selector = node_selector if node_selector is not None else {"nvidia.com/gpu.present": "true"}
    labels = {"app.kubernetes.io/name": "podium-health"}
    script = (
        f"while true; do podium health --quick --json --fail-on never --k8s-label "
        f"--prometheus /var/lib/node_exporter/textfile/podium_health.prom > /tmp/health.json; sleep {interval_s}; done"
    )
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "podium-health", "namespace": namespace},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "podium-health"},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
                {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "podium-health"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "podium-health",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "podium-health", "namespace": namespace}],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "podium-health", "namespace": namespace, "labels": labels},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": "podium-health",
                        "hostPID": True,
                        "nodeSelector": selector,
                        "tolerations": [{"operator": "Exists"}],
                        "containers": [
                            {
                                "name": "podium-health",
                                "image": image,
                                "command": ["/bin/sh", "-c", script],
                                "env": [
                                    {
                                        "name": "NODE_NAME",
                                        "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                                    },
                                    {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                                ],
                                "securityContext": {"privileged": True},
                                "resources": {
                                    "requests": {"cpu": "50m", "memory": "128Mi"},
                                    "limits": {"memory": "512Mi"},
                                },
                                "volumeMounts": [
                                    {"name": "sys", "mountPath": "/sys", "readOnly": True},
                                    {"name": "varlog", "mountPath": "/var/log", "readOnly": True},
                                    {"name": "textfile", "mountPath": "/var/lib/node_exporter/textfile"},
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "sys", "hostPath": {"path": "/sys"}},
                            {"name": "varlog", "hostPath": {"path": "/var/log"}},
                            {
                                "name": "textfile",
                                "hostPath": {
                                    "path": "/var/lib/node_exporter/textfile",
                                    "type": "DirectoryOrCreate",
                                },
                            },
                        ],
                    },
                },
            },
        },
    ]


def manifests_yaml(docs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def node_patch(node: NodeHealth) -> dict[str, Any]:
    """The label patch for a node (metadata) and the condition (status) podium sets."""
    return {
        "metadata": {"labels": {LABEL: node.verdict.value, ACTION_LABEL: node.action.value}},
        "status": {
            "conditions": [
                {
                    "type": CONDITION,
                    "status": "True"
                    if node.verdict == Verdict.PASS
                    else "False"
                    if node.verdict == Verdict.FAIL
                    else "Unknown",
                    "reason": f"Verdict{node.verdict.value.capitalize()}",
                    "message": f"podium health: {node.verdict.value}, action {node.action.value}",
                }
            ]
        },
    }


def apply_node_label(runner: CommandRunner, node_name: str, node: NodeHealth) -> str:
    """Label the node through the kubernetes client when installed, else ``kubectl label``."""
    patch = node_patch(node)
    if kubernetes_client_available():
        from kubernetes import client, config

        try:
            config.load_incluster_config()
        except config.ConfigException:
            config.load_kube_config()
        v1 = client.CoreV1Api()
        v1.patch_node(node_name, {"metadata": patch["metadata"]})
        v1.patch_node_status(node_name, {"status": patch["status"]})
        return "kubernetes client"
    labels = [f"{k}={v}" for k, v in patch["metadata"]["labels"].items()]
    out = runner.run(["kubectl", "label", "node", node_name, *labels, "--overwrite"], timeout=30)
    if not out.ok:
        from podium.errors import InputError

        raise InputError("kubectl label node", out.why_not())
    return "kubectl"
