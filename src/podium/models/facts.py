"""Facts collected from one node: what is installed, at which version, seen how."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from podium.models.common import utcnow


class ComponentFact(BaseModel):
    """One component on one node. ``visible: false`` means podium could not see it, with a reason."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Canonical component name, e.g. 'nvidia-driver', 'runc', 'kernel'")
    version: str | None = Field(None, description="Version as reported, normalised where safe")
    visible: bool = Field(description="Whether podium could see this component at all")
    source_command: str | None = Field(None, description="Command (or file) the version came from")
    reason: str | None = Field(None, description="Why it is not visible, or caveats")
    details: dict[str, Any] = Field(
        default_factory=dict, description="Extra facts, e.g. product line, branch"
    )


class NodeFacts(BaseModel):
    """Everything collected from one node by ``podium facts collect``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    host: str
    collected_at: datetime = Field(default_factory=utcnow)
    collector_version: str
    method: str = Field("local", description="local | slurm | k8s | file")
    components: list[ComponentFact] = Field(default_factory=list)
    gpus: list[dict[str, Any]] = Field(
        default_factory=list, description="Per-GPU identity: name, uuid, bus id"
    )
    labels: dict[str, str] = Field(default_factory=dict, description="Scheduler labels: partition, node pool")

    def component(self, name: str) -> ComponentFact | None:
        for c in self.components:
            if c.name == name:
                return c
        return None
