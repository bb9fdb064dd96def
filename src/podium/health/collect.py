"""Live collection of one node's passive inputs, through the one command runner."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from podium.health.ib_sysfs import read_ib_sysfs_tree
from podium.health.inputs import NodeInputs, RawText
from podium.health.nvml import collect_nvml, nvml_available
from podium.runner import CommandOutput, CommandRunner

NO_GPU = "no NVIDIA GPU"


def _raw(out: CommandOutput) -> RawText:
    return RawText(text=out.stdout, source=out.command, collected_at=out.started_at, raw_output=out.raw_path)


def has_nvidia_gpu(runner: CommandRunner) -> tuple[bool, str | None]:
    """Whether this node has an NVIDIA GPU we can talk to, and why not."""
    if runner.read_file("/proc/driver/nvidia/version") is None:
        probe = runner.run(["nvidia-smi", "-L"], timeout=15, name="nvidia-smi-L")
        if not probe.ran:
            return False, f"nvidia-smi {probe.error}; no /proc/driver/nvidia"
        if not probe.ok or "GPU " not in probe.stdout:
            return False, probe.why_not()
    return True, None


def collect_node(
    runner: CommandRunner,
    thresholds: dict[str, Any],
    required_mounts: list[str] | None = None,
    use_nvml: bool = True,
    ib_root: Path = Path("/sys/class/infiniband"),
) -> NodeInputs:
    """Gather the passive inputs. Nothing is graded here; what is missing is recorded with a reason."""
    host = getattr(runner, "host", None) or socket.gethostname()
    inputs = NodeInputs(host=host, required_mounts=list(required_mounts or []))

    gpu, why = has_nvidia_gpu(runner)
    if not gpu:
        inputs.no_gpu_reason = NO_GPU  # the exact reason text every GPU check carries
        inputs.missing["gpu"] = why or NO_GPU
    else:
        if use_nvml and nvml_available():
            inputs.nvml = collect_nvml()
        if inputs.nvml is None:
            out = runner.run(["nvidia-smi", "-q", "-x"], timeout=30, name="nvidia-smi-q-x")
            if out.ok:
                inputs.nvidia_smi_xml = _raw(out)
            else:
                out = runner.run(["nvidia-smi", "-q"], timeout=30, name="nvidia-smi-q")
                if out.ok:
                    inputs.nvidia_smi_text = _raw(out)
                else:
                    inputs.missing["gpu"] = out.why_not()
        out = runner.run(["nvidia-smi", "nvlink", "-s"], timeout=15, name="nvidia-smi-nvlink")
        if out.ok and out.stdout.strip():
            inputs.nvlink = _raw(out)
            err = runner.run(["nvidia-smi", "nvlink", "-e"], timeout=15, name="nvidia-smi-nvlink-e")
            if err.ok and err.stdout.strip():
                inputs.nvlink_errors = _raw(err)
        fm = runner.run(
            ["tail", "-c", "2000000", "/var/log/fabricmanager.log"], timeout=10, name="fabricmanager-log"
        )
        if fm.ok and fm.stdout.strip():
            inputs.fabric_manager = _raw(fm)

    hours = thresholds.get("kernel_log_lookback_hours", 24)
    out = runner.run(
        ["journalctl", "-k", "--no-pager", "-o", "short-iso-precise", "--since", f"-{hours}h"],
        timeout=20,
        name="journalctl-k",
    )
    if out.ok and out.stdout.strip() and "-- No entries --" not in out.stdout[:100]:
        inputs.kernel_log = _raw(out)
    else:
        d = runner.run(["dmesg", "--time-format", "iso"], timeout=20, name="dmesg")
        if d.ok and d.stdout.strip():
            inputs.kernel_log = _raw(d)
        else:
            inputs.missing["kernel_log"] = f"{out.why_not()}; {d.why_not()}"
    for log in ("/var/log/syslog", "/var/log/messages"):
        s = runner.run(["tail", "-c", "5000000", log], timeout=10, name="syslog")
        if s.ok and s.stdout.strip():
            inputs.syslog = _raw(s)
            break

    files = read_ib_sysfs_tree(ib_root)
    if files:
        inputs.ib_sysfs, inputs.ib_sysfs_source = files, str(ib_root)
    else:
        out = runner.run(["ibstat"], timeout=15, name="ibstat")
        if out.ok and out.stdout.strip():
            inputs.ibstat = _raw(out)
        else:
            inputs.missing["ib"] = f"no devices under {ib_root}; ibstat: {out.error or out.returncode}"

    mounts = runner.read_file("/proc/mounts")
    if mounts is not None:
        inputs.mounts = RawText(text=mounts, source="/proc/mounts")
    for argv, attr in ((["df", "-P", "-k"], "df"), (["ps", "-eo", "pid=,stat=,comm="], "ps")):
        out = runner.run(argv, timeout=15, name=argv[0])
        # df exits 1 when one mount (e.g. a stale NFS) fails but still prints the rest
        if out.ran and out.stdout.strip():
            setattr(inputs, attr, _raw(out))
    govs = []
    for cpu in range(os.cpu_count() or 1):
        v = runner.read_file(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")
        if v is None:
            break
        govs.append(v.strip())
    inputs.governors = govs or None
    return inputs
