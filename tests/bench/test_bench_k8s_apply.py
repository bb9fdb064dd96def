"""The Kubernetes launcher's apply/wait/collect path, with the official client, against a small API
server on loopback that answers the few endpoints podium uses (no cluster runs here)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

pytest.importorskip("kubernetes", reason="the k8s extra (kubernetes client) is not installed")
pytest.importorskip("torch", reason="torch==2.13.0 is in scripts/test.sh; tests need the bench extra")

from podium.bench.suite import run_in_task
from podium.bench.worker import MARKER
from podium.launch.k8s import K8sLauncher, K8sOptions
from podium.models.common import Status
from podium.runs import RunDirectory


class _Api(BaseHTTPRequestHandler):
    jobs: dict[str, dict] = {}
    calls: list[tuple[str, str]] = []
    log_text = ""
    crds = False

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, code: int, body, ctype: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        url = urlparse(self.path)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.calls.append(("POST", url.path))
        if url.path.endswith(("/jobs", "/pytorchjobs")):
            self.jobs[body["metadata"]["name"]] = body
            return self._send(201, body)
        return self._send(404, {"kind": "Status", "code": 404})

    def do_GET(self):
        url = urlparse(self.path)
        self.calls.append(("GET", url.path))
        parts = url.path.strip("/").split("/")
        if parts[-2:] == ["customresourcedefinitions", "pytorchjobs.kubeflow.org"] and self.crds:
            return self._send(
                200,
                {
                    "kind": "CustomResourceDefinition",
                    "apiVersion": "apiextensions.k8s.io/v1",
                    "metadata": {"name": parts[-1]},
                    "spec": {
                        "group": "kubeflow.org",
                        "names": {"plural": "pytorchjobs", "kind": "PyTorchJob"},
                        "scope": "Namespaced",
                        "versions": [],
                    },
                },
            )
        if "jobs" in parts and parts[-1] == "status":
            job = self.jobs[parts[-2]]
            return self._send(200, {**job, "status": {"succeeded": 1, "active": 0}})
        if "pytorchjobs" in parts and parts[-1] == "status":
            job = self.jobs[parts[-2]]
            return self._send(
                200, {**job, "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}
            )
        if parts[-1] == "pods":
            selector = parse_qs(url.query)["labelSelector"][0]
            name = selector.split("=", 1)[1]
            return self._send(
                200,
                {
                    "kind": "PodList",
                    "apiVersion": "v1",
                    "metadata": {},
                    "items": [{"metadata": {"name": f"{name}-0-x7k2p"}}],
                },
            )
        if parts[-1] == "log":
            return self._send(200, self.log_text, "text/plain")
        return self._send(404, {"kind": "Status", "code": 404})


@pytest.fixture
def api_server(tmp_path, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "loop", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}
                ],
                "users": [{"name": "u", "user": {}}],
                "contexts": [{"name": "c", "context": {"cluster": "loop", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    _Api.jobs, _Api.calls, _Api.crds = {}, [], False
    yield _Api
    server.shutdown()


def test_k8s_apply_wait_collect(api_server, tmp_path):
    # what the pod prints: a real worker run of the numerics benchmark on this host
    out = run_in_task("numerics", "smoke", {})
    api_server.log_text = "starting\n" + MARKER + out.model_dump_json() + "\n"
    run = RunDirectory.create("bench", root=tmp_path / "runs")
    launcher = K8sLauncher(
        run, K8sOptions(image="python:3.11", namespace="bench", poll_s=0.05, job_timeout_s=30)
    )
    outputs = launcher.run_benchmark("numerics", "smoke", {})
    assert len(outputs) == 1 and outputs[0].error is None
    assert len(outputs[0].numerics) == 3
    (name,) = api_server.jobs
    assert name == f"podium-numerics-{run.record.run_id[-6:]}"
    assert api_server.jobs[name] == launcher.manifests("numerics", "smoke", {})[0]
    assert ("POST", "/apis/batch/v1/namespaces/bench/jobs") in api_server.calls
    assert ("GET", f"/api/v1/namespaces/bench/pods/{name}-0-x7k2p/log") in api_server.calls
    assert (run.path / "k8s" / f"{name}-0-x7k2p.log").is_file()


def test_k8s_through_run_bench(api_server, tmp_path):
    from podium.bench.api import run_bench

    api_server.log_text = (
        MARKER + run_in_task("numerics", "smoke", {"corrupt_rank": 0}).model_dump_json() + "\n"
    )
    run = RunDirectory.create("bench", root=tmp_path / "runs")
    report = run_bench(["numerics"], backend="k8s", run=run, container_image="python:3.11", poll_s=0.05)
    assert [r.verdict for r in report.results] == [Status.FAIL, Status.PASS, Status.PASS]


def test_k8s_uses_pytorchjob_when_the_crd_exists(api_server, tmp_path):
    api_server.crds = True
    api_server.log_text = MARKER + run_in_task("numerics", "smoke", {}).model_dump_json() + "\n"
    run = RunDirectory.create("bench", root=tmp_path / "runs")
    opts = K8sOptions(image="img", namespace="bench", nodes=2, poll_s=0.05, job_timeout_s=30)
    outputs = K8sLauncher(run, opts).run_benchmark("numerics", "smoke", {})
    (name,) = api_server.jobs
    assert api_server.jobs[name]["kind"] == "PyTorchJob"
    assert ("POST", "/apis/kubeflow.org/v1/namespaces/bench/pytorchjobs") in api_server.calls
    assert outputs[0].error is None and len(outputs[0].numerics) == 3
