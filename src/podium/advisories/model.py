"""Typed models of the advisory database and of a query against it."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class AffectedRange(BaseModel):
    """Versions of one component that one advisory affects, on one release line.

    ``line`` is the release line the range belongs to (an NVIDIA driver branch such as 'R535',
    a minor series such as '1.7' for containerd, or None when the source gives one range for all).
    ``fixed`` None means no fix exists on that line.
    """

    model_config = ConfigDict(extra="forbid")

    component: str
    ecosystem: str = Field(description="Version scheme: nvidia-driver, semver, go, debian, generic")
    line: str | None = None
    product_line: str = Field("any", description="datacenter | geforce | rtx | vgpu-host | vgpu-guest | any")
    platform: str = Field("any", description="linux | windows | any")
    introduced: str | None = Field(None, description="First affected version (None = from the start)")
    fixed: str | None = Field(None, description="First fixed version on this line; None = no fix")
    last_affected: str | None = None
    limit: str | None = Field(
        None, description="Exclusive upper bound that is not a fix (a Go module path's major version)"
    )
    versions: list[str] = Field(default_factory=list, description="Explicitly listed affected versions")
    package: str | None = Field(None, description="Upstream package name (OSV), e.g. 'k8s.io/kubelet'")
    text: str | None = Field(None, description="The upstream prose this range was read from (NVIDIA)")
    source: str | None = Field(None, description="Bulletin the range comes from when it differs per range")


class Advisory(BaseModel):
    """One vulnerability as one source describes it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Primary id: CVE id for NVIDIA, OSV id otherwise")
    aliases: list[str] = Field(default_factory=list)
    title: str = ""
    description: str = ""
    cwes: list[str] = Field(default_factory=list)
    severity: str = Field("none", description="critical|high|medium|low|none|unknown (no score upstream)")
    cvss: float | None = None
    cvss_vector: str | None = None
    published: datetime | None = None
    source: str = Field(description="Bulletin id (e.g. 'NVIDIA-5630') or OSV id")
    sources: list[str] = Field(default_factory=list, description="Every source that describes it")
    source_url: str | None = None
    components: list[str] = Field(default_factory=list)
    ranges: list[AffectedRange] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="Caveats, e.g. distro backports not modelled")


class SourceRecord(BaseModel):
    """One upstream source that went into a bundle."""

    name: str
    path: str
    commit: str | None = None
    records: int
    advisories: int
    date: str | None = Field(None, description="Date of the upstream commit (from SOURCES.md)")


class UnparsedItem(BaseModel):
    """A piece of upstream data that podium could not turn into a range, reported, never dropped silently."""

    source: str
    advisory: str
    text: str
    reason: str


class AdvisoryBundle(BaseModel):
    """A dated, versioned snapshot of the advisory database."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    version: str = Field(description="Bundle version, e.g. '2026.08.21' (newest source date)")
    built_at: datetime
    data_date: datetime | None = Field(None, description="Newest advisory date in the bundle")
    podium_version: str
    sources: list[SourceRecord]
    advisories: list[Advisory]
    unparsed: list[UnparsedItem] = Field(default_factory=list)
    known_limits: list[str] = Field(default_factory=list)


class AdvisoryMatch(BaseModel):
    """One advisory that applies to the queried version."""

    id: str
    aliases: list[str] = Field(default_factory=list)
    title: str = ""
    severity: str
    cvss: float | None = None
    fixed_in: str | None = Field(None, description="First fix on the same line, or null when none")
    no_fix_on_line: bool = Field(False, description="True when no fix exists on the queried line")
    source: str
    source_url: str | None = None
    references: list[str] = Field(default_factory=list)


class QueryResult(BaseModel):
    """Answer to ``podium advisories query COMPONENT VERSION``."""

    component: str
    version: str
    line: str | None = Field(None, description="Release line the version is on, e.g. 'R535'")
    product_line: str | None = None
    findings: list[AdvisoryMatch] = Field(default_factory=list)
    no_fix_on_line: list[str] = Field(default_factory=list, description="CVE ids with no fix on this line")
    upgrade_to: str | None = Field(None, description="Lowest version that fixes everything, same line first")
    upgrade_line_change: bool = Field(False, description="True when upgrade_to is on another line")
    notes: list[str] = Field(default_factory=list)
    bundle_version: str | None = None
