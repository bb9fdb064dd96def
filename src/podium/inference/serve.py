"""``podium inference serve``: render, launch, wait for and tear down an OpenAI-compatible server.

Engines: vLLM, SGLang, ``transformers serve``. Backends:

- ``local``: the engine runs here as a child process (its own session, so teardown stops the
  whole process group); logs go to ``<run>/server.log``.
- ``slurm``: an sbatch script (``<run>/serve.sbatch``) with GPU gres; podium submits it,
  waits for the job to run, finds its node and polls the server there, and ``scancel``s it.
- ``k8s``: a Deployment (GPU requests and limits, readiness probe) and a Service
  (``<run>/serve.yaml``), validated against the Kubernetes schema with kubernetes-validate;
  podium applies them, waits for the rollout, port-forwards the Service, and deletes them.

Readiness is ``GET /health`` answering 200, or ``GET /v1/models`` when /health is absent.
Only an engine installed here can run locally; otherwise the recipe is rendered and validated
and the outcome says why it did not run. Short scheduler commands go through the one command
runner; the long-lived server and port-forward are the only processes started directly.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from podium.errors import UsageError
from podium.runner import CommandRunner, LocalRunner

Engine = Literal["vllm", "sglang", "transformers"]
Backend = Literal["local", "slurm", "k8s"]
ENGINES = ("vllm", "sglang", "transformers")
BACKENDS = ("local", "slurm", "k8s")


class ServeSpec(BaseModel):
    """What to serve, with which engine, where."""

    model_config = ConfigDict(extra="forbid")

    engine: Engine
    backend: Backend = "local"
    model: str = Field(description="Model id or path, as the engine takes it")
    served_model_name: str | None = Field(None, description="Name clients send as 'model' (vllm/sglang)")
    host: str = Field("127.0.0.1", description="Listen address (0.0.0.0 is used on slurm/k8s)")
    port: int = Field(8000, ge=1, le=65535)
    gpus: int = Field(1, ge=0, description="GPUs for the server (0 = CPU)")
    tp: int = Field(1, ge=1, description="Tensor-parallel size")
    dtype: str | None = Field(None, description="Engine dtype, e.g. bfloat16, auto")
    device: str | None = Field(None, description="transformers only: cpu, cuda, auto")
    extra_args: list[str] = Field(default_factory=list, description="Extra engine flags, passed as given")
    env: dict[str, str] = Field(default_factory=dict, description="Environment for the server")
    name: str = Field("podium-llm", pattern=r"^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$")
    image: str | None = Field(None, description="Container image (k8s); defaults per engine")
    namespace: str = "default"
    slurm_partition: str | None = None
    slurm_time: str = "01:00:00"
    ready_timeout_s: float = Field(900.0, gt=0)

    def listen_host(self) -> str:
        return self.host if self.backend == "local" else "0.0.0.0"


class ServeOutcome(BaseModel):
    """What ``serve`` did: files rendered, validation, launch, readiness, teardown."""

    model_config = ConfigDict(extra="forbid")

    engine: str
    backend: str
    command: list[str] = Field(description="Engine command line")
    rendered: list[str] = Field(default_factory=list, description="Files written (sbatch script, manifests)")
    validation_errors: list[str] = Field(default_factory=list)
    engine_installed: bool | None = Field(None, description="local backend: whether the engine runs here")
    launched: bool = False
    reason: str | None = Field(None, description="Why it was not launched or not ready")
    base_url: str | None = None
    ready_after_s: float | None = None
    ready_probe: str | None = Field(None, description="The URL that answered")
    job_id: str | None = None
    torn_down: bool = False


@lru_cache(maxsize=1)
def engine_table() -> dict[str, dict[str, Any]]:
    text = resources.files("podium").joinpath("data/inference/engines.yaml").read_text()
    return yaml.safe_load(text)["engines"]


def engine_argv(spec: ServeSpec) -> list[str]:
    """The engine's own command line."""
    host, port = spec.listen_host(), str(spec.port)
    if spec.engine == "vllm":
        argv = ["vllm", "serve", spec.model, "--host", host, "--port", port]
        argv += ["--tensor-parallel-size", str(spec.tp)]
        if spec.dtype:
            argv += ["--dtype", spec.dtype]
        if spec.served_model_name:
            argv += ["--served-model-name", spec.served_model_name]
    elif spec.engine == "sglang":
        argv = ["python3", "-m", "sglang.launch_server", "--model-path", spec.model, "--host", host]
        argv += ["--port", port, "--tp", str(spec.tp)]
        if spec.dtype:
            argv += ["--dtype", spec.dtype]
        if spec.served_model_name:
            argv += ["--served-model-name", spec.served_model_name]
    else:
        device = spec.device or ("cuda" if spec.gpus > 0 else "cpu")
        argv = ["transformers", "serve", spec.model, "--host", host, "--port", port, "--device", device]
        argv += ["--continuous-batching"]
        if spec.dtype:
            argv += ["--dtype", spec.dtype]
    return argv + list(spec.extra_args)


def engine_installed(engine: str) -> tuple[bool, str | None]:
    """Whether ``engine`` can run on this host (its module imports and its CLI is on PATH)."""
    info = engine_table()[engine]
    if importlib.util.find_spec(info["python_module"]) is None:
        return (
            False,
            f"engine {engine} is not installed here (python module '{info['python_module']}' missing)",
        )
    if info.get("cli") and shutil.which(info["cli"]) is None:
        return False, f"engine {engine}: command '{info['cli']}' not on PATH"
    return True, None


# ---------------------------------------------------------------- rendering (pure)
def render_sbatch(spec: ServeSpec, log_path: str = "podium-serve-%j.log") -> str:
    """An sbatch script that runs the server in the foreground of the job."""
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={spec.name}",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        f"#SBATCH --time={spec.slurm_time}",
        f"#SBATCH --output={log_path}",
    ]
    if spec.gpus > 0:
        lines.append(f"#SBATCH --gres=gpu:{spec.gpus}")
    if spec.slurm_partition:
        lines.append(f"#SBATCH --partition={spec.slurm_partition}")
    lines += ["set -euo pipefail", "# rendered by podium inference serve"]
    for k, v in sorted(spec.env.items()):
        lines.append(f"export {k}={shlex.quote(v)}")
    lines.append('echo "podium-serve host=$(hostname) port=' + str(spec.port) + '"')
    lines.append("exec " + shlex.join(engine_argv(spec)))
    return "\n".join(lines) + "\n"


def render_k8s(spec: ServeSpec) -> list[dict[str, Any]]:
    """A Deployment (GPU requests, readiness probe) and a ClusterIP Service."""
    labels = {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/managed-by": "podium"}
    image = spec.image or engine_table()[spec.engine]["image"]
    argv = engine_argv(spec)
    resources_: dict[str, Any] = {}
    if spec.gpus > 0:
        resources_ = {"limits": {"nvidia.com/gpu": spec.gpus}, "requests": {"nvidia.com/gpu": spec.gpus}}
    container: dict[str, Any] = {
        "name": "server",
        "image": image,
        "command": argv[:1],
        "args": argv[1:],
        "ports": [{"name": "http", "containerPort": spec.port}],
        "env": [{"name": k, "value": v} for k, v in sorted(spec.env.items())],
        "readinessProbe": {
            "httpGet": {"path": "/health", "port": spec.port},
            "periodSeconds": 5,
            "failureThreshold": max(1, int(spec.ready_timeout_s // 5)),
        },
        "resources": resources_,
        # Tensor-parallel engines share tensors through /dev/shm.
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": spec.name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [container],
                    "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": {
            "selector": {"app.kubernetes.io/name": spec.name},
            "ports": [{"name": "http", "port": spec.port, "targetPort": spec.port}],
        },
    }
    return [deployment, service]


def manifests_yaml(manifests: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(manifests, sort_keys=False)


def validate_k8s(manifests: list[dict[str, Any]], kubernetes_version: str | None = None) -> list[str]:
    """Schema errors (strict: unknown fields are errors), one line each; empty when valid."""
    try:
        import kubernetes_validate
    except ImportError:
        return ["kubernetes-validate is not installed: pip install 'podium[inference]'"]
    version = kubernetes_version or kubernetes_validate.latest_version()
    errors = []
    for m in manifests:
        try:
            kubernetes_validate.validate(m, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            errors.append(f"{m.get('kind')}/{m.get('metadata', {}).get('name')}: {path}: {e.message}")
        except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as e:
            errors.append(f"{m.get('kind')}: no schema: {e}")
    return errors


def validate_sbatch(script: str) -> list[str]:
    """Static checks: shebang, well-formed #SBATCH lines, an exec'd server command, bash syntax."""
    errors = []
    lines = script.splitlines()
    if not lines or not lines[0].startswith("#!"):
        errors.append("line 1: no shebang")
    for i, line in enumerate(lines, 1):
        if line.startswith("#SBATCH"):
            opt = line[len("#SBATCH") :].strip()
            if not opt.startswith("--") or "=" not in opt:
                errors.append(f"line {i}: malformed directive '{line}'")
    if not any(line.startswith("exec ") for line in lines):
        errors.append("no 'exec <server>' line")
    bash = shutil.which("bash")
    if bash:
        proc = subprocess.run([bash, "-n"], input=script.encode(), capture_output=True, check=False)
        if proc.returncode != 0:
            errors.append("bash -n: " + proc.stderr.decode(errors="replace").strip().splitlines()[-1])
    return errors


# ---------------------------------------------------------------- readiness (I/O)
def probe_ready(base: str, timeout_s: float = 2.0) -> str | None:
    """The first readiness URL that answers 200, or None."""
    for path in ("/health", "/v1/models"):
        url = base.rstrip("/") + path
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as resp:
                if resp.status == 200:
                    return url
        except (urllib.error.URLError, OSError, ValueError):
            continue
    return None


def wait_ready(
    base: str, timeout_s: float, failed: Callable[[], str | None] = lambda: None, interval_s: float = 0.5
) -> tuple[str | None, float, str | None]:
    """Poll until ready. Returns (probe URL, seconds waited, reason when not ready)."""
    t0 = time.monotonic()
    while True:
        why = failed()
        if why:
            return None, time.monotonic() - t0, why
        url = probe_ready(base)
        if url:
            return url, time.monotonic() - t0, None
        if time.monotonic() - t0 > timeout_s:
            return None, time.monotonic() - t0, f"not ready after {timeout_s:g}s ({base}/health, /v1/models)"
        time.sleep(interval_s)


def _tail(path: Path, n: int = 5) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(lines[-n:])[-600:]


# ---------------------------------------------------------------- launching
def render(spec: ServeSpec, out_dir: Path) -> ServeOutcome:
    """Write the backend's recipe into ``out_dir`` and validate it (no launch)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outcome = ServeOutcome(engine=spec.engine, backend=spec.backend, command=engine_argv(spec))
    if spec.backend == "slurm":
        script = render_sbatch(spec, log_path=str(out_dir / "server-%j.log"))
        path = out_dir / "serve.sbatch"
        path.write_text(script)
        outcome.rendered.append(str(path))
        outcome.validation_errors = validate_sbatch(script)
    elif spec.backend == "k8s":
        manifests = render_k8s(spec)
        path = out_dir / "serve.yaml"
        path.write_text(manifests_yaml(manifests))
        outcome.rendered.append(str(path))
        outcome.validation_errors = validate_k8s(manifests)
    else:
        path = out_dir / "serve.sh"
        env = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(spec.env.items()))
        path.write_text(
            "#!/bin/bash\nset -euo pipefail\n" + env + "exec " + shlex.join(outcome.command) + "\n"
        )
        outcome.rendered.append(str(path))
        outcome.engine_installed, why = engine_installed(spec.engine)
        if why:
            outcome.reason = why
    return outcome


@contextmanager
def launched(spec: ServeSpec, out_dir: Path, runner: CommandRunner | None = None) -> Iterator[ServeOutcome]:
    """Render, launch, wait until ready, yield the outcome (``base_url`` set when ready), tear down.

    The caller checks ``outcome.base_url``; when it is None, ``outcome.reason`` says why.
    """
    outcome = render(spec, out_dir)
    runner = runner or LocalRunner(raw_dir=out_dir / "raw")
    if outcome.validation_errors:
        outcome.reason = "rendered recipe is invalid: " + "; ".join(outcome.validation_errors)
        yield outcome
        return
    if spec.backend == "local":
        with _launch_local(spec, out_dir, outcome):
            yield outcome
    elif spec.backend == "slurm":
        with _launch_slurm(spec, out_dir, outcome, runner):
            yield outcome
    else:
        with _launch_k8s(spec, out_dir, outcome, runner):
            yield outcome


def _stop_process(proc: subprocess.Popen, grace_s: float = 20.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


@contextmanager
def _launch_local(spec: ServeSpec, out_dir: Path, outcome: ServeOutcome) -> Iterator[None]:
    if not outcome.engine_installed:
        yield
        return
    log_path = out_dir / "server.log"
    env = {**os.environ, **spec.env}
    with open(log_path, "ab") as log:
        # The server outlives any single command, so it is started directly (not via the runner)
        # in its own session, and its whole process group is stopped at teardown.
        proc = subprocess.Popen(
            outcome.command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    outcome.launched = True
    base = f"http://{spec.host}:{spec.port}"

    def failed() -> str | None:
        code = proc.poll()
        return None if code is None else f"server exited with code {code}: {_tail(log_path)}"

    try:
        url, waited, why = wait_ready(base, spec.ready_timeout_s, failed)
        outcome.ready_after_s = round(waited, 3)
        if url:
            outcome.base_url, outcome.ready_probe = base + "/v1", url
        else:
            outcome.reason = why
        yield
    finally:
        _stop_process(proc)
        outcome.torn_down = proc.poll() is not None


@contextmanager
def _launch_slurm(
    spec: ServeSpec, out_dir: Path, outcome: ServeOutcome, runner: CommandRunner
) -> Iterator[None]:
    script = outcome.rendered[0]
    sub = runner.run(["sbatch", "--parsable", script], timeout=60, name="sbatch")
    if not sub.ok:
        outcome.reason = "sbatch failed: " + sub.why_not()
        yield
        return
    job = sub.stdout.strip().split(";")[0]
    outcome.job_id, outcome.launched = job, True
    t0 = time.monotonic()
    node = None
    try:
        while time.monotonic() - t0 < spec.ready_timeout_s:
            q = runner.run(["squeue", "-h", "-j", job, "-o", "%T %N"], timeout=30, name=f"squeue-{job}")
            state, _, nodes = q.stdout.strip().partition(" ")
            if state == "RUNNING" and nodes:
                node = nodes.split(",")[0]
                break
            if q.ok and not q.stdout.strip():
                outcome.reason = (
                    f"job {job} left the queue before running: {_tail(out_dir / f'server-{job}.log')}"
                )
                break
            time.sleep(1.0)
        if node:
            base = f"http://{slurm_node_address(runner, node)}:{spec.port}"
            left = spec.ready_timeout_s - (time.monotonic() - t0)

            def failed() -> str | None:
                q = runner.run(["squeue", "-h", "-j", job, "-o", "%T"], timeout=30, name=f"squeue-{job}")
                if q.ok and q.stdout.strip() not in ("RUNNING", "COMPLETING"):
                    return (
                        f"job {job} is {q.stdout.strip() or 'gone'}: {_tail(out_dir / f'server-{job}.log')}"
                    )
                return None

            url, _, why = wait_ready(base, max(left, 1.0), failed, interval_s=1.0)
            outcome.ready_after_s = round(time.monotonic() - t0, 3)
            if url:
                outcome.base_url, outcome.ready_probe = base + "/v1", url
            else:
                outcome.reason = why
        elif not outcome.reason:
            outcome.reason = f"job {job} did not start within {spec.ready_timeout_s:g}s"
        yield
    finally:
        cancel = runner.run(["scancel", job], timeout=60, name=f"scancel-{job}")
        outcome.torn_down = cancel.ok


def parse_node_addr(scontrol_output: str) -> str | None:
    """``NodeAddr=`` from ``scontrol show node NAME -o`` (one line of key=value pairs)."""
    for field in scontrol_output.split():
        key, _, value = field.partition("=")
        if key == "NodeAddr" and value:
            return value
    return None


def slurm_node_address(runner: CommandRunner, node: str) -> str:
    """Where to reach a node's server: its Slurm NodeAddr (falls back to the node name)."""
    out = runner.run(["scontrol", "show", "node", node, "-o"], timeout=30, name=f"scontrol-node-{node}")
    return (parse_node_addr(out.stdout) if out.ok else None) or node


@contextmanager
def _launch_k8s(
    spec: ServeSpec, out_dir: Path, outcome: ServeOutcome, runner: CommandRunner
) -> Iterator[None]:
    manifest = outcome.rendered[0]
    if shutil.which("kubectl") is None:
        outcome.reason = "kubectl not found: manifests rendered and validated only"
        yield
        return
    applied = runner.run(["kubectl", "apply", "-f", manifest], timeout=120, name="kubectl-apply")
    if not applied.ok:
        outcome.reason = "kubectl apply failed: " + applied.why_not()
        yield
        return
    outcome.launched = True
    forward: subprocess.Popen | None = None
    t0 = time.monotonic()
    try:
        rollout = runner.run(
            [
                "kubectl",
                "-n",
                spec.namespace,
                "rollout",
                "status",
                f"deployment/{spec.name}",
                f"--timeout={int(spec.ready_timeout_s)}s",
            ],
            timeout=spec.ready_timeout_s + 30,
            name="kubectl-rollout",
        )
        if not rollout.ok:
            outcome.reason = "rollout did not become ready: " + rollout.why_not()
        else:
            local_port = _free_port()
            with open(out_dir / "port-forward.log", "ab") as log:
                forward = subprocess.Popen(
                    [
                        "kubectl",
                        "-n",
                        spec.namespace,
                        "port-forward",
                        f"svc/{spec.name}",
                        f"{local_port}:{spec.port}",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            base = f"http://127.0.0.1:{local_port}"
            url, _, why = wait_ready(base, 60.0)
            outcome.ready_after_s = round(time.monotonic() - t0, 3)
            if url:
                outcome.base_url, outcome.ready_probe = base + "/v1", url
            else:
                outcome.reason = why
        yield
    finally:
        if forward is not None:
            _stop_process(forward, grace_s=5)
        deleted = runner.run(
            ["kubectl", "delete", "-f", manifest, "--wait=false"], timeout=120, name="kubectl-delete"
        )
        outcome.torn_down = deleted.ok


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_engine_backend(engine: str, backend: str) -> None:
    if engine not in ENGINES:
        raise UsageError(f"--engine '{engine}': one of {', '.join(ENGINES)}")
    if backend not in BACKENDS:
        raise UsageError(f"--backend '{backend}': one of {', '.join(BACKENDS)}")
