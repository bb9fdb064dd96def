"""Parser for kernel logs in every common time format.

Handles, per line: ``dmesg --time-format=iso`` (with or without ``--decode`` 'kern  :warn  : '
prefixes), ``dmesg --time-format=ctime`` / ``-T`` ('[Tue Jan 21 04:41:44 2025]'), raw dmesg
('[  201.650687]', with an optional '<6>' priority as pstore writes it), ``/dev/kmsg`` records
('6,3973,227996636,-;msg'), ``journalctl -k`` short and short-iso ('2025-01-21T04:41:44+0000 host
kernel: msg') and classic syslog ('Aug 17 00:00:24 host kernel: msg'). Lines that match none of these
are kept as continuation lines with ``time_format='none'``.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from podium.errors import ParseError
from podium.health.models import KernelLogLine
from podium.health.values import ensure_text

_LEVELS = ["emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"]
_FACILITIES = [
    "kern",
    "user",
    "mail",
    "daemon",
    "auth",
    "syslog",
    "lpr",
    "news",
    "uucp",
    "cron",
    "authpriv",
    "ftp",
    "res0",
    "res1",
    "res2",
    "res3",
    "local0",
    "local1",
    "local2",
    "local3",
    "local4",
    "local5",
    "local6",
    "local7",
]
_DECODE = re.compile(r"^(?P<fac>[a-z0-9]+)\s*:(?P<lvl>[a-z]+)\s*:\s(?P<rest>.*)$")
_ISO = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
# journalctl short-iso(-precise) never uses dmesg's comma before the microseconds
_ISO_HOST = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)"
    r"\s+(?P<host>\S+)\s+(?P<prog>[\w./-]+)(?:\[\d+\])?:(?:\s(?P<msg>.*))?$"
)
_ISO_BARE = re.compile(rf"^(?P<ts>{_ISO})\s+(?P<msg>.*)$")
_CTIME = re.compile(
    r"^\[(?P<ts>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]\s?(?P<msg>.*)$"
)
_UPTIME = re.compile(r"^(?:<(?P<prio>\d+)>)?\[\s*(?P<up>\d+\.\d+)\]\s?(?P<msg>.*)$")
_KMSG = re.compile(r"^(?P<prio>\d+),(?P<seq>\d+),(?P<usec>\d+),[^;]*;(?P<msg>.*)$")
_SYSLOG = re.compile(
    r"^(?P<ts>[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2})\s+(?P<host>\S+)\s+(?P<prog>[\w./-]+)(?:\[\d+\])?:(?:\s(?P<msg>.*))?$"
)


def _iso(ts: str) -> datetime | None:
    ts = ts.replace(",", ".").replace(" ", "T", 1)
    if re.search(r"[+-]\d{4}$", ts):
        ts = ts[:-2] + ":" + ts[-2:]
    ts = ts.replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _prio(prio: int) -> tuple[str, str]:
    return _FACILITIES[(prio >> 3) % len(_FACILITIES)], _LEVELS[prio & 7]


def parse_line(line_no: int, raw: str, year: int) -> KernelLogLine:
    """Parse one line; never raises (unknown shapes become ``time_format='none'``)."""
    facility = level = None
    text = raw.rstrip("\r\n")
    m = _DECODE.match(text)
    if m and m.group("fac") in _FACILITIES and m.group("lvl") in _LEVELS:
        facility, level, text = m.group("fac"), m.group("lvl"), m.group("rest")

    def line(**kw) -> KernelLogLine:
        kw.setdefault("facility", facility)
        kw.setdefault("level", level)
        return KernelLogLine(line_no=line_no, **kw)

    if m := _KMSG.match(text):
        fac, lvl = _prio(int(m.group("prio")))
        return line(
            uptime_s=int(m.group("usec")) / 1e6,
            facility=fac,
            level=lvl,
            message=m.group("msg"),
            time_format="kmsg",
        )
    if (m := _ISO_HOST.match(text)) and (ts := _iso(m.group("ts"))):
        return line(
            timestamp=ts, facility=facility or "kern", message=m.group("msg") or "", time_format="journal"
        )
    if (m := _ISO_BARE.match(text)) and (ts := _iso(m.group("ts"))):
        return line(timestamp=ts, message=m.group("msg"), time_format="iso")
    if m := _CTIME.match(text):
        try:
            ts = datetime.strptime(" ".join(m.group("ts").split()), "%a %b %d %H:%M:%S %Y")
        except ValueError:
            ts = None
        if ts is not None:
            return line(
                timestamp=ts.replace(tzinfo=timezone.utc), message=m.group("msg"), time_format="ctime"
            )
    if m := _UPTIME.match(text):
        if m.group("prio") is not None:
            facility, level = _prio(int(m.group("prio")))
        return line(
            uptime_s=float(m.group("up")),
            facility=facility,
            level=level,
            message=m.group("msg"),
            time_format="uptime",
        )
    if m := _SYSLOG.match(text):
        try:
            ts = datetime.strptime(f"{year} {' '.join(m.group('ts').split())}", "%Y %b %d %H:%M:%S")
            ts = ts.replace(tzinfo=timezone.utc)
        except ValueError:
            ts = None
        return line(timestamp=ts, message=m.group("msg") or "", time_format="syslog")
    return line(message=text, time_format="none")


def parse_kernel_log(text: str, source: str = "dmesg", year: int | None = None) -> list[KernelLogLine]:
    """Parse a kernel log (dmesg, journalctl -k, syslog, /dev/kmsg, pstore) into records.

    ``year`` fills in syslog timestamps, which carry none (default: this year).
    Raises :class:`ParseError` on empty or binary input, or when no line has a known shape.
    """
    ensure_text(text, source, "kernel log")
    year = year or datetime.now(timezone.utc).year
    lines = [parse_line(i, raw, year) for i, raw in enumerate(text.splitlines(), start=1) if raw.strip()]
    if not any(r.time_format != "none" for r in lines):
        raise ParseError(source, "no line in a known dmesg/journal/syslog/kmsg format")
    return lines
