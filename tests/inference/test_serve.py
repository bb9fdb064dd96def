"""Serving recipes: rendered, validated (kubernetes-validate, bash -n, sbatch --test-only), launched for real."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
import yaml

from podium.cli.main import main
from podium.inference.serve import (
    ServeSpec,
    engine_argv,
    engine_installed,
    launched,
    probe_ready,
    render,
    render_k8s,
    render_sbatch,
    validate_k8s,
    validate_sbatch,
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "engine, expected",
    [
        (
            "vllm",
            [
                "vllm",
                "serve",
                "org/m",
                "--host",
                "0.0.0.0",
                "--port",
                "8000",
                "--tensor-parallel-size",
                "8",
                "--dtype",
                "bfloat16",
            ],
        ),
        (
            "sglang",
            [
                "python3",
                "-m",
                "sglang.launch_server",
                "--model-path",
                "org/m",
                "--host",
                "0.0.0.0",
                "--port",
                "8000",
                "--tp",
                "8",
                "--dtype",
                "bfloat16",
            ],
        ),
        (
            "transformers",
            [
                "transformers",
                "serve",
                "org/m",
                "--host",
                "0.0.0.0",
                "--port",
                "8000",
                "--device",
                "cuda",
                "--continuous-batching",
                "--dtype",
                "bfloat16",
            ],
        ),
    ],
)
def test_engine_command_lines(engine, expected):
    spec = ServeSpec(engine=engine, backend="k8s", model="org/m", gpus=8, tp=8, dtype="bfloat16")
    assert engine_argv(spec) == expected


@pytest.mark.parametrize("engine", ["vllm", "sglang", "transformers"])
def test_k8s_manifests_render_and_validate(engine):
    spec = ServeSpec(
        engine=engine,
        backend="k8s",
        model="meta-llama/Llama-3.1-8B-Instruct",
        gpus=8,
        tp=8,
        env={"HF_HUB_OFFLINE": "1"},
        name="llama-8b",
        namespace="bench",
    )
    deployment, service = render_k8s(spec)
    assert validate_k8s([deployment, service]) == []
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8}
    assert container["resources"]["requests"] == {"nvidia.com/gpu": 8}
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000}
    assert [container["command"][0], *container["args"]] == engine_argv(spec)
    assert service["spec"]["selector"] == {"app.kubernetes.io/name": "llama-8b"}
    assert service["spec"]["ports"][0]["targetPort"] == 8000


def test_k8s_validation_catches_schema_errors():
    deployment, service = render_k8s(ServeSpec(engine="vllm", backend="k8s", model="m"))
    deployment["spec"]["replicas"] = "one"
    service["spec"]["portz"] = []
    errors = validate_k8s([deployment, service])
    assert len(errors) == 2
    assert errors[0].startswith("Deployment/podium-llm: spec.replicas:")
    assert errors[1].startswith("Service/podium-llm:")


def test_sbatch_renders_and_validates():
    spec = ServeSpec(
        engine="vllm",
        backend="slurm",
        model="org/m",
        gpus=4,
        tp=4,
        slurm_partition="gpu",
        env={"HF_TOKEN_PATH": "/secrets/hf token"},
    )
    script = render_sbatch(spec, "/runs/x/server-%j.log")
    assert validate_sbatch(script) == []
    lines = script.splitlines()
    assert "#SBATCH --gres=gpu:4" in lines and "#SBATCH --partition=gpu" in lines
    assert "export HF_TOKEN_PATH='/secrets/hf token'" in lines
    assert lines[-1] == ("exec vllm serve org/m --host 0.0.0.0 --port 8000 --tensor-parallel-size 4")
    broken = script.replace("#SBATCH --nodes=1", "#SBATCH nodes").replace("exec vllm", "if then vllm")
    errors = validate_sbatch(broken)
    assert any("malformed directive" in e for e in errors)
    assert any(e.startswith("bash -n:") for e in errors)
    assert "no 'exec <server>' line" in errors


def test_uninstalled_engine_is_rendered_not_run(tmp_path, capsys):
    installed, why = engine_installed("vllm")
    if installed:
        pytest.skip("vLLM is installed here; this test is about an engine that is not")
    assert why == "engine vllm is not installed here (python module 'vllm' missing)"
    code = main(
        ["inference", "serve", "--engine", "vllm", "--model", "org/m", "--runs-dir", str(tmp_path), "--json"]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["launched"] is False and out["engine_installed"] is False and out["reason"] == why
    assert (
        Path(out["rendered"][0])
        .read_text()
        .endswith("exec vllm serve org/m --host 127.0.0.1 --port 8000 --tensor-parallel-size 1\n")
    )


def test_render_only_k8s_cli(tmp_path, capsys):
    code = main(
        [
            "inference",
            "serve",
            "--engine",
            "sglang",
            "--backend",
            "k8s",
            "--model",
            "org/m",
            "--gpus",
            "2",
            "--tp",
            "2",
            "--render-only",
            "--runs-dir",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["validation_errors"] == [] and out["launched"] is False
    docs = list(yaml.safe_load_all(Path(out["rendered"][0]).read_text()))
    assert [d["kind"] for d in docs] == ["Deployment", "Service"]


def test_sbatch_test_only_on_real_slurm(tmp_path):
    from tests.conftest import need

    need(os.environ.get("PODIUM_TEST_SLURM") == "1", "needs the CI Slurm (PODIUM_TEST_SLURM=1)")
    out = render(ServeSpec(engine="transformers", backend="slurm", model="m", gpus=0), tmp_path)
    assert out.validation_errors == []
    from podium.runner import LocalRunner

    res = LocalRunner().run(["sbatch", "--test-only", out.rendered[0]], timeout=30)
    assert res.returncode == 0, res.why_not()
    assert "to start at" in (res.stderr + res.stdout)


def llm_model_dir() -> str | None:
    model = os.environ.get("PODIUM_TEST_LLM_MODEL")
    return model if model and Path(model, "config.json").is_file() else None


@pytest.mark.llm
def test_serve_cli_launches_sweeps_and_tears_down(tmp_path, capsys):
    from tests.conftest import need

    need(
        llm_model_dir() is not None,
        "needs the SmolLM2 HF folder (PODIUM_TEST_LLM_MODEL, scripts/ci/llm-server.sh)",
    )
    need(engine_installed("transformers")[0], "needs transformers[serving] (pip install -e '.[llm-server]')")
    port = free_port()
    system = tmp_path / "system.yaml"
    system.write_text(
        "hw: cpu\nengine: transformers\nmodel: smollm2-135m\nprecision: bf16\nisl: 16\nosl: 8\n"
    )
    code = main(
        [
            "inference",
            "serve",
            "--engine",
            "transformers",
            "--backend",
            "local",
            "--model",
            llm_model_dir(),
            "--port",
            str(port),
            "--gpus",
            "0",
            "--env",
            "HF_HUB_OFFLINE=1",
            "--env",
            "TRANSFORMERS_OFFLINE=1",
            "--engine-arg=--cb-num-blocks",
            "--engine-arg=128",
            "--ready-timeout",
            "180",
            "--sweep-system",
            str(system),
            "--concurrency",
            "1,2",
            "--requests",
            "2",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reason"] is None, out["reason"]
    assert out["launched"] is True and out["torn_down"] is True
    assert out["base_url"] == f"http://127.0.0.1:{port}/v1"
    assert out["ready_probe"] == f"http://127.0.0.1:{port}/health"
    assert out["command"][-2:] == ["--cb-num-blocks", "128"]
    result = json.loads(Path(out["sweep_result"]).read_text())
    assert [p["concurrency"] for p in result["points"]] == [1, 2]
    assert all(p["requests_ok"] == 2 and p["requests_failed"] == 0 for p in result["points"])
    # Torn down: nothing answers on the port any more, and the server's log was kept.
    assert probe_ready(f"http://127.0.0.1:{port}", timeout_s=1) is None
    assert (Path(out["run_dir"]) / "server.log").is_file()
    assert shutil.which("transformers") is not None


def test_k8s_launch_without_a_cluster_says_why(tmp_path, monkeypatch):
    # A real kubectl with no reachable cluster (or no kubectl at all): nothing launched, a reason given.
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    spec = ServeSpec(engine="vllm", backend="k8s", model="org/m", gpus=1, ready_timeout_s=5)
    with launched(spec, tmp_path) as outcome:
        assert outcome.base_url is None and outcome.launched is False
    if shutil.which("kubectl"):
        assert outcome.reason.startswith("kubectl apply failed: `kubectl apply -f ")
    else:
        assert outcome.reason == "kubectl not found: manifests rendered and validated only"
    assert outcome.validation_errors == [] and outcome.rendered == [str(tmp_path / "serve.yaml")]


def test_parse_node_addr():
    from podium.inference.serve import parse_node_addr

    line = (
        "NodeName=n1 Arch=x86_64 CoresPerSocket=1 NodeAddr=127.0.0.1 NodeHostName=localhost Version=22.05.8"
    )
    assert parse_node_addr(line) == "127.0.0.1"
    assert parse_node_addr("garbage") is None


@pytest.mark.llm
@pytest.mark.slurm
def test_slurm_transformers_launch_ready_and_cancelled(tmp_path):
    from tests.conftest import need

    need(os.environ.get("PODIUM_TEST_SLURM") == "1", "needs the CI Slurm (PODIUM_TEST_SLURM=1)")
    need(
        llm_model_dir() is not None,
        "needs the SmolLM2 HF folder (PODIUM_TEST_LLM_MODEL, scripts/ci/llm-server.sh)",
    )
    need(engine_installed("transformers")[0], "needs transformers[serving] (pip install -e '.[llm-server]')")
    from podium.runner import LocalRunner

    port = free_port()
    spec = ServeSpec(
        engine="transformers",
        backend="slurm",
        model=llm_model_dir(),
        port=port,
        gpus=0,
        env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        ready_timeout_s=240,
        name="podium-test-serve",
        slurm_time="00:10:00",
    )
    runner = LocalRunner(raw_dir=tmp_path / "raw")
    with launched(spec, tmp_path, runner) as outcome:
        assert outcome.reason is None, outcome.reason
        assert outcome.job_id and outcome.job_id.isdigit()
        assert outcome.base_url == f"http://127.0.0.1:{port}/v1"
        state = runner.run(["squeue", "-h", "-j", outcome.job_id, "-o", "%T"]).stdout.strip()
        assert state == "RUNNING"
    assert outcome.torn_down is True
    # scancel took the server down with the job.
    for _ in range(60):
        if probe_ready(f"http://127.0.0.1:{port}", timeout_s=1) is None:
            break
        import time

        time.sleep(0.5)
    assert probe_ready(f"http://127.0.0.1:{port}", timeout_s=1) is None
