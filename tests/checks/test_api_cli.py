"""The public API (run_checks, list_checks) and the ``podium checks`` commands end to end."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from tests.conftest import need

from podium.checks import api
from podium.checks.model import CheckSpec, Profile
from podium.cli.main import main
from podium.errors import InputError, UsageError
from podium.models.common import Status
from podium.runner import ReplayRunner

REQUIRED_KEYS = {"id", "status", "severity", "title", "evidence", "remediation"}


def test_list_checks_declares_reads_and_sends():
    infos = api.list_checks()
    ids = [i.id for i in infos]
    assert len(ids) == len(set(ids)) == 31
    assert all(re.fullmatch(r"(ib|exposure|slurm|k8s|host)\.[a-z0-9.-]+", i) for i in ids)
    assert {i.profile for i in infos} == {"isolation", "config"}
    assert {i.category for i in infos} == {"infiniband", "exposure", "slurm", "kubernetes", "host"}
    for i in infos:
        assert i.sends, i.id
        assert i.reads or i.category == "exposure", i.id
    probes = {i.id: i.sends for i in infos if i.category == "exposure"}
    assert all("20 starts/s" in s for k, s in probes.items() if k != "exposure.metadata-imdsv1")


def test_checks_list_json_and_table(capsys):
    assert main(["checks", "list", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == {"checks": [i.model_dump() for i in api.list_checks()]}
    assert main(["checks", "list"]) == 0
    out = capsys.readouterr()
    assert out.out == ""  # the table goes to stderr
    assert "exposure.bmc-ipmi" in out.err


def test_profile_selection():
    assert api.select(["versions"]) == []
    iso = {c.id for c in api.select(["isolation"])}
    conf = {c.id for c in api.select(["config"])}
    assert not iso & conf
    assert {c.id for c in api.select(["all"])} == iso | conf
    assert len(iso) == 19 and len(conf) == 12
    with pytest.raises(UsageError, match="unknown profile 'security'"):
        api.select(["security"])


def test_run_config_profile_without_tools(tmp_path):
    """Nothing installed, empty filesystem: nothing may pass except 'no /etc/nccl.conf'."""
    results = api.run_checks(["config"], ReplayRunner({}), sysfs_root=str(tmp_path))
    got = {r.id: r.status for r in results}
    assert got == {
        "ib.subnet-manager": Status.SKIPPED,
        "slurm.healthcheck": Status.SKIPPED,
        "slurm.topology": Status.SKIPPED,
        "slurm.pyxis": Status.SKIPPED,
        "slurm.sacct": Status.SKIPPED,
        "slurm.gpu-binding": Status.SKIPPED,
        "slurm.nccl-conf": Status.PASS,
        "k8s.operators": Status.UNKNOWN,
        "k8s.storage.rwx": Status.UNKNOWN,
        "k8s.container-runtime": Status.UNKNOWN,
        "k8s.container-toolkit-mode": Status.SKIPPED,
        "host.pcie-acs": Status.SKIPPED,
    }
    assert all(r.reason for r in results if r.status in (Status.UNKNOWN, Status.SKIPPED))
    assert {r.host for r in results} == {"replay"}


def test_a_crashing_check_becomes_unknown(monkeypatch, tmp_path):
    def boom(ctx):
        raise RuntimeError("parser bug")

    spec = CheckSpec("host.boom", "host", Profile.CONFIG, "Boom", (), "nothing", boom)
    monkeypatch.setattr(api, "CHECKS", (spec, *api.CHECKS))
    results = api.run_checks_matching(
        ["host.boom", "slurm.nccl-conf"], ReplayRunner({}), sysfs_root=str(tmp_path)
    )
    assert [(r.id, r.status) for r in results] == [
        ("host.boom", Status.UNKNOWN),
        ("slurm.nccl-conf", Status.PASS),
    ]
    assert results[0].reason == "check crashed: RuntimeError: parser bug"


def test_targets_cap_is_bad_input(capsys):
    with pytest.raises(InputError):
        api.run_checks(["isolation"], ReplayRunner({}), targets=["10.0.0.0/16"])
    assert main(["checks", "run", "--only", "exposure.kubelet", "--targets", "10.0.0.0/16", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "podium: error: --targets: 10.0.0.0/16 has 65536 addresses; the cap is 256"


def test_fail_on_exit_codes(tmp_path, capsys):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/nccl.conf").write_text("NCCL_PROTO=Simple\n")
    argv = ["checks", "run", "--only", "slurm.nccl-conf", "--root", str(tmp_path), "--json"]
    assert main([*argv, "--fail-on", "high"]) == 0
    report = json.loads(capsys.readouterr().out)
    [r] = report["checks"]
    assert set(r) >= REQUIRED_KEYS
    assert (r["status"], r["severity"], r["subject"]) == ("warn", "low", "NCCL_PROTO=Simple")
    assert main([*argv, "--fail-on", "low"]) == 1
    capsys.readouterr()


def _fresh_netns_works() -> bool:
    return (
        os.geteuid() == 0
        and shutil.which("ip") is not None
        and subprocess.run(["ip", "netns", "add", "pdmapiprobe"], capture_output=True).returncode == 0
        and subprocess.run(["ip", "netns", "del", "pdmapiprobe"]).returncode == 0
    )


@pytest.fixture
def loopback_ns():
    need(_fresh_netns_works(), "needs root and working 'ip netns'")
    name = f"pdmapi{os.getpid() % 100000}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


@pytest.mark.netns
def test_isolation_profile_end_to_end_on_loopback(loopback_ns):
    """`podium checks run --profile isolation --targets 127.0.0.1 --json` (what `podium audit
    --profile isolation --targets 127.0.0.1 --json` runs), in a namespace with only loopback, so
    the default metadata probe cannot leave this test."""
    proc = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            loopback_ns,
            sys.executable,
            "-c",
            "import sys; from podium.cli.main import main; sys.exit(main(sys.argv[1:]))",
            "checks",
            "run",
            "--profile",
            "isolation",
            "--targets",
            "127.0.0.1",
            "--timeout",
            "0.5",
            "--json",
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        # no Slurm client config in here: the cluster is not reachable from this namespace anyway
        env={k: v for k, v in os.environ.items() if not k.startswith("SLURM")},
    )
    assert proc.returncode == 0, proc.stderr
    checks = json.loads(proc.stdout)["checks"]
    assert {c["id"] for c in checks} == {c.id for c in api.select(["isolation"])}
    for c in checks:
        assert set(c) >= REQUIRED_KEYS, c["id"]
        assert c["status"] in ("pass", "warn", "fail", "unknown", "skipped")
        if c["status"] in ("unknown", "skipped"):
            assert c["reason"], c["id"]
    [md] = [c for c in checks if c["id"] == "exposure.metadata-imdsv1"]
    assert (md["status"], md["details"]["state"]) == ("pass", "unreachable")
    kubelet = [c for c in checks if c["id"] == "exposure.kubelet"]
    assert [(c["status"], c["details"]["targets"]) for c in kubelet] == [
        ("pass", ["127.0.0.1:10250", "127.0.0.1:10255"])
    ]


@pytest.mark.netns
def test_podium_audit_isolation_profile_on_loopback(loopback_ns, tmp_path):
    """The issue's acceptance command, `podium audit --profile isolation --targets 127.0.0.1 --json`,
    through the audit command that calls run_checks (in a loopback-only namespace)."""
    proc = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            loopback_ns,
            sys.executable,
            "-c",
            "import sys; from podium.cli.main import main; sys.exit(main(sys.argv[1:]))",
            "audit",
            "--profile",
            "isolation",
            "--targets",
            "127.0.0.1",
            "--json",
            "--runs-dir",
            str(tmp_path),
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("SLURM")},
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["profiles"] == ["isolation"]
    assert {c["id"] for c in report["checks"]} == {c.id for c in api.select(["isolation"])}
    assert all(set(c) >= REQUIRED_KEYS for c in report["checks"])
