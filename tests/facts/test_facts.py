"""Facts parsers and collectors on real captured outputs (tests/fixtures/facts/SOURCES.md)."""

from __future__ import annotations

import json
import subprocess

import pytest
from tests.conftest import FIXTURES

from podium.errors import InputError
from podium.facts import parse
from podium.facts.collect import collect_node_facts
from podium.facts.fanout import load_facts_files, parse_fanout_stdout, render_k8s_pod
from podium.facts.kernel import newest_kernel
from podium.runner import ReplayRunner

F = FIXTURES / "facts"


def text(name: str) -> str:
    return (F / name).read_text()


def test_version_parsers_on_real_outputs():
    assert parse.runc_version(text("runc--version.txt")) == "1.1.5+ds1"
    assert parse.strip_repack_suffix("1.1.5+ds1") == "1.1.5"
    assert parse.containerd_version(text("containerd--version.txt")) == "1.6.20~ds1"
    assert parse.strip_repack_suffix("1.6.20~ds1") == "1.6.20"
    assert parse.docker_version(text("docker--version.txt")) == "28.2.2"
    assert parse.munge_version(text("munged--version.txt")) == "0.5.15"
    assert parse.slurm_version(text("slurmd-V.txt")) == "22.05.8"
    assert parse.slurm_version(text("sinfo--version-noconf.txt")) is None
    assert parse.nvcc_version(text("nvcc--version.txt")) == "13.0.88"
    assert parse.nvidia_ctk_version(text("nvidia-ctk--version.txt")) == "1.17.8"
    assert parse.proc_driver_version(text("proc-driver-nvidia-version.txt")) == "515.76"
    assert parse.proc_driver_version(text("proc-driver-nvidia-version-open.txt")) == "575.57.08"
    assert parse.fabric_manager_version(text("nv-fabricmanager--version.txt")) == "535.161.08"
    assert parse.ofed_info(text("ofed_info-s-mlnx.txt")) == ("mlnx-ofed", "23.10-5.1.4.0")
    assert parse.ofed_info(text("ofed_info-s-doca.txt")) == ("doca-host", "24.10-1.1.4.0.200")
    assert parse.os_release(text("os-release.txt"))["VERSION_ID"] == "12"


def test_dpkg_status_and_debian_upstream_versions():
    assert parse.dpkg_installed_version(text("dpkg-query-status-munge.txt")) == "0.5.15-2+deb12u1"
    assert parse.dpkg_installed_version(text("dpkg-query-status-containerd-removed.txt")) is None
    assert parse.dpkg_installed_version(text("dpkg-query-status-missing.txt")) is None
    assert parse.debian_upstream_version("1.6.20~ds1-1+deb12u3") == "1.6.20"
    assert parse.debian_upstream_version("1:2.0.2-1") == "2.0.2"
    assert parse.debian_upstream_version("0.5.15-2+deb12u1") == "0.5.15"


def test_parsers_return_none_on_garbage():
    for fn in (
        parse.runc_version,
        parse.containerd_version,
        parse.slurm_version,
        parse.nvcc_version,
        parse.munge_version,
        parse.kubelet_version,
        parse.dcgm_version,
    ):
        assert fn("") is None
        assert fn("\x00\xff garbage \n" * 3) is None


def test_nvidia_smi_banner_cuda_version_from_real_output():
    banner = F / "gpud_nvidia-smi.550.90.07.out.0.valid"
    assert parse.nvidia_smi_cuda_version(banner.read_text()) == "12.4"


def test_product_line_from_gpu_names():
    assert parse.product_line_from_gpu_names(["NVIDIA H100 80GB HBM3"] * 8) == "datacenter"
    assert parse.product_line_from_gpu_names(["NVIDIA GeForce RTX 4090"]) == "geforce"
    assert parse.product_line_from_gpu_names(["NVIDIA RTX A5000", "NVIDIA RTX A5000"]) == "rtx"
    assert parse.product_line_from_gpu_names(["Quadro P400"]) == "rtx"
    assert parse.product_line_from_gpu_names([]) == "datacenter"


def test_kernel_ordering_and_reboot_pending():
    assert newest_kernel(["6.1.0-28-amd64", "6.1.0-31-amd64", "6.1.0-9-amd64"]) == "6.1.0-31-amd64"
    runner = ReplayRunner(
        {"uname -r": "6.1.0-28-amd64\n", "ls -1 /lib/modules": "6.1.0-28-amd64\n6.1.0-31-amd64\n"}
    )
    facts = collect_node_facts(runner, host="n1")
    k = facts.component("kernel")
    assert k.version == "6.1.0-28-amd64"
    assert k.details["reboot_pending"] is True and k.details["newest_installed"] == "6.1.0-31-amd64"


def test_collect_on_a_replayed_node():
    runner = ReplayRunner(
        {
            "nvidia-smi --query-gpu=driver_version,name,uuid,pci.bus_id --format=csv,noheader": "535.104.05, NVIDIA H100 80GB HBM3, GPU-aaaa, 00000000:18:00.0\n"
            "535.104.05, NVIDIA H100 80GB HBM3, GPU-bbbb, 00000000:2A:00.0\n",
            "nvidia-smi": text("gpud_nvidia-smi.550.90.07.out.0.valid"),
            "runc --version": text("runc--version.txt"),
            "dpkg-query -W -f=${db:Status-Abbrev}|${Version} runc": "ii |1.1.5+ds1-1+deb12u1",
            # removed, config files left: must not count as installed (real output, see SOURCES.md)
            "dpkg-query -W -f=${db:Status-Abbrev}|${Version} containerd": text(
                "dpkg-query-status-containerd-removed.txt"
            ),
            "dpkg-query -W -f=${db:Status-Abbrev}|${Version} munge": text("dpkg-query-status-munge.txt"),
            "slurmd -V": text("slurmd-V.txt"),
            "ofed_info -s": text("ofed_info-s-mlnx.txt"),
            "uname -r": "6.1.0-31-amd64\n",
        },
        files={"/etc/os-release": text("os-release.txt")},
    )
    facts = collect_node_facts(runner, host="gpu-001")
    d = facts.component("nvidia-driver")
    assert (d.version, d.details["product_line"], d.details["branch"]) == ("535.104.05", "datacenter", "R535")
    assert len(facts.gpus) == 2
    assert facts.component("cuda-driver").version == "12.4"
    runc = facts.component("runc")
    assert runc.version == "1.1.5" and runc.details["distro_package_version"] == "1.1.5+ds1-1+deb12u1"
    assert facts.component("containerd").visible is False  # 'rc': removed, only config files remain
    munge = facts.component("munge")  # no munged on PATH: the package manager still knows it
    assert (munge.version, munge.details["distro_package_version"]) == ("0.5.15", "0.5.15-2+deb12u1")
    assert "backported" in munge.reason
    slurm = facts.component("slurm")
    assert slurm.version == "22.05.8" and slurm.source_command == "slurmd -V"
    assert facts.component("mlnx-ofed").version == "23.10-5.1.4.0"
    assert not facts.component("doca-host").visible
    # Not seen is never a version: visible false with the reason
    nct = facts.component("nvidia-container-toolkit")
    assert nct.visible is False and "not found" in nct.reason
    assert facts.component("os").version == "12"


def test_fanout_lines_and_files(tmp_path):
    runner = ReplayRunner({"uname -r": "6.1.0\n"})
    a = collect_node_facts(runner, host="n1")
    b = collect_node_facts(runner, host="n2")
    out = f"{a.model_dump_json()}\nsrun: warning: something\n{b.model_dump_json()}\n"
    facts, problems = parse_fanout_stdout(out, "srun")
    assert [f.host for f in facts] == ["n1", "n2"]
    assert problems == ["srun line 2: not JSON: srun: warning: something"]
    p = tmp_path / "facts.json"
    p.write_text(json.dumps([a.model_dump(mode="json"), b.model_dump(mode="json")]))
    assert [f.host for f in load_facts_files([str(p)])] == ["n1", "n2"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty file"),
        ("{not json", "not JSON"),
        ('{"host": 1}', "item 0 is not NodeFacts"),
        ("42", "expected"),
    ],
)
def test_bad_facts_files_are_one_line_input_errors(tmp_path, content, problem):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(InputError) as e:
        load_facts_files([str(p)])
    assert str(p) in str(e.value) and problem in str(e.value) and "\n" not in str(e.value)


def test_k8s_pod_is_privileged_read_only_and_pinned():
    pod = render_k8s_pod("gpu-node-7", "python:3.12-slim")
    spec = pod["spec"]
    assert spec["nodeName"] == "gpu-node-7" and spec["restartPolicy"] == "Never"
    assert spec["containers"][0]["volumeMounts"][0]["readOnly"] is True
    assert pod["metadata"]["name"] == "podium-facts-gpu-node-7"


def test_facts_collect_local_cli(tmp_path):
    out = tmp_path / "facts.json"
    r = subprocess.run(
        ["podium", "facts", "collect", "--local", "--out", str(out), "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    facts = json.loads(out.read_text())
    names = {c["name"] for c in facts["components"]}
    assert {"nvidia-driver", "runc", "kernel", "slurm", "munge", "connectx-firmware"} <= names
    # this machine has no GPU: the driver is not visible, with a reason, never a made-up version
    drv = next(c for c in facts["components"] if c["name"] == "nvidia-driver")
    assert drv["visible"] is False and drv["version"] is None and drv["reason"]
    run_dirs = list(tmp_path.glob("*-facts-*"))
    assert run_dirs and (run_dirs[0] / "raw").is_dir() and (run_dirs[0] / "run.log").is_file()


def test_srun_labelled_chunks_are_reassembled_per_task():
    from podium.launch.srun import task_outputs

    runner = ReplayRunner({"uname -r": "6.1.0\n"})
    a = collect_node_facts(runner, host="n1").model_dump_json()
    b = collect_node_facts(runner, host="n2").model_dump_json()
    # srun forwards each task's output in chunks; with --label every chunk carries its task id
    text = f"0: {a[:300]}\n1: {b[:100]}\n0: {a[300:]}\n1: {b[100:]}\n"
    facts, problems = parse_fanout_stdout("\n".join(task_outputs(text)), "srun")
    assert [f.host for f in facts] == ["n1", "n2"] and problems == []


def test_k8s_fanout_applies_one_pod_per_gpu_node_and_merges_logs():
    from podium.facts.fanout import collect_k8s

    a = collect_node_facts(ReplayRunner({"uname -r": "6.8.0\n"}), host="gpu-a").model_dump_json()
    b = collect_node_facts(ReplayRunner({"uname -r": "6.8.0\n"}), host="gpu-b").model_dump_json()
    runner = ReplayRunner(
        {
            "kubectl get nodes -l nvidia.com/gpu.present=true -o jsonpath={.items[*].metadata.name}": "gpu-a gpu-b",
            "kubectl": "",  # apply / wait / delete print nothing we read
            "kubectl logs -n default pod/podium-facts-gpu-a": a + "\n",
            "kubectl logs -n default pod/podium-facts-gpu-b": b + "\n",
        }
    )
    facts, problems = collect_k8s(runner, image="registry.example/podium:0.1")
    assert [f.host for f in facts] == ["gpu-a", "gpu-b"] and all(f.method == "k8s" for f in facts)
    assert problems == []
    verbs = [c[1] for c in runner.calls if c[0] == "kubectl"]
    assert verbs == ["get", "apply", "apply", "wait", "logs", "delete", "wait", "logs", "delete"]
    # pods are always deleted, even though podium only reads
    assert ["kubectl", "delete", "-n", "default", "pod/podium-facts-gpu-b", "--wait=false"] in runner.calls
