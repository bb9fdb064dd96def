"""Collect NodeFacts on one node: one small collector per component, all through one runner.

A collector never guesses: if the tool is missing or prints nothing usable, the component is
``visible: false`` with the reason, and the audit grades it ``unknown``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path

from podium import __version__
from podium.facts import parse
from podium.models.facts import ComponentFact, NodeFacts
from podium.runner import CommandOutput, CommandRunner

Collector = Callable[[CommandRunner], list[ComponentFact]]

# Version probes: (component, [(argv, parser)], Debian/RPM package names as a fallback)
_SIMPLE: list[tuple[str, list[tuple[list[str], Callable[[str], str | None]]], list[str]]] = [
    (
        "nvidia-container-toolkit",
        [
            (["nvidia-ctk", "--version"], parse.nvidia_ctk_version),
            (["nvidia-container-cli", "--version"], parse.nvidia_ctk_version),
        ],
        ["nvidia-container-toolkit", "libnvidia-container-tools"],
    ),
    ("runc", [(["runc", "--version"], parse.runc_version)], ["runc"]),
    (
        "containerd",
        [(["containerd", "--version"], parse.containerd_version)],
        ["containerd.io", "containerd"],
    ),
    ("docker", [(["docker", "--version"], parse.docker_version)], ["docker-ce", "docker.io"]),
    (
        "dcgm",
        [(["dcgmi", "--version"], parse.dcgm_version)],
        ["datacenter-gpu-manager", "datacenter-gpu-manager-4-core"],
    ),
    ("fabric-manager", [(["nv-fabricmanager", "--version"], parse.fabric_manager_version)], []),
    (
        "slurm",
        # sinfo/srun need a slurm.conf even for --version on 22.05; the daemons' -V does not
        [
            (["sinfo", "--version"], parse.slurm_version),
            (["slurmd", "-V"], parse.slurm_version),
            (["slurmctld", "-V"], parse.slurm_version),
        ],
        ["slurm-wlm", "slurmd", "slurm"],
    ),
    (
        "munge",
        [(["munged", "--version"], parse.munge_version), (["munge", "--version"], parse.munge_version)],
        ["munge"],
    ),
    ("kubernetes", [(["kubelet", "--version"], parse.kubelet_version)], ["kubelet"]),
    ("enroot", [(["enroot", "version"], parse.enroot_version)], ["enroot"]),
]


def _tried(outputs: Sequence[CommandOutput]) -> str:
    return "; ".join(o.why_not() for o in outputs)


def _package_version(
    runner: CommandRunner, packages: Sequence[str]
) -> tuple[str | None, str | None, str | None]:
    """(upstream version, full package version, command) from dpkg, then rpm; Nones when not installed."""
    for pkg in packages:
        out = runner.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}|${Version}", pkg], timeout=10)
        if out.ok and (full := parse.dpkg_installed_version(out.stdout)):
            return parse.debian_upstream_version(full), full, out.command
        out = runner.run(["rpm", "-q", "--qf", "%{VERSION}|%{VERSION}-%{RELEASE}", pkg], timeout=10)
        if out.ok and "|" in out.stdout and "not installed" not in out.stdout:
            upstream, _, full = out.stdout.strip().partition("|")
            return upstream, full, out.command
    return None, None, None


def _simple(component: str, probes, packages) -> Collector:
    def collect(runner: CommandRunner) -> list[ComponentFact]:
        tried = []
        for argv, parser in probes:
            out = runner.run(argv, timeout=15)
            tried.append(out)
            if out.ran:
                reported = parser(out.stdout + "\n" + out.stderr)
                if reported:
                    version = parse.strip_repack_suffix(reported)
                    details: dict = {}
                    if version != reported:  # a distro build: its package may carry backported fixes
                        _, pkg_version, _ = _package_version(runner, packages)
                        details = {"reported": reported, "distro_package_version": pkg_version}
                    return [
                        ComponentFact(
                            name=component,
                            version=version,
                            visible=True,
                            source_command=out.command,
                            details=details,
                        )
                    ]
        version, full, cmd = _package_version(runner, packages)
        if version:
            return [
                ComponentFact(
                    name=component,
                    version=version,
                    visible=True,
                    source_command=cmd,
                    reason="version from the package manager (a distro build may carry backported fixes)",
                    details={"distro_package_version": full},
                )
            ]
        return [ComponentFact(name=component, visible=False, reason=_tried(tried) or "no probe ran")]

    collect.__name__ = f"collect_{component.replace('-', '_')}"
    return collect


def collect_nvidia_driver(runner: CommandRunner) -> list[ComponentFact]:
    """Driver version and GPU identity: NVML when importable, else nvidia-smi, else /proc."""
    tried: list[str] = []
    try:
        import pynvml  # nvidia-ml-py, optional

        pynvml.nvmlInit()
        try:
            driver = pynvml.nvmlSystemGetDriverVersion()
            driver = driver.decode() if isinstance(driver, bytes) else driver
            names = []
            for i in range(pynvml.nvmlDeviceGetCount()):
                n = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))
                names.append(n.decode() if isinstance(n, bytes) else n)
            cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        finally:
            pynvml.nvmlShutdown()
        return _driver_facts(
            driver, names, "nvml: nvmlSystemGetDriverVersion", f"{cuda // 1000}.{cuda % 1000 // 10}"
        )
    except ImportError:
        tried.append("NVML: nvidia-ml-py not installed")
    except Exception as e:  # NVML raises its own error types when no driver is loaded
        tried.append(f"NVML: {type(e).__name__}: {e}")

    out = runner.run(
        ["nvidia-smi", "--query-gpu=driver_version,name,uuid,pci.bus_id", "--format=csv,noheader"],
        timeout=30,
        name="nvidia-smi-query-gpu",
    )
    if out.ok and (rows := parse.nvidia_smi_csv(out.stdout)):
        banner = runner.run(["nvidia-smi"], timeout=30, name="nvidia-smi")
        cuda = parse.nvidia_smi_cuda_version(banner.stdout) if banner.ok else None
        facts = _driver_facts(rows[0]["driver_version"], [r.get("name", "") for r in rows], out.command, cuda)
        facts[0].details["gpus"] = rows
        return facts
    tried.append(out.why_not())
    text = runner.read_file("/proc/driver/nvidia/version")
    if text and (v := parse.proc_driver_version(text)):
        return _driver_facts(v, [], "read /proc/driver/nvidia/version", None)
    tried.append("/proc/driver/nvidia/version: not present (no NVIDIA kernel module loaded)")
    return [
        ComponentFact(name="nvidia-driver", visible=False, reason="; ".join(tried)),
        ComponentFact(name="cuda-driver", visible=False, reason="no NVIDIA driver visible"),
    ]


def _driver_facts(driver: str, names: list[str], source: str, cuda: str | None) -> list[ComponentFact]:
    line = parse.product_line_from_gpu_names(names)
    facts = [
        ComponentFact(
            name="nvidia-driver",
            version=driver,
            visible=True,
            source_command=source,
            details={
                "product_line": line,
                "branch": f"R{driver.split('.')[0]}",
                "gpu_names": sorted(set(names)),
            },
        )
    ]
    facts.append(
        ComponentFact(name="cuda-driver", version=cuda, visible=cuda is not None, source_command=source)
        if cuda
        else ComponentFact(name="cuda-driver", visible=False, reason="driver did not report a CUDA version")
    )
    return facts


def collect_cuda_toolkit(runner: CommandRunner) -> list[ComponentFact]:
    out = runner.run(["nvcc", "--version"], timeout=15)
    if out.ok and (v := parse.nvcc_version(out.stdout)):
        return [ComponentFact(name="cuda-toolkit", version=v, visible=True, source_command=out.command)]
    for cand in sorted(Path("/usr/local").glob("cuda-*/version.json"), reverse=True):
        text = runner.read_file(str(cand))
        if text and (v := parse.first_match(r'"cuda"\s*:\s*\{[^}]*"version"\s*:\s*"([\d.]+)"', text)):
            return [
                ComponentFact(name="cuda-toolkit", version=v, visible=True, source_command=f"read {cand}")
            ]
    return [ComponentFact(name="cuda-toolkit", visible=False, reason=out.why_not())]


def collect_kernel(runner: CommandRunner) -> list[ComponentFact]:
    """Running kernel vs newest installed: a newer installed kernel means 'patched but not rebooted'."""
    out = runner.run(["uname", "-r"], timeout=5)
    if not out.ok:
        return [ComponentFact(name="kernel", visible=False, reason=out.why_not())]
    running = out.stdout.strip()
    installed: set[str] = set()
    mods = runner.run(["ls", "-1", "/lib/modules"], timeout=5)
    if mods.ok:
        installed |= {v for n in mods.stdout.split() if (v := parse.kernel_release_from_module_dir(n))}
    boot = runner.run(["ls", "-1", "/boot"], timeout=5)
    if boot.ok:
        installed |= {v for n in boot.stdout.split() if (v := parse.kernel_release_from_vmlinuz(n))}
    details: dict = {"running": running, "installed": sorted(installed)}
    if installed:
        from podium.facts.kernel import newest_kernel

        newest = newest_kernel(installed | {running})
        details["newest_installed"] = newest_kernel(installed)
        details["reboot_pending"] = newest != running
    else:
        details["reboot_pending"] = None
        details["note"] = "no installed kernels listed in /lib/modules or /boot (container or custom boot)"
    return [
        ComponentFact(
            name="kernel", version=running, visible=True, source_command=out.command, details=details
        )
    ]


def collect_os(runner: CommandRunner) -> list[ComponentFact]:
    text = runner.read_file("/etc/os-release")
    if not text:
        return [ComponentFact(name="os", visible=False, reason="/etc/os-release not readable")]
    info = parse.os_release(text)
    return [
        ComponentFact(
            name="os",
            version=info.get("VERSION_ID"),
            visible=True,
            source_command="read /etc/os-release",
            details={"id": info.get("ID"), "pretty_name": info.get("PRETTY_NAME")},
        )
    ]


def collect_ofed(runner: CommandRunner) -> list[ComponentFact]:
    """DOCA-Host or MLNX_OFED from ofed_info; one of them is visible, the other says why not."""
    out = runner.run(["ofed_info", "-s"], timeout=10)
    comp, version = parse.ofed_info(out.stdout) if out.ok else (None, None)
    if comp is None:
        v, _, cmd = _package_version(runner, ["doca-host", "doca-ofed"])
        if v:
            comp, version, out_cmd = "doca-host", v, cmd
        else:
            reason = out.why_not() if not out.ok else "ofed_info printed no MLNX_OFED/DOCA version"
            return [
                ComponentFact(name="doca-host", visible=False, reason=reason),
                ComponentFact(name="mlnx-ofed", visible=False, reason=reason),
            ]
    else:
        out_cmd = out.command
    other = "mlnx-ofed" if comp == "doca-host" else "doca-host"
    return [
        ComponentFact(name=comp, version=version, visible=True, source_command=out_cmd),
        ComponentFact(name=other, visible=False, reason=f"node runs {comp}, not {other}"),
    ]


def collect_connectx_firmware(runner: CommandRunner) -> list[ComponentFact]:
    """ConnectX firmware per HCA from sysfs (/sys/class/infiniband/*/fw_ver)."""
    ls = runner.run(["ls", "-1", "/sys/class/infiniband"], timeout=5)
    if not ls.ok or not ls.stdout.strip():
        return [
            ComponentFact(name="connectx-firmware", visible=False, reason="no /sys/class/infiniband devices")
        ]
    per_hca = {}
    for hca in ls.stdout.split():
        fw = runner.read_file(f"/sys/class/infiniband/{hca}/fw_ver")
        hca_type = runner.read_file(f"/sys/class/infiniband/{hca}/hca_type")
        if fw:
            per_hca[hca] = {"fw_ver": fw.strip(), "hca_type": (hca_type or "").strip()}
    if not per_hca:
        return [ComponentFact(name="connectx-firmware", visible=False, reason="fw_ver not readable in sysfs")]
    versions = sorted({v["fw_ver"] for v in per_hca.values()})
    return [
        ComponentFact(
            name="connectx-firmware",
            version=versions[0],  # the oldest firmware on the node is what an advisory hits first
            visible=True,
            source_command="read /sys/class/infiniband/*/fw_ver",
            details={"hcas": per_hca, "distinct_versions": versions},
        )
    ]


def collect_nccl(runner: CommandRunner) -> list[ComponentFact]:
    out = runner.run(["ldconfig", "-p"], timeout=10)
    if out.ok and (v := parse.nccl_from_ldconfig(out.stdout)):
        return [ComponentFact(name="nccl", version=v, visible=True, source_command=out.command)]
    v, _, cmd = _package_version(runner, ["libnccl2"])
    if v:
        return [ComponentFact(name="nccl", version=v, visible=True, source_command=cmd)]
    return [
        ComponentFact(
            name="nccl",
            visible=False,
            reason="no versioned libnccl.so in the linker cache and no libnccl2 package "
            "(NCCL bundled inside a framework wheel is not visible here)",
        )
    ]


def collect_pyxis(runner: CommandRunner) -> list[ComponentFact]:
    out = runner.run(["srun", "--help"], timeout=10)
    if not out.ran:
        return [ComponentFact(name="pyxis", visible=False, reason=out.why_not())]
    has = "--container-image" in out.stdout
    return [
        ComponentFact(
            name="pyxis",
            version="present" if has else None,
            visible=has,
            source_command=out.command,
            reason=None if has else "srun --help lists no --container-image option (pyxis not loaded)",
        )
    ]


def collect_gpu_operator(runner: CommandRunner) -> list[ComponentFact]:
    """The GPU Operator version is a cluster fact: read it from the operator's deployment image tag."""
    out = runner.run(
        [
            "kubectl",
            "get",
            "deployments",
            "-A",
            "-l",
            "app=gpu-operator",
            "-o",
            "jsonpath={.items[*].spec.template.spec.containers[*].image}",
        ],
        timeout=20,
    )
    if out.ok and (v := parse.first_match(r"gpu-operator:v?([\d.]+)", out.stdout)):
        return [ComponentFact(name="gpu-operator", version=v, visible=True, source_command=out.command)]
    return [
        ComponentFact(
            name="gpu-operator", visible=False, reason=out.why_not() if not out.ok else "not deployed"
        )
    ]


COLLECTORS: list[Collector] = [
    collect_nvidia_driver,
    collect_cuda_toolkit,
    *[_simple(c, p, pk) for c, p, pk in _SIMPLE],
    collect_gpu_operator,
    collect_kernel,
    collect_os,
    collect_ofed,
    collect_connectx_firmware,
    collect_nccl,
    collect_pyxis,
]


def collect_node_facts(runner: CommandRunner, host: str | None = None, method: str = "local") -> NodeFacts:
    """Run every collector on this node. A collector that crashes yields a not-visible fact, never a crash."""
    components: list[ComponentFact] = []
    for collector in COLLECTORS:
        try:
            components.extend(collector(runner))
        except Exception as e:  # a bug in one collector must not lose the others' facts
            name = collector.__name__.removeprefix("collect_").replace("_", "-")
            components.append(ComponentFact(name=name, visible=False, reason=f"collector error: {e}"))
    driver = next((c for c in components if c.name == "nvidia-driver"), None)
    gpus = list(driver.details.get("gpus", [])) if driver else []
    labels = {}
    if os.environ.get("SLURMD_NODENAME"):
        labels["slurm_node"] = os.environ["SLURMD_NODENAME"]
    return NodeFacts(
        host=host or os.environ.get("SLURMD_NODENAME") or socket.gethostname(),
        collector_version=__version__,
        method=method,
        components=components,
        gpus=gpus,
        labels=labels,
    )


def collect_local_facts(runner: CommandRunner | None = None) -> NodeFacts:
    from podium.runner import LocalRunner

    return collect_node_facts(runner or LocalRunner())
