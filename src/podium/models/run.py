"""A run: one invocation of a podium command, kept in ``podium-runs/<run-id>/``."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from podium.models.common import utcnow


class StepState(str, Enum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class StepRecord(BaseModel):
    """One resumable step inside a run."""

    model_config = ConfigDict(extra="forbid")

    name: str
    state: StepState
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    output: str | None = Field(None, description="Path of the step's output, relative to the run dir")
    error: str | None = None


class RunRecord(BaseModel):
    """What a run did, with the versions needed to reproduce it."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    command: str = Field(description="podium sub-command, e.g. 'audit'")
    argv: list[str] = Field(default_factory=list)
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    podium_version: str
    advisory_bundle_version: str | None = None
    host: str
    steps: list[StepRecord] = Field(default_factory=list)
    exit_code: int | None = None
