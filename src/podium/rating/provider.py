"""The provider file: facts a provider declares that no command can measure.

Pricing, availability, managed offerings, SLA, certifications, support and monitoring come
from the provider (or from the rater reading the provider's documents). Every declared fact
carries its source (a URL or a document, and a date) and reports show it as *declared*, never
as measured. A fact that is absent is unknown, and unknown is never scored as a pass.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from podium.errors import InputError

# libyaml's C loader when PyYAML has it: provider files and the rubric parse ~10x faster.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FactSource(BaseModel):
    """Where a declared fact comes from. A URL or a document name is required, and a date."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(None, description="Public page that states the fact")
    document: str | None = Field(None, description="Document (contract, SLA PDF, price sheet) that states it")
    date: dt.date = Field(description="Date the source was read or published")
    fictional: bool = Field(False, description="True for the invented sources of the example providers")
    note: str | None = None

    @model_validator(mode="after")
    def _needs_a_place(self) -> FactSource:
        if not (self.url or self.document):
            raise ValueError("a source needs a url or a document")
        return self

    def label(self) -> str:
        where = self.url or self.document or ""
        return f"{where} ({self.date.isoformat()}){' [fictional source]' if self.fictional else ''}"


class DeclaredBool(BaseModel):
    """A yes/no fact with its source."""

    model_config = ConfigDict(extra="forbid")
    value: bool
    source: FactSource


class DeclaredNumber(BaseModel):
    """A numeric fact with its source."""

    model_config = ConfigDict(extra="forbid")
    value: float
    source: FactSource


class DeclaredText(BaseModel):
    """A free-text fact (a policy, a list of channels) with its source."""

    model_config = ConfigDict(extra="forbid")
    value: str
    source: FactSource


class PriceEntry(BaseModel):
    """Declared price of one SKU, in US dollars per GPU-hour, for each term the provider sells."""

    model_config = ConfigDict(extra="forbid")

    sku: str = Field(description="GPU SKU, e.g. 'H100-SXM5-80GB'")
    on_demand: float | None = Field(None, ge=0, description="$/GPU-hr, on demand")
    reserved_1y: float | None = Field(None, ge=0, description="$/GPU-hr, 1-year commitment")
    reserved_3y: float | None = Field(None, ge=0, description="$/GPU-hr, 3-year commitment")
    source: FactSource


class Availability(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lead_time_days: DeclaredNumber | None = Field(None, description="Days from order to usable cluster")
    largest_contiguous_gpus: DeclaredNumber | None = Field(
        None, description="Largest cluster on one non-blocking fabric, in GPUs"
    )


class Managed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slurm: DeclaredBool | None = Field(None, description="Managed Slurm offered")
    kubernetes: DeclaredBool | None = Field(None, description="Managed Kubernetes offered")
    hot_swap_hours: DeclaredNumber | None = Field(None, description="Promised time to replace a failed node")
    spare_pool_percent: DeclaredNumber | None = Field(None, description="Hot spares, % of the cluster")
    parallel_filesystem: DeclaredBool | None = Field(None, description="Managed parallel file system")


class Sla(BaseModel):
    model_config = ConfigDict(extra="forbid")
    uptime_percent: DeclaredNumber | None = None
    credit_percent_per_hour_down: DeclaredNumber | None = None
    terms: DeclaredText | None = None


class Certifications(BaseModel):
    model_config = ConfigDict(extra="forbid")
    soc2_type2: DeclaredBool | None = None
    iso27001: DeclaredBool | None = None


class Support(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sev1_response_minutes: DeclaredNumber | None = None
    dedicated_channel: DeclaredBool | None = Field(
        None, description="Shared Slack/Teams channel with engineers"
    )


class Monitoring(BaseModel):
    model_config = ConfigDict(extra="forbid")
    grafana: DeclaredBool | None = None
    dcgm_exporter: DeclaredBool | None = None
    automated_health_checks: DeclaredBool | None = None


class Declared(BaseModel):
    """Everything a provider declares. Absent sections and facts are unknown."""

    model_config = ConfigDict(extra="forbid")

    pricing: list[PriceEntry] = Field(default_factory=list)
    availability: Availability = Field(default_factory=Availability)
    managed: Managed = Field(default_factory=Managed)
    sla: Sla = Field(default_factory=Sla)
    certifications: Certifications = Field(default_factory=Certifications)
    support: Support = Field(default_factory=Support)
    monitoring: Monitoring = Field(default_factory=Monitoring)


class ProviderFile(BaseModel):
    """A provider file (YAML): who the provider is and what it declares."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(1, description="Provider file schema version")
    name: str = Field(min_length=1, max_length=120)
    cluster: str = Field("default", description="Which cluster of the provider this evaluation covers")
    fictional: bool = Field(False, description="True for the example providers; shown in every report")
    description: str | None = None
    declared: Declared = Field(default_factory=Declared)

    def fact(self, path: str) -> tuple[Any, FactSource | None]:
        """Look up a declared fact by dotted path ('certifications.soc2_type2'): (value, source).

        Returns (None, None) when the fact is not declared.
        """
        node: Any = self.declared
        for part in path.split("."):
            node = getattr(node, part, None)
            if node is None:
                return None, None
        if isinstance(node, (DeclaredBool, DeclaredNumber, DeclaredText)):
            return node.value, node.source
        return None, None

    def price(self, sku_glob: str, term: str) -> tuple[float | None, PriceEntry | None]:
        """Cheapest declared price among SKUs matching ``sku_glob`` for ``term``."""
        from fnmatch import fnmatch

        best: tuple[float | None, PriceEntry | None] = (None, None)
        for entry in self.declared.pricing:
            value = getattr(entry, term, None)
            matches = value is not None and fnmatch(entry.sku.lower(), sku_glob.lower())
            if matches and (best[0] is None or value < best[0]):
                best = (value, entry)
        return best


def default_provider(name: str = "this cluster") -> ProviderFile:
    """The built-in default when no provider file is given: nothing declared, everything unknown."""
    return ProviderFile(name=name, description="No provider file given: declared facts are unknown.")


def load_provider(path: Path) -> ProviderFile:
    """Read and validate a provider file. Errors are one line naming the file and the problem."""
    try:
        text = path.read_text()
    except OSError as e:
        raise InputError(path, f"cannot read provider file: {e.strerror or e}") from None
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise InputError(path, f"not valid YAML: {where}{getattr(e, 'problem', None) or e}") from None
    if not isinstance(data, dict):
        raise InputError(path, "a provider file must be a YAML mapping with at least 'name'")
    try:
        return ProviderFile.model_validate(data)
    except ValidationError as e:
        raise InputError(path, validation_message(e)) from None


def validation_message(e: ValidationError) -> str:
    """The first validation error as 'dotted.path: message' (one line)."""
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
    msg = err["msg"].removeprefix("Value error, ")
    more = f" (and {e.error_count() - 1} more problems)" if e.error_count() > 1 else ""
    return f"{loc}: {msg}{more}"
