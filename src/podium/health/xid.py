"""NVIDIA Xid events from kernel log records, and the policy table (data/xid_policy.yaml)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel

from podium.health.models import Action, KernelLogLine, XidEvent

_XID = re.compile(r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\):\s*(?P<xid>\d+),\s*(?P<rest>.*)$")
_RECOVERY = re.compile(
    r"recovery action changed from 0x[0-9a-fA-F]+ \(([^)]*)\) to 0x[0-9a-fA-F]+ \(([^)]*)\)"
)
# pid/name differ between otherwise identical repeats of one event
_VOLATILE = re.compile(r"pid='?[^,']*'?,\s*name=[^,]*,\s*|pid=\d+,?\s*")


class XidRule(BaseModel):
    """One row of the Xid policy table."""

    xid: int | None = None
    name: str
    status: str
    action: str
    severity: str
    resolution: str | None = None
    source: str | None = None


class XidPolicy(BaseModel):
    version: str
    catalog: str
    default: dict[str, str]
    rules: dict[int, XidRule]
    recovery_actions: dict[str, dict[str, str]]

    def rule(self, xid: int) -> XidRule:
        if xid in self.rules:
            return self.rules[xid]
        d = self.default
        return XidRule(
            xid=xid,
            name="not in podium's policy table",
            status=d["status"],
            action=d["action"],
            severity=d["severity"],
            source=self.catalog,
        )

    def grade(self, event: XidEvent) -> tuple[str, Action, XidRule]:
        """(status, action, rule) for one event; Xid 154 takes the action its message names."""
        rule = self.rule(event.xid)
        if rule.action == "from-message":
            mapped = self.recovery_actions.get(event.recovery_action or "")
            if mapped is None:  # an action name this table does not know: hand it to an operator
                return "fail", Action.DRAIN, rule
            return mapped["status"], Action(mapped["action"]), rule
        return rule.status, Action(rule.action), rule


@lru_cache(maxsize=1)
def load_xid_policy() -> XidPolicy:
    """The bundled policy table."""
    raw: dict[str, Any] = yaml.safe_load(
        resources.files("podium").joinpath("data/xid_policy.yaml").read_text(encoding="utf-8")
    )
    rules = {int(k): XidRule(xid=int(k), **v) for k, v in raw["xids"].items()}
    return XidPolicy(
        version=str(raw["version"]),
        catalog=raw["catalog"],
        default=raw["default"],
        rules=rules,
        recovery_actions=raw["recovery_actions"],
    )


def extract_xids(lines: list[KernelLogLine]) -> list[XidEvent]:
    """Xid events, de-duplicated on (xid, PCI address, message without pid/name); counts repeats."""
    events: dict[tuple, XidEvent] = {}
    for ln in lines:
        m = _XID.search(ln.message)
        if not m:
            continue
        xid = int(m.group("xid"))
        rest = m.group("rest").strip()
        key = (xid, m.group("pci"), _VOLATILE.sub("", rest))
        if key in events:
            events[key].count += 1
            continue
        recovery = None
        if xid == 154 and (r := _RECOVERY.search(rest)):
            recovery = r.group(2).strip()
        events[key] = XidEvent(
            xid=xid,
            pci=m.group("pci"),
            message=rest,
            first_seen=ln.timestamp,
            first_line=ln.line_no,
            recovery_action=recovery,
        )
    return list(events.values())
