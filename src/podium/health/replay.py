"""``podium health --replay DIR``: grade captured outputs, one node per directory.

File naming convention (any subset may be present):

=================================  ==========================================================
``nvidia-smi-q.xml``               ``nvidia-smi -q -x``
``nvidia-smi-q.txt``               ``nvidia-smi -q`` (used when there is no XML)
``nvidia-smi-nvlink.txt``          ``nvidia-smi nvlink -s``
``nvidia-smi-nvlink-errors.txt``   ``nvidia-smi nvlink -e`` (replay/recovery/CRC counters)
``ibstat.txt``                     ``ibstat`` or ``ibstatus``
``sys/class/infiniband/...``       a copied sysfs subtree (preferred over ibstat: it has counters)
``ib-sysfs.json``                  a {sysfs path: content} JSON map (facebookresearch/gcm format)
``dmesg.txt``                      ``dmesg``/``journalctl -k`` in any common time format
``syslog.txt``                     /var/log/syslog or messages (IB link flaps)
``fabricmanager.log``              /var/log/fabricmanager.log
``dcgmi-diag.json``                ``dcgmi diag -r N -j`` (3.x or 4.x shape)
``proc-mounts.txt``                /proc/mounts
``df.txt``                         ``df -P -k``
``ps.txt``                         ``ps -eo pid=,stat=,comm=``
``cpu-governor.txt``               one scaling_governor value per line
``hostname.txt``                   the node name (default: the directory name)
=================================  ==========================================================

A DIR that holds none of these but has sub-directories that do is a cluster: one node per
sub-directory.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from podium.errors import InputError
from podium.health.ib_sysfs import read_ib_sysfs_tree
from podium.health.inputs import NodeInputs, RawText

FILES = {
    "nvidia_smi_xml": "nvidia-smi-q.xml",
    "nvidia_smi_text": "nvidia-smi-q.txt",
    "nvlink": "nvidia-smi-nvlink.txt",
    "nvlink_errors": "nvidia-smi-nvlink-errors.txt",
    "ibstat": "ibstat.txt",
    "kernel_log": "dmesg.txt",
    "syslog": "syslog.txt",
    "fabric_manager": "fabricmanager.log",
    "dcgm_diag": "dcgmi-diag.json",
    "mounts": "proc-mounts.txt",
    "df": "df.txt",
    "ps": "ps.txt",
}
_OTHER = ("sys/class/infiniband", "ib-sysfs.json", "cpu-governor.txt", "hostname.txt")
_MAX_BYTES = 64 * 1024 * 1024


def is_node_dir(path: Path) -> bool:
    return any((path / name).exists() for name in (*FILES.values(), *_OTHER))


def node_dirs(root: Path) -> list[Path]:
    """The node directories under a replay root (the root itself when it is one)."""
    if not root.is_dir():
        raise InputError(root, "replay directory does not exist")
    if is_node_dir(root):
        return [root]
    subs = sorted(p for p in root.iterdir() if p.is_dir() and is_node_dir(p))
    if not subs:
        raise InputError(root, f"no replay files ({', '.join(FILES.values())}, ...) here or one level down")
    return subs


def _read(path: Path) -> RawText:
    size = path.stat().st_size
    if size > _MAX_BYTES:
        raise InputError(path, f"file is {size} bytes; replay reads at most {_MAX_BYTES}")
    mtime = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    return RawText(text=path.read_bytes().decode("utf-8", "replace"), source=str(path), collected_at=mtime)


def load_node(path: Path) -> NodeInputs:
    """Read one node directory into :class:`NodeInputs` (nothing is parsed here)."""
    host = path.name
    if (path / "hostname.txt").is_file():
        host = (path / "hostname.txt").read_text(errors="replace").strip() or host
    inputs = NodeInputs(host=host, replay=True)
    for attr, name in FILES.items():
        f = path / name
        if f.is_file():
            setattr(inputs, attr, _read(f))
    tree = path / "sys" / "class" / "infiniband"
    if tree.is_dir():
        inputs.ib_sysfs = read_ib_sysfs_tree(tree)
        inputs.ib_sysfs_source = str(tree)
    elif (path / "ib-sysfs.json").is_file():
        import json

        raw = _read(path / "ib-sysfs.json")
        try:
            data = json.loads(raw.text)
        except json.JSONDecodeError as e:
            raise InputError(raw.source, f"invalid JSON: {e.msg} at line {e.lineno}") from None
        if not isinstance(data, dict):
            raise InputError(raw.source, "expected a JSON object {sysfs path: content}")
        inputs.ib_sysfs = {str(k): str(v) for k, v in data.items()}
        inputs.ib_sysfs_source = raw.source
    if (path / "cpu-governor.txt").is_file():
        inputs.governors = (path / "cpu-governor.txt").read_text(errors="replace").split()
        inputs.governor_source = str(path / "cpu-governor.txt")
    return inputs
