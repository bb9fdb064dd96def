"""Keep API keys and tokens out of logs, reports and stores.

Any code that reads a secret registers it here; every log record and every file that
podium writes through :func:`redact` has registered secrets replaced by ``[REDACTED]``.
"""

from __future__ import annotations

import logging
import re

_SECRETS: set[str] = set()
_BEARER = re.compile(r"(?i)(authorization:\s*bearer\s+|api[_-]?key[=:]\s*)([^\s\"',]+)")


def register_secret(value: str | None) -> None:
    """Remember a secret value so that it is redacted wherever podium writes text."""
    if value and len(value) >= 4:
        _SECRETS.add(value)


def redact(text: str) -> str:
    for s in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(s, "[REDACTED]")
    return _BEARER.sub(lambda m: m.group(1) + "[REDACTED]", text)


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        red = redact(msg)
        if red != msg:
            record.msg, record.args = red, None
        return True
