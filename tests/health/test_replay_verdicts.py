"""Replay end to end: exact verdict and action per fixture set, and the checks behind them."""

from __future__ import annotations

import json

import pytest
from health_helpers import make_replay

from podium.cli.main import main
from podium.health.api import run_health
from podium.health.models import Action, Verdict

SETS = {
    # name: (files, verdict, action, {check id: (status, action)} of every non-pass check)
    "h100-sysfs-link-downed": (
        {"sys/class/infiniband": "sysfs-infiniband/gpud_sys-class-infiniband-h100.0"},
        "fail",
        "drain",
        {"ib.counters": ("fail", "drain")},
    ),
    "dmesg-xid13": (
        {"dmesg.txt": "dmesg/gpud_memory_dmesg.decode.iso.log"},
        "warn",
        "none",
        {"kernel.xid.13": ("warn", "none"), "kernel.xid.43": ("warn", "none")},
    ),
    "a10-remap-pending": (
        {"nvidia-smi-q.txt": "nvidia-smi-text/gpud_nvidia-smi-query.535.129.03.out.0.valid.a10"},
        "fail",
        "reset-gpu",
        {"gpu.memory-remap": ("fail", "reset-gpu"), "gpu.idle-power": ("skipped", "none")},
    ),
    "h100-power-brake": (
        {"nvidia-smi-q.txt": "nvidia-smi-text/gpud_nvidia-smi-query.535.161.08.out.0.valid"},
        "warn",
        "none",
        {"gpu.throttle": ("warn", "none")},
    ),
    "h100-node-sw-thermal": (
        {
            "nvidia-smi-q.txt": "nvidia-smi-text/gpud_nvidia-smi-query.535.183.01.out.0.valid",
            "ibstat.txt": "ibstat/gpud_ibstat.47.0.h100.all.active.2",
            "dmesg.txt": "dmesg/gpud_dmesg.decode.iso.log.1",
            "syslog.txt": "dmesg/azure_0flap_syslog",
        },
        "warn",
        "none",
        {"gpu.throttle": ("warn", "none")},
    ),
    "ibstat-some-down": (
        {"ibstat.txt": "ibstat/gpud_ibstat.47.0.h100.some.down.0"},
        "fail",
        "drain",
        {"ib.port-state": ("fail", "drain")},
    ),
    "ibstat-all-active": ({"ibstat.txt": "ibstat/gpud_ibstat.47.0.a100.all.active.0"}, "pass", "none", {}),
    "fabric-manager-nonfatal": (
        {"fabricmanager.log": "fabric-manager/gpud_fabricmanager.log"},
        "warn",
        "none",
        {"fabricmanager.log": ("warn", "none")},
    ),
    "dcgm4-memory-fail": (
        {"dcgmi-diag.json": "dcgm/podium_dcgm4_diag_memory_fail.json"},
        "fail",
        "rma",
        {"dcgm.diag": ("fail", "rma")},
    ),
    "dcgm3-pcie-warn": (
        {"dcgmi-diag.json": "dcgm/podium_dcgm3_diag_pass_warn.json"},
        "warn",
        "none",
        {"dcgm.diag": ("warn", "none")},
    ),
    "a100-xml-nvlink": (
        {
            "nvidia-smi-q.xml": "nvidia-smi-xml/telegraf_a100-sxm4-v12.xml",
            "nvidia-smi-nvlink.txt": "nvidia-smi-text/gpud_nvidia-smi.nvlink.status.a100",
        },
        "warn",
        "none",
        {
            "gpu.count": ("warn", "none"),
            "gpu.persistence": ("warn", "none"),
            "gpu.memory-remap": ("unknown", "none"),
            "gpu.idle-power": ("skipped", "none"),
        },
    ),
    "gcm-good-json": ({"ib-sysfs.json": "sysfs-infiniband/gcm_learn_good.json"}, "pass", "none", {}),
    "windows-rtx2080": (
        {"nvidia-smi-q.xml": "nvidia-smi-xml/netdata_rtx-2080-win.xml"},
        "warn",
        "none",
        {
            "gpu.persistence": ("unknown", "none"),
            "gpu.ecc": ("unknown", "none"),
            "gpu.memory-remap": ("unknown", "none"),
            "gpu.idle-power": ("skipped", "none"),
            "gpu.pcie": ("warn", "none"),
        },
    ),
    "pstore-only": ({"dmesg.txt": "dmesg/gpud_pstore_dmesg-erst.txt"}, "pass", "none", {}),
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_replay_verdict_and_action(tmp_path, name):
    files, verdict, action, nonpass = SETS[name]
    d = make_replay(tmp_path, name, files)
    report = run_health(replay_dir=d)
    node = report.nodes[0]
    assert (node.host, node.verdict.value, node.action.value) == (name, verdict, action)
    assert {
        c.id: (c.status.value, c.details["action"]) for c in node.checks if c.status.value != "pass"
    } == nonpass
    for c in node.checks:  # every result names where its evidence came from
        assert c.category == "health" and c.host == name
        assert all(e.source is not None and e.source.command for e in c.evidence)


def test_link_downed_evidence_names_the_port(tmp_path):
    d = make_replay(
        tmp_path, "n", {"sys/class/infiniband": "sysfs-infiniband/gpud_sys-class-infiniband-h100.0"}
    )
    ib = next(c for c in run_health(replay_dir=d).nodes[0].checks if c.id == "ib.counters")
    assert [e.summary for e in ib.evidence] == ["mlx5_1/1 link_downed = 255 (fail at 10)"]
    assert ib.evidence[0].value == 255


def test_expected_gpus_and_ib_rate(tmp_path):
    d = make_replay(
        tmp_path, "n", {"nvidia-smi-q.txt": "nvidia-smi-text/gpud_nvidia-smi-query.535.161.08.out.0.valid"}
    )
    node = run_health(replay_dir=d, expected_gpus=9).nodes[0]
    count = next(c for c in node.checks if c.id == "gpu.count")
    assert (count.status.value, count.details["found"], node.verdict, node.action) == (
        "fail",
        8,
        Verdict.FAIL,
        Action.DRAIN,
    )
    d2 = make_replay(tmp_path, "m", {"ib-sysfs.json": "sysfs-infiniband/gcm_learn_ib_intf_bad_rate.json"})
    node = run_health(replay_dir=d2, expected_ib_rate_gbps=200).nodes[0]
    rate = next(c for c in node.checks if c.id == "ib.rate")
    assert (rate.status.value, len(rate.evidence), node.action) == ("fail", 8, Action.DRAIN)


def test_xid_policy_actions(tmp_path):
    lines = {
        79: "2025-01-21T04:41:44,000001+00:00 NVRM: Xid (PCI:0000:38:00): 79, GPU has fallen off the bus.",
        48: "2025-01-21T04:41:44,000002+00:00 NVRM: Xid (PCI:0000:38:00): 48, An uncorrectable double bit error",
        63: "2025-01-21T04:41:44,000003+00:00 NVRM: Xid (PCI:0000:38:00): 63, Row Remapper: New row marked for remapping",
        92: "2025-01-21T04:41:44,000004+00:00 NVRM: Xid (PCI:0000:38:00): 92, High single-bit ECC error rate",
        154: "2025-01-21T04:41:44,000005+00:00 NVRM: Xid (PCI:0000:38:00): 154, GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)",
        999: "2025-01-21T04:41:44,000006+00:00 NVRM: Xid (PCI:0000:38:00): 999, something new",
    }
    expected = {
        79: ("fail", "reboot"),
        48: ("fail", "reset-gpu"),
        63: ("pass", "none"),
        92: ("pass", "none"),
        154: ("fail", "drain"),
        999: ("warn", "none"),
    }
    for xid, line in lines.items():
        d = tmp_path / f"x{xid}"
        d.mkdir()
        (d / "dmesg.txt").write_text(line + "\n" + line + "\n")
        node = run_health(replay_dir=d).nodes[0]
        c = next(c for c in node.checks if c.id == f"kernel.xid.{xid}")
        assert (c.status.value, c.details["action"]) == expected[xid], xid
        assert c.details["occurrences"] == 2 and c.details["events"] == 1  # identical lines de-duplicated
        assert node.action.value == expected[xid][1]


def test_corrupt_replay_file_is_unknown_not_crash(tmp_path):
    d = tmp_path / "n"
    d.mkdir()
    (d / "nvidia-smi-q.xml").write_text("<nvidia_smi_log><gpu id='0'>")
    (d / "dmesg.txt").write_bytes(bytes(range(256)) * 8)
    node = run_health(replay_dir=d).nodes[0]
    assert {c.id: c.status.value for c in node.checks} == {
        "gpu.inventory": "unknown",
        "kernel.xid": "unknown",
    }
    assert (node.verdict, node.action) == (Verdict.UNKNOWN, Action.NONE)


def test_cluster_replay_dir_and_cli_exit_codes(tmp_path, capsys):
    make_replay(tmp_path, "good", {"ibstat.txt": "ibstat/gpud_ibstat.47.0.a100.all.active.0"})
    make_replay(
        tmp_path, "bad", {"sys/class/infiniband": "sysfs-infiniband/gpud_sys-class-infiniband-h100.0"}
    )
    make_replay(tmp_path, "meh", {"dmesg.txt": "dmesg/gpud_memory_dmesg.decode.iso.log"})
    assert main(["health", "--replay", str(tmp_path), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(n["host"], n["verdict"], n["action"]) for n in doc["nodes"]] == [
        ("bad", "fail", "drain"),
        ("good", "pass", "none"),
        ("meh", "warn", "none"),
    ]
    assert set(doc["nodes"][0]["checks"][0]) >= {
        "id",
        "status",
        "severity",
        "title",
        "evidence",
        "remediation",
    }
    assert main(["health", "--replay", str(tmp_path / "meh"), "--json"]) == 0
    capsys.readouterr()
    assert main(["health", "--replay", str(tmp_path / "meh"), "--json", "--fail-on", "warn"]) == 1
    capsys.readouterr()
    assert main(["health", "--replay", str(tmp_path / "bad"), "--fail-on", "never"]) == 0
    assert main(["health", "--replay", str(tmp_path / "nope")]) == 2
    assert main(["health", "--quick", "--full"]) == 2


def test_nvlink_error_counters(tmp_path):
    d = tmp_path / "nv"
    d.mkdir()
    # `nvidia-smi nvlink -e` layout; link 1 of GPU 0 retrained 3 times
    (d / "nvidia-smi-nvlink-errors.txt").write_text(
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5269b708-678a-b1a8-60f0-c90406537486)\n"
        "\t Link 0: Replay Errors: 0\n\t Link 0: Recovery Errors: 0\n\t Link 0: CRC Errors: 0\n"
        "\t Link 1: Replay Errors: 2\n\t Link 1: Recovery Errors: 3\n\t Link 1: CRC Errors: 0\n"
    )
    node = run_health(replay_dir=d).nodes[0]
    c = next(c for c in node.checks if c.id == "gpu.nvlink-errors")
    assert (c.status.value, [e.summary for e in c.evidence]) == (
        "warn",
        ["GPU/link 0/1 recovery errors = 3 (warn at 1)"],
    )
    assert (node.verdict, node.action) == (Verdict.WARN, Action.NONE)


def test_live_lookback_window_drops_old_xids():
    from datetime import datetime, timezone

    from podium.health.evaluate import within_lookback
    from podium.health.kernel_log import parse_kernel_log

    lines = parse_kernel_log(
        "2025-01-20T04:00:00,000000+00:00 NVRM: Xid (PCI:0000:38:00): 79, GPU has fallen off the bus.\n"
        "2025-01-21T04:00:00,000000+00:00 NVRM: Xid (PCI:0000:38:00): 48, DBE\n"
        "[  12.5] NVRM: Xid (PCI:0000:38:00): 95, uncontained\n"
    )
    kept = within_lookback(lines, 24, now=datetime(2025, 1, 21, 12, 0, tzinfo=timezone.utc))
    assert [ln.line_no for ln in kept] == [2, 3]


def test_dcgm_runtime_error_is_unknown_and_unknown_154_action_drains(tmp_path):
    d = tmp_path / "dcgm-err"
    d.mkdir()
    (d / "dcgmi-diag.json").write_text(
        '{"DCGM Diagnostic": {"runtime_error": "Unable to connect to host engine"}}'
    )
    node = run_health(replay_dir=d).nodes[0]
    c = next(c for c in node.checks if c.id == "dcgm.diag")
    assert (c.status.value, c.reason) == ("unknown", "dcgmi runtime error: Unable to connect to host engine")
    assert (node.verdict, node.action) == (Verdict.UNKNOWN, Action.NONE)
    d2 = tmp_path / "x154"
    d2.mkdir()
    (d2 / "dmesg.txt").write_text(
        "[  99.1] NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed from 0x0 (None) to 0x9 (Future Action)\n"
    )
    c = next(c for c in run_health(replay_dir=d2).nodes[0].checks if c.id == "kernel.xid.154")
    assert (c.status.value, c.details["action"], c.details["recovery_action"]) == (
        "fail",
        "drain",
        "Future Action",
    )
