"""Host checks: IOMMU, PCIe ACS (real lspci -vvv excerpts), perf_event_paranoid, pending reboot."""

from __future__ import annotations

import pytest
from tests.conftest import FIXTURES

from podium.checks import host
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.runner import ReplayRunner

LSPCI = FIXTURES / "lspci"


def test_parse_real_lspci_acs_lines():
    devs = host.parse_lspci_vvv((LSPCI / "linux-pci_williamson_amd_gpp_acs.txt").read_text())
    assert [d.address for d in devs] == ["00:01.0", "00:01.1", "00:01.2"]
    assert devs[0].class_name == "Host bridge" and devs[0].acs_ctl is None
    assert devs[1].port_type == "Root Port"
    assert devs[1].acs_ctl == {
        "SrcValid": True,
        "TransBlk": False,
        "ReqRedir": True,
        "CmpltRedir": True,
        "UpstreamFwd": True,
        "EgressCtrl": False,
        "DirectTrans": False,
    }
    assert devs[1].acs_redirects()


def test_parse_real_lspci_vvvnn_bus_ranges():
    devs = host.parse_lspci_vvv((LSPCI / "linux-usb_cometlake_vvvnn_excerpt.txt").read_text())
    assert [(d.address, d.class_name) for d in devs] == [
        ("00:00.0", "Host bridge"),
        ("00:01.0", "PCI bridge"),
        ("00:12.0", "Signal processing controller"),
    ]
    bridge = devs[1]
    assert (bridge.secondary, bridge.subordinate, bridge.port_type) == (1, 3, "Root Port")
    assert bridge.description.startswith("Intel Corporation 6th-10th Gen Core Processor PCIe Controller")


@pytest.mark.parametrize(
    "text", ["", "garbage\nmore garbage", "\tBus: primary=00, secondary=01, subordinate=03\n"]
)
def test_lspci_bad(text):
    with pytest.raises(ParseError):
        host.parse_lspci_vvv(text)


def test_lspci_truncated_acs_line():
    text = (LSPCI / "linux-pci_williamson_amd_gpp_acs.txt").read_text()
    cut = text.index("ACSCtl:") + len("ACSCtl:\tSrcValid+ TransBlk-")
    with pytest.raises(ParseError, match="ACSCtl"):
        host.parse_lspci_vvv(text[:cut])


def test_gpu_nic_paths_through_switch_with_redirect():
    devs = host.parse_lspci_vvv((LSPCI / "constructed_l2fwd-nv_gpu_nic_switch.txt").read_text())
    paths = host.gpu_nic_paths(devs)
    assert [(p.gpu, p.nic, p.shared_switch) for p in paths] == [
        ("b6:00.0", "b5:00.0", True),
        ("b6:00.0", "b5:00.1", True),
    ]
    assert paths[0].bridges == ["b4:10.0", "b4:08.0"]
    assert paths[0].redirecting == ["b4:10.0", "b4:08.0"]


def test_pcie_acs_check_warns_then_passes_when_redirect_off():
    text = (LSPCI / "constructed_l2fwd-nv_gpu_nic_switch.txt").read_text()
    [r] = host.check_pcie_acs(CheckContext(runner=ReplayRunner({"lspci -vvv": text}), host="n"))
    assert (r.status, r.severity, r.subject) == (Status.WARN, Severity.MEDIUM, "b4:08.0, b4:10.0")
    head, switch = text.split("b3:00.0", 1)
    off = (
        head
        + "b3:00.0"
        + switch.replace(
            "ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+",
            "ACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir-",
        )
    )
    [r2] = host.check_pcie_acs(CheckContext(runner=ReplayRunner({"lspci -vvv": off}), host="n"))
    assert r2.status == Status.PASS
    # the root port above the switch still redirects, and does not matter for this P2P path
    assert host.parse_lspci_vvv(off)[0].acs_redirects()


def test_pcie_acs_without_gpu_is_skipped_and_denied_is_unknown():
    text = (LSPCI / "linux-usb_cometlake_vvvnn_excerpt.txt").read_text()
    [r] = host.check_pcie_acs(CheckContext(runner=ReplayRunner({"lspci -vvv": text}), host="n"))
    assert r.status == Status.SKIPPED and "0 GPUs, 0 NICs" in r.reason
    denied = (
        (LSPCI / "constructed_l2fwd-nv_gpu_nic_switch.txt")
        .read_text()
        .replace("\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n", "\tCapabilities: <access denied>\n")
    )
    [u] = host.check_pcie_acs(CheckContext(runner=ReplayRunner({"lspci -vvv": denied}), host="n"))
    assert u.status == Status.UNKNOWN and "root" in u.reason
    [m] = host.check_pcie_acs(CheckContext(runner=ReplayRunner({}), host="n"))
    assert m.status == Status.SKIPPED and "pciutils" in m.reason


# the kernel command line of this very machine (a Firecracker guest) and a typical GPU host's
THIS_HOST_CMDLINE = (
    "mitigations=auto,no_guest_host,no_guest_guest console=ttyS0 quiet reboot=k panic=1 nomodule "
    "random.trust_cpu=1 swiotlb=noforce psi=1 -- --firecracker-init"
)


@pytest.mark.parametrize(
    ("cmdline", "units", "mode"),
    [
        (THIS_HOST_CMDLINE, [], "off"),
        (
            "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=/dev/sda1 intel_iommu=on iommu=pt",
            ["dmar0", "dmar1"],
            "passthrough",
        ),
        ("BOOT_IMAGE=/vmlinuz amd_iommu=on", ["ivhd0"], "translated"),
        ("BOOT_IMAGE=/vmlinuz intel_iommu=off", ["dmar0"], "off"),
        ("BOOT_IMAGE=/vmlinuz -- iommu=pt", ["dmar0"], "translated"),
    ],
)
def test_parse_iommu(cmdline, units, mode):
    assert host.parse_iommu(cmdline, units).mode == mode


def test_iommu_check_on_tree(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cmdline").write_text("BOOT_IMAGE=/vmlinuz intel_iommu=on iommu=pt\n")
    (tmp_path / "sys" / "class" / "iommu" / "dmar0").mkdir(parents=True)
    from podium.runner import LocalRunner

    [r] = host.check_iommu(CheckContext(runner=LocalRunner(), root=str(tmp_path), host="n"))
    assert (r.status, r.subject) == (Status.PASS, "passthrough")
    (tmp_path / "sys" / "class" / "iommu" / "dmar0").rmdir()
    [w] = host.check_iommu(CheckContext(runner=LocalRunner(), root=str(tmp_path), host="n"))
    assert (w.status, w.severity) == (Status.WARN, Severity.LOW)
    (tmp_path / "proc" / "cmdline").write_text("")
    [u] = host.check_iommu(CheckContext(runner=LocalRunner(), root=str(tmp_path), host="n"))
    assert u.status == Status.UNKNOWN


@pytest.mark.parametrize(
    ("text", "status"),
    [("2\n", Status.PASS), ("3\n", Status.PASS), ("1\n", Status.WARN), ("-1\n", Status.WARN)],
)
def test_perf_event_paranoid(tmp_path, text, status):
    from podium.runner import LocalRunner

    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/perf_event_paranoid").write_text(text)
    [r] = host.check_perf_event_paranoid(CheckContext(runner=LocalRunner(), root=str(tmp_path), host="n"))
    assert r.status == status
    assert r.evidence[0].value == int(text)


@pytest.mark.parametrize("text", ["", "two", "1.5"])
def test_perf_event_paranoid_bad(text):
    with pytest.raises(ParseError):
        host.parse_perf_event_paranoid(text)


def test_kernel_version_order():
    assert host.kernel_version_key("6.1.0-18-amd64") > host.kernel_version_key("6.1.0-17-amd64")
    assert host.kernel_version_key("5.15.0-101-generic") > host.kernel_version_key("5.15.0-99-generic")
    assert host.installed_kernels(
        [
            "vmlinuz-6.1.0-17-amd64",
            "vmlinuz-6.1.0-18-amd64",
            "config-6.1.0-18-amd64",
            "vmlinuz-6.1.0-16-amd64.old",
        ],
        ["6.1.0-17-amd64"],
    ) == ["6.1.0-17-amd64", "6.1.0-18-amd64"]


def test_kernel_reboot_pending(tmp_path):
    (tmp_path / "boot").mkdir()
    for v in ("6.1.0-17-amd64", "6.1.0-18-amd64"):
        (tmp_path / "boot" / f"vmlinuz-{v}").write_text("")
    ctx = CheckContext(runner=ReplayRunner({"uname -r": "6.1.0-17-amd64\n"}), root=str(tmp_path), host="n")
    [r] = host.check_kernel_reboot(ctx)
    assert (r.status, r.subject) == (Status.WARN, "running 6.1.0-17-amd64, installed 6.1.0-18-amd64")
    ctx2 = CheckContext(runner=ReplayRunner({"uname -r": "6.1.0-18-amd64\n"}), root=str(tmp_path), host="n")
    assert host.check_kernel_reboot(ctx2)[0].status == Status.PASS
    ctx3 = CheckContext(
        runner=ReplayRunner({"uname -r": "6.1.0-18-amd64\n"}), root=str(tmp_path / "nothing"), host="n"
    )
    assert host.check_kernel_reboot(ctx3)[0].status == Status.UNKNOWN
