"""OSV records (schema 1.x) into advisories: go-vulndb, the Kubernetes cve-feed, GHSA, Ubuntu, curated.

- ``SEMVER`` and ``ECOSYSTEM`` ranges: each introduced..fixed / introduced..last_affected pair of
  events becomes one AffectedRange; an introduced without an end is "no fix".
- ``versions`` lists are kept on the range (Ubuntu lists every affected package version).
- Several ``affected`` entries are several ranges, possibly of several components.
- Severity: a CVSS v3 vector's base score is computed here (podium.advisories.cvss); a record with only
  a v4 vector or none uses ``database_specific.severity`` (GHSA) or stays 'unknown'.
- Ubuntu/Debian package ranges use the ``debian`` ecosystem; their ``product_line`` is the distro
  release (e.g. 'Ubuntu:22.04:LTS'): they only apply when a query names that distro.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from podium.advisories.components import Component, component_for_osv_package, find_component
from podium.advisories.cvss import CvssError, cvss3_base_score, severity_from_score
from podium.advisories.model import Advisory, AffectedRange, UnparsedItem
from podium.advisories.versions import VersionError, version_key
from podium.errors import ParseError

_GHSA_SEVERITY = {
    "CRITICAL": "critical",
    "HIGH": "high",
    "MODERATE": "medium",
    "MEDIUM": "medium",
    "LOW": "low",
}
_DISTRO_PREFIXES = ("Ubuntu", "Debian")
# Ubuntu and Debian source package names of components that OSV does not name by upstream package.
_DISTRO_PACKAGES = {"slurm-wlm": "slurm", "slurm-llnl": "slurm", "munge": "munge"}


def _date(text: str | None) -> datetime | None:
    if not text or text.startswith("0001-01-01"):
        return None  # go-vulndb's repository leaves timestamps at the zero date
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _component(package: dict) -> tuple[Component | None, str, bool]:
    """(component, ecosystem, is_distro) for an OSV package object."""
    name, eco = package.get("name", ""), package.get("ecosystem", "")
    if eco.startswith(_DISTRO_PREFIXES):
        comp = find_component(_DISTRO_PACKAGES.get(name, name))
        return comp, "debian", True
    comp = component_for_osv_package(name) or (find_component(name) if eco == "podium-curated" else None)
    return comp, (comp.ecosystem if comp else ""), False


def _severity(record: dict) -> tuple[str, float | None, str | None, list[str]]:
    """(severity, score, vector, notes) from top-level or per-affected severity and database_specific."""
    notes: list[str] = []
    entries = list(record.get("severity", []))
    for aff in record.get("affected", []):
        entries.extend(aff.get("severity", []))
    v3 = next((e["score"] for e in entries if e.get("type") == "CVSS_V3"), None)
    if v3:
        try:
            score = cvss3_base_score(v3)
            return severity_from_score(score), score, v3, notes
        except CvssError as e:
            notes.append(f"CVSS vector not scored: {e}")
    ghsa = (record.get("database_specific") or {}).get("severity")
    v4 = next((e["score"] for e in entries if e.get("type") == "CVSS_V4"), None)
    if ghsa in _GHSA_SEVERITY:
        return _GHSA_SEVERITY[ghsa], None, v4, notes
    if v4:
        notes.append("only a CVSS v4 vector upstream; severity not computed")
    return "unknown", None, v4, notes


def parse_osv_record(data: dict, path: Path | str, source: str) -> tuple[Advisory | None, list[UnparsedItem]]:
    """One OSV record into an Advisory (None when no affected package is a podium component)."""
    try:
        osv_id = data["id"]
        affected = data["affected"]
    except (KeyError, TypeError) as e:
        raise ParseError(path, f"not an OSV record (missing {e})") from e
    unparsed: list[UnparsedItem] = []
    if data.get("withdrawn"):
        # Withdrawn upstream (e.g. GO-2025-3543, "does not affect Go code"): listed, not graded.
        unparsed.append(
            UnparsedItem(
                source=source,
                advisory=osv_id,
                text=f"withdrawn {data['withdrawn']}",
                reason="withdrawn upstream; not graded",
            )
        )
        return None, unparsed
    ranges: list[AffectedRange] = []
    for aff in affected:
        package = aff.get("package", {})
        comp, eco, distro = _component(package)
        if comp is None:
            unparsed.append(
                UnparsedItem(
                    source=source,
                    advisory=osv_id,
                    text=f"{package.get('ecosystem')}:{package.get('name')}",
                    reason="package not mapped to a podium component",
                )
            )
            continue
        product_line = package.get("ecosystem", "any") if distro else "any"
        floor, limit = _go_module_bounds(package)
        listed = [v for v in aff.get("versions", []) if _valid(eco, v)]
        made = 0
        ranges_in = aff.get("ranges", [])
        custom = (aff.get("ecosystem_specific") or {}).get("custom_ranges")
        if custom and all(_open_from_zero(r) for r in ranges_in):
            # go-vulndb: when upstream versions do not map to Go module versions (ingress-nginx controller
            # releases), the SEMVER range is 'introduced 0' only and the real bounds are in custom_ranges.
            ranges_in = custom
        for rng in ranges_in:
            if rng.get("type") not in ("SEMVER", "ECOSYSTEM"):
                unparsed.append(
                    UnparsedItem(
                        source=source, advisory=osv_id, text=json.dumps(rng), reason="GIT range not modelled"
                    )
                )
                continue
            for intro, end_kind, end in _spans(rng.get("events", [])):
                bad = [v for v in (intro, end) if v and not _valid(eco, v)]
                if bad:
                    unparsed.append(
                        UnparsedItem(
                            source=source,
                            advisory=osv_id,
                            text=json.dumps(rng.get("events")),
                            reason=f"version {bad[0]!r} is not a {eco} version",
                        )
                    )
                    continue
                if floor and (intro is None or version_key(eco, intro) < version_key(eco, floor)):
                    intro = floor
                ranges.append(
                    AffectedRange(
                        component=comp.name,
                        ecosystem=eco,
                        product_line=product_line,
                        limit=limit,
                        introduced=intro,
                        fixed=end if end_kind == "fixed" else None,
                        last_affected=end if end_kind == "last_affected" else None,
                        versions=listed if distro else [],
                        package=package.get("name"),
                    )
                )
                made += 1
        if not made and listed:
            ranges.append(
                AffectedRange(
                    component=comp.name,
                    ecosystem=eco,
                    product_line=product_line,
                    introduced=listed[0],
                    last_affected=listed[-1],
                    versions=listed,
                    package=package.get("name"),
                )
            )
    if not ranges:
        return None, unparsed
    severity, score, vector, notes = _severity(data)
    aliases = [a for a in data.get("aliases", []) if a != osv_id]
    cves = [a for a in [osv_id, *aliases] if a.startswith("CVE-")]
    db = data.get("database_specific") or {}
    notes.extend(db.get("notes", []) if isinstance(db.get("notes"), list) else [])
    references = [r["url"] for r in data.get("references", []) if r.get("url")]
    return (
        Advisory(
            id=osv_id,
            aliases=aliases,
            title=(data.get("summary") or data.get("details", "")[:160]).strip(),
            description=data.get("details", ""),
            cwes=list(db.get("cwe_ids", []) or []),
            severity=severity,
            cvss=score,
            cvss_vector=vector,
            published=_date(data.get("published")),
            source=osv_id,
            sources=[f"{source}:{osv_id}"],
            source_url=db.get("source") or db.get("url") or (references[0] if references else None),
            components=sorted({r.component for r in ranges}),
            ranges=_dedupe(ranges),
            references=references,
            notes=notes + ([f"CVE: {', '.join(cves)}"] if not cves else []),
        ),
        unparsed,
    )


_GO_MAJOR_RE = re.compile(r"/v(\d+)$")


def _go_module_bounds(package: dict) -> tuple[str | None, str | None]:
    """Versions a Go module path can have: github.com/x/y is < 2.0.0, github.com/x/y/v2 is 2.x.

    go-vulndb gives each module path its own ranges; 'introduced 0' on the v1 path must not reach 2.x.
    """
    if package.get("ecosystem") != "Go":
        return None, None
    m = _GO_MAJOR_RE.search(package.get("name", ""))
    major = int(m.group(1)) if m else 1
    return (f"{major}.0.0-0" if major >= 2 else None), f"{major + 1}.0.0-0"


def _open_from_zero(rng: dict) -> bool:
    events = rng.get("events", [])
    return len(events) == 1 and events[0].get("introduced") in ("0", "")


def _valid(eco: str, version: str) -> bool:
    try:
        version_key(eco, version)
    except VersionError:
        return False
    return True


def _spans(events: list[dict]) -> list[tuple[str | None, str | None, str | None]]:
    """OSV events in order -> (introduced, 'fixed'|'last_affected'|None, end) spans."""
    spans: list[tuple[str | None, str | None, str | None]] = []
    intro: str | None = None
    open_span = False
    for ev in events:
        if "introduced" in ev:
            if open_span:
                spans.append((intro, None, None))
            intro = None if ev["introduced"] in ("0", "") else ev["introduced"]
            open_span = True
        elif "fixed" in ev or "last_affected" in ev:
            kind = "fixed" if "fixed" in ev else "last_affected"
            spans.append((intro, kind, ev[kind]))
            open_span = False
        elif "limit" in ev:
            continue
    if open_span:
        spans.append((intro, None, None))
    return spans


def _dedupe(ranges: list[AffectedRange]) -> list[AffectedRange]:
    # The k8s feed repeats one range per k8s.io/* package; the versions are the same component's.
    seen: dict[tuple, AffectedRange] = {}
    for r in ranges:
        key = (
            r.component,
            r.product_line,
            r.introduced,
            r.fixed,
            r.last_affected,
            r.limit,
            tuple(r.versions),
        )
        seen.setdefault(key, r)
    return list(seen.values())


def parse_osv_dir(root: Path, source: str) -> tuple[list[Advisory], list[UnparsedItem], int]:
    """Every ``*.json`` OSV record under ``root`` (recursively)."""
    advisories: list[Advisory] = []
    unparsed: list[UnparsedItem] = []
    paths = sorted(root.rglob("*.json"))
    for p in paths:
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ParseError(p, f"not a readable JSON document: {e}") from e
        if not isinstance(data, dict):
            raise ParseError(p, "expected an OSV JSON object")
        adv, un = parse_osv_record(data, p, source)
        unparsed.extend(un)
        if adv is not None:
            advisories.append(adv)
    return advisories, unparsed, len(paths)
