"""InfiniBand fabric isolation: P_Key tables, M_Key protection, subnet manager, RDMA namespace mode.

Parsers are pure (text in, model out) and raise ParseError on empty, truncated or garbage input.
The check functions read sysfs and run ``smpquery``, ``sminfo`` and ``rdma`` through the runner.
"""

from __future__ import annotations

import os
import re

from pydantic import BaseModel, Field

from podium.checks.evidence import from_command, from_file, result, unavailable
from podium.checks.model import CheckContext
from podium.errors import ParseError
from podium.models.common import Severity, Status
from podium.models.results import CheckResult

CATEGORY = "infiniband"
DEFAULT_PKEY_FULL = 0xFFFF
DEFAULT_PKEY_LIMITED = 0x7FFF
IB_SPEC = "InfiniBand Architecture Specification Vol. 1, 10.9 Partitioning and 14.2.4 M_Key"


# ---------------------------------------------------------------- models


class IbPort(BaseModel):
    """One port of an RDMA device as sysfs shows it."""

    device: str
    port: int
    link_layer: str | None = None
    state: str | None = None
    pkeys: list[int] | None = Field(None, description="Non-zero P_Key table entries; None if no table")


class PortInfo(BaseModel):
    """The M_Key fields of ``smpquery portinfo``."""

    lid: int | None = None
    mkey: int | None = Field(None, description="None when smpquery prints '<not displayed>'")
    mkey_displayed: bool = False
    protect_bits: int
    lease_period: int | None = None


class SmInfo(BaseModel):
    """``sminfo``: which subnet manager is master."""

    lid: int
    guid: str
    activity_count: int
    priority: int
    state: int | None = Field(None, description="None for old sminfo builds that print no state")
    state_name: str | None = None


class RdmaSystem(BaseModel):
    """``rdma system show``: network namespace mode of the RDMA subsystem."""

    netns_mode: str = Field(description="shared | exclusive")
    privileged_qkey: str | None = None


class IbstatPort(BaseModel):
    """One CA port from ``ibstat``."""

    ca: str
    port: int
    state: str | None = None
    link_layer: str | None = None
    base_lid: int | None = None
    sm_lid: int | None = None
    port_guid: str | None = None


# ---------------------------------------------------------------- parsers


def parse_pkey_entries(entries: dict[str, str], source: str = "pkeys") -> list[int]:
    """Parse sysfs ``pkeys/<index>`` files ({index: '0xffff\\n'}); returns the non-zero P_Keys in index order."""
    if not entries:
        raise ParseError(source, "empty P_Key table")
    keys: list[tuple[int, int]] = []
    for index, text in entries.items():
        if not str(index).isdigit():
            raise ParseError(source, f"P_Key table index {index!r} is not a number")
        value = text.strip()
        if not re.fullmatch(r"0x[0-9a-fA-F]{1,4}", value):
            raise ParseError(source, f"P_Key entry {index} is not a 16-bit hex value: {value[:20]!r}")
        keys.append((int(index), int(value, 16)))
    return [k for _, k in sorted(keys) if k & 0x7FFF]


def parse_smpquery_portinfo(text: str, source: str = "smpquery portinfo") -> PortInfo:
    """Parse ``smpquery portinfo`` ('Field:.....value' lines); M_Key may be '<not displayed>'."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z][A-Za-z0-9_]*):\.{2,}(.*)$", line.strip())
        if m:
            fields.setdefault(m.group(1), m.group(2).strip())
    protect = fields.get("ProtectBits", fields.get("MkeyProtectBits"))
    if "Mkey" not in fields or protect is None:
        raise ParseError(source, "no Mkey/ProtectBits fields (truncated or not portinfo output)")
    try:
        mkey_text = fields["Mkey"]
        displayed = mkey_text.startswith("0x") or mkey_text.isdigit()
        return PortInfo(
            lid=_int(fields.get("Lid")),
            mkey=int(mkey_text, 0) if displayed else None,
            mkey_displayed=displayed,
            protect_bits=int(protect, 0),
            lease_period=_int(fields.get("MkeyLeasePeriod")),
        )
    except ValueError as e:
        raise ParseError(source, f"bad number: {e}") from None


def _int(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    return int(text, 0)


_SMINFO = re.compile(
    r"sminfo: sm lid (?P<lid>0x[0-9a-fA-F]+|\d+) sm guid (?P<guid>0x[0-9a-fA-F]+), activity count (?P<act>\d+)\s+"
    r"priority (?P<prio>\d+)(?:\s+state (?P<state>\d+) (?P<name>SMINFO_\w+))?"
)


def parse_sminfo(text: str, source: str = "sminfo") -> SmInfo:
    """Parse ``sminfo``: 'sminfo: sm lid 37 sm guid 0x..., activity count N priority P state 3 SMINFO_MASTER'."""
    m = _SMINFO.search(" ".join(text.split()))
    if not m:
        raise ParseError(source, "no 'sminfo: sm lid ... sm guid ..., activity count ... priority ...' line")
    return SmInfo(
        lid=int(m.group("lid"), 0),
        guid=m.group("guid").lower(),
        activity_count=int(m.group("act")),
        priority=int(m.group("prio")),
        state=int(m.group("state")) if m.group("state") else None,
        state_name=m.group("name"),
    )


def parse_rdma_system(text: str, source: str = "rdma system show") -> RdmaSystem:
    """Parse ``rdma system show``: 'netns shared' (newer: 'netns shared privileged-qkey off copy-on-fork on')."""
    tokens = text.split()
    if "netns" not in tokens:
        raise ParseError(source, "no 'netns' field")
    i = tokens.index("netns")
    if i + 1 >= len(tokens) or tokens[i + 1] not in ("shared", "exclusive"):
        raise ParseError(source, "netns mode is neither 'shared' nor 'exclusive'")
    qkey = None
    if "privileged-qkey" in tokens:
        j = tokens.index("privileged-qkey")
        qkey = tokens[j + 1] if j + 1 < len(tokens) else None
    return RdmaSystem(netns_mode=tokens[i + 1], privileged_qkey=qkey)


def parse_ibstat(text: str, source: str = "ibstat") -> list[IbstatPort]:
    """Parse ``ibstat`` into one entry per CA port."""
    ports: list[IbstatPort] = []
    ca: str | None = None
    current: IbstatPort | None = None
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(r"^CA '([^']+)'$", line)
        if m:
            ca, current = m.group(1), None
            continue
        m = re.match(r"^Port (\d+):$", line)
        if m:
            if ca is None:
                raise ParseError(source, "port listed before any CA")
            current = IbstatPort(ca=ca, port=int(m.group(1)))
            ports.append(current)
            continue
        if current is None or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        try:
            if key == "State":
                current.state = value
            elif key == "Link layer":
                current.link_layer = value
            elif key == "Base lid":
                current.base_lid = int(value, 0)
            elif key == "SM lid":
                current.sm_lid = int(value, 0)
            elif key == "Port GUID":
                current.port_guid = value
        except ValueError:
            raise ParseError(source, f"bad number in '{line[:60]}'") from None
    if not ports:
        raise ParseError(source, "no CA ports found")
    # a port cut off before its 'Link layer' line means the output was truncated
    if ports[-1].link_layer is None:
        raise ParseError(source, f"truncated: port {ports[-1].ca}/{ports[-1].port} has no 'Link layer'")
    return ports


# ---------------------------------------------------------------- sysfs reader


def read_ib_ports(class_dir: str) -> list[IbPort]:
    """Read ``/sys/class/infiniband/*/ports/*`` (state, link_layer, pkeys/*). Missing dir -> []."""
    ports: list[IbPort] = []
    if not os.path.isdir(class_dir):
        return ports
    for device in sorted(os.listdir(class_dir)):
        ports_dir = os.path.join(class_dir, device, "ports")
        if not os.path.isdir(ports_dir):
            continue
        for port in sorted(os.listdir(ports_dir), key=lambda p: int(p) if p.isdigit() else 0):
            if not port.isdigit():
                continue
            pdir = os.path.join(ports_dir, port)
            pkey_dir = os.path.join(pdir, "pkeys")
            pkeys = None
            if os.path.isdir(pkey_dir):
                entries = {name: _read(os.path.join(pkey_dir, name)) or "" for name in os.listdir(pkey_dir)}
                pkeys = parse_pkey_entries(entries, pkey_dir)
            ports.append(
                IbPort(
                    device=device,
                    port=int(port),
                    link_layer=(_read(os.path.join(pdir, "link_layer")) or "").strip() or None,
                    state=(_read(os.path.join(pdir, "state")) or "").strip() or None,
                    pkeys=pkeys,
                )
            )
    return ports


def _read(path: str) -> str | None:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


# ---------------------------------------------------------------- checks

CLASS_DIR = "/sys/class/infiniband"


def _ib_ports_or_skip(ctx: CheckContext, spec_id: str, title: str):
    class_dir = ctx.path(CLASS_DIR)
    ports = [p for p in read_ib_ports(class_dir) if (p.link_layer or "").lower() == "infiniband"]
    if not ports:
        return None, result(
            spec_id,
            title,
            CATEGORY,
            Status.SKIPPED,
            host=ctx.host,
            reason=f"no InfiniBand ports under {CLASS_DIR} (no HCA, or RoCE/Ethernet only)",
        )
    return ports, None


def check_pkey_default_full(ctx: CheckContext) -> list[CheckResult]:
    """Flag full membership (0xffff) of the default partition on InfiniBand ports."""
    spec_id, title = "ib.pkey.default-full", "Default partition membership (P_Key 0xffff)"
    try:
        ports, skipped = _ib_ports_or_skip(ctx, spec_id, title)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    if skipped:
        return [skipped]
    with_table = [p for p in ports if p.pkeys is not None]
    if not with_table:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                reason="InfiniBand ports have no readable pkeys/ table in sysfs",
            )
        ]
    full = [p for p in with_table if DEFAULT_PKEY_FULL in p.pkeys]
    evidence = [
        from_file(
            ctx.path(f"{CLASS_DIR}/{p.device}/ports/{p.port}/pkeys"),
            ctx.host,
            f"{p.device} port {p.port}: P_Keys " + ", ".join(f"0x{k:04x}" for k in p.pkeys),
        )
        for p in with_table
    ]
    if full:
        names = ", ".join(f"{p.device}/{p.port}" for p in full)
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject=names,
                evidence=evidence,
                remediation=(
                    "On a fabric shared by tenants, give tenant nodes only limited membership of the default "
                    "partition (0x7fff) and full membership of their own partition; configure this in the "
                    "subnet manager's partitions.conf."
                ),
                references=[IB_SPEC, "https://docs.nvidia.com/networking/display/ufmenterpriseumv6160/pkey"],
                details={"full_default_ports": [f"{p.device}/{p.port}" for p in full]},
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.PASS,
            host=ctx.host,
            evidence=evidence,
            details={"ports": len(with_table)},
        )
    ]


def check_pkey_extra(ctx: CheckContext) -> list[CheckResult]:
    """Flag P_Keys for more than one non-default partition (a tenant node normally has exactly one)."""
    spec_id, title = "ib.pkey.extra-partitions", "P_Keys beyond the tenant's own partition"
    try:
        ports, skipped = _ib_ports_or_skip(ctx, spec_id, title)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    if skipped:
        return [skipped]
    with_table = [p for p in ports if p.pkeys is not None]
    if not with_table:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.UNKNOWN,
                host=ctx.host,
                reason="InfiniBand ports have no readable pkeys/ table in sysfs",
            )
        ]
    partitions = sorted({k & 0x7FFF for p in with_table for k in p.pkeys} - {DEFAULT_PKEY_LIMITED})
    evidence = [
        from_file(
            ctx.path(f"{CLASS_DIR}/{p.device}/ports/{p.port}/pkeys"),
            ctx.host,
            f"{p.device} port {p.port}: P_Keys " + ", ".join(f"0x{k:04x}" for k in p.pkeys),
        )
        for p in with_table
    ]
    details = {"partitions": [f"0x{k:04x}" for k in partitions]}
    if len(partitions) > 1:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject=", ".join(details["partitions"]),
                evidence=evidence,
                remediation=(
                    "A tenant node should hold the P_Key of its own partition only (plus limited default "
                    "membership). Ask the provider why this node is a member of several partitions."
                ),
                references=[IB_SPEC],
                details=details,
            )
        ]
    return [result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, evidence=evidence, details=details)]


def _ibstat_ports(ctx: CheckContext):
    out = ctx.runner.run(["ibstat"], timeout=10)
    if not out.ran:
        return None, out
    if not out.ok:
        return None, out
    return [p for p in parse_ibstat(out.stdout) if (p.link_layer or "") == "InfiniBand"], out


def check_mkey(ctx: CheckContext) -> list[CheckResult]:
    """M_Key and protection bits of each local InfiniBand port (``smpquery portinfo``)."""
    spec_id, title = "ib.mkey", "M_Key protection on local ports"
    try:
        ports, out = _ibstat_ports(ctx)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    if ports is None:
        return [unavailable(out, spec_id, title, CATEGORY, ctx.host)]
    if not ports:
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.SKIPPED,
                host=ctx.host,
                reason="ibstat lists no InfiniBand ports",
            )
        ]
    results = []
    for p in ports:
        sm = ctx.runner.run(
            ["smpquery", "-C", p.ca, "-P", str(p.port), "-D", "portinfo", "0"], timeout=ctx.timeout_s + 3
        )
        subject = f"{p.ca}/{p.port}"
        if not sm.ok:
            umad = sm.ran and "umad" in (sm.stderr + sm.stdout).lower()
            hint = "needs root or access to /dev/infiniband/umad*" if umad else None
            results.append(unavailable(sm, spec_id, title, CATEGORY, ctx.host, hint=hint, subject=subject))
            continue
        try:
            info = parse_smpquery_portinfo(sm.stdout)
        except ParseError as e:
            results.append(
                result(
                    spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, subject=subject, reason=str(e)
                )
            )
            continue
        mkey_text = f"0x{info.mkey:016x}" if info.mkey is not None else "<not displayed>"
        ev = [
            from_command(
                sm,
                f"M_Key {mkey_text}, ProtectBits {info.protect_bits}, lease {info.lease_period}",
                value=info.protect_bits,
            )
        ]
        details = info.model_dump()
        if info.protect_bits == 0 or (info.mkey_displayed and info.mkey == 0):
            why = "M_Key is 0" if info.mkey_displayed and info.mkey == 0 else "M_Key protect bits are 0"
            results.append(
                result(
                    spec_id,
                    title,
                    CATEGORY,
                    Status.FAIL,
                    Severity.HIGH,
                    host=ctx.host,
                    subject=subject,
                    evidence=ev,
                    remediation=(
                        f"{why}: a node can change this port's configuration with SubnSet MADs. Configure a "
                        "non-zero M_Key with protect bits >= 1 (e.g. OpenSM m_key, m_key_protection_level, "
                        "m_key_lease_period)."
                    ),
                    references=[IB_SPEC],
                    details=details,
                )
            )
        elif not info.mkey_displayed:
            results.append(
                result(
                    spec_id,
                    title,
                    CATEGORY,
                    Status.WARN,
                    Severity.LOW,
                    host=ctx.host,
                    subject=subject,
                    evidence=ev,
                    remediation="Protect bits are set but smpquery hid the M_Key; confirm with the provider that it is non-zero.",
                    references=[IB_SPEC],
                    details=details,
                )
            )
        else:
            results.append(
                result(
                    spec_id,
                    title,
                    CATEGORY,
                    Status.PASS,
                    host=ctx.host,
                    subject=subject,
                    evidence=ev,
                    details=details,
                )
            )
    return results


def check_subnet_manager(ctx: CheckContext) -> list[CheckResult]:
    """Identify the master subnet manager (``sminfo``)."""
    spec_id, title = "ib.subnet-manager", "Subnet manager identity"
    out = ctx.runner.run(["sminfo"], timeout=ctx.timeout_s + 3)
    if not out.ok:
        return [unavailable(out, spec_id, title, CATEGORY, ctx.host)]
    try:
        sm = parse_sminfo(out.stdout)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    ev = [
        from_command(
            out, f"SM lid {sm.lid} guid {sm.guid} priority {sm.priority} {sm.state_name}", value=sm.guid
        )
    ]
    if sm.state_name is not None and sm.state_name != "SMINFO_MASTER":
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject=sm.guid,
                evidence=ev,
                remediation="The subnet manager this port reports is not master; check the fabric's SM failover.",
                details=sm.model_dump(),
            )
        ]
    return [
        result(
            spec_id,
            title,
            CATEGORY,
            Status.PASS,
            host=ctx.host,
            subject=sm.guid,
            evidence=ev,
            details=sm.model_dump(),
        )
    ]


def check_rdma_netns(ctx: CheckContext) -> list[CheckResult]:
    """RDMA subsystem network namespace mode: 'shared' exposes every RDMA device to every container."""
    spec_id, title = "ib.rdma-netns", "RDMA network namespace mode"
    out = ctx.runner.run(["rdma", "system", "show"], timeout=5)
    if not out.ok:
        if "NETLINK_RDMA" in out.stderr:
            reason = "no RDMA subsystem in this kernel (rdma: Failed to open NETLINK_RDMA socket)"
            return [result(spec_id, title, CATEGORY, Status.SKIPPED, host=ctx.host, reason=reason)]
        return [unavailable(out, spec_id, title, CATEGORY, ctx.host)]
    try:
        mode = parse_rdma_system(out.stdout)
    except ParseError as e:
        return [result(spec_id, title, CATEGORY, Status.UNKNOWN, host=ctx.host, reason=str(e))]
    ev = [from_command(out, f"netns {mode.netns_mode}", value=mode.netns_mode)]
    if mode.netns_mode == "shared":
        return [
            result(
                spec_id,
                title,
                CATEGORY,
                Status.WARN,
                Severity.MEDIUM,
                host=ctx.host,
                subject="netns shared",
                evidence=ev,
                remediation=(
                    "In shared mode every network namespace (every container) sees every RDMA device. For "
                    "containers of different tenants on one node set 'rdma system set netns exclusive' "
                    "before creating namespaces (or the ib_core module parameter netns_mode=0)."
                ),
                references=["https://man7.org/linux/man-pages/man8/rdma-system.8.html"],
                details=mode.model_dump(),
            )
        ]
    return [
        result(spec_id, title, CATEGORY, Status.PASS, host=ctx.host, evidence=ev, details=mode.model_dump())
    ]
