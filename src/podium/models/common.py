"""Enums and small models used across podium."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Status(str, Enum):
    """Outcome of one check. ``unknown`` and ``skipped`` never count as a pass."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"
    SKIPPED = "skipped"


class Severity(str, Enum):
    """How bad a finding is, CVSS-style qualitative levels plus ``info``."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"
    NONE = "none"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def from_cvss(cls, score: float | None) -> Severity:
        """CVSS v3/v4 base score to qualitative severity (FIRST's bands)."""
        if score is None:
            return cls.NONE
        if score >= 9.0:
            return cls.CRITICAL
        if score >= 7.0:
            return cls.HIGH
        if score >= 4.0:
            return cls.MEDIUM
        if score > 0.0:
            return cls.LOW
        return cls.NONE

    @classmethod
    def parse(cls, text: str | None) -> Severity:
        if not text:
            return cls.NONE
        try:
            return cls(text.strip().lower())
        except ValueError:
            return {"moderate": cls.MEDIUM, "important": cls.HIGH}.get(text.strip().lower(), cls.NONE)


_SEVERITY_RANK = {
    Severity.NONE: 0,
    Severity.INFO: 1,
    Severity.LOW: 2,
    Severity.MEDIUM: 3,
    Severity.HIGH: 4,
    Severity.CRITICAL: 5,
}


class Provenance(BaseModel):
    """Where a value came from: enough to reproduce it."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(None, description="Command line (argv joined) or file read")
    host: str | None = Field(None, description="Host the value was collected on")
    collected_at: datetime | None = Field(None, description="UTC time of collection")
    tool_version: str | None = Field(None, description="podium version (and tool version where known)")
    raw_output: str | None = Field(None, description="Path of the raw output, relative to the run directory")


class Evidence(BaseModel):
    """One piece of evidence behind a result: what was seen, and where it came from."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(description="What was observed, in one line")
    value: str | float | int | bool | None = Field(None, description="The observed value, when there is one")
    source: Provenance | None = None


def trusted_copy(model: BaseModel, **updates):
    """A shallow copy of an already-validated model with some fields replaced, without validation.

    Only for hot paths (grading 10,000 nodes) where the values are known-good; pydantic's own
    ``model_copy``/``model_construct`` spend most of their time on bookkeeping we do not need.
    """
    new = object.__new__(type(model))
    values = model.__dict__.copy()
    values.update(updates)
    object.__setattr__(new, "__dict__", values)
    object.__setattr__(new, "__pydantic_fields_set__", model.__pydantic_fields_set__ | updates.keys())
    object.__setattr__(new, "__pydantic_extra__", None)
    object.__setattr__(new, "__pydantic_private__", None)
    return new
