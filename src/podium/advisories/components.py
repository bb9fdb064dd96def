"""Canonical component names, their aliases, version ecosystem and release-line rule.

A release line is the series a vendor maintains fixes on: an NVIDIA driver branch (R535),
a minor series for containerd/runc/Kubernetes/Slurm (1.7, 1.30, 23.02), a DOCA or OFED release
(2.9, 24.10). ``line_rule`` says how to derive it from a version:

- ``driver-branch``: 'R' + major (535.104.05 -> R535)
- ``minor``: first two numeric parts (1.7.13 -> 1.7, 24.10-1.1.4.0 -> 24.10)
- ``firmware``: NVIDIA NIC/DPU firmware: the sub-minor after the device prefix
  (28.39.5050 or 39.5050 -> 39; GA and LTS tracks are such lines)
- ``none``: one line for everything (versions compare directly)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from podium.advisories.versions import debian_upstream, version_key


@dataclass(frozen=True)
class Component:
    """One thing podium can grade: its canonical name, aliases, version scheme and line rule."""

    name: str
    ecosystem: str
    line_rule: str = "minor"
    aliases: tuple[str, ...] = ()
    description: str = ""
    # OSV package names (exact) that belong to this component.
    osv_packages: tuple[str, ...] = field(default=())


COMPONENTS: tuple[Component, ...] = (
    Component(
        "nvidia-driver",
        "nvidia-driver",
        "driver-branch",
        ("driver", "nvidia", "gpu-driver", "nvidia-gpu-driver", "display-driver"),
        "NVIDIA GPU display/data-center driver",
    ),
    Component(
        "nvidia-container-toolkit",
        "semver",
        "minor",
        ("nct", "container-toolkit", "nvidia-ctk", "libnvidia-container", "nvidia-container-runtime"),
        "NVIDIA Container Toolkit",
        ("github.com/NVIDIA/nvidia-container-toolkit",),
    ),
    Component(
        "gpu-operator",
        "semver",
        "minor",
        ("nvidia-gpu-operator",),
        "NVIDIA GPU Operator",
        ("github.com/NVIDIA/gpu-operator",),
    ),
    Component(
        "k8s-device-plugin",
        "semver",
        "minor",
        ("nvidia-device-plugin", "device-plugin"),
        "NVIDIA Kubernetes device plugin",
        ("github.com/NVIDIA/k8s-device-plugin",),
    ),
    Component(
        "mig-manager",
        "semver",
        "minor",
        ("mig-parted", "nvidia-mig-manager"),
        "NVIDIA MIG Manager (mig-parted)",
        ("github.com/NVIDIA/mig-parted",),
    ),
    Component("dcgm", "generic", "minor", ("datacenter-gpu-manager",), "NVIDIA Data Center GPU Manager"),
    Component("dcgm-exporter", "generic", "minor", (), "NVIDIA DCGM Exporter"),
    Component("cuda-toolkit", "generic", "none", ("cuda",), "NVIDIA CUDA Toolkit"),
    Component("nvjpeg", "generic", "none", (), "NVIDIA nvJPEG library (CUDA)"),
    Component("nvjpeg2000", "generic", "none", (), "NVIDIA nvJPEG2000 library"),
    Component("nvtiff", "generic", "none", (), "NVIDIA nvTIFF library"),
    Component(
        "runc",
        "go",
        "minor",
        ("opencontainers-runc",),
        "runc OCI runtime",
        ("github.com/opencontainers/runc",),
    ),
    Component(
        "go-selinux",
        "go",
        "minor",
        ("opencontainers-selinux",),
        "opencontainers/selinux Go library (vendored in runc)",
        ("github.com/opencontainers/selinux",),
    ),
    Component(
        "containerd",
        "go",
        "minor",
        (),
        "containerd container runtime",
        ("github.com/containerd/containerd", "github.com/containerd/containerd/v2"),
    ),
    Component(
        "kubernetes",
        "semver",
        "minor",
        ("k8s", "kubelet", "kube-apiserver", "kube-controller-manager", "kube-proxy", "kubectl"),
        "Kubernetes (the cve-feed's k8s.io/* packages)",
        (
            "k8s.io/kubernetes",
            "k8s.io/apiserver",
            "k8s.io/kubelet",
            "k8s.io/kubectl",
            "k8s.io/kube-proxy",
            "k8s.io/controller-manager",
            "k8s.io/client-go",
        ),
    ),
    Component(
        "ingress-nginx",
        "go",
        "minor",
        ("nginx-ingress", "ingress-nginx-controller"),
        "Kubernetes ingress-nginx controller",
        ("k8s.io/ingress-nginx", "github.com/kubernetes/ingress-nginx"),
    ),
    Component(
        "csi-proxy",
        "semver",
        "minor",
        (),
        "Kubernetes CSI proxy (Windows)",
        ("github.com/kubernetes-csi/csi-proxy",),
    ),
    Component(
        "azurefile-csi-driver",
        "semver",
        "minor",
        (),
        "Azure File CSI driver",
        ("sigs.k8s.io/azurefile-csi-driver",),
    ),
    Component(
        "secrets-store-csi-driver",
        "semver",
        "minor",
        (),
        "Secrets Store CSI driver",
        ("sigs.k8s.io/secrets-store-csi-driver",),
    ),
    Component(
        "slurm",
        "generic",
        "minor",
        ("slurm-wlm", "slurm-llnl", "slurmd", "slurmctld"),
        "Slurm workload manager",
    ),
    Component("munge", "generic", "none", ("libmunge",), "MUNGE authentication service"),
    Component("doca-host", "generic", "minor", ("doca", "doca-ofed"), "NVIDIA DOCA-Host"),
    Component("mlnx-ofed", "generic", "minor", ("ofed", "mofed", "mlnx_ofed"), "Mellanox OFED"),
    Component(
        "connectx-firmware", "generic", "firmware", ("connectx", "cx-firmware"), "NVIDIA ConnectX firmware"
    ),
    Component(
        "bluefield",
        "generic",
        "firmware",
        ("bluefield-firmware", "bfb"),
        "NVIDIA BlueField DPU software/firmware",
    ),
    Component("bluefield-bmc", "generic", "none", (), "NVIDIA BlueField DPU BMC software"),
    Component("bluefield-virtio-net", "generic", "none", (), "NVIDIA BlueField VIRTIO-Net emulation"),
    Component("dpdk", "generic", "none", ("mlnx-dpdk",), "DPDK (NVIDIA/Mellanox and upstream)"),
    Component("nvos", "generic", "none", (), "NVIDIA NVOS switch OS"),
    Component("cumulus-linux", "generic", "none", ("cumulus",), "NVIDIA Cumulus Linux"),
    Component("ufm", "generic", "none", ("ufm-enterprise",), "NVIDIA Unified Fabric Manager"),
    Component(
        "base-command-manager",
        "generic",
        "none",
        ("bcm", "bright-cluster-manager", "bright"),
        "NVIDIA Base Command Manager / Bright Cluster Manager",
    ),
    Component("kai-scheduler", "semver", "minor", ("kai",), "NVIDIA KAI Scheduler"),
    Component("nvswitch", "generic", "none", ("ls10", "nvswitch-firmware"), "NVSwitch (LS10) firmware"),
    Component("gpu-vbios", "generic", "none", ("vbios",), "HGX/DGX GPU VBIOS"),
)

_BY_NAME: dict[str, Component] = {}
for _c in COMPONENTS:
    for _n in (_c.name, *_c.aliases):
        _BY_NAME[_n.lower()] = _c
_BY_OSV_PACKAGE: dict[str, Component] = {p: c for c in COMPONENTS for p in c.osv_packages}


def known_names() -> list[str]:
    """Canonical component names, sorted."""
    return sorted(c.name for c in COMPONENTS)


def find_component(name: str) -> Component | None:
    """The component for a canonical name or alias (case-insensitive), or None."""
    return _BY_NAME.get(name.strip().lower())


def is_known(name: str) -> bool:
    """Whether ``name`` is a component (or alias) podium can query advisories for."""
    return find_component(name) is not None


def component_for_osv_package(package: str) -> Component | None:
    """The component an OSV package name belongs to, or None."""
    return _BY_OSV_PACKAGE.get(package)


_NUM_RE = re.compile(r"\d+")


def release_line(component: Component, version: str) -> str | None:
    """The release line of ``version`` (R535, 1.7, 23.02, 24.10), or None for one-line components.

    Raises VersionError when the version does not parse in the component's ecosystem.
    """
    version_key(component.ecosystem, version)  # validate
    if component.line_rule == "driver-branch":
        return f"R{int(version.split('.')[0])}"
    if component.line_rule == "none":
        return None
    if component.line_rule == "firmware":
        parts = version.split(".")
        return parts[1] if len(parts) == 3 else parts[0]
    v = debian_upstream(version) if component.ecosystem == "debian" else version
    v = v.lstrip("v")
    nums = _NUM_RE.findall(v.split("-")[0])
    if len(nums) >= 2:
        # Keep the original spelling of the minor part: Slurm's '23.02' must not become '23.2'.
        head = v.split("-")[0].split(".")
        return f"{head[0]}.{head[1]}" if len(head) >= 2 and head[1].isdigit() else ".".join(nums[:2])
    return nums[0] if nums else None


def line_sort_key(component: Component, line: str) -> tuple:
    """Sort key of a release line of ``component`` (R535 < R570; 1.7 < 1.30)."""
    if line.startswith("R") and line[1:].isdigit():
        return (int(line[1:]),)
    return tuple(int(n) for n in _NUM_RE.findall(line)) or (0,)
