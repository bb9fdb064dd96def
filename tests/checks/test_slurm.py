"""Slurm checks: parsers on real outputs, and the checks against the real single-host Slurm
that scripts/test.sh starts (SLURM_CONF exported, PODIUM_TEST_SLURM=1)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest
from tests.conftest import FIXTURES, need

from podium.checks import slurm
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.runner import LocalRunner, ReplayRunner

GCM_CONFIG = (FIXTURES / "slurm" / "gcm_sample-scontrol-show-config-output.txt").read_text()


# ---------------------------------------------------------------- parsers


def test_parse_real_scontrol_config():
    conf = slurm.parse_scontrol_config(GCM_CONFIG)
    assert conf["PrivateData"] == "none"
    assert conf["HealthCheckProgram"] == "(null)"
    assert conf["TopologyPlugin"] == "topology/tree"
    assert conf["SLURM_CONF"] == "/public/slurm/23.02.2/etc/slurm.conf"
    assert slurm.private_data_flags(conf) == set()
    assert slurm.private_data_flags({"PrivateData": "accounts,jobs,usage"}) == {"accounts", "jobs", "usage"}


@pytest.mark.parametrize("cut", [0, 30, 120])
def test_scontrol_config_truncated(cut):
    with pytest.raises(ParseError):
        slurm.parse_scontrol_config(GCM_CONFIG[:cut])


def test_scontrol_config_garbage():
    with pytest.raises(ParseError):
        slurm.parse_scontrol_config("slurm_load_ctl_conf error: Unable to contact slurm controller\n")


def test_config_checks_on_real_output():
    ctx = CheckContext(runner=ReplayRunner({"scontrol show config": GCM_CONFIG}), host="n")
    [pd] = slurm.check_private_data(ctx)
    assert (pd.status, pd.severity, pd.subject) == (Status.FAIL, Severity.MEDIUM, "PrivateData=none")
    [hc] = slurm.check_healthcheck(ctx)
    assert (hc.status, hc.subject) == (Status.WARN, "HealthCheckProgram unset")
    [topo] = slurm.check_topology(ctx)
    # topology/tree without /public/slurm/23.02.2/etc/topology.conf readable here
    assert (topo.status, topo.severity, topo.subject) == (Status.WARN, Severity.MEDIUM, "topology/tree")


def test_squeue_and_munge_parsers():
    assert slurm.parse_squeue_users("12|alice\n13|bob\n") == [("12", "alice"), ("13", "bob")]
    assert slurm.parse_squeue_users("") == []
    with pytest.raises(ParseError):
        slurm.parse_squeue_users("12 alice\n")
    assert slurm.parse_auth_socket("socket=/tmp/x/munge.sock,ttl=60") == "/tmp/x/munge.sock"
    assert slurm.parse_auth_socket("") is None
    argv = b"munged\0--socket=/tmp/m/munge.sock\0--key-file\0/tmp/m/munge.key\0--pid-file=/tmp/m/p\0"
    assert slurm.parse_munged_cmdline(argv) == {"socket": "/tmp/m/munge.sock", "key-file": "/tmp/m/munge.key"}


def test_nccl_conf(tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    runner = LocalRunner()
    [absent] = slurm.check_nccl_conf(CheckContext(runner=runner, root=str(tmp_path), host="n"))
    assert (absent.status, absent.subject) == (Status.PASS, "/etc/nccl.conf absent")
    (etc / "nccl.conf").write_text(
        "# site tuning\nNCCL_IB_HCA=mlx5\nNCCL_ALGO=Ring\nNCCL_PROTO=Simple\nNCCL_MIN_NCHANNELS=32\n"
    )
    [w] = slurm.check_nccl_conf(CheckContext(runner=runner, root=str(tmp_path), host="n"))
    assert (w.status, w.severity) == (Status.WARN, Severity.LOW)
    assert w.details["pinned"] == {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple", "NCCL_MIN_NCHANNELS": "32"}
    (etc / "nccl.conf").write_text("NCCL_IB_HCA=mlx5\nNCCL_SOCKET_IFNAME=eth0\n")
    [ok] = slurm.check_nccl_conf(CheckContext(runner=runner, root=str(tmp_path), host="n"))
    assert ok.status == Status.PASS
    (etc / "nccl.conf").write_text("this is not a config\n")
    [u] = slurm.check_nccl_conf(CheckContext(runner=runner, root=str(tmp_path), host="n"))
    assert u.status == Status.UNKNOWN and "NAME=value" in u.reason


def test_without_slurm_skipped():
    ctx = CheckContext(runner=ReplayRunner({}), host="n")
    for check in (
        slurm.check_private_data,
        slurm.check_munge_key,
        slurm.check_healthcheck,
        slurm.check_pyxis,
        slurm.check_sacct,
    ):
        [r] = check(ctx)
        assert r.status == Status.SKIPPED and "Slurm not found" in r.reason


# ---------------------------------------------------------------- the real cluster


@pytest.fixture(scope="module")
def cluster():
    need(
        os.environ.get("PODIUM_TEST_SLURM") == "1" and bool(os.environ.get("SLURM_CONF")),
        "needs the real Slurm from scripts/ci/slurm-start.sh (PODIUM_TEST_SLURM=1, SLURM_CONF)",
    )
    need(os.geteuid() == 0, "needs root to reconfigure the test cluster and query as 'nobody'")
    return Path(os.environ["SLURM_CONF"])


def _ctx() -> CheckContext:
    return CheckContext(runner=LocalRunner(), host="ci")


def _scontrol_value(key: str) -> str:
    out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, check=True).stdout
    m = re.search(rf"^{key}\s*=\s*(.*)$", out, re.M)
    return m.group(1).strip() if m else ""


def _reconfigure(conf: Path, text: str, key: str, expect: str) -> None:
    conf.write_text(text)
    subprocess.run(["scontrol", "reconfigure"], check=True, capture_output=True)
    deadline = time.monotonic() + 30
    while _scontrol_value(key) != expect:
        assert time.monotonic() < deadline, f"{key} never became {expect!r}"
        time.sleep(0.2)


@pytest.fixture
def root_job(cluster):
    job = subprocess.run(
        ["sbatch", "--parsable", "-J", "podium-privacy-probe", "-o", "/dev/null", "--wrap", "sleep 300"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    yield job
    subprocess.run(["scancel", job], check=False)


@pytest.mark.slurm
def test_private_data_off_then_on(cluster, root_job):
    original = cluster.read_text()
    assert "PrivateData" not in original
    # off: the default cluster shows root's job to 'nobody'
    [pd] = slurm.check_private_data(_ctx())
    assert (pd.status, pd.details["missing"]) == (Status.FAIL, ["jobs", "usage", "users"])
    [vis] = slurm.check_jobs_visible(_ctx())
    assert (vis.status, vis.severity) == (Status.FAIL, Severity.MEDIUM)
    assert vis.details["viewer"] == "nobody" and vis.details["other_users"] == ["root"]
    assert vis.details["other_users_jobs"] >= 1
    assert vis.evidence[0].source.command == "runuser -u nobody -- squeue -h -o %i|%u"
    [hc] = slurm.check_healthcheck(_ctx())
    assert hc.status == Status.WARN
    try:
        _reconfigure(
            cluster,
            original
            + "PrivateData=jobs,usage,users\nHealthCheckProgram=/bin/true\nHealthCheckInterval=300\n",
            "PrivateData",
            "jobs,usage,users",
        )
        [pd2] = slurm.check_private_data(_ctx())
        assert pd2.status == Status.PASS
        [vis2] = slurm.check_jobs_visible(_ctx())
        assert (vis2.status, vis2.details["visible_jobs"]) == (Status.PASS, 0)
        [hc2] = slurm.check_healthcheck(_ctx())
        assert (hc2.status, hc2.subject) == (Status.PASS, "/bin/true")
    finally:
        _reconfigure(cluster, original, "PrivateData", "none")


@pytest.mark.slurm
def test_munge_key_mode_and_owner(cluster):
    ci_dir = Path(os.environ.get("SLURM_CI_DIR", cluster.parent.parent))
    key = ci_dir / "munge" / "munge.key"
    [r] = slurm.check_munge_key(_ctx())
    assert (r.status, r.subject) == (Status.PASS, str(key))
    assert r.details["mode"] == "0400" and r.details["found_via"].startswith("munged pid ")
    mode = stat.S_IMODE(key.stat().st_mode)
    try:
        key.chmod(0o644)  # munged read the key at start; changing the mode does not disturb it
        [bad] = slurm.check_munge_key(_ctx())
        assert (bad.status, bad.severity) == (Status.FAIL, Severity.CRITICAL)
        assert bad.details["problems"] == ["mode 0644 lets group/others read it"]
    finally:
        key.chmod(mode)


@pytest.mark.slurm
def test_sacct_pyxis_topology_gres_on_real_cluster(cluster, tmp_path):
    [sacct] = slurm.check_sacct(_ctx())
    assert sacct.status == Status.PASS
    [pyxis] = slurm.check_pyxis(_ctx())
    assert (pyxis.status, pyxis.subject) == (Status.WARN, "no pyxis")
    [topo] = slurm.check_topology(_ctx())
    assert (topo.status, topo.subject) == (Status.WARN, "topology/none")
    [gres] = slurm.check_gpu_binding(_ctx())
    assert gres.status == Status.SKIPPED and "GresTypes = (null)" in gres.reason
    # the same cluster with accounting switched off in a copy of slurm.conf: sacct really fails
    text = cluster.read_text()
    text = re.sub(r"^AccountingStorage(Host|Port|Pass)=.*\n", "", text, flags=re.M)
    text = re.sub(
        r"^AccountingStorageType=.*$", "AccountingStorageType=accounting_storage/none", text, flags=re.M
    )
    conf = tmp_path / "slurm.conf"
    conf.write_text(text)
    runner = LocalRunner(env=os.environ | {"SLURM_CONF": str(conf)})
    [off] = slurm.check_sacct(CheckContext(runner=runner, host="ci"))
    assert (off.status, off.subject) == (Status.FAIL, "accounting storage is disabled")


@pytest.mark.slurm
def test_slurm_daemons_reachable_on_loopback(cluster):
    from podium.checks import exposure

    ctx = CheckContext(runner=LocalRunner(), targets=["127.0.0.1"], include_default_targets=False, host="ci")
    results = exposure.check_slurm_ports(ctx)
    port = _scontrol_value("SlurmctldPort")
    subjects = {r.subject: r.status for r in results}
    assert subjects[f"127.0.0.1:{port} (slurmctld)"] == Status.WARN
    assert shutil.which("scontrol")


def test_gpu_binding_with_gres():
    conf = GCM_CONFIG  # a real cluster with GresTypes = gpu
    srun = "srun -N1 -n1 --gres=gpu:1 --immediate=30 -t 1 -J podium-gpu-binding printenv CUDA_VISIBLE_DEVICES"
    runner = ReplayRunner({"scontrol show config": conf, srun: "0\n"})
    [ok] = slurm.check_gpu_binding(CheckContext(runner=runner, host="n"))
    assert (ok.status, ok.subject) == (Status.PASS, "CUDA_VISIBLE_DEVICES=0")
    assert runner.calls[-1] == srun.split()
    [missing] = slurm.check_gpu_binding(
        CheckContext(runner=ReplayRunner({"scontrol show config": conf}), host="n")
    )
    assert missing.status == Status.UNKNOWN and "not found" in missing.reason
