"""InfiniBand/RoCE ports from sysfs: a live ``/sys/class/infiniband`` tree, a copied subtree, or a
``{path: content}`` map (the format of facebookresearch/gcm's captured ``learn_*.json`` files)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from podium.errors import ParseError
from podium.health.ibstat import normalise_state
from podium.health.models import IbPort
from podium.health.values import number

_PORT_FILE = re.compile(r"(?:^|/infiniband/)(?P<dev>[^/]+)/ports/(?P<port>\d+)/(?P<rest>.+)$")
_DEV_FILE = re.compile(r"(?:^|/infiniband/)(?P<dev>[^/]+)/(?P<name>fw_ver|hca_type|board_id)$")
_PORT_ATTRS = ("state", "phys_state", "rate", "link_layer")
_MAX_FILE = 4096


def parse_ib_sysfs(files: Mapping[str, str], source: str = "/sys/class/infiniband") -> list[IbPort]:
    """Build ports from sysfs file contents keyed by path (relative to the class dir, or absolute)."""
    devices: dict[str, dict[str, str]] = {}
    ports: dict[tuple[str, int], dict[str, str]] = {}
    counters: dict[tuple[str, int], dict[str, int]] = {}
    for path, content in files.items():
        p = path.replace("\\", "/")
        m = _PORT_FILE.search(p)
        if m:
            key = (m.group("dev"), int(m.group("port")))
            rest = m.group("rest")
            ports.setdefault(key, {})
            if rest in _PORT_ATTRS:
                ports[key][rest] = content.strip()
            elif rest.startswith(("counters/", "hw_counters/")) and rest.count("/") == 1:
                value = content.strip()
                if re.fullmatch(r"\d+", value):
                    counters.setdefault(key, {})[rest.split("/", 1)[1]] = int(value)
            continue
        m = _DEV_FILE.search(p)
        if m:
            devices.setdefault(m.group("dev"), {})[m.group("name")] = content.strip()
    out = []
    for (dev, port), attrs in sorted(ports.items()):
        if not attrs and (dev, port) not in counters:
            continue
        out.append(
            IbPort(
                device=dev,
                port=port,
                state=normalise_state(attrs.get("state")),
                physical_state=normalise_state(attrs.get("phys_state")),
                rate_gbps=number(attrs.get("rate")),
                link_layer=attrs.get("link_layer"),
                ca_type=devices.get(dev, {}).get("hca_type"),
                firmware=devices.get(dev, {}).get("fw_ver"),
                counters=counters.get((dev, port), {}),
                source="sysfs",
            )
        )
    if not out:
        raise ParseError(source, "no <device>/ports/<n>/{state,rate,...} files found")
    return out


def read_ib_sysfs_tree(root: Path) -> dict[str, str]:
    """Read the files :func:`parse_ib_sysfs` needs from a (live or copied) class/infiniband dir.

    Walks only ``<dev>/{fw_ver,hca_type,board_id}`` and ``<dev>/ports/*/{attrs,counters/*,hw_counters/*}``
    so symlinked live trees cannot loop.
    """
    files: dict[str, str] = {}

    def read(path: Path, key: str) -> None:
        try:
            with path.open("r", errors="replace") as fh:
                files[key] = fh.read(_MAX_FILE)
        except OSError:
            pass  # unreadable counters exist on some HCAs; absent is what they are

    if not root.is_dir():
        return files
    for dev in sorted(root.iterdir()):
        for name in ("fw_ver", "hca_type", "board_id"):
            read(dev / name, f"{dev.name}/{name}")
        ports_dir = dev / "ports"
        if not ports_dir.is_dir():
            continue
        for port in sorted(ports_dir.iterdir()):
            for attr in _PORT_ATTRS:
                read(port / attr, f"{dev.name}/ports/{port.name}/{attr}")
            for sub in ("counters", "hw_counters"):
                d = port / sub
                if d.is_dir():
                    for f in sorted(d.iterdir()):
                        read(f, f"{dev.name}/ports/{port.name}/{sub}/{f.name}")
    return files


def parse_ib_sysfs_json(text: str, source: str) -> list[IbPort]:
    """A gcm-style JSON map ``{"/sys/.../infiniband/mlx5_0/ports/1/rate": "200 Gb/sec ...\\n"}``."""
    import json

    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ParseError(source, f"not JSON ({e.msg if hasattr(e, 'msg') else e})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ParseError(source, "expected a JSON object of {sysfs path: file content}")
    return parse_ib_sysfs(data, source)
