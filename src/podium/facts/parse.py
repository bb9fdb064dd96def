"""Pure parsers: command output text -> version string (or None when the text carries none).

Each function takes what a real tool prints; tests feed them captured outputs.
"""

from __future__ import annotations

import re

_SEMVERISH = r"v?(\d+(?:\.\d+){1,3}(?:[-+~][0-9A-Za-z.+~-]+)?)"


_REPACK = re.compile(r"[~+](?:ds|dfsg|repack)\d*.*$")


def strip_repack_suffix(version: str) -> str:
    """'1.1.5+ds1' -> '1.1.5', '1.6.20~ds1' -> '1.6.20': Debian repack markers are not upstream versions."""
    return _REPACK.sub("", version)


def first_match(pattern: str, text: str, flags: int = re.MULTILINE) -> str | None:
    m = re.search(pattern, text or "", flags)
    return m.group(1) if m else None


def nvidia_smi_csv(text: str) -> list[dict[str, str]]:
    """``nvidia-smi --query-gpu=driver_version,name,uuid,pci.bus_id --format=csv,noheader``."""
    rows = []
    for line in (text or "").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and re.match(r"^\d+\.\d+", parts[0]):
            rows.append(dict(zip(("driver_version", "name", "uuid", "pci_bus_id"), parts, strict=False)))
    return rows


def proc_driver_version(text: str) -> str | None:
    """/proc/driver/nvidia/version: 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat ...'."""
    return first_match(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)


def nvidia_smi_cuda_version(text: str) -> str | None:
    """The 'CUDA Version: 12.4' in the nvidia-smi banner: the newest CUDA the driver supports."""
    return first_match(r"CUDA Version:\s*(\d+\.\d+)", text)


def nvcc_version(text: str) -> str | None:
    """nvcc --version: 'Cuda compilation tools, release 12.4, V12.4.131' -> '12.4.131'."""
    return first_match(r"release \d+\.\d+, V(\d+\.\d+\.\d+)", text) or first_match(
        r"release (\d+\.\d+)", text
    )


def nvidia_ctk_version(text: str) -> str | None:
    """nvidia-ctk --version: 'NVIDIA Container Toolkit CLI version 1.17.4'; nvidia-container-cli: 'cli-version: 1.17.4'."""
    return first_match(r"(?:CLI version|version:?)\s+" + _SEMVERISH, text, re.IGNORECASE | re.MULTILINE)


def runc_version(text: str) -> str | None:
    """runc --version: 'runc version 1.1.12'."""
    return first_match(r"^runc version\s+" + _SEMVERISH, text)


def containerd_version(text: str) -> str | None:
    """containerd --version: 'containerd containerd.io 1.7.25 bcc810d6...' or 'containerd github.com/containerd/containerd v1.6.20 ...'."""
    return first_match(r"^containerd\s+\S+\s+" + _SEMVERISH, text)


def docker_version(text: str) -> str | None:
    """docker --version: 'Docker version 28.2.2, build e6534b4'."""
    return first_match(r"Docker version\s+" + _SEMVERISH.replace("[-+~]", "[-+~]"), text.replace(",", " "))


def slurm_version(text: str) -> str | None:
    """sinfo --version / slurmd -V: 'slurm 22.05.8' or 'slurm-wlm 23.11.4'."""
    return first_match(r"^slurm(?:-wlm)?\s+(\d+\.\d+\.\d+)", text)


def munge_version(text: str) -> str | None:
    """munged --version / munge --version: 'munge-0.5.15 (2023-01-03)'."""
    return first_match(r"munge-(\d+\.\d+\.\d+)", text)


def kubelet_version(text: str) -> str | None:
    """kubelet --version: 'Kubernetes v1.30.1'."""
    return first_match(r"Kubernetes\s+v?(\d+\.\d+\.\d+\S*)", text)


def dcgm_version(text: str) -> str | None:
    """dcgmi --version: 'dcgmi  version: 3.3.9' (4.x prints the same line)."""
    return first_match(r"version:\s*(\d+\.\d+\.\d+)", text, re.IGNORECASE | re.MULTILINE)


def fabric_manager_version(text: str) -> str | None:
    """nv-fabricmanager --version: 'Fabric Manager version is : 535.104.05'."""
    return first_match(r"version is\s*:\s*(\d+\.\d+(?:\.\d+)?)", text, re.IGNORECASE | re.MULTILINE)


def ofed_info(text: str) -> tuple[str | None, str | None]:
    """ofed_info -s: 'MLNX_OFED_LINUX-24.10-1.1.4.0:' -> ('mlnx-ofed', '24.10-1.1.4.0');
    DOCA-Host prints 'OFED-internal-25.01-0.6.0:' -> ('doca-host', '25.01-0.6.0')."""
    m = re.search(r"MLNX_OFED_LINUX-([\d.]+-[\d.]+)", text or "")
    if m:
        return "mlnx-ofed", m.group(1)
    m = re.search(r"OFED-internal-([\d.]+-[\d.]+)", text or "")
    if m:
        return "doca-host", m.group(1)
    return None, None


def enroot_version(text: str) -> str | None:
    """enroot version: '3.5.0'."""
    return first_match(r"^" + _SEMVERISH + r"\s*$", (text or "").strip())


def dpkg_installed_version(text: str) -> str | None:
    """dpkg-query -W -f='${db:Status-Abbrev}|${Version}' PKG -> '0.5.15-2+deb12u1' when installed ('ii').

    A removed package whose config files remain ('rc') still has a version: it must not count.
    """
    status, _, version = (text or "").strip().partition("|")
    if status.strip() not in ("ii", "hi") or not version.strip():
        return None
    return version.strip()


def debian_upstream_version(version: str) -> str:
    """'1:1.6.20~ds1-1+deb12u3' -> '1.6.20': drop the epoch, the Debian revision and repack markers."""
    from podium.advisories.versions import debian_upstream

    return strip_repack_suffix(debian_upstream(version))


def os_release(text: str) -> dict[str, str]:
    out = {}
    for line in (text or "").splitlines():
        if "=" in line:
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip().strip('"')
    return out


def kernel_release_from_module_dir(name: str) -> str | None:
    return name if re.match(r"^\d+\.\d+", name) else None


def kernel_release_from_vmlinuz(name: str) -> str | None:
    m = re.match(r"^vmlinuz-(\d+\.\d+.*)$", name)
    return m.group(1) if m else None


def nccl_from_ldconfig(text: str) -> str | None:
    """ldconfig -p: 'libnccl.so.2.21.5 (libc6,x86-64) => /usr/lib/...' (the versioned name when present)."""
    return first_match(r"libnccl\.so\.(\d+\.\d+\.\d+)", text)


def product_line_from_gpu_names(names: list[str]) -> str:
    """Which NVIDIA driver product line advisories apply to: GeForce and RTX/Quadro rows differ from
    data-center (Tesla) rows in NVIDIA bulletins."""
    joined = " ".join(names).lower()
    if not names:
        return "datacenter"
    if "geforce" in joined or re.search(r"\b(gtx|titan)\b", joined):
        return "geforce"
    if re.search(r"quadro|rtx a\d|rtx \d+ ada|rtx pro|nvidia rtx", joined) and not re.search(
        r"\b(h100|h200|b200|b300|gb200|a100|l40|a10|l4|t4)\b", joined
    ):
        return "rtx"
    return "datacenter"
