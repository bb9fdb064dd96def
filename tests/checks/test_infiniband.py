"""InfiniBand parsers and checks on real sysfs trees, ibstat and infiniband-diags outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.conftest import FIXTURES

from podium.checks import infiniband as ib
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.runner import ReplayRunner

H100_TREE = FIXTURES / "sysfs-infiniband" / "gpud_sys-class-infiniband-h100.0"
DIAGS = FIXTURES / "ib-diags"
IBSTAT = FIXTURES / "ibstat"


def _tree_with_pkeys(tmp_path: Path, pkeys: dict[str, list[int]], size: int = 8) -> Path:
    """Copy the real H100 tree under <root>/sys/class/infiniband and add pkeys/<index> files
    in the kernel's format ('0x%04x\\n', unused entries 0x0000) for the named devices' port 1."""
    class_dir = tmp_path / "sys" / "class" / "infiniband"
    shutil.copytree(H100_TREE, class_dir)
    for dev, keys in pkeys.items():
        pdir = class_dir / dev / "ports" / "1" / "pkeys"
        pdir.mkdir()
        for i in range(size):
            (pdir / str(i)).write_text(f"0x{keys[i] if i < len(keys) else 0:04x}\n")
    return tmp_path


def _ctx(root: Path, runner=None) -> CheckContext:
    return CheckContext(runner=runner or ReplayRunner({}), root=str(root), host="node1")


# ---------------------------------------------------------------- sysfs


def test_read_real_tree_without_pkeys():
    ports = ib.read_ib_ports(str(H100_TREE))
    assert [(p.device, p.port, p.link_layer) for p in ports][:2] == [
        ("mlx5_0", 1, "InfiniBand"),
        ("mlx5_1", 1, "InfiniBand"),
    ]
    assert len(ports) == 9
    assert [p.device for p in ports if p.link_layer == "Ethernet"] == ["mlx5_bond_0"]
    assert all(p.pkeys is None for p in ports)
    assert ports[0].state == "4: ACTIVE"


def test_pkey_table_parse():
    assert ib.parse_pkey_entries({"0": "0xffff\n", "1": "0x8001\n", "2": "0x0000\n", "3": "0x7fff\n"}) == [
        0xFFFF,
        0x8001,
        0x7FFF,
    ]
    # 0x8000 is an invalid (membership bit only) entry and is dropped like 0x0000
    assert ib.parse_pkey_entries({"0": "0x8000\n", "1": "0x0000\n"}) == []


@pytest.mark.parametrize(
    "entries",
    [
        {},
        {"0": ""},
        {"0": "0xfff"[:2]},
        {"0": "ffff"},
        {"0": "0x1ffff"},
        {"x": "0xffff"},
        {"0": "\x00\x01garbage"},
    ],
)
def test_pkey_table_bad_input(entries):
    with pytest.raises(ParseError):
        ib.parse_pkey_entries(entries)


def test_pkey_default_full_fails_on_real_tree_with_full_membership(tmp_path):
    devs = ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"]
    root = _tree_with_pkeys(tmp_path, {d: [0xFFFF, 0x8010] for d in devs})
    [r] = ib.check_pkey_default_full(_ctx(root))
    assert (r.status, r.severity) == (Status.WARN, Severity.MEDIUM)
    assert r.details["full_default_ports"] == [f"{d}/1" for d in devs]
    assert r.evidence[0].summary == "mlx5_0 port 1: P_Keys 0xffff, 0x8010"
    assert r.evidence[0].source.command.endswith("sys/class/infiniband/mlx5_0/ports/1/pkeys")


def test_pkey_limited_default_passes(tmp_path):
    root = _tree_with_pkeys(tmp_path, {"mlx5_0": [0x7FFF, 0x8010], "mlx5_1": [0x7FFF, 0x8010]})
    [r] = ib.check_pkey_default_full(_ctx(root))
    assert r.status == Status.PASS and r.details == {"ports": 2}
    [extra] = ib.check_pkey_extra(_ctx(root))
    assert extra.status == Status.PASS and extra.details == {"partitions": ["0x0010"]}


def test_pkey_extra_partitions_warn(tmp_path):
    root = _tree_with_pkeys(tmp_path, {"mlx5_0": [0x7FFF, 0x8010, 0x8020], "mlx5_1": [0x7FFF, 0x0030]})
    [r] = ib.check_pkey_extra(_ctx(root))
    assert (r.status, r.severity) == (Status.WARN, Severity.MEDIUM)
    assert r.details["partitions"] == ["0x0010", "0x0020", "0x0030"]


def test_pkey_without_tables_is_unknown_and_no_ib_is_skipped(tmp_path):
    shutil.copytree(H100_TREE, tmp_path / "sys" / "class" / "infiniband")
    [r] = ib.check_pkey_default_full(_ctx(tmp_path))
    assert r.status == Status.UNKNOWN and "no readable pkeys" in r.reason
    [s] = ib.check_pkey_default_full(_ctx(tmp_path / "empty"))
    assert s.status == Status.SKIPPED and "no InfiniBand ports" in s.reason


def test_garbage_pkey_file_gives_unknown_not_traceback(tmp_path):
    root = _tree_with_pkeys(tmp_path, {"mlx5_0": [0xFFFF]})
    (root / "sys/class/infiniband/mlx5_0/ports/1/pkeys/3").write_text("garbage\n")
    [r] = ib.check_pkey_default_full(_ctx(root))
    assert r.status == Status.UNKNOWN and "pkeys" in r.reason


# ---------------------------------------------------------------- ibstat


def test_parse_real_ibstat():
    ports = ib.parse_ibstat((IBSTAT / "gpud_ibstat.47.0.a100.all.active.0").read_text())
    assert len(ports) == 9
    assert [p.link_layer for p in ports].count("InfiniBand") == 8
    p1 = ports[1]
    assert (p1.ca, p1.port, p1.state, p1.base_lid) == ("mlx5_1", 1, "Active", 1369)
    down = ib.parse_ibstat((IBSTAT / "gpud_ibstat.47.0.h100.some.down.0").read_text())
    assert sum(p.state == "Down" for p in down) == 3


@pytest.mark.parametrize("cut", [0, 10, 200])
def test_ibstat_truncated_or_empty(cut):
    text = (IBSTAT / "gpud_ibstat.47.0.a100.all.active.0").read_text()
    with pytest.raises(ParseError):
        ib.parse_ibstat(text[:cut])


def test_ibstat_truncated_mid_port():
    text = (IBSTAT / "gpud_ibstat.47.0.a100.all.active.0").read_text()
    cut = text.rindex("Link layer")
    with pytest.raises(ParseError, match="truncated"):
        ib.parse_ibstat(text[:cut])


# ---------------------------------------------------------------- smpquery / sminfo / rdma


def test_parse_real_smpquery_portinfo():
    info = ib.parse_smpquery_portinfo((DIAGS / "ibsim_smpquery_portinfo_lid3_port1.txt").read_text())
    assert info.model_dump() == {
        "lid": 0,
        "mkey": None,
        "mkey_displayed": False,
        "protect_bits": 0,
        "lease_period": 0,
    }
    info2 = ib.parse_smpquery_portinfo((DIAGS / "ibportstate_query_lid3_port1.txt").read_text())
    assert (info2.lid, info2.protect_bits, info2.lease_period) == (3, 0, 0)


def test_smpquery_displayed_mkey():
    text = (DIAGS / "ibsim_smpquery_portinfo_lid3_port1.txt").read_text()
    text = text.replace("<not displayed>", "0x00000000000000a1").replace(
        "ProtectBits:.....................0", "ProtectBits:.....................2"
    )
    info = ib.parse_smpquery_portinfo(text)
    assert (info.mkey, info.mkey_displayed, info.protect_bits) == (0xA1, True, 2)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# Port info: Lid 3 port 1\nMkey:.....<not displayed>\n",
        "\x00\xff garbage",
        "ProtectBits:......x\nMkey:.....0\n",
    ],
)
def test_smpquery_bad(text):
    with pytest.raises(ParseError):
        ib.parse_smpquery_portinfo(text)


def test_parse_real_sminfo():
    sm = ib.parse_sminfo((DIAGS / "notes_sminfo_master.txt").read_text())
    assert sm.model_dump() == {
        "lid": 37,
        "guid": "0x7cfe90030016aef1",
        "activity_count": 4484381,
        "priority": 14,
        "state": 3,
        "state_name": "SMINFO_MASTER",
    }
    wrapped = ib.parse_sminfo((DIAGS / "ompi_users_sminfo_wrapped.txt").read_text())
    assert (wrapped.lid, wrapped.priority, wrapped.state_name) == (2, 0, "SMINFO_MASTER")
    assert ib.parse_sminfo((DIAGS / "ibsim_sminfo.txt").read_text()).guid == "0x100001"


def test_parse_old_sminfo_without_state():
    sm = ib.parse_sminfo((DIAGS / "ofed_manual_sminfo_no_state.txt").read_text())
    assert (sm.lid, sm.guid, sm.priority, sm.state, sm.state_name) == (1, "0x2c9010b7c2ae1", 1, None, None)


@pytest.mark.parametrize(
    "text", ["", "sminfo: iberror: failed: query\n", "sminfo: sm lid 37 sm guid 0x7cfe", "garbage"]
)
def test_sminfo_bad(text):
    with pytest.raises(ParseError):
        ib.parse_sminfo(text)


def test_parse_real_rdma_system():
    assert ib.parse_rdma_system((DIAGS / "netdev_rdma_system_show.txt").read_text()).netns_mode == "shared"
    assert (
        ib.parse_rdma_system((DIAGS / "netdev_rdma_system_exclusive.txt").read_text()).netns_mode
        == "exclusive"
    )
    assert ib.parse_rdma_system((DIAGS / "rdma_system_copy_on_fork.txt").read_text()).netns_mode == "shared"
    with pytest.raises(ParseError):
        ib.parse_rdma_system("")
    with pytest.raises(ParseError):
        ib.parse_rdma_system("netns")
    with pytest.raises(ParseError):
        ib.parse_rdma_system("netns sideways")


def test_mkey_check_with_replayed_outputs():
    ibstat = (IBSTAT / "gpud_ibstat.47.0.a100.all.active.0").read_text()
    portinfo = (DIAGS / "ibsim_smpquery_portinfo_lid3_port1.txt").read_text()
    runner = ReplayRunner({"ibstat": ibstat, "smpquery": portinfo})
    results = ib.check_mkey(CheckContext(runner=runner, host="node1"))
    assert len(results) == 8  # the 8 InfiniBand ports; the Ethernet one is not queried
    assert {(r.status, r.severity) for r in results} == {(Status.FAIL, Severity.HIGH)}
    assert results[0].subject == "mlx5_1/1"
    assert runner.calls[1] == ["smpquery", "-C", "mlx5_1", "-P", "1", "-D", "portinfo", "0"]
    assert results[0].evidence[0].summary == "M_Key <not displayed>, ProtectBits 0, lease 0"


def test_mkey_protected_but_hidden_is_warn():
    ibstat = (IBSTAT / "gpud_ibstat.47.0.a100.all.active.0").read_text()
    portinfo = (
        (DIAGS / "ibsim_smpquery_portinfo_lid3_port1.txt")
        .read_text()
        .replace("ProtectBits:.....................0", "ProtectBits:.....................1")
    )
    results = ib.check_mkey(
        CheckContext(runner=ReplayRunner({"ibstat": ibstat, "smpquery": portinfo}), host="n")
    )
    assert {(r.status, r.severity) for r in results} == {(Status.WARN, Severity.LOW)}


def test_ib_tools_missing_are_skipped_not_pass():
    ctx = CheckContext(runner=ReplayRunner({}), host="n")
    assert ib.check_mkey(ctx)[0].status == Status.SKIPPED
    assert ib.check_subnet_manager(ctx)[0].status == Status.SKIPPED
    assert ib.check_rdma_netns(ctx)[0].status == Status.SKIPPED


def test_sm_and_rdma_checks_on_real_outputs():
    ctx = CheckContext(
        runner=ReplayRunner(
            {
                "sminfo": (DIAGS / "notes_sminfo_master.txt").read_text(),
                "rdma system show": (DIAGS / "netdev_rdma_system_show.txt").read_text(),
            }
        ),
        host="n",
    )
    [sm] = ib.check_subnet_manager(ctx)
    assert (sm.status, sm.subject) == (Status.PASS, "0x7cfe90030016aef1")
    [rd] = ib.check_rdma_netns(ctx)
    assert (rd.status, rd.severity, rd.subject) == (Status.WARN, Severity.MEDIUM, "netns shared")
