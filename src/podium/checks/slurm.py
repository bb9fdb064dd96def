"""Slurm isolation and configuration: PrivateData, MUNGE key, health checks, topology, pyxis,
accounting, GPU binding and /etc/nccl.conf overrides.

Parsers are pure; checks run ``scontrol``, ``squeue``, ``sacct``, ``srun`` through the runner
(so SLURM_CONF in the environment selects the cluster) and read files under ``ctx.root``.
"""

from __future__ import annotations

import os
import pwd
import re

from podium.checks.data import load
from podium.checks.evidence import from_command, from_file, result
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.models.results import CheckResult
from podium.runner import CommandOutput

CATEGORY = "slurm"
SLURM_CONF_DOC = "https://slurm.schedmd.com/slurm.conf.html"
UNPRIVILEGED_USER = "nobody"


# ---------------------------------------------------------------- parsers


def parse_scontrol_config(text: str, source: str = "scontrol show config") -> dict[str, str]:
    """Parse ``scontrol show config`` ('Key = Value' lines after 'Configuration data as of ...')."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("Configuration data as of"):
        raise ParseError(source, "missing 'Configuration data as of' header")
    conf: dict[str, str] = {}
    for line in lines[1:]:
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_()]*)\s*=\s?(.*)$", line)
        if m:
            conf.setdefault(m.group(1), m.group(2).strip())
    if len(conf) < 5:
        raise ParseError(source, f"only {len(conf)} 'Key = Value' lines (truncated?)")
    return conf


def private_data_flags(conf: dict[str, str]) -> set[str]:
    """The PrivateData flags ('none' -> empty set)."""
    value = conf.get("PrivateData", "none").strip()
    if value in ("", "none", "(null)"):
        return set()
    return {v.strip().lower() for v in value.split(",") if v.strip()}


def parse_squeue_users(text: str, source: str = "squeue") -> list[tuple[str, str]]:
    """Parse ``squeue -h -o '%i|%u'`` into (job id, user) pairs."""
    jobs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.strip().split("|")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ParseError(source, f"expected 'JOBID|USER', got {line[:60]!r}")
        jobs.append((parts[0], parts[1]))
    return jobs


def parse_auth_socket(auth_info: str) -> str | None:
    """The MUNGE socket from slurm.conf AuthInfo ('socket=/path,ttl=...')."""
    for part in auth_info.split(","):
        key, _, value = part.partition("=")
        if key.strip() == "socket" and value.strip():
            return value.strip()
    return None


def parse_munged_cmdline(cmdline: bytes) -> dict[str, str]:
    """munged's argv (NUL-separated, from /proc/PID/cmdline): {'socket': ..., 'key-file': ...}."""
    args = [a.decode(errors="replace") for a in cmdline.split(b"\0") if a]
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        for name in ("socket", "key-file"):
            if a.startswith(f"--{name}="):
                opts[name] = a.split("=", 1)[1]
            elif a == f"--{name}" and i + 1 < len(args):
                opts[name] = args[i + 1]
                i += 1
        if a == "-S" and i + 1 < len(args):
            opts["socket"] = args[i + 1]
            i += 1
        i += 1
    return opts


def parse_nccl_conf(text: str) -> dict[str, str]:
    """/etc/nccl.conf: 'NAME=value' lines, '#' comments."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not re.fullmatch(r"[A-Z][A-Z0-9_]*", key.strip()):
            raise ParseError("/etc/nccl.conf", f"not a NAME=value line: {line[:60]!r}")
        values[key.strip()] = value.strip()
    return values


# ---------------------------------------------------------------- helpers


def _config(ctx: CheckContext, spec_id: str, title: str):
    """(conf, output, None) or (None, output, skipped/unknown result)."""
    out = ctx.run_once(["scontrol", "show", "config"], timeout=15)
    if out.error == "not found":
        return (
            None,
            out,
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason="Slurm not found (no scontrol)",
            ),
        )
    if not out.ok:
        return (
            None,
            out,
            result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not()),
        )
    try:
        return parse_scontrol_config(out.stdout), out, None
    except ParseError as e:
        return None, out, result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))


def _conf_evidence(out: CommandOutput, conf: dict[str, str], *keys: str):
    return [from_command(out, f"{k} = {conf.get(k, '(absent)')}", value=conf.get(k)) for k in keys]


# ---------------------------------------------------------------- checks


def check_private_data(ctx: CheckContext) -> list[CheckResult]:
    """PrivateData hides other users' jobs, usage and user records."""
    spec_id, title = "slurm.private-data", "PrivateData hides other users' jobs, usage and users"
    conf, out, early = _config(ctx, spec_id, title)
    if early:
        return [early]
    flags = private_data_flags(conf)
    ev = _conf_evidence(out, conf, "PrivateData")
    missing = sorted({"jobs", "usage", "users"} - flags)
    remediation = "Set PrivateData=jobs,usage,users (add accounts,reservations as wanted) in slurm.conf and run 'scontrol reconfigure'."
    refs = [f"{SLURM_CONF_DOC}#OPT_PrivateData"]
    details = {"private_data": sorted(flags), "missing": missing}
    if "jobs" not in flags:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.FAIL,
                Severity.MEDIUM,
                host=ctx.host,
                subject=f"PrivateData={conf.get('PrivateData')}",
                evidence=ev,
                remediation=remediation,
                references=refs,
                details=details,
            )
        ]
    if missing:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject=f"PrivateData={conf.get('PrivateData')}",
                evidence=ev,
                remediation=remediation,
                references=refs,
                details=details,
            )
        ]
    return [result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, evidence=ev, details=details)]


def check_jobs_visible(ctx: CheckContext) -> list[CheckResult]:
    """Can an unprivileged user see other users' jobs? (``squeue`` as that user)."""
    spec_id, title = "slurm.jobs-visible-to-others", "Other users' jobs visible to an unprivileged user"
    conf, cout, early = _config(ctx, spec_id, title)
    if early:
        return [early]
    squeue = ["squeue", "-h", "-o", "%i|%u"]
    if os.geteuid() == 0:
        # root sees everything; ask as an unprivileged account instead
        viewer = UNPRIVILEGED_USER
        argv = ["runuser", "-u", viewer, "--", *squeue]
    else:
        viewer = pwd.getpwuid(os.geteuid()).pw_name
        argv = squeue
    out = ctx.runner.run(argv, timeout=15)
    if not out.ok:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not())]
    try:
        jobs = parse_squeue_users(out.stdout)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    others = [(j, u) for j, u in jobs if u != viewer]
    users = sorted({u for _, u in others})
    ev = [
        from_command(
            out,
            f"user {viewer} sees {len(jobs)} jobs, {len(others)} of other users ({', '.join(users) or 'none'})",
            value=len(others),
        )
    ]
    ev += _conf_evidence(cout, conf, "PrivateData")
    details = {
        "viewer": viewer,
        "visible_jobs": len(jobs),
        "other_users_jobs": len(others),
        "other_users": users,
    }
    if others:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.FAIL,
                Severity.MEDIUM,
                host=ctx.host,
                subject=f"{viewer} sees jobs of {', '.join(users)}",
                evidence=ev,
                remediation="Set PrivateData=jobs,usage,users so that users see only their own jobs (names, paths and command lines leak otherwise).",
                references=[f"{SLURM_CONF_DOC}#OPT_PrivateData"],
                details=details,
            )
        ]
    if "jobs" not in private_data_flags(conf):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject="no other users' jobs queued to test with",
                evidence=ev,
                remediation="PrivateData does not include 'jobs': other users' jobs would be visible once queued.",
                references=[f"{SLURM_CONF_DOC}#OPT_PrivateData"],
                details=details,
            )
        ]
    return [result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, evidence=ev, details=details)]


def find_munge_key(ctx: CheckContext, auth_socket: str | None) -> tuple[str, int | None, str]:
    """(key path, munged uid or None, how it was found). Looks for the munged serving ``auth_socket``."""
    proc = ctx.path("/proc")
    fallback = None
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        pids = []
    for pid in pids:
        try:
            with open(os.path.join(proc, pid, "comm")) as f:
                if f.read().strip() != "munged":
                    continue
            with open(os.path.join(proc, pid, "cmdline"), "rb") as f:
                opts = parse_munged_cmdline(f.read())
            with open(os.path.join(proc, pid, "status")) as f:
                uid = next((int(ln.split()[1]) for ln in f if ln.startswith("Uid:")), None)
        except (OSError, ValueError, StopIteration):
            continue
        key = opts.get("key-file", "/etc/munge/munge.key")
        sock = opts.get("socket", "/run/munge/munge.socket.2")
        if auth_socket and sock == auth_socket:
            return key, uid, f"munged pid {pid} serving {sock} (--key-file)"
        if fallback is None and not auth_socket:
            fallback = (key, uid, f"munged pid {pid} (--key-file)")
    if fallback:
        return fallback
    return ctx.path("/etc/munge/munge.key"), None, "default path (no running munged found)"


def check_munge_key(ctx: CheckContext) -> list[CheckResult]:
    """MUNGE key readable only by its owner, owned by the user munged runs as."""
    spec_id, title = "slurm.munge-key", "MUNGE key mode and owner"
    conf, _out, early = _config(ctx, spec_id, title)
    if early:
        return [early]
    auth_socket = parse_auth_socket(conf.get("AuthInfo", ""))
    key, munged_uid, how = find_munge_key(ctx, auth_socket)
    try:
        st = os.stat(key)
    except PermissionError:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                subject=key,
                reason=f"cannot stat {key}: permission denied (run as root)",
            )
        ]
    except OSError as e:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                subject=key,
                reason=f"cannot stat {key}: {e.strerror}",
            )
        ]
    mode = st.st_mode & 0o777
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = str(st.st_uid)
    expected_uid = munged_uid
    if expected_uid is None:
        try:
            expected_uid = pwd.getpwnam("munge").pw_uid
        except KeyError:
            expected_uid = 0
    ev = [
        from_file(
            key, ctx.host, f"{key}: mode {mode:04o}, owner {owner} (found via {how})", value=f"{mode:04o}"
        )
    ]
    details = {
        "path": key,
        "mode": f"{mode:04o}",
        "owner_uid": st.st_uid,
        "expected_uid": expected_uid,
        "found_via": how,
    }
    problems = []
    if mode & 0o077:
        problems.append(f"mode {mode:04o} lets group/others read it")
    if st.st_uid != expected_uid:
        problems.append(f"owner uid {st.st_uid} is not munged's uid {expected_uid}")
    if problems:
        sev = Severity.CRITICAL if mode & 0o004 else Severity.HIGH
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.FAIL,
                sev,
                host=ctx.host,
                subject=key,
                evidence=ev,
                remediation="Anyone who reads the MUNGE key can forge credentials for any user: chown munge:munge and chmod 0400 (or 0600) the key.",
                references=["https://github.com/dun/munge/wiki/Installation-Guide#securing-the-installation"],
                details=details | {"problems": problems},
            )
        ]
    return [
        result(
            spec_id, title, CATEGORY, Status.PASS, host=ctx.host, subject=key, evidence=ev, details=details
        )
    ]


def check_healthcheck(ctx: CheckContext) -> list[CheckResult]:
    """HealthCheckProgram set and run periodically."""
    spec_id, title = "slurm.healthcheck", "Node health check program configured"
    conf, out, early = _config(ctx, spec_id, title)
    if early:
        return [early]
    program = conf.get("HealthCheckProgram", "(null)")
    interval = conf.get("HealthCheckInterval", "0 sec")
    ev = _conf_evidence(out, conf, "HealthCheckProgram", "HealthCheckInterval")
    refs = [f"{SLURM_CONF_DOC}#OPT_HealthCheckProgram"]
    if program in ("(null)", ""):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject="HealthCheckProgram unset",
                evidence=ev,
                remediation="Set HealthCheckProgram (e.g. NHC or a GPU health script) and HealthCheckInterval so that broken GPU nodes drain before jobs land on them.",
                references=refs,
            )
        ]
    if interval.split()[0] in ("0", ""):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject=program,
                evidence=ev,
                remediation="HealthCheckInterval is 0: the program never runs periodically; set an interval (e.g. 300).",
                references=refs,
            )
        ]
    return [result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, subject=program, evidence=ev)]


def check_topology(ctx: CheckContext) -> list[CheckResult]:
    """Topology-aware scheduling: TopologyPlugin set and topology.conf present."""
    spec_id, title = "slurm.topology", "Network topology known to the scheduler (topology.conf)"
    conf, out, early = _config(ctx, spec_id, title)
    if early:
        return [early]
    plugin = conf.get("TopologyPlugin", "topology/none")
    conf_dir = os.path.dirname(conf.get("SLURM_CONF", "/etc/slurm/slurm.conf"))
    topo_path = os.path.join(conf_dir, "topology.conf")
    present = ctx.runner.read_file(topo_path) is not None
    ev = [
        *_conf_evidence(out, conf, "TopologyPlugin"),
        from_file(topo_path, ctx.host, f"{topo_path} {'present' if present else 'absent'}", value=present),
    ]
    refs = ["https://slurm.schedmd.com/topology.html"]
    if plugin in ("topology/none", "(null)", ""):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject=plugin,
                evidence=ev,
                remediation="Set TopologyPlugin=topology/tree (or topology/block) with a topology.conf describing the leaf switches, so multi-node jobs land close together.",
                references=refs,
            )
        ]
    if plugin in ("topology/tree", "topology/block") and not present:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject=plugin,
                evidence=ev,
                remediation=f"{plugin} needs {topo_path}.",
                references=refs,
            )
        ]
    return [result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, subject=plugin, evidence=ev)]


def check_pyxis(ctx: CheckContext) -> list[CheckResult]:
    """Container support through pyxis/enroot (``srun --help`` lists --container-image)."""
    spec_id, title = "slurm.pyxis", "Containers in jobs (pyxis/enroot options in srun)"
    out = ctx.runner.run(["srun", "--help"], timeout=15)
    if out.error == "not found":
        return [
            result(
                spec_id, title, CATEGORY, Status.SKIPPED, host=ctx.host, reason="Slurm not found (no srun)"
            )
        ]
    text = out.stdout + out.stderr
    if "--container-image" in text:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                subject="pyxis",
                evidence=[from_command(out, "srun --help lists --container-image (pyxis)", value=True)],
            )
        ]
    if not out.ok or "Usage: srun" not in text:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not())]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.WARN,
            Severity.LOW,
            host=ctx.host,
            subject="no pyxis",
            evidence=[from_command(out, "srun --help has no --container-image option", value=False)],
            remediation="Install NVIDIA pyxis and enroot so that users can run containers in jobs (srun --container-image).",
            references=["https://github.com/NVIDIA/pyxis"],
        )
    ]


def check_sacct(ctx: CheckContext) -> list[CheckResult]:
    """Job accounting works (``sacct`` answers)."""
    spec_id, title = "slurm.sacct", "Job accounting (sacct) works"
    out = ctx.runner.run(["sacct", "-n", "-X", "-P", "-o", "JobID,State"], timeout=20)
    if out.error == "not found":
        return [
            result(
                spec_id, title, CATEGORY, Status.SKIPPED, host=ctx.host, reason="Slurm not found (no sacct)"
            )
        ]
    if out.ok:
        n = len([ln for ln in out.stdout.splitlines() if ln.strip()])
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                evidence=[from_command(out, f"sacct answered ({n} jobs since midnight)", value=n)],
            )
        ]
    if not out.ran:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not())]
    text = (out.stderr + out.stdout).strip()
    if "Could not establish a configuration source" in text:
        # not a Slurm client node (no slurm.conf): nothing to judge about accounting
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not())]
    summary = (
        "accounting storage is disabled"
        if "accounting storage is disabled" in text
        else text.splitlines()[-1][:200]
        if text
        else f"exit {out.returncode}"
    )
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.FAIL,
            Severity.MEDIUM,
            host=ctx.host,
            subject=summary,
            evidence=[from_command(out, f"sacct failed: {summary}")],
            remediation="Run slurmdbd (AccountingStorageType=accounting_storage/slurmdbd) so that usage is recorded and sacct works for users.",
            references=["https://slurm.schedmd.com/accounting.html"],
        )
    ]


def check_gpu_binding(ctx: CheckContext) -> list[CheckResult]:
    """The scheduler sets CUDA_VISIBLE_DEVICES for a job that asks for one GPU (GRES)."""
    spec_id, title = "slurm.gpu-binding", "Scheduler sets CUDA_VISIBLE_DEVICES (GPU GRES)"
    conf, cout, early = _config(ctx, spec_id, title)
    if early:
        return [early]
    gres_types = conf.get("GresTypes", "(null)")
    if "gpu" not in gres_types.split(","):
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason=f"no GPU GRES on this cluster (GresTypes = {gres_types})",
                evidence=_conf_evidence(cout, conf, "GresTypes"),
            )
        ]
    out = ctx.runner.run(
        [
            "srun",
            "-N1",
            "-n1",
            "--gres=gpu:1",
            "--immediate=30",
            "-t",
            "1",
            "-J",
            "podium-gpu-binding",
            "printenv",
            "CUDA_VISIBLE_DEVICES",
        ],
        timeout=60,
    )
    if not out.ran:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not())]
    value = out.stdout.strip()
    if out.returncode == 0 and value:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                subject=f"CUDA_VISIBLE_DEVICES={value}",
                evidence=[
                    from_command(out, f"CUDA_VISIBLE_DEVICES={value} inside a --gres=gpu:1 job", value=value)
                ],
            )
        ]
    if out.returncode == 1 and not value and "error" not in out.stderr.lower():
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.FAIL,
                Severity.MEDIUM,
                host=ctx.host,
                subject="unset",
                evidence=[from_command(out, "CUDA_VISIBLE_DEVICES unset inside a --gres=gpu:1 job")],
                remediation="Configure gres.conf with File=/dev/nvidia* (or AutoDetect=nvml) so that Slurm binds GPUs and sets CUDA_VISIBLE_DEVICES.",
                references=["https://slurm.schedmd.com/gres.html"],
            )
        ]
    return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=out.why_not())]


def check_nccl_conf(ctx: CheckContext) -> list[CheckResult]:
    """/etc/nccl.conf pinning NCCL tuning that NCCL otherwise chooses from the topology."""
    spec_id, title = "slurm.nccl-conf", "/etc/nccl.conf overrides NCCL auto-configuration"
    path = ctx.path("/etc/nccl.conf")
    text = ctx.runner.read_file(path)
    if text is None:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.PASS,
                host=ctx.host,
                subject="/etc/nccl.conf absent",
                evidence=[from_file(path, ctx.host, "no /etc/nccl.conf: NCCL tunes itself", value=False)],
            )
        ]
    try:
        values = parse_nccl_conf(text)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    policy = load("nccl_overrides")
    pinned = {k: v for k, v in values.items() if k in policy["overrides"]}
    ev = [from_file(path, ctx.host, f"{k}={v}: {policy['overrides'][k]}", value=v) for k, v in pinned.items()]
    if pinned:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.LOW,
                host=ctx.host,
                subject=", ".join(f"{k}={v}" for k, v in pinned.items()),
                evidence=ev,
                remediation="Remove these from /etc/nccl.conf unless they work around a known bug; they override NCCL's per-topology choices for every job.",
                references=[policy["source"]],
                details={"pinned": pinned},
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.PASS,
            host=ctx.host,
            evidence=[
                from_file(
                    path,
                    ctx.host,
                    f"{len(values)} settings, none pinning algorithm/protocol/channels",
                    value=len(values),
                )
            ],
        )
    ]
