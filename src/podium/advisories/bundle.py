"""Build, save and load the dated advisory bundle; the package ships one (data/advisories/bundle.json.gz).

Rebuild the shipped bundle from the shared snapshots with:

    podium advisories build --from /work/shared/data/advisories \\
        --out src/podium/data/advisories/bundle.json.gz
"""

from __future__ import annotations

import gzip
import re
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from podium import __version__
from podium.advisories.model import Advisory, AdvisoryBundle, AffectedRange, SourceRecord, UnparsedItem
from podium.errors import InputError

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "advisories"
SHIPPED_BUNDLE = DATA_DIR / "bundle.json.gz"
CURATED_DIR = DATA_DIR / "curated"
STALE_AFTER_DAYS = 30

# (name, folder under --from, parser). Every one must yield advisories, or the build fails closed.
EXPECTED_SOURCES: tuple[tuple[str, str, str], ...] = (
    ("nvidia-psirt", "nvidia-psirt", "csaf"),
    ("curated", "", "osv"),  # podium's own hand-curated Slurm/MUNGE records (package data)
    ("go-vulndb", "osv/go-vulndb", "osv"),
    ("ghsa", "osv/ghsa", "osv"),
    ("kubernetes-cve-feed", "osv/kubernetes-cve-feed", "osv"),
    ("ubuntu-slurm", "osv/ubuntu-slurm", "osv"),
)

KNOWN_LIMITS = [
    "Distro backports are not modelled for upstream ranges: a distro package (e.g. Debian slurm-wlm "
    "22.05.8-4+deb12u3, Ubuntu munge 0.5.15-4ubuntu0.1) may carry a backported fix under an older upstream "
    "version. podium grades such a version by its upstream part and adds a note; Ubuntu's own records apply only "
    "when the query names the distro release (product_line 'Ubuntu:22.04:LTS').",
    "NVIDIA driver: a branch that a bulletin does not list although newer branches are listed is treated as "
    "'no fix on this branch' for every CVE of that bulletin on the same platform and product line, even where "
    "the bug may not exist on the old branch (NVIDIA does not say).",
    "NVIDIA prose that could not be read into ranges is listed in the bundle's 'unparsed' items and counted "
    "by 'podium advisories info'; those rows are not graded.",
    "go-vulndb records carry no severity; where no GHSA or NVIDIA record of the same CVE gives one, the "
    "severity is 'unknown' (ranked with 'high' for --fail-on).",
    "CVSS v4-only records use the qualitative severity the source gives; v4 scores are not computed.",
    "NVIDIA conditions written in prose (e.g. 'CDI mode only', 'only Maxwell, Volta and Pascal GPUs') are kept "
    "in the range's text but not evaluated: the range applies to every configuration.",
]


# ----------------------------------------------------------------------------- provenance


_ROW_RE = re.compile(
    r"^\|\s*`(?P<folder>[^`]+)`\s*\|[^|]*\|\s*`(?P<commit>[0-9a-f]{7,40})`\s*\((?P<date>\d{4}-\d{2}-\d{2})\)"
)


def read_sources_md(from_dir: Path) -> dict[str, tuple[str, str]]:
    """Source folder name -> (commit, date) from a SOURCES.md next to or above ``from_dir``."""
    found: dict[str, tuple[str, str]] = {}
    for candidate in (from_dir / "SOURCES.md", from_dir.parent / "SOURCES.md"):
        if not candidate.is_file():
            continue
        for line in candidate.read_text(encoding="utf-8", errors="replace").splitlines():
            m = _ROW_RE.match(line.strip())
            if not m:
                continue
            parts = [p for p in m["folder"].strip("/").split("/") if p and not p.startswith("{")]
            for name, _, _ in EXPECTED_SOURCES:
                if name in parts:
                    found.setdefault(name, (m["commit"], m["date"]))
        if found:
            break
    return found


# ----------------------------------------------------------------------------- merge


def _cve_of(a: Advisory) -> str | None:
    return next((i for i in [a.id, *a.aliases] if i.startswith("CVE-")), None)


def merge_advisories(advisories: list[Advisory]) -> list[Advisory]:
    """Merge records that describe the same vulnerability (shared CVE/GHSA/GO id).

    ``advisories`` comes in source priority order. Per component, ranges come from the first source that
    has ranges for it; distro ranges (product_line is a distro release) are always kept. Severity comes
    from the first source with a score, else the first known qualitative one.
    """
    groups: list[list[Advisory]] = []
    index: dict[str, int] = {}
    for a in advisories:
        ids = {a.id, *a.aliases}
        hit = next((index[i] for i in ids if i in index), None)
        if hit is None:
            hit = len(groups)
            groups.append([])
        groups[hit].append(a)
        for i in ids:
            index.setdefault(i, hit)
    return [_merge_group(g) for g in groups]


def _merge_group(group: list[Advisory]) -> Advisory:
    if len(group) == 1:
        return group[0]
    first = group[0]
    all_ids: list[str] = []
    for a in group:
        for i in [a.id, *a.aliases]:
            if i not in all_ids:
                all_ids.append(i)
    primary = _cve_of(first) or next((i for i in all_ids if i.startswith("CVE-")), first.id)
    ranges: list[AffectedRange] = []
    owner: dict[str, str] = {}
    for a in group:
        # NVIDIA re-publishes a CVE in a later bulletin with more branches (CVE-2022-42265 in 5415 and
        # 5520): all NVIDIA bulletins are one source family and their ranges add up.
        family = "nvidia-psirt" if a.source.startswith("NVIDIA-") else a.source
        for r in a.ranges:
            if r.product_line not in ("any",) and r.ecosystem == "debian":
                ranges.append(r)
                continue
            if owner.setdefault(r.component, family) == family:
                ranges.append(r)
    scored = next((a for a in group if a.cvss is not None), None)
    qualitative = next((a for a in group if a.severity != "unknown"), first)
    sev_from = scored or qualitative
    notes: list[str] = []
    for a in group:
        notes.extend(n for n in a.notes if n not in notes)
    others = [a.source for a in group[1:] if a.source != first.source]
    if others:
        notes.append(f"Also described by {', '.join(others)}; ranges per component from the first source.")
    return Advisory(
        id=primary,
        aliases=[i for i in all_ids if i != primary],
        title=next((a.title for a in group if a.title), ""),
        description=next((a.description for a in group if a.description), ""),
        cwes=sorted({c for a in group for c in a.cwes}),
        severity=sev_from.severity,
        cvss=sev_from.cvss,
        cvss_vector=sev_from.cvss_vector or next((a.cvss_vector for a in group if a.cvss_vector), None),
        published=min((a.published for a in group if a.published), default=None),
        source=first.source,
        sources=[s for a in group for s in a.sources],
        source_url=first.source_url,
        components=sorted({r.component for r in ranges}),
        ranges=ranges,
        references=list(dict.fromkeys(u for a in group for u in a.references)),
        notes=notes,
    )


# ----------------------------------------------------------------------------- build


def build_bundle(
    from_dir: Path,
    curated_dir: Path | None = None,
    commits: dict[str, str] | None = None,
    built_at: datetime | None = None,
) -> AdvisoryBundle:
    """Build a bundle from upstream snapshots laid out like /work/shared/data/advisories.

    Fails closed (InputError) when a source folder is missing or yields no advisory.
    ``commits`` (source name -> commit) overrides what SOURCES.md says.
    """
    from podium.advisories.sources.csaf import parse_psirt_dir
    from podium.advisories.sources.osv import parse_osv_dir

    from_dir = Path(from_dir)
    if not from_dir.is_dir():
        raise InputError(from_dir, "advisory snapshot folder does not exist")
    curated_dir = Path(curated_dir) if curated_dir else CURATED_DIR
    provenance = read_sources_md(from_dir)
    commits = commits or {}
    collected: list[Advisory] = []
    unparsed: list[UnparsedItem] = []
    sources: list[SourceRecord] = []
    dates: list[str] = []
    for name, folder, kind in EXPECTED_SOURCES:
        path = curated_dir if name == "curated" else from_dir / folder
        if not path.is_dir():
            raise InputError(path, f"advisory source '{name}' is missing; refusing to build a partial bundle")
        if kind == "csaf":
            advs, un, records = parse_psirt_dir(path)
        else:
            advs, un, records = parse_osv_dir(path, name)
        if not advs:
            raise InputError(
                path,
                f"advisory source '{name}' yielded no advisories ({records} files read); refusing to build",
            )
        commit, date = provenance.get(name, (None, None))
        if date:
            dates.append(date)
        collected.extend(advs)
        unparsed.extend(un)
        sources.append(
            SourceRecord(
                name=name,
                path="podium/data/advisories/curated" if name == "curated" else folder,
                commit=commits.get(name) or commit,
                records=records,
                advisories=len(advs),
                date=date,
            )
        )
    merged = merge_advisories(collected)
    newest = max((a.published for a in merged if a.published), default=None)
    candidates = [datetime.fromisoformat(d).replace(tzinfo=timezone.utc) for d in dates]
    if newest:
        candidates.append(newest if newest.tzinfo else newest.replace(tzinfo=timezone.utc))
    version_date = max(candidates) if candidates else (built_at or datetime.now(timezone.utc))
    return AdvisoryBundle(
        version=version_date.strftime("%Y.%m.%d"),
        built_at=built_at or datetime.now(timezone.utc),
        data_date=newest,
        podium_version=__version__,
        sources=sources,
        advisories=merged,
        unparsed=unparsed,
        known_limits=KNOWN_LIMITS,
    )


# ----------------------------------------------------------------------------- save / load


def save_bundle(bundle: AdvisoryBundle, path: Path) -> Path:
    """Write compact JSON, gzip-compressed when the name ends in .gz."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = bundle.model_dump_json(exclude_none=True).encode()
    if path.suffix == ".gz":
        # mtime=0 keeps the file byte-identical across rebuilds of the same data.
        data = gzip.compress(data, compresslevel=9, mtime=0)
    path.write_bytes(data)
    return path


def load_bundle(path: Path) -> AdvisoryBundle:
    """Read and validate a bundle; a missing or corrupt file is an InputError naming it."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(path, f"cannot read advisory bundle: {e.strerror or e}") from e
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return AdvisoryBundle.model_validate_json(raw)
    except (OSError, EOFError, ValueError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(path, f"not a valid podium advisory bundle: {first}") from e


@lru_cache(maxsize=1)
def load_default() -> AdvisoryBundle:
    """The bundle shipped with podium (loaded once per process)."""
    return load_bundle(SHIPPED_BUNDLE)


def bundle_date(bundle: AdvisoryBundle) -> datetime:
    """The date the bundle's data is from (its version, YYYY.MM.DD)."""
    return datetime.strptime(bundle.version, "%Y.%m.%d").replace(tzinfo=timezone.utc)


def bundle_age_days(bundle: AdvisoryBundle | None = None, now: datetime | None = None) -> int:
    """Whole days between the bundle's data date and ``now`` (default: the shipped bundle, today)."""
    bundle = bundle or load_default()
    now = now or datetime.now(timezone.utc)
    return (now - bundle_date(bundle)).days


def staleness_warning(bundle: AdvisoryBundle, now: datetime | None = None) -> str | None:
    """A one-line warning when the bundle is older than 30 days, else None."""
    age = bundle_age_days(bundle, now)
    if age > STALE_AFTER_DAYS:
        return (
            f"advisory bundle {bundle.version} is {age} days old (> {STALE_AFTER_DAYS}); newer advisories are "
            "missing: rebuild it with 'podium advisories build'"
        )
    return None


def bundle_summary(bundle: AdvisoryBundle) -> dict:
    """Counts for 'podium advisories info' and reports."""
    per_component: dict[str, int] = {}
    for a in bundle.advisories:
        for c in a.components:
            per_component[c] = per_component.get(c, 0) + 1
    return {
        "version": bundle.version,
        "built_at": bundle.built_at.isoformat(),
        "data_date": bundle.data_date.isoformat() if bundle.data_date else None,
        "podium_version": bundle.podium_version,
        "advisories": len(bundle.advisories),
        "ranges": sum(len(a.ranges) for a in bundle.advisories),
        "unparsed": len(bundle.unparsed),
        "sources": [s.model_dump() for s in bundle.sources],
        "components": dict(sorted(per_component.items())),
        "known_limits": bundle.known_limits,
    }
