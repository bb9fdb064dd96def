"""Typed models shared by every part of podium (pydantic v2).

Each model has a JSON Schema, printed by ``podium schema NAME``.
"""

from podium.models.common import Evidence, Provenance, Severity, Status
from podium.models.facts import ComponentFact, NodeFacts
from podium.models.results import CheckResult, Finding, ResultSummary
from podium.models.run import RunRecord, StepRecord

__all__ = [
    "CheckResult",
    "ComponentFact",
    "Evidence",
    "Finding",
    "NodeFacts",
    "Provenance",
    "ResultSummary",
    "RunRecord",
    "Severity",
    "Status",
    "StepRecord",
]
