"""Parsers for ``ibstat`` and ``ibstatus`` (infiniband-diags)."""

from __future__ import annotations

import re

from podium.errors import ParseError
from podium.health.models import IbPort
from podium.health.values import ensure_text, number

_CA = re.compile(r"^CA '([^']+)'")
_PORT = re.compile(r"^\s+Port (\d+):\s*$")
_KV = re.compile(r"^\s+([A-Za-z][A-Za-z _]*?):\s*(.*?)\s*$")
_IBSTATUS_DEV = re.compile(r"^Infiniband device '([^']+)' port (\d+) status:")


def normalise_state(value: str | None) -> str | None:
    """'4: ACTIVE' / 'Active' -> 'Active'; '5: LinkUp' -> 'LinkUp'; '3: Disabled' -> 'Disabled'."""
    if value is None:
        return None
    v = value.split(":", 1)[1] if re.match(r"^\s*\d+\s*:", value) else value
    v = v.strip()
    if not v:
        return None
    return {"ACTIVE": "Active", "DOWN": "Down", "INIT": "Init", "ARMED": "Armed"}.get(v.upper(), v)


def parse_ibstat(text: str, source: str = "ibstat") -> list[IbPort]:
    """Parse ``ibstat`` into one :class:`IbPort` per (CA, port)."""
    ensure_text(text, source, "ibstat output")
    ports: list[IbPort] = []
    ca: str | None = None
    ca_info: dict[str, str] = {}
    port: dict[str, str] | None = None

    def flush() -> None:
        if ca is not None and port is not None:
            ports.append(
                IbPort(
                    device=ca,
                    port=int(port["_port"]),
                    state=normalise_state(port.get("State")),
                    physical_state=normalise_state(port.get("Physical state")),
                    rate_gbps=number(port.get("Rate")),
                    link_layer=port.get("Link layer"),
                    ca_type=ca_info.get("CA type") or None,
                    firmware=ca_info.get("Firmware version") or None,
                    source="ibstat",
                )
            )

    for raw in text.splitlines():
        m = _CA.match(raw)
        if m:
            flush()
            ca, ca_info, port = m.group(1), {}, None
            continue
        m = _PORT.match(raw)
        if m and ca is not None:
            flush()
            port = {"_port": m.group(1)}
            continue
        m = _KV.match(raw)
        if m and ca is not None:
            (port if port is not None else ca_info)[m.group(1)] = m.group(2)
    flush()
    if not ports:
        raise ParseError(source, "no \"CA '...'\" block with a 'Port N:' section")
    return ports


def parse_ibstatus(text: str, source: str = "ibstatus") -> list[IbPort]:
    """Parse ``ibstatus`` ('Infiniband device 'mlx5_0' port 1 status:' blocks)."""
    ensure_text(text, source, "ibstatus output")
    ports: list[IbPort] = []
    current: dict[str, str] | None = None

    def flush() -> None:
        if current is not None:
            ports.append(
                IbPort(
                    device=current["_dev"],
                    port=int(current["_port"]),
                    state=normalise_state(current.get("state")),
                    physical_state=normalise_state(current.get("phys state")),
                    rate_gbps=number(current.get("rate")),
                    link_layer=current.get("link_layer"),
                    source="ibstatus",
                )
            )

    for raw in text.splitlines():
        m = _IBSTATUS_DEV.match(raw)
        if m:
            flush()
            current = {"_dev": m.group(1), "_port": m.group(2)}
            continue
        m = _KV.match(raw)
        if m and current is not None:
            current[m.group(1).strip()] = m.group(2)
    flush()
    if not ports:
        raise ParseError(source, "no \"Infiniband device '...' port N status:\" block")
    return ports


def parse_ib_tool_output(text: str, source: str = "ibstat") -> list[IbPort]:
    """Either format: ``ibstatus`` blocks are recognised by their header line."""
    if _IBSTATUS_DEV.search(text or "") or re.search(r"(?m)^Infiniband device '", text or ""):
        return parse_ibstatus(text, source)
    return parse_ibstat(text, source)
