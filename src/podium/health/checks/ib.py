"""InfiniBand / RoCE checks: port state, rate vs expected, error counters, link flaps."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from podium.health.checks.base import check
from podium.health.models import Action, IbPort, KernelLogLine
from podium.models.common import Provenance, Status
from podium.models.results import CheckResult

COUNTERS_DOC = "https://enterprise-support.nvidia.com/s/article/infiniband-port-counters"
# What Azure's and NHC's link-flap checks look for in syslog, for IPoIB and mlx5 ports.
_FLAP = re.compile(
    r"(?:\bib\w*\b.*(?:Lost carrier|link down|Link is Down))|(?:mlx5_core.*(?:Link down|link down))"
    r"|(?:\bport \d+ .*changed to DOWN)",
    re.IGNORECASE,
)


def _name(p: IbPort) -> str:
    return f"{p.device}/{p.port}"


def check_ib_ports(
    ports: list[IbPort], prov: Provenance, thresholds: dict[str, Any], expected_rate_gbps: float | None = None
) -> list[CheckResult]:
    out: list[CheckResult] = []
    down = [p for p in ports if p.state != "Active" or (p.physical_state not in (None, "LinkUp"))]
    out.append(
        check(
            "ib.port-state",
            f"{len(down)} of {len(ports)} IB/RoCE port(s) not active"
            if down
            else f"{len(ports)} IB/RoCE port(s) active",
            Status.FAIL if down else Status.PASS,
            prov=prov,
            action=Action.DRAIN if down else Action.NONE,
            evidence=[(f"{_name(p)} state {p.state}, physical {p.physical_state}", p.state) for p in down]
            or [("ports active", len(ports))],
            remediation="Check cable/transceiver and the switch port; `ibstat`, `mlxlink -d <dev>`."
            if down
            else None,
        )
    )
    up = [p for p in ports if p not in down and p.rate_gbps is not None]
    ev, status, action = [], Status.PASS, Action.NONE
    if expected_rate_gbps is not None:
        for p in up:
            if p.link_layer in (None, "InfiniBand") and p.rate_gbps < expected_rate_gbps:
                ev.append(
                    (f"{_name(p)} at {p.rate_gbps:g} Gb/s, expected {expected_rate_gbps:g}", p.rate_gbps)
                )
                status, action = Status.FAIL, Action.DRAIN
    else:  # no expectation given: a port slower than its siblings of the same HCA type and link layer
        groups: dict[tuple, list[IbPort]] = {}
        for p in up:
            groups.setdefault((p.ca_type, p.link_layer), []).append(p)
        for members in groups.values():
            common = Counter(p.rate_gbps for p in members).most_common(1)[0][0]
            for p in members:
                if p.rate_gbps < common:
                    ev.append((f"{_name(p)} at {p.rate_gbps:g} Gb/s, siblings at {common:g}", p.rate_gbps))
                    status = Status.WARN
    if up:
        rates = sorted({p.rate_gbps for p in up})
        out.append(
            check(
                "ib.rate",
                "IB/RoCE link rate below expected"
                if ev
                else f"Link rates {', '.join(f'{r:g}' for r in rates)} Gb/s",
                status,
                prov=prov,
                action=action,
                evidence=ev or [("rates (Gb/s)", ", ".join(f"{r:g}" for r in rates))],
                details={"expected_rate_gbps": expected_rate_gbps},
            )
        )
    limits = thresholds["ib_counters"]
    with_counters = [p for p in ports if p.counters]
    if with_counters:
        ev, status, action = [], Status.PASS, Action.NONE
        for p in with_counters:
            for name, (warn_at, fail_at) in ((k, v) for k, v in limits.items() if k != "source"):
                value = p.counters.get(name)
                if value is None:
                    continue
                if value >= fail_at:
                    ev.append((f"{_name(p)} {name} = {value} (fail at {fail_at})", value))
                    status, action = Status.FAIL, Action.DRAIN
                elif value >= warn_at:
                    ev.append((f"{_name(p)} {name} = {value} (warn at {warn_at})", value))
                    if status == Status.PASS:
                        status = Status.WARN
        out.append(
            check(
                "ib.counters",
                "IB error counters above thresholds" if ev else "IB error counters clean",
                status,
                prov=prov,
                action=action,
                evidence=ev or [("ports with counters", len(with_counters))],
                references=[COUNTERS_DOC],
                remediation="Replace the cable/transceiver of the named port, then clear counters (perfquery -x -R)."
                if ev
                else None,
            )
        )
    return out


def check_link_flaps(lines: list[KernelLogLine], prov: Provenance, thresholds: dict[str, Any]) -> CheckResult:
    flaps = [ln for ln in lines if _FLAP.search(ln.message)]
    t = thresholds["ib_link_flaps"]
    status = (
        Status.FAIL if len(flaps) >= t["fail"] else Status.WARN if len(flaps) >= t["warn"] else Status.PASS
    )
    return check(
        "ib.link-flaps",
        f"{len(flaps)} IB/RoCE link flap(s) in the log" if flaps else "No IB/RoCE link flaps in the log",
        status,
        prov=prov,
        action=Action.DRAIN if status == Status.FAIL else Action.NONE,
        evidence=[(f"line {ln.line_no}: {ln.message[:160]}", ln.line_no) for ln in flaps[:10]]
        or [("log lines scanned", len(lines))],
    )
