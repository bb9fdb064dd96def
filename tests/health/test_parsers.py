"""Every parser on the real outputs in tests/fixtures, plus truncated and corrupt versions."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from health_helpers import FIX, random_bytes, truncated

from podium.errors import ParseError
from podium.health.dcgm import parse_dcgm_diag
from podium.health.fabric_manager import parse_fabric_manager_log
from podium.health.ib_sysfs import parse_ib_sysfs, parse_ib_sysfs_json, read_ib_sysfs_tree
from podium.health.ibstat import parse_ib_tool_output, parse_ibstat, parse_ibstatus
from podium.health.kernel_log import parse_kernel_log
from podium.health.nvidia_smi_text import parse_nvidia_smi_text
from podium.health.nvidia_smi_xml import parse_nvidia_smi_xml
from podium.health.nvlink import parse_nvlink_status
from podium.health.xid import extract_xids


def read(rel: str) -> str:
    return (FIX / rel).read_text(errors="replace")


# ----------------------------------------------------------------------------- nvidia-smi XML
XML = {
    # file: (driver, attached, gpus listed, name of GPU 0, persistence, power draw W, pcie width cur/max)
    "telegraf_a100-sxm4-v12.xml": ("535.54.03", 4, 1, "NVIDIA A100-SXM4-80GB", False, 67.03, (16, 16)),
    "telegraf_a10g.xml": ("515.105.01", 1, 1, "NVIDIA A10G", False, 25.58, (8, 16)),
    "telegraf_tesla-t4.xml": ("515.105.01", 1, 1, "Tesla T4", False, 26.78, (8, 16)),
    "telegraf_rtx-3090-v12.xml": ("525.147.05", 1, 1, "NVIDIA GeForce RTX 3090", True, 27.23, (16, 16)),
    "telegraf_rtx-4000-sff-ada-v13.xml": (
        "595.84",
        1,
        1,
        "NVIDIA RTX 4000 SFF Ada Generation",
        True,
        8.44,
        (16, 16),
    ),
    "telegraf_quadro-p400.xml": ("418.43", 1, 1, "Quadro P400", False, None, (16, 16)),
    "telegraf_gtx-1660-ti.xml": ("418.43", 1, 1, "Graphics Device", False, 8.93, (16, 16)),
    "telegraf_dual_a5000-v13.xml": ("590.44.01", 2, 2, "NVIDIA RTX A5000", True, 6.52, (16, 16)),
    "netdata_rtx-4090-driver-535.xml": ("535.86.05", 1, 1, "NVIDIA GeForce RTX 4090", True, 26.84, (16, 16)),
    "netdata_tesla-p100.xml": ("510.47.03", 1, 1, "Tesla P100-PCIE-16GB", False, 26.16, (16, 16)),
    "netdata_rtx-2080-win.xml": ("516.59", 1, 1, "NVIDIA GeForce RTX 2080", None, 14.5, (8, 16)),
}


@pytest.mark.parametrize("name", sorted(XML))
def test_nvidia_smi_xml_all_versions(name):
    driver, attached, listed, gpu0, persistence, power, width = XML[name]
    inv = parse_nvidia_smi_xml(read(f"nvidia-smi-xml/{name}"))
    assert (inv.driver_version, inv.attached_gpus, len(inv.gpus)) == (driver, attached, listed)
    g = inv.gpus[0]
    assert (g.name, g.persistence_mode, g.power_draw_w) == (gpu0, persistence, power)
    assert (g.pcie_width_current, g.pcie_width_max) == width


def test_nvidia_smi_xml_details_old_and_new_schema():
    a100 = parse_nvidia_smi_xml(read("nvidia-smi-xml/telegraf_a100-sxm4-v12.xml")).gpus[0]
    assert a100.mig_mode == "Enabled" and a100.ecc_volatile_uncorrectable == 0 and a100.power_limit_w == 500.0
    p100 = parse_nvidia_smi_xml(read("nvidia-smi-xml/netdata_tesla-p100.xml")).gpus[0]
    assert p100.throttle_reasons["gpu_idle"] is True  # old 'clocks_throttle_reasons' block
    ada = parse_nvidia_smi_xml(read("nvidia-smi-xml/telegraf_rtx-4000-sff-ada-v13.xml")).gpus[0]
    assert (ada.remap_pending, ada.remap_failure, ada.process_count) == (False, False, 4)


@pytest.mark.parametrize(
    "name", ["telegraf_a100-sxm4-v12.xml", "netdata_rtx-2080-win.xml", "telegraf_quadro-p400.xml"]
)
def test_nvidia_smi_xml_truncated_and_garbage(name):
    with pytest.raises(ParseError, match="not well-formed"):
        parse_nvidia_smi_xml(truncated(read(f"nvidia-smi-xml/{name}")))
    with pytest.raises(ParseError):
        parse_nvidia_smi_xml(random_bytes())
    with pytest.raises(ParseError, match="empty"):
        parse_nvidia_smi_xml("")
    with pytest.raises(ParseError, match="expected <nvidia_smi_log>"):
        parse_nvidia_smi_xml("<html><body/></html>")


# ----------------------------------------------------------------------------- nvidia-smi -q text
def test_nvidia_smi_text_h100():
    inv = parse_nvidia_smi_text(read("nvidia-smi-text/gpud_nvidia-smi-query.535.161.08.out.0.valid"))
    assert (inv.driver_version, inv.cuda_version, inv.attached_gpus, len(inv.gpus)) == (
        "535.161.08",
        "12.2",
        8,
        8,
    )
    g = inv.gpus[0]
    assert (g.bus_id, g.name, g.architecture, g.persistence_mode) == (
        "00000000:19:00.0",
        "NVIDIA H100 80GB HBM3",
        "Hopper",
        True,
    )
    assert (g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max) == (5, 5, 16, 16)
    assert (g.power_draw_w, g.power_limit_w, g.temperature_c) == (67.74, 700.0, 29.0)
    assert g.throttle_reasons["hw_slowdown"] is True and g.throttle_reasons["hw_power_brake_slowdown"] is True
    assert (g.fabric_state, g.fabric_status, g.sram_threshold_exceeded) == ("Completed", "Success", False)


def test_nvidia_smi_text_a10_remap_pending_and_excerpt():
    a10 = parse_nvidia_smi_text(
        read("nvidia-smi-text/gpud_nvidia-smi-query.535.129.03.out.0.valid.a10")
    ).gpus[0]
    assert (a10.remapped_rows_uncorrectable, a10.remap_pending, a10.remap_failure) == (4, True, False)
    assert (a10.slowdown_temperature_c, a10.shutdown_temperature_c) == (98.0, 101.0)
    excerpt = parse_nvidia_smi_text(read("nvidia-smi-text/azure_orig_nvsmi8_output.txt"))
    assert len(excerpt.gpus) == 8
    assert [g.retired_pages_dbe for g in excerpt.gpus] == [0] * 8
    assert excerpt.gpus[0].retired_pages_pending is False


def test_nvidia_smi_text_rtx4090_processes():
    inv = parse_nvidia_smi_text(read("nvidia-smi-text/gpud_nvidia-smi-query.535.154.05.out.0.valid"))
    assert (
        len(inv.gpus) == 8
        and inv.gpus[0].process_count == 1
        and inv.gpus[0].name == "NVIDIA GeForce RTX 4090"
    )


def test_nvidia_smi_text_corrupt():
    text = read("nvidia-smi-text/gpud_nvidia-smi-query.535.183.01.out.0.valid")
    half = parse_nvidia_smi_text(truncated(text))  # a cut report still names the GPUs it got to
    assert 0 < len(half.gpus) < 8 and half.attached_gpus == 8
    for bad in (random_bytes(), "", "hello world\n"):
        with pytest.raises(ParseError):
            parse_nvidia_smi_text(bad)


# ----------------------------------------------------------------------------- nvlink
def test_nvlink_status():
    rep = parse_nvlink_status(read("nvidia-smi-text/gpud_nvidia-smi.nvlink.status.a100"))
    assert len(rep.gpus) == 8 and len(rep.links) == 96
    assert all(link.active and link.speed_gbps == 25.0 for link in rep.links)
    one = parse_nvlink_status(read("nvidia-smi-text/azure_good_nvlink_status.txt"))
    assert list(one.gpus) == [7] and len(one.links) == 12
    inactive = parse_nvlink_status(
        "GPU 0: NVIDIA H100 (UUID: GPU-x)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n"
    )
    assert [(x.active, x.speed_gbps) for x in inactive.links] == [(True, 26.562), (False, None)]
    with pytest.raises(ParseError):
        parse_nvlink_status(random_bytes())
    with pytest.raises(ParseError):
        parse_nvlink_status("Link 0: 25 GB/s\n")


# ----------------------------------------------------------------------------- ibstat / ibstatus
def test_ibstat_all_active_and_some_down():
    ports = parse_ibstat(read("ibstat/gpud_ibstat.47.0.h100.all.active.0"))
    assert len(ports) == 12 and {p.state for p in ports} == {"Active"}
    assert ports[0].model_dump(exclude={"counters"}) == {
        "device": "mlx5_0",
        "port": 1,
        "state": "Active",
        "physical_state": "LinkUp",
        "rate_gbps": 400.0,
        "link_layer": "Ethernet",
        "ca_type": "MT4129",
        "firmware": "28.39.1002",
        "source": "ibstat",
    }
    down = [p for p in parse_ibstat(read("ibstat/gpud_ibstat.47.0.h100.some.down.0")) if p.state != "Active"]
    assert [(p.device, p.state, p.physical_state, p.rate_gbps) for p in down] == [
        ("mlx5_2", "Down", "Disabled", 40.0),
        ("mlx5_7", "Down", "Disabled", 40.0),
        ("mlx5_8", "Down", "Disabled", 40.0),
    ]
    assert len(parse_ib_tool_output(read("ibstat/gpud_ibstat.47.0.a100.all.active.0"))) == 9
    assert len(parse_ib_tool_output(read("ibstat/gpud_ibstat.47.0.h100.all.active.2"))) == 9


def test_ibstatus():
    ports = parse_ibstatus(read("ibstat/gpud_ibstatus.39.0.a100.all.active.0"))
    assert len(ports) == 9
    assert {(p.state, p.physical_state, p.rate_gbps, p.link_layer) for p in ports[:8]} == {
        ("Active", "LinkUp", 200.0, "InfiniBand")
    }
    assert (ports[8].device, ports[8].rate_gbps, ports[8].link_layer) == ("mlx5_8", 40.0, "Ethernet")
    assert parse_ib_tool_output(read("ibstat/gpud_ibstatus.39.0.a100.all.active.0"))[0].source == "ibstatus"


def test_ibstat_corrupt():
    text = read("ibstat/gpud_ibstat.47.0.h100.some.down.0")
    assert len(parse_ibstat(truncated(text))) == 6  # cut mid-file: the complete CA blocks survive
    for bad in (random_bytes(), "", "CA type: none\n"):
        with pytest.raises(ParseError):
            parse_ib_tool_output(bad)


# ----------------------------------------------------------------------------- sysfs
def test_sysfs_gpud_tree_link_downed():
    ports = parse_ib_sysfs(read_ib_sysfs_tree(FIX / "sysfs-infiniband/gpud_sys-class-infiniband-h100.0"))
    assert [p.device for p in ports] == [
        "mlx5_0",
        "mlx5_1",
        "mlx5_4",
        "mlx5_5",
        "mlx5_6",
        "mlx5_7",
        "mlx5_8",
        "mlx5_9",
        "mlx5_bond_0",
    ]
    by = {p.device: p for p in ports}
    assert by["mlx5_1"].counters["link_downed"] == 255
    assert by["mlx5_1"].counters["excessive_buffer_overrun_errors"] == 15
    assert by["mlx5_0"].counters["link_downed"] == 0
    assert (by["mlx5_bond_0"].rate_gbps, by["mlx5_bond_0"].link_layer, by["mlx5_bond_0"].ca_type) == (
        200.0,
        "Ethernet",
        "MT41692",
    )
    assert (by["mlx5_1"].state, by["mlx5_1"].physical_state, by["mlx5_1"].firmware) == (
        "Active",
        "LinkUp",
        "28.41.1000",
    )


@pytest.mark.parametrize(
    ("name", "rate"),
    [
        ("gcm_learn_good.json", 200.0),
        ("gcm_learn_ib_intf_bad_rate.json", 100.0),
        ("gcm_learn_ib_misbound_if.json", 200.0),
    ],
)
def test_sysfs_gcm_json_maps(name, rate):
    ports = parse_ib_sysfs_json(read(f"sysfs-infiniband/{name}"), name)
    assert (
        len(ports) == 8 and {p.rate_gbps for p in ports} == {rate} and {p.state for p in ports} == {"Active"}
    )


def test_sysfs_corrupt():
    with pytest.raises(ParseError, match="not JSON"):
        parse_ib_sysfs_json(truncated(read("sysfs-infiniband/gcm_learn_good.json")), "x")
    with pytest.raises(ParseError):
        parse_ib_sysfs_json(random_bytes(), "x")
    with pytest.raises(ParseError, match="no <device>/ports"):
        parse_ib_sysfs({"/sys/bus/pci/devices/0000:08:00.0/nvme/nvme0/.fakefile": "\n"})


# ----------------------------------------------------------------------------- kernel logs
@pytest.mark.parametrize(
    ("name", "count", "fmt", "first"),
    [
        (
            "gpud_memory_dmesg.decode.iso.log",
            24,
            "iso",
            datetime(2025, 1, 21, 4, 41, 44, 283302, tzinfo=timezone.utc),
        ),
        (
            "gpud_dmesg-time-format-iso.log",
            41,
            "iso",
            datetime(2024, 11, 15, 5, 39, 15, 491363, tzinfo=timezone.utc),
        ),
        (
            "gpud_dmesg.decode.iso.log.1",
            2362,
            "iso",
            datetime(2025, 1, 17, 15, 36, 15, 345059, tzinfo=timezone.utc),
        ),
        ("gpud_dmesg.peermem.log.0", 8, "iso", datetime(2025, 2, 10, 16, 28, 6, 502716, tzinfo=timezone.utc)),
        ("gpud_kmsg.2.peermem.log", 8, "kmsg", None),
        ("gpud_pstore_dmesg-erst.txt", 39, "uptime", None),
        ("azure_0flap_syslog", 2, "syslog", datetime(2025, 8, 17, 0, 0, 24, tzinfo=timezone.utc)),
    ],
)
def test_kernel_log_formats(name, count, fmt, first):
    lines = parse_kernel_log(read(f"dmesg/{name}"), year=2025)
    assert len(lines) == count and {ln.time_format for ln in lines} == {fmt}
    assert lines[0].timestamp == first


def test_kernel_log_prefixes_and_uptime():
    decoded = parse_kernel_log(read("dmesg/gpud_memory_dmesg.decode.iso.log"))[0]
    assert (decoded.facility, decoded.level) == ("kern", "warn")
    assert decoded.message.startswith("NVRM: Xid (PCI:0000:38:00): 13,")
    kmsg = parse_kernel_log(read("dmesg/gpud_kmsg.2.peermem.log"))[0]
    assert (kmsg.facility, kmsg.level, kmsg.uptime_s) == ("kern", "info", 227.996636)
    pstore = parse_kernel_log(read("dmesg/gpud_pstore_dmesg-erst.txt"))[1]
    assert (pstore.level, pstore.uptime_s) == ("alert", 201.654822)


def test_kernel_log_ctime_and_journal_formats():
    text = (
        "[Tue Jan 21 04:41:44 2025] NVRM: Xid (PCI:0000:38:00): 79, GPU has fallen off the bus.\n"
        "2025-01-21T04:41:45+0000 gpu01 kernel: NVRM: Xid (PCI:0000:38:00): 79, GPU has fallen off the bus.\n"
        "2025-01-21T04:41:46.123456+00:00 gpu01 kernel: mlx5_core 0000:0c:00.0: Port module event\n"
        "Jan 21 04:41:47 gpu01 kernel: ib0: Lost carrier\n"
    )
    lines = parse_kernel_log(text, year=2025)
    assert [ln.time_format for ln in lines] == ["ctime", "journal", "journal", "syslog"]
    assert [ln.timestamp.second for ln in lines] == [44, 45, 46, 47]
    assert [(e.xid, e.count) for e in extract_xids(lines)] == [(79, 2)]


def test_kernel_log_corrupt():
    text = read("dmesg/gpud_memory_dmesg.decode.iso.log")
    assert len(parse_kernel_log(truncated(text))) == 12
    for bad in (random_bytes(), "", "\x00\x01\x02"):
        with pytest.raises(ParseError):
            parse_kernel_log(bad)
    with pytest.raises(ParseError, match="no line in a known"):
        parse_kernel_log("just some words\nand more words\n")


# ----------------------------------------------------------------------------- fabric manager
def test_fabric_manager_log():
    log = parse_fabric_manager_log(read("fabric-manager/gpud_fabricmanager.log"))
    assert len(log.entries) == 54
    errors = log.at_level("ERROR")
    assert len(errors) == 1 and errors[0].line_no == 100
    assert "NVSwitch non-fatal error 12028" in errors[0].message
    assert errors[0].timestamp == datetime(2025, 2, 27, 15, 10, 2, tzinfo=timezone.utc)
    assert "Team release request" in log.entries[0].message  # continuation line joined
    with pytest.raises(ParseError):
        parse_fabric_manager_log(random_bytes())
    with pytest.raises(ParseError):
        parse_fabric_manager_log("no entries here\n")


# ----------------------------------------------------------------------------- DCGM
def test_dcgm_3x_and_4x_shapes():
    d3 = parse_dcgm_diag(read("dcgm/podium_dcgm3_diag_pass_warn.json"))
    assert (d3.schema_shape, d3.version, d3.driver_version, len(d3.results)) == (
        "3.x",
        "3.3.9",
        "550.90.07",
        5,
    )
    assert [(r.test, r.entity, r.status) for r in d3.results if r.status != "pass"] == [
        ("PCIe", "gpu 1", "warn")
    ]
    d4 = parse_dcgm_diag(read("dcgm/podium_dcgm4_diag_memory_fail.json"))
    assert (d4.schema_shape, d4.version, d4.driver_version) == ("4.x", "4.2.3", "570.124.06")
    fails = [r for r in d4.results if r.status == "fail"]
    assert [(r.category, r.test, r.entity) for r in fails] == [("Hardware", "memory", "gpu 1")]
    assert fails[0].warnings == ["A double-bit ECC error was detected on GPU 1 during the memory test."]


def test_dcgm_schema_is_the_upstream_one():
    import json

    import jsonschema  # installed with kubernetes-validate (scripts/test.sh)

    schema = json.loads(read("dcgm/dcgm_dcgm_diag_schema.json"))
    jsonschema.validate(json.loads(read("dcgm/podium_dcgm4_diag_memory_fail.json")), schema)


def test_dcgm_corrupt():
    for bad in (
        truncated(read("dcgm/podium_dcgm4_diag_memory_fail.json")),
        random_bytes(),
        "",
        "[1, 2]",
        '{"x": 1}',
    ):
        with pytest.raises(ParseError):
            parse_dcgm_diag(bad)


def test_fixture_sources_documented():
    for kind in (
        "nvidia-smi-xml",
        "nvidia-smi-text",
        "ibstat",
        "sysfs-infiniband",
        "dmesg",
        "fabric-manager",
        "dcgm",
    ):
        sources = (FIX / kind / "SOURCES.md").read_text()
        for f in Path(FIX / kind).iterdir():
            if f.name != "SOURCES.md":
                assert f"`{f.name}" in sources, f"{kind}/{f.name} has no SOURCES.md row"
