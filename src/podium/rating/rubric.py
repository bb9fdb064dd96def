"""The rubric: a versioned data file (``podium/data/rubric/v1.yaml``) and its typed model.

Categories have weights; each category holds items worth points; critical failures cap the
tier; tiers have score thresholds. The rubric holds no code: each item names the *basis* its
points come from (checks, measurements, declared facts, peer prices, scheduler history,
time-to-fix) and how to grade it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from podium.errors import InputError

Basis = Literal["checks", "measurements", "declared", "peer_price", "scheduler", "fix_time"]
Cost = Literal["low", "medium", "high"]
COST_RANK = {"low": 0, "medium": 1, "high": 2}

# libyaml's C loader when PyYAML has it: provider files and the rubric parse ~10x faster.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Threshold(BaseModel):
    """A band: a value at most / at least this earns ``fraction`` of the item's points."""

    model_config = ConfigDict(extra="forbid")
    at_most: float | None = None
    at_least: float | None = None
    fraction: float = Field(ge=0, le=1)

    def matches(self, value: float) -> bool:
        if self.at_most is not None and value > self.at_most:
            return False
        return not (self.at_least is not None and value < self.at_least)


class Selector(BaseModel):
    """Which evidence an item (or a critical rule) looks at. Globs match case-insensitively."""

    model_config = ConfigDict(extra="forbid")
    kinds: list[str] = Field(
        default_factory=list, description="audit, isolation, health, endpoint-audit, bench"
    )
    ids: list[str] = Field(default_factory=lambda: ["*"], description="Check ids (globs)")
    categories: list[str] = Field(default_factory=list, description="CheckResult.category values")
    benchmarks: list[str] = Field(default_factory=list, description="Benchmark names (globs)")
    metrics: list[str] = Field(default_factory=list, description="Metric names (globs)")


class RubricItem(BaseModel):
    """One scored item of a category."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    points: float = Field(gt=0)
    basis: Basis
    select: Selector | None = None
    aggregate: Literal["worst", "mean"] = Field(
        "worst", description="worst: the weakest result bounds the item; mean: the share of good results"
    )
    facts: list[str] = Field(default_factory=list, description="Declared fact paths (basis: declared)")
    thresholds: list[Threshold] = Field(default_factory=list, description="First match wins; none = 0")
    sku: str | None = Field(None, description="SKU glob for peer_price")
    term: Literal["on_demand", "reserved_1y", "reserved_3y"] | None = None
    min_peers: int = Field(3, description="peer_price: fewer priced peers than this uses thresholds")
    metric: str | None = Field(None, description="scheduler / fix_time metric name")
    fix: str = Field(description="What a provider does to earn these points")
    cost: Cost = Field(description="Rough cost of the fix: low (declare, configure), medium, high")

    @model_validator(mode="after")
    def _complete(self) -> RubricItem:
        need = {
            "checks": self.select is not None,
            "measurements": self.select is not None,
            "declared": bool(self.facts),
            "peer_price": bool(self.sku and self.term and self.thresholds),
            "scheduler": bool(self.metric and self.thresholds),
            "fix_time": bool(self.metric and self.thresholds),
        }
        if not need[self.basis]:
            raise ValueError(f"item {self.id}: basis '{self.basis}' is missing its fields")
        return self


class Category(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    weight: float = Field(ge=0)
    items: list[RubricItem] = Field(default_factory=list)

    @property
    def max_points(self) -> float:
        return sum(i.points for i in self.items)


class CveRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    source: str


class CriticalRule(BaseModel):
    """A failure that caps the tier however high the score."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    cap: str = Field(description="Highest tier reachable while this failure stands")
    rule: Literal["no_declared_true", "failing_checks", "unpatched_cve"]
    facts: list[str] = Field(default_factory=list, description="no_declared_true: any one true clears it")
    select: Selector | None = None
    cross_tenant_detail: bool = Field(
        False, description="failing_checks: also match any failing check with details.cross_tenant true"
    )
    cves: list[CveRef] = Field(default_factory=list)
    fix: str
    cost: Cost
    source: str


class Tier(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    min_score: float = Field(ge=0, le=100)
    color: str = "#888888"


class Rubric(BaseModel):
    """The whole rubric. ``tiers`` run from best to worst; the last has min_score 0."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    published: str
    source: str
    status_fractions: dict[str, float] = Field(description="pass/warn -> fraction of points")
    fail_severity_fractions: dict[str, float] = Field(description="Failing result severity -> fraction")
    categories: list[Category]
    critical_failures: list[CriticalRule] = Field(default_factory=list)
    tiers: list[Tier]

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        scores = [t.min_score for t in self.tiers]
        if scores != sorted(scores, reverse=True) or not scores or scores[-1] != 0:
            raise ValueError("tiers must run from best to worst and the last must have min_score 0")
        names = {t.name for t in self.tiers}
        for c in self.critical_failures:
            if c.cap not in names:
                raise ValueError(f"critical failure {c.id} caps at unknown tier '{c.cap}'")
        ids = [i.id for c in self.categories for i in c.items]
        if len(ids) != len(set(ids)):
            raise ValueError("item ids must be unique")
        return self

    def tier_for(self, score: float) -> str:
        for t in self.tiers:
            if score >= t.min_score:
                return t.name
        return self.tiers[-1].name

    def tier_index(self, name: str) -> int:
        return [t.name for t in self.tiers].index(name)

    def tier(self, name: str) -> Tier:
        return self.tiers[self.tier_index(name)]


def load_rubric(path: Path | None = None) -> Rubric:
    """Load a rubric file; the built-in v1 when no path is given."""
    if path is None:
        text = resources.files("podium").joinpath("data/rubric/v1.yaml").read_text()
        where = "podium/data/rubric/v1.yaml"
    else:
        where = str(path)
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise InputError(path, f"cannot read rubric: {e.strerror or e}") from None
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)
        return Rubric.model_validate(data)
    except yaml.YAMLError as e:
        raise InputError(where, f"not valid YAML: {getattr(e, 'problem', None) or e}") from None
    except ValidationError as e:
        from podium.rating.provider import validation_message

        raise InputError(where, validation_message(e)) from None
