"""Kubernetes launcher: render Jobs (or PyTorchJob / JobSet where those CRDs exist), apply them with
the official ``kubernetes`` client (optional extra ``podium[k8s]``, imported lazily), wait, and
collect each pod's ``PODIUM_RESULT`` line from its log.

A Job is Indexed with one pod per node; each pod requests ``nvidia.com/gpu`` and, when given, an
RDMA device resource (e.g. ``rdma/rdma_shared_device_a`` from the RDMA shared device plugin, or
``nvidia.com/hostdev``). Multi-node collectives get a headless Service so that pod 0 is reachable
as ``MASTER_ADDR``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from podium.bench.suite import TaskOutput
from podium.bench.worker import MARKER
from podium.errors import UsageError
from podium.runs import RunDirectory

PYTORCHJOB_CRD = "pytorchjobs.kubeflow.org"
JOBSET_CRD = "jobsets.jobset.x-k8s.io"


@dataclass
class K8sOptions:
    image: str | None = None
    namespace: str = "default"
    nodes: int = 1
    gpus_per_node: int = 0
    gpu_resource: str = "nvidia.com/gpu"
    rdma_resource: str | None = None
    rdma_count: int = 1
    node_selector: dict[str, str] = field(default_factory=dict)
    kind: str = "auto"  # auto | Job | PyTorchJob | JobSet
    master_port: int = 29500
    poll_s: float = 5.0
    job_timeout_s: float = 3600.0


def _dns_name(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].rstrip("-")


def job_name(benchmark: str, run_id: str) -> str:
    return _dns_name(f"podium-{benchmark}-{run_id[-6:]}")


def _container(
    benchmark: str, profile: str, bench_opts: dict[str, Any], opts: K8sOptions, env: list[dict]
) -> dict:
    limits: dict[str, Any] = {}
    if opts.gpus_per_node:
        limits[opts.gpu_resource] = opts.gpus_per_node
    if opts.rdma_resource:
        limits[opts.rdma_resource] = opts.rdma_count
    container: dict[str, Any] = {
        "name": "bench",
        "image": opts.image,
        "command": [
            "python3",
            "-m",
            "podium.bench.worker",
            "--benchmark",
            benchmark,
            "--profile",
            profile,
            "--opts",
            json.dumps(bench_opts, sort_keys=True),
        ],
        "env": env,
    }
    if limits:
        container["resources"] = {"limits": dict(limits), "requests": dict(limits)}
    if opts.rdma_resource:
        container["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}  # RDMA pins memory
    return container


def render_job(
    benchmark: str, profile: str, bench_opts: dict[str, Any], run_id: str, opts: K8sOptions
) -> list[dict]:
    """A batch/v1 Indexed Job (plus a headless Service when it spans nodes)."""
    if not opts.image:
        raise UsageError("--backend k8s needs --container-image (an image with podium[bench] installed)")
    name = job_name(benchmark, run_id)
    labels = {
        "app.kubernetes.io/name": "podium",
        "podium.dev/benchmark": _dns_name(benchmark),
        "podium.dev/run": _dns_name(run_id)[-63:],
    }
    env = [
        {"name": "PODIUM_RUN_ID", "value": run_id},
        {"name": "WORLD_SIZE", "value": str(opts.nodes)},
        {
            "name": "RANK",
            "valueFrom": {
                "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}
            },
        },
        {"name": "MASTER_ADDR", "value": f"{name}-0.{name}" if opts.nodes > 1 else "127.0.0.1"},
        {"name": "MASTER_PORT", "value": str(opts.master_port)},
    ]
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [_container(benchmark, profile, bench_opts, opts, env)],
    }
    if opts.nodes > 1:
        pod_spec["subdomain"] = name
    if opts.node_selector:
        pod_spec["nodeSelector"] = dict(opts.node_selector)
    if opts.gpus_per_node:
        pod_spec["tolerations"] = [{"key": opts.gpu_resource, "operator": "Exists", "effect": "NoSchedule"}]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": opts.namespace, "labels": labels},
        "spec": {
            "completions": opts.nodes,
            "parallelism": opts.nodes,
            "completionMode": "Indexed",
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 86400,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }
    docs = [job]
    if opts.nodes > 1:
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name, "namespace": opts.namespace, "labels": labels},
                "spec": {
                    "clusterIP": "None",
                    "selector": {"job-name": name},
                    "ports": [{"name": "rdzv", "port": opts.master_port}],
                },
            }
        )
    return docs


def render_pytorchjob(
    benchmark: str, profile: str, bench_opts: dict[str, Any], run_id: str, opts: K8sOptions
) -> dict:
    """A Kubeflow ``PyTorchJob`` (kubeflow.org/v1): the operator sets MASTER_ADDR/RANK/WORLD_SIZE."""
    if not opts.image:
        raise UsageError("--backend k8s needs --container-image")
    name = job_name(benchmark, run_id)
    container = _container(benchmark, profile, bench_opts, opts, [{"name": "PODIUM_RUN_ID", "value": run_id}])
    container["name"] = "pytorch"  # the operator looks for this container name

    def replica(n: int) -> dict:
        return {"replicas": n, "restartPolicy": "Never", "template": {"spec": {"containers": [container]}}}

    specs = {"Master": replica(1)}
    if opts.nodes > 1:
        specs["Worker"] = replica(opts.nodes - 1)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {
            "name": name,
            "namespace": opts.namespace,
            "labels": {"app.kubernetes.io/name": "podium"},
        },
        "spec": {"runPolicy": {"backoffLimit": 0}, "pytorchReplicaSpecs": specs},
    }


def render_jobset(
    benchmark: str, profile: str, bench_opts: dict[str, Any], run_id: str, opts: K8sOptions
) -> dict:
    """A ``JobSet`` (jobset.x-k8s.io/v1alpha2) wrapping the Indexed Job; pod 0 is the rendezvous."""
    job = render_job(benchmark, profile, bench_opts, run_id, opts)[0]
    name = job["metadata"]["name"]
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    for e in env:
        if e["name"] == "MASTER_ADDR":
            e["value"] = f"{name}-workers-0-0.{name}"
    job["spec"]["template"]["spec"].pop("subdomain", None)
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": opts.namespace, "labels": job["metadata"]["labels"]},
        "spec": {
            "network": {"enableDNSHostnames": True},
            "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": job["spec"]}}],
        },
    }


def parse_logs(text: str, benchmark: str, pod: str = "pod") -> TaskOutput:
    """The worker's ``PODIUM_RESULT`` line from a pod log; an error output when there is none."""
    for line in reversed(text.splitlines()):
        if line.startswith(MARKER):
            try:
                return TaskOutput.model_validate_json(line[len(MARKER) :])
            except ValueError as e:
                return TaskOutput(
                    benchmark=benchmark,
                    host=pod,
                    error=f"unreadable result in log of {pod}: {str(e).splitlines()[0]}",
                )
    tail = text.strip().splitlines()[-1:] or ["(empty log)"]
    return TaskOutput(
        benchmark=benchmark,
        host=pod,
        error=f"no {MARKER.strip()} line in log of {pod}; last line: {tail[0][:200]}",
    )


def _client():
    try:
        import kubernetes
    except ImportError:
        raise UsageError("--backend k8s needs the kubernetes client: pip install 'podium[k8s]'") from None
    try:
        kubernetes.config.load_incluster_config()
    except kubernetes.config.ConfigException:
        import os

        # read KUBECONFIG now: the client captured its default when it was imported
        kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG") or None)
    return kubernetes


class K8sLauncher:
    """Apply one benchmark's manifests, wait for completion, collect results from pod logs."""

    name = "k8s"

    def __init__(self, run: RunDirectory, opts: K8sOptions):
        self.run = run
        self.opts = opts
        self._k8s = None

    def manifests(
        self, benchmark: str, profile: str, bench_opts: dict[str, Any], kind: str = "Job"
    ) -> list[dict]:
        if kind == "PyTorchJob":
            return [render_pytorchjob(benchmark, profile, bench_opts, self.run.record.run_id, self.opts)]
        if kind == "JobSet":
            return [render_jobset(benchmark, profile, bench_opts, self.run.record.run_id, self.opts)]
        return render_job(benchmark, profile, bench_opts, self.run.record.run_id, self.opts)

    def _kind(self) -> str:
        if self.opts.kind != "auto":
            return self.opts.kind
        api = self._k8s.client.ApiextensionsV1Api()
        for crd, kind in ((PYTORCHJOB_CRD, "PyTorchJob"), (JOBSET_CRD, "JobSet")):
            if self.opts.nodes > 1:
                try:
                    api.read_custom_resource_definition(crd)
                    return kind
                except self._k8s.client.ApiException:
                    continue
        return "Job"

    def run_benchmark(self, benchmark: str, profile: str, bench_opts: dict[str, Any]) -> list[TaskOutput]:
        self._k8s = self._k8s or _client()
        k = self._k8s
        kind = self._kind()
        docs = self.manifests(benchmark, profile, bench_opts, kind)
        out = self.run.path / "k8s"
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{benchmark}.json").write_text(json.dumps(docs, indent=2))
        ns = self.opts.namespace
        for doc in docs:
            if doc["kind"] == "Job":
                k.client.BatchV1Api().create_namespaced_job(ns, doc)
            elif doc["kind"] == "Service":
                k.client.CoreV1Api().create_namespaced_service(ns, doc)
            else:
                group, version = doc["apiVersion"].split("/")
                plural = {"PyTorchJob": "pytorchjobs", "JobSet": "jobsets"}[doc["kind"]]
                k.client.CustomObjectsApi().create_namespaced_custom_object(group, version, ns, plural, doc)
        name = docs[0]["metadata"]["name"]
        self.run.log.info("benchmark %s applied as %s %s/%s", benchmark, kind, ns, name)
        self._wait(name, kind)
        core = k.client.CoreV1Api()
        selector = (
            f"job-name={name}"
            if kind == "Job"
            else f"training.kubeflow.org/job-name={name}"
            if kind == "PyTorchJob"
            else f"jobset.sigs.k8s.io/jobset-name={name}"
        )
        outputs = []
        for pod in core.list_namespaced_pod(ns, label_selector=selector).items:
            log = core.read_namespaced_pod_log(pod.metadata.name, ns)
            (out / f"{pod.metadata.name}.log").write_text(log)
            outputs.append(parse_logs(log, benchmark, pod.metadata.name))
        return outputs or [
            TaskOutput(benchmark=benchmark, host="k8s", error=f"no pods found for {kind} {name}")
        ]

    def _wait(self, name: str, kind: str) -> None:
        k = self._k8s
        deadline = time.monotonic() + self.opts.job_timeout_s
        while time.monotonic() < deadline:
            if kind == "Job":
                st = k.client.BatchV1Api().read_namespaced_job_status(name, self.opts.namespace).status
                if (st.succeeded or 0) + (st.failed or 0) >= self.opts.nodes or (st.failed or 0) > 0:
                    return
            else:
                group, version, plural = (
                    ("kubeflow.org", "v1", "pytorchjobs")
                    if kind == "PyTorchJob"
                    else ("jobset.x-k8s.io", "v1alpha2", "jobsets")
                )
                obj = k.client.CustomObjectsApi().get_namespaced_custom_object_status(
                    group, version, self.opts.namespace, plural, name
                )
                conds = {
                    c.get("type"): c.get("status") for c in (obj.get("status") or {}).get("conditions", [])
                }
                if (
                    conds.get("Succeeded") == "True"
                    or conds.get("Failed") == "True"
                    or conds.get("Completed") == "True"
                ):
                    return
            time.sleep(self.opts.poll_s)
