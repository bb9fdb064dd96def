"""Host isolation and configuration: IOMMU mode, PCIe ACS on GPU<->NIC paths, perf_event_paranoid,
and a kernel that was updated but not rebooted into.
"""

from __future__ import annotations

import os
import re

from pydantic import BaseModel, Field

from podium.checks.evidence import from_command, from_file, result, unavailable
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.models.results import CheckResult

CATEGORY = "host"


# ---------------------------------------------------------------- IOMMU


class IommuState(BaseModel):
    """What /proc/cmdline asks for and what /sys/class/iommu shows."""

    mode: str = Field(description="off | passthrough | translated | unknown")
    cmdline_flags: dict[str, str] = Field(default_factory=dict)
    iommu_units: list[str] = Field(default_factory=list)


def parse_iommu(cmdline: str, units: list[str]) -> IommuState:
    """Grade the IOMMU mode from kernel command line flags and the IOMMU units sysfs lists."""
    if not cmdline.strip():
        raise ParseError("/proc/cmdline", "empty")
    flags: dict[str, str] = {}
    for tok in cmdline.split():
        if tok == "--":
            break  # the rest belongs to init
        key, _, value = tok.partition("=")
        if key in ("intel_iommu", "amd_iommu", "iommu", "iommu.passthrough", "iommu.strict"):
            flags[key] = value
    off = flags.get("intel_iommu") == "off" or flags.get("amd_iommu") == "off" or flags.get("iommu") == "off"
    passthrough = flags.get("iommu") == "pt" or flags.get("iommu.passthrough") == "1"
    if off or not units:
        mode = "off"
    elif passthrough:
        mode = "passthrough"
    else:
        mode = "translated"
    return IommuState(mode=mode, cmdline_flags=flags, iommu_units=sorted(units))


def check_iommu(ctx: CheckContext) -> list[CheckResult]:
    """IOMMU mode: off means any device can DMA anywhere in host memory."""
    spec_id, title = "host.iommu", "IOMMU mode"
    path = ctx.path("/proc/cmdline")
    cmdline = ctx.runner.read_file(path)
    if cmdline is None:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=f"cannot read {path}")]
    iommu_dir = ctx.path("/sys/class/iommu")
    units = os.listdir(iommu_dir) if os.path.isdir(iommu_dir) else []
    try:
        state = parse_iommu(cmdline, units)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    ev = [
        from_file(
            path,
            ctx.host,
            f"IOMMU flags: {state.cmdline_flags or 'none'}",
            value=" ".join(f"{k}={v}" for k, v in state.cmdline_flags.items()),
        ),
        from_file(
            iommu_dir,
            ctx.host,
            f"IOMMU units: {', '.join(state.iommu_units) or 'none'}",
            value=len(state.iommu_units),
        ),
    ]
    if state.mode == "off":
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject="IOMMU off",
                evidence=ev,
                remediation="Without an IOMMU any PCIe device (or VF handed to a tenant) can DMA anywhere in host memory. "
                "Fine for single-tenant bare metal; required (intel_iommu=on / amd_iommu=on, iommu=pt for GPUDirect) when devices are passed to tenants' VMs.",
                references=["https://docs.kernel.org/arch/x86/iommu.html"],
                details=state.model_dump(),
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.PASS,
            host=ctx.host,
            subject=state.mode,
            evidence=ev,
            details=state.model_dump(),
        )
    ]


# ---------------------------------------------------------------- PCIe ACS


class PciDevice(BaseModel):
    """One function from ``lspci -vvv``."""

    address: str = Field(description="[domain:]bus:dev.fn as printed")
    domain: int = 0
    bus: int
    class_name: str
    description: str
    secondary: int | None = None
    subordinate: int | None = None
    port_type: str | None = Field(
        None, description="Root Port | Upstream Port | Downstream Port | Endpoint ..."
    )
    acs_ctl: dict[str, bool] | None = None
    capabilities_denied: bool = False

    def is_gpu(self) -> bool:
        return (
            self.class_name in ("3D controller", "VGA compatible controller", "Display controller")
            and "NVIDIA" in self.description
        )

    def is_nic(self) -> bool:
        return self.class_name == "Infiniband controller" or (
            self.class_name == "Ethernet controller"
            and ("Mellanox" in self.description or "ConnectX" in self.description)
        )

    def acs_redirects(self) -> bool:
        return bool(self.acs_ctl and (self.acs_ctl.get("ReqRedir") or self.acs_ctl.get("CmpltRedir")))


_HEADER = re.compile(
    r"^(?:(?P<dom>[0-9a-fA-F]{4}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})\.(?P<fn>[0-7]) "
    r"(?P<cls>[^:\[]+?)(?: \[[0-9a-fA-F]{4}\])?: (?P<desc>.*)$"
)


def parse_lspci_vvv(text: str, source: str = "lspci -vvv") -> list[PciDevice]:
    """Parse ``lspci -vvv`` (with or without -D/-nn): bridges' bus ranges, PCIe port type, ACSCtl flags."""
    devices: list[PciDevice] = []
    current: PciDevice | None = None
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            current = PciDevice(
                address=line.split(" ", 1)[0],
                domain=int(m.group("dom") or "0", 16),
                bus=int(m.group("bus"), 16),
                class_name=m.group("cls").strip(),
                description=m.group("desc").strip(),
            )
            devices.append(current)
            continue
        if current is None:
            continue
        s = line.strip()
        bm = re.match(r"^Bus: primary=([0-9a-f]{2}), secondary=([0-9a-f]{2}), subordinate=([0-9a-f]{2})", s)
        if bm:
            current.secondary, current.subordinate = int(bm.group(2), 16), int(bm.group(3), 16)
        elif s.startswith("Capabilities: <access denied>"):
            current.capabilities_denied = True
        elif re.match(r"^Capabilities: \[[0-9a-f]+\] Express \(v\d\) ", s):
            pm = re.search(
                r"Express \(v\d\) (Root Port|Upstream Port|Downstream Port|Endpoint|Legacy Endpoint|Root Complex Integrated Endpoint)",
                s,
            )
            current.port_type = pm.group(1) if pm else None
        elif s.startswith("ACSCtl:"):
            flags = {}
            for tok in s[len("ACSCtl:") :].split():
                if tok[-1] in "+-":
                    flags[tok[:-1]] = tok[-1] == "+"
            if "ReqRedir" not in flags:
                raise ParseError(source, f"{current.address}: ACSCtl line without ReqRedir: {s[:80]!r}")
            current.acs_ctl = flags
    if not devices:
        raise ParseError(source, "no 'BB:DD.F class: description' device lines")
    return devices


class AcsPath(BaseModel):
    """One GPU/NIC pair and the bridges between them."""

    gpu: str
    nic: str
    shared_switch: bool
    bridges: list[str]
    redirecting: list[str]


def gpu_nic_paths(devices: list[PciDevice]) -> list[AcsPath]:
    """For every GPU/NIC pair: the bridges below their lowest common bridge and which ones redirect P2P."""
    bridges = [d for d in devices if d.secondary is not None and d.subordinate is not None]

    def ancestors(dev: PciDevice) -> list[PciDevice]:
        return [
            b
            for b in bridges
            if b.domain == dev.domain and b.secondary <= dev.bus <= b.subordinate and b is not dev
        ]

    paths = []
    for g in (d for d in devices if d.is_gpu()):
        for n in (d for d in devices if d.is_nic()):
            ag, an = ancestors(g), ancestors(n)
            common = [b for b in ag if b in an]
            below = [b for b in ag + an if b not in common]
            shared = any(b.port_type in ("Upstream Port", "Downstream Port") for b in common)
            paths.append(
                AcsPath(
                    gpu=g.address,
                    nic=n.address,
                    shared_switch=shared,
                    bridges=[b.address for b in below],
                    redirecting=[b.address for b in below if b.acs_redirects()] if shared else [],
                )
            )
    return paths


def check_pcie_acs(ctx: CheckContext) -> list[CheckResult]:
    """ACS redirect on PCIe switch ports between GPUs and NICs (sends GPUDirect RDMA through the root complex)."""
    spec_id, title = "host.pcie-acs", "PCIe ACS redirect on GPU<->NIC paths"
    out = ctx.runner.run(["lspci", "-vvv"], timeout=30)
    if not out.ok:
        hint = "install pciutils" if out.error == "not found" else None
        return [unavailable(out, spec_id, title, CATEGORY, ctx.host, hint=hint)]
    try:
        devices = parse_lspci_vvv(out.stdout)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    paths = gpu_nic_paths(devices)
    if not paths:
        gpus = sum(d.is_gpu() for d in devices)
        nics = sum(d.is_nic() for d in devices)
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason=f"no NVIDIA GPU and RDMA NIC pair on the PCIe bus ({gpus} GPUs, {nics} NICs)",
            )
        ]
    if any(d.capabilities_denied for d in devices):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                reason="lspci could not read extended capabilities (run as root to see ACSCtl)",
            )
        ]
    bad = [p for p in paths if p.redirecting]
    ev = [
        from_command(
            out,
            f"GPU {p.gpu} <-> NIC {p.nic}: {'shared switch' if p.shared_switch else 'no shared switch'}; ACS redirect on {', '.join(p.redirecting) or 'none'}",
            value=len(p.redirecting),
        )
        for p in paths
    ][:32]
    details = {"paths": [p.model_dump() for p in paths]}
    if bad:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject=", ".join(sorted({b for p in bad for b in p.redirecting})),
                evidence=ev,
                remediation="On bare metal, disable ACS request/completion redirect on the PCIe switch ports between GPUs and NICs "
                "(BIOS, or setpci at boot) so GPUDirect RDMA stays peer-to-peer; keep it on where devices are passed to different VMs.",
                references=[
                    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs"
                ],
                details=details,
            )
        ]
    return [result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, evidence=ev, details=details)]


# ---------------------------------------------------------------- perf_event_paranoid


def parse_perf_event_paranoid(text: str) -> int:
    """/proc/sys/kernel/perf_event_paranoid as an int."""
    value = text.strip()
    if not re.fullmatch(r"-?\d+", value):
        raise ParseError("/proc/sys/kernel/perf_event_paranoid", f"not an integer: {value[:20]!r}")
    return int(value)


def check_perf_event_paranoid(ctx: CheckContext) -> list[CheckResult]:
    """perf_event_paranoid below 2 lets unprivileged users profile the kernel and other processes' CPU events."""
    spec_id, title = "host.perf-event-paranoid", "perf_event_paranoid restricts unprivileged profiling"
    path = ctx.path("/proc/sys/kernel/perf_event_paranoid")
    text = ctx.runner.read_file(path)
    if text is None:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=f"cannot read {path}")]
    try:
        value = parse_perf_event_paranoid(text)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    ev = [from_file(path, ctx.host, f"perf_event_paranoid = {value}", value=value)]
    if value < 2:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM if value < 1 else Severity.LOW,
                host=ctx.host,
                subject=f"perf_event_paranoid={value}",
                evidence=ev,
                remediation="Set kernel.perf_event_paranoid=2 (or higher) on shared nodes; grant CAP_PERFMON to profilers that need more.",
                references=["https://docs.kernel.org/admin-guide/perf-security.html"],
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.PASS,
            host=ctx.host,
            subject=f"perf_event_paranoid={value}",
            evidence=ev,
        )
    ]


# ---------------------------------------------------------------- kernel updated, not rebooted


def kernel_version_key(version: str) -> tuple:
    """Sort key for kernel release strings ('6.1.0-18-amd64' > '6.1.0-17-amd64', '5.15.0-101' > '5.15.0-99')."""
    return tuple(int(p) if p.isdigit() else p for p in re.findall(r"\d+|[a-zA-Z]+", version))


def installed_kernels(boot_names: list[str], module_dirs: list[str]) -> list[str]:
    """Kernel releases installed: /boot/vmlinuz-<release> files and /lib/modules/<release> dirs."""
    found = {
        n[len("vmlinuz-") :]
        for n in boot_names
        if n.startswith("vmlinuz-") and not n.endswith((".old", ".bak"))
    }
    found |= {d for d in module_dirs if re.match(r"^\d+\.\d+", d)}
    return sorted(found, key=kernel_version_key)


def check_kernel_reboot(ctx: CheckContext) -> list[CheckResult]:
    """Running kernel older than the newest installed one: patched on disk, not rebooted."""
    spec_id, title = "host.kernel-reboot-pending", "Kernel updated but not rebooted"
    out = ctx.runner.run(["uname", "-r"], timeout=5)
    if not out.ok:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not())]
    running = out.stdout.strip()
    boot = ctx.path("/boot")
    modules = ctx.path("/lib/modules")
    boot_names = os.listdir(boot) if os.path.isdir(boot) else []
    module_dirs = os.listdir(modules) if os.path.isdir(modules) else []
    kernels = installed_kernels(boot_names, module_dirs)
    if not kernels:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                reason=f"no vmlinuz-* in {boot} and no {modules}/* (container, or kernel not managed here)",
                evidence=[from_command(out, f"running {running}", value=running)],
            )
        ]
    newest = kernels[-1]
    ev = [
        from_command(out, f"running kernel {running}", value=running),
        from_file(boot, ctx.host, f"installed kernels: {', '.join(kernels)}", value=newest),
    ]
    details = {"running": running, "installed": kernels, "newest": newest}
    if kernel_version_key(newest) > kernel_version_key(running):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject=f"running {running}, installed {newest}",
                evidence=ev,
                remediation="Reboot into the installed kernel (drain the node first): security fixes in it are not active until then.",
                details=details,
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.PASS,
            host=ctx.host,
            subject=running,
            evidence=ev,
            details=details,
        )
    ]
