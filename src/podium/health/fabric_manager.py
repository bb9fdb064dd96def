"""Parser for the NVIDIA Fabric Manager log (``/var/log/fabricmanager.log``)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from podium.errors import ParseError
from podium.health.models import FabricManagerEntry, FabricManagerLog
from podium.health.values import ensure_text

_ENTRY = re.compile(
    r"^\[(?P<ts>[A-Z][a-z]{2} \d{1,2} \d{4} \d{2}:\d{2}:\d{2})\] \[(?P<level>[A-Z]+)\] (?P<msg>.*)$"
)


def parse_fabric_manager_log(text: str, source: str = "fabricmanager.log") -> FabricManagerLog:
    """Parse '[Feb 25 2025 13:59:45] [INFO] [tid 1803] message' entries; continuation lines join
    the entry above them."""
    ensure_text(text, source, "fabric manager log")
    log = FabricManagerLog()
    for no, raw in enumerate(text.splitlines(), start=1):
        m = _ENTRY.match(raw)
        if m:
            try:
                ts = datetime.strptime(m.group("ts"), "%b %d %Y %H:%M:%S").replace(tzinfo=timezone.utc)
            except ValueError:
                ts = None
            log.entries.append(
                FabricManagerEntry(timestamp=ts, level=m.group("level"), message=m.group("msg"), line_no=no)
            )
        elif raw.strip() and log.entries:
            log.entries[-1].message += "\n" + raw.strip()
    if not log.entries:
        raise ParseError(source, "no '[Mon DD YYYY HH:MM:SS] [LEVEL] ...' entries")
    return log
