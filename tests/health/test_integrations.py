"""Live quick run on this (GPU-less) machine, Prometheus textfile, Kubernetes manifests, Slurm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from health_helpers import make_replay
from tests.conftest import need

from podium.cli.main import main
from podium.health.api import run_health
from podium.health.integrations.k8s import node_patch, render_manifests
from podium.health.integrations.prometheus import render_prometheus, write_textfile
from podium.health.integrations.slurm import drain_reason
from podium.launch.srun import json_documents, task_outputs
from podium.runner import ReplayRunner

GPU_IDS = {
    "gpu.count",
    "gpu.ecc",
    "gpu.memory-remap",
    "gpu.throttle",
    "gpu.temperature",
    "gpu.idle-power",
    "gpu.pcie",
    "gpu.nvlink",
}


def test_quick_on_this_machine_is_honest(capsys):
    need(
        shutil.which("nvidia-smi") is None and not Path("/proc/driver/nvidia").exists(),
        "this test expects no NVIDIA GPU",
    )
    assert main(["health", "--quick", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    checks = {c["id"]: c for c in doc["nodes"][0]["checks"]}
    assert {
        cid for cid, c in checks.items() if c["status"] == "skipped" and c["reason"] == "no NVIDIA GPU"
    } == GPU_IDS
    # host checks are real: this machine's df and ps were read
    assert checks["host.disk"]["status"] in ("pass", "warn", "fail")
    assert checks["host.disk"]["evidence"][0]["source"]["command"] == "df -P -k"
    assert checks["host.d-state"]["evidence"][0]["source"]["command"] == "ps -eo pid=,stat=,comm="
    assert checks["host.mounts"]["status"] == "pass"
    assert doc["nodes"][0]["verdict"] in ("pass", "warn")


def test_full_mode_without_gpu_skips_active_checks():
    runner = ReplayRunner(
        {
            "df -P -k": "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 100 50 50 50% /\n"
        },
        files={"/proc/mounts": "/dev/sda1 / ext4 rw,relatime 0 0\n"},
        host="n9",
    )
    node = run_health(mode="full", runner=runner).nodes[0]
    active = {c.id: (c.status.value, c.reason) for c in node.checks if c.id.startswith("active.")}
    assert active == {
        cid: ("skipped", "no NVIDIA GPU")
        for cid in ("active.dcgm-diag", "active.gemm-stress", "active.gpu-memory", "active.nccl-allreduce")
    }
    assert node.host == "n9" and ["nvidia-smi", "-L"] in runner.calls
    disk = next(c for c in node.checks if c.id == "host.disk")
    assert (disk.status.value, disk.evidence[0].value) == ("pass", 50.0)


def test_replay_runner_sees_full_disk_and_d_state():
    runner = ReplayRunner(
        {
            "df -P -k": "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 1000 990 10 99% /\n",
            "ps -eo pid=,stat=,comm=": "1 Ss init\n 42 D nfsd\n 43 D+ cp\n",
        },
        files={"/proc/mounts": "/dev/sda1 / ext4 ro,relatime 0 0\n"},
        host="n8",
    )
    node = run_health(runner=runner, required_mounts=["/scratch"]).nodes[0]
    by = {c.id: (c.status.value, c.details["action"]) for c in node.checks}
    assert by["host.disk"] == ("fail", "drain")
    assert by["host.d-state"] == ("warn", "none")
    assert by["host.mounts"] == ("fail", "drain")
    assert (node.verdict.value, node.action.value) == ("fail", "drain")


def test_prometheus_textfile(tmp_path):
    d = make_replay(
        tmp_path, "gpu7", {"sys/class/infiniband": "sysfs-infiniband/gpud_sys-class-infiniband-h100.0"}
    )
    report = run_health(replay_dir=d)
    text = render_prometheus(report)
    assert 'podium_health_verdict{host="gpu7",verdict="fail"} 1' in text
    assert 'podium_health_verdict{host="gpu7",verdict="pass"} 0' in text
    assert 'podium_health_action{host="gpu7",action="drain"} 1' in text
    assert 'podium_health_check_status{host="gpu7",check="ib.counters",status="fail"} 1' in text
    out = tmp_path / "tf" / "podium.prom"
    assert main(["health", "--replay", str(d), "--prometheus", str(out), "--fail-on", "never"]) == 0
    lines = out.read_text().splitlines()
    assert all(ln.startswith(("# HELP ", "# TYPE ", "podium_health_")) for ln in lines)
    write_textfile(report, out)
    assert not list(out.parent.glob(".*.tmp"))


def test_k8s_manifests_validate_and_label_patch(tmp_path, capsys):
    import kubernetes_validate
    import yaml

    docs = render_manifests()
    for doc in docs:
        kubernetes_validate.validate(doc, "1.29", strict=True)
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    container = ds["spec"]["template"]["spec"]["containers"][0]
    assert "--k8s-label" in container["command"][-1]
    assert ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"]
    assert main(["health", "--k8s"]) == 0
    out, err = capsys.readouterr()
    assert [d["kind"] for d in yaml.safe_load_all(out)] == [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "DaemonSet",
    ]
    from podium.health.integrations.k8s import kubernetes_client_available

    if kubernetes_client_available():  # no cluster here: the client cannot list nodes, and says so
        assert "rendered manifests; could not list nodes" in " ".join(err.split())
    else:
        assert "rendered the DaemonSet manifests only" in " ".join(err.split())
    node = run_health(
        replay_dir=make_replay(tmp_path, "w1", {"dmesg.txt": "dmesg/gpud_memory_dmesg.decode.iso.log"})
    ).nodes[0]
    patch = node_patch(node)
    assert patch["metadata"]["labels"] == {"podium.io/health": "warn", "podium.io/health-action": "none"}
    assert patch["status"]["conditions"][0]["status"] == "Unknown"


def test_split_srun_labelled_output():
    a = json.dumps({"nodes": [{"host": "n1"}]}, indent=2).splitlines()
    b = json.dumps({"nodes": [{"host": "n2"}]}, indent=2).splitlines()
    mixed = [
        f"0: {a[0]}",
        f"1: {b[0]}",
        "srun: warning",
        *(f"1: {x}" for x in b[1:]),
        *(f"0: {x}" for x in a[1:]),
    ]
    tasks = task_outputs("\n".join(mixed))
    assert [json_documents(t)[0]["nodes"][0]["host"] for t in tasks] == ["n1", "n2"]


def _slurm_env() -> dict[str, str]:
    need(
        bool(os.environ.get("SLURM_CONF")) and os.environ.get("PODIUM_TEST_SLURM") == "1",
        "needs the real Slurm (scripts/test.sh)",
    )
    need(shutil.which("scontrol") is not None, "scontrol not installed")
    return dict(os.environ)


def _node_line(node: str) -> str:
    return subprocess.run(
        ["scontrol", "show", "node", node, "-o"], capture_output=True, text=True, check=True
    ).stdout


def test_slurm_healthcheck_drains_and_resumes_n1(tmp_path):
    _slurm_env()
    bad = make_replay(
        tmp_path, "bad", {"sys/class/infiniband": "sysfs-infiniband/gpud_sys-class-infiniband-h100.0"}
    )
    good = make_replay(tmp_path, "good", {"ibstat.txt": "ibstat/gpud_ibstat.47.0.a100.all.active.0"})
    try:
        assert main(["health", "--slurm-healthcheck", "--replay", str(bad), "--node", "n1", "--json"]) == 1
        line = _node_line("n1")
        assert "DRAIN" in line.split("State=")[1].split()[0]
        reason = line.split("Reason=")[1]
        assert reason.startswith("podium: fail, action drain: ib.counters")
        # healthy again: podium resumes its own drain
        assert main(["health", "--slurm-healthcheck", "--replay", str(good), "--node", "n1", "--json"]) == 0
        assert "DRAIN" not in _node_line("n1").split("State=")[1].split()[0]
    finally:
        subprocess.run(["scontrol", "update", "nodename=n1", "state=resume"], capture_output=True)


def test_slurm_healthcheck_leaves_foreign_drain_alone(tmp_path):
    _slurm_env()
    good = make_replay(tmp_path, "good", {"ibstat.txt": "ibstat/gpud_ibstat.47.0.a100.all.active.0"})
    subprocess.run(
        ["scontrol", "update", "nodename=n2", "state=drain", "reason=admin: maintenance"], check=True
    )
    try:
        assert main(["health", "--slurm-healthcheck", "--replay", str(good), "--node", "n2", "--json"]) == 0
        assert "Reason=admin: maintenance" in _node_line("n2")
    finally:
        subprocess.run(["scontrol", "update", "nodename=n2", "state=resume"], capture_output=True)


def test_slurm_fan_out_real(capsys):
    _slurm_env()
    report_argv = ["health", "--slurm", "--json", "--fail-on", "never"]
    assert main(report_argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(n["host"] for n in doc["nodes"]) == [
        "n1",
        "n2",
    ]  # one task per node, named by its UTS namespace
    for n in doc["nodes"]:
        assert {c["id"]: c["reason"] for c in n["checks"] if c["id"] == "gpu.count"} == {
            "gpu.count": "no NVIDIA GPU"
        }


def test_drain_reason_is_short_and_prefixed(tmp_path):
    node = run_health(
        replay_dir=make_replay(tmp_path, "x", {"ibstat.txt": "ibstat/gpud_ibstat.47.0.h100.some.down.0"})
    ).nodes[0]
    assert drain_reason(node) == "podium: fail, action drain: ib.port-state"
