"""Small value readers shared by the parsers: 'N/A' is None, units are stripped."""

from __future__ import annotations

import re

_NA = {"", "n/a", "[n/a]", "not supported", "[not supported]", "unknown", "[unknown error]", "none"}
_NUM = re.compile(r"[-+]?\d+(?:\.\d+)?")


def text_or_none(value: str | None) -> str | None:
    """Strip; 'N/A' style placeholders become None."""
    if value is None:
        return None
    value = value.strip()
    if value.lower() in _NA or value.lower().startswith("requested functionality"):
        return None
    return value


def number(value: str | None) -> float | None:
    """First number in '67.03 W', '16x', '92 C'; None for N/A."""
    value = text_or_none(value)
    if value is None:
        return None
    m = _NUM.search(value)
    return float(m.group()) if m else None


def integer(value: str | None) -> int | None:
    n = number(value)
    return int(n) if n is not None else None


def yes_no(value: str | None) -> bool | None:
    """'Yes'/'Enabled'/'Active' -> True, 'No'/'Disabled'/'Not Active' -> False, else None."""
    value = text_or_none(value)
    if value is None:
        return None
    v = value.lower()
    if v in {"yes", "enabled", "active", "true", "on"}:
        return True
    if v in {"no", "disabled", "not active", "false", "off", "inactive"}:
        return False
    return None


def snake(key: str) -> str:
    """'HW Thermal Slowdown' -> 'hw_thermal_slowdown'."""
    return re.sub(r"[^a-z0-9]+", "_", key.strip().lower()).strip("_")


def ensure_text(text: str | None, source: str, what: str) -> str:
    """Reject empty or binary input with a typed error before any parser looks at it."""
    from podium.errors import ParseError

    if text is None or not text.strip():
        raise ParseError(source, f"empty {what}")
    sample = text[:65536]
    if "\x00" in sample:
        raise ParseError(source, f"{what} contains NUL bytes (binary data?)")
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r") or ch == "\ufffd")
    if bad > max(8, len(sample) // 20):
        raise ParseError(source, f"{what} looks like binary data ({bad} control bytes)")
    return text
