"""Launchers: sbatch scripts, Slurm output parsing, Kubernetes manifests validated against the schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.bench.suite import TaskOutput
from podium.launch import k8s, slurm


def _render(bench: str, **kw) -> str:
    opts = slurm.SlurmOptions(**kw)
    return slurm.render_script(
        bench, "quick", {"corrupt_rank": 3}, Path("/runs/r1/results") / bench, Path("/runs/r1/slurm"), opts
    )


def test_sbatch_per_gpu_benchmark_on_gpu_nodes():
    text = _render(
        "gemm",
        nodes=4,
        gpus_per_node=8,
        nodelist="gpu[01-04]",
        exclude="gpu07",
        partition="h100",
        python="/opt/venv/bin/python",
    )
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    for want in (
        "#SBATCH --job-name=podium-gemm",
        "#SBATCH --nodes=4",
        "#SBATCH --ntasks-per-node=8",
        "#SBATCH --gpus-per-node=8",
        "#SBATCH --nodelist=gpu[01-04]",
        "#SBATCH --exclude=gpu07",
        "#SBATCH --partition=h100",
        "#SBATCH --export=ALL",
        "#SBATCH --output=/runs/r1/slurm/gemm-%j.out",
        "export PODIUM_ONE_DEVICE_PER_TASK=1  # each task measures the GPU at its SLURM_LOCALID",
        'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)',
    ):
        assert want in lines, want
    assert lines[-1] == (
        "srun --ntasks-per-node=8 --kill-on-bad-exit=0 /opt/venv/bin/python -m podium.bench.worker --benchmark gemm "
        "--profile quick --opts '{\"corrupt_rank\": 3}' --out /runs/r1/results/gemm"
    )


def test_sbatch_node_level_benchmark_and_pyxis_image():
    text = _render(
        "storage",
        nodes=2,
        gpus_per_node=8,
        container_image="nvcr.io#nvidia/pytorch:24.04-py3",
        master_addr="10.0.0.1",
    )
    assert "#SBATCH --ntasks-per-node=1" in text
    assert "export MASTER_ADDR=10.0.0.1" in text
    # '#' would start a comment in bash: the argument is quoted
    assert (
        "'--container-image=nvcr.io#nvidia/pytorch:24.04-py3' --container-mounts=/runs/r1:/runs/r1 python3 -m podium.bench.worker"
        in text
    )


def test_sbatch_cpu_only_has_no_gpu_request():
    text = _render("collectives", nodes=1)
    assert "--gpus-per-node" not in text and "#SBATCH --ntasks-per-node=1" in text


def test_slurm_output_parsers():
    assert slurm.parse_sbatch("1234\n") == "1234"
    assert slurm.parse_sbatch("1234;cluster\n") == "1234"
    assert slurm.parse_sbatch("sbatch: error: Batch job submission failed") is None
    st = slurm.parse_sacct("17|COMPLETED|0:0|n1\n17.batch|COMPLETED|0:0|n1\n", "17")
    assert (st.state, st.exit_code, st.nodes) == ("COMPLETED", "0:0", "n1")
    assert slurm.parse_sacct("17|CANCELLED by 0|0:15|n1\n", "17").state == "CANCELLED"
    sc = slurm.parse_scontrol_job(
        "JobId=18 JobName=podium-gemm UserId=root(0) JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=n2",
        "18",
    )
    assert (sc.state, sc.exit_code, sc.nodes, sc.source) == ("FAILED", "1:0", "n2", "scontrol")


def _validate(doc: dict) -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is in the dev extra")
    kv.validate(json.loads(json.dumps(doc)), desired_version="1.31.0", strict=True)


def test_k8s_job_and_service_validate_against_kubernetes_schemas():
    opts = k8s.K8sOptions(
        image="ghcr.io/example/podium-bench:0.1",
        nodes=2,
        gpus_per_node=8,
        rdma_resource="rdma/rdma_shared_device_a",
        namespace="bench",
    )
    docs = k8s.render_job(
        "collectives", "quick", {"ops": ["all_reduce"]}, "20261130T000000Z-bench-abc123", opts
    )
    assert [d["kind"] for d in docs] == ["Job", "Service"]
    for d in docs:
        _validate(d)
    job = docs[0]
    assert job["metadata"]["name"] == "podium-collectives-abc123"
    assert job["spec"]["completions"] == 2 and job["spec"]["completionMode"] == "Indexed"
    c = job["spec"]["template"]["spec"]["containers"][0]
    assert c["resources"]["limits"] == {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1}
    assert c["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert (
        env["MASTER_ADDR"] == "podium-collectives-abc123-0.podium-collectives-abc123"
        and env["WORLD_SIZE"] == "2"
    )
    assert c["command"][:5] == ["python3", "-m", "podium.bench.worker", "--benchmark", "collectives"]


def test_k8s_cpu_job_validates_and_invalid_manifest_is_rejected():
    opts = k8s.K8sOptions(image="python:3.11", nodes=1)
    (job,) = k8s.render_job("numerics", "smoke", {}, "run-000001", opts)
    _validate(job)
    assert "resources" not in job["spec"]["template"]["spec"]["containers"][0]
    kv = pytest.importorskip("kubernetes_validate")
    job["spec"]["completions"] = "two"
    with pytest.raises(kv.ValidationError):
        kv.validate(job, desired_version="1.31.0", strict=True)


def test_k8s_needs_an_image():
    from podium.errors import UsageError

    with pytest.raises(UsageError, match="--container-image"):
        k8s.render_job("gemm", "quick", {}, "r", k8s.K8sOptions())


def test_k8s_crd_manifests():
    opts = k8s.K8sOptions(image="img", nodes=3, gpus_per_node=8)
    pj = k8s.render_pytorchjob("train_step", "quick", {}, "run-aaaaaa", opts)
    assert pj["apiVersion"] == "kubeflow.org/v1" and pj["kind"] == "PyTorchJob"
    assert pj["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
    assert pj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
    assert (
        pj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] == "pytorch"
    )
    js = k8s.render_jobset("train_step", "quick", {}, "run-aaaaaa", opts)
    assert js["kind"] == "JobSet" and js["spec"]["replicatedJobs"][0]["template"]["spec"]["completions"] == 3
    # the Job inside a JobSet is a plain batch/v1 JobSpec: validate it as one
    _validate(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "x"},
            "spec": js["spec"]["replicatedJobs"][0]["template"]["spec"],
        }
    )


def test_k8s_results_come_from_pod_logs():
    out = TaskOutput(benchmark="numerics", host="pod-0", task=0)
    log = "loading...\nPODIUM_RESULT " + out.model_dump_json() + "\n"
    assert k8s.parse_logs(log, "numerics", "pod-0") == out
    bad = k8s.parse_logs(
        "Traceback ...\nModuleNotFoundError: No module named 'podium'\n", "numerics", "pod-1"
    )
    assert (
        bad.error
        == "no PODIUM_RESULT line in log of pod-1; last line: ModuleNotFoundError: No module named 'podium'"
    )
