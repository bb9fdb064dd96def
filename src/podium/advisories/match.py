"""Match one component version against the advisory bundle: findings, fixes per line, upgrade path.

Rules (docs/advisories.md has the long form):

- A range applies when its component, platform (linux|windows|any) and product line match. NVIDIA driver
  findings follow the data-center (Tesla) rows unless ``product_line`` says geforce, rtx, vgpu-host,
  vgpu-guest or cloud-gaming; Windows rows apply only to ``platform='windows'``.
- Ranges with a release line (R535, DOCA 2.9) apply to versions on that line. When a bulletin lists
  other lines but not the queried one, and the queried line is older than the newest listed line, the
  line is unsupported: every CVE of that bulletin counts, with no fix on the line. Never a silent pass.
- ``fixed_in`` is the first fix on the queried line; ``upgrade_to`` is the lowest version that fixes
  every finding: same line first, else the lowest clean version on the nearest newer line.
- ``query`` is a pure function of its arguments and the bundle, memoized per bundle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from podium.advisories.components import (
    Component,
    find_component,
    known_names,
    line_sort_key,
    release_line,
)
from podium.advisories.cvss import SEVERITY_RANK
from podium.advisories.model import Advisory, AdvisoryBundle, AdvisoryMatch, AffectedRange, QueryResult
from podium.advisories.versions import VersionError, debian_upstream, version_key
from podium.errors import InputError

DRIVER_PRODUCT_LINES = {
    "datacenter": "datacenter",
    "data-center": "datacenter",
    "tesla": "datacenter",
    "geforce": "geforce",
    "studio": "geforce",
    "rtx": "rtx",
    "quadro": "rtx",
    "nvidia-rtx": "rtx",
    "vgpu-host": "vgpu-host",
    "vgpu-guest": "vgpu-guest",
    "cloud-gaming": "cloud-gaming",
}
PLATFORMS = ("linux", "windows")
_DISTRO_RE = re.compile(r"-[0-9A-Za-z.+~]*$")


@dataclass
class _Prepared:
    """One advisory's ranges for one component, with parsed bounds."""

    advisory: Advisory
    ranges: list[AffectedRange]
    cve: str


@dataclass
class _View:
    """One advisory's ranges that apply to one (component, platform, product line), grouped by line."""

    prep: _Prepared
    free: list[AffectedRange]
    by_line: dict[str, list[AffectedRange]]
    listed: set[str]
    newest: tuple | None


@dataclass(eq=False)
class BundleIndex:
    """Advisories indexed by component, built once per bundle."""

    bundle: AdvisoryBundle
    by_component: dict[str, list[_Prepared]] = field(default_factory=dict)
    # (source, component, platform, product_line) -> lines that bulletin lists
    listed_lines: dict[tuple[str, str, str, str], set[str]] = field(default_factory=dict)
    # component -> windows driver branch numbers seen in the bundle
    windows_branches: list[int] = field(default_factory=list)
    # memo of derived facts (views, candidates, clean versions, lines), keyed by a tuple naming the kind
    clean_cache: dict[tuple, object] = field(default_factory=dict)


_INDEXES: dict[int, BundleIndex] = {}


def index_for(bundle: AdvisoryBundle) -> BundleIndex:
    """The (cached) index of ``bundle``."""
    idx = _INDEXES.get(id(bundle))
    if idx is not None and idx.bundle is bundle:
        return idx
    idx = BundleIndex(bundle)
    win: set[int] = set()
    for adv in bundle.advisories:
        cve = next((i for i in [adv.id, *adv.aliases] if i.startswith("CVE-")), adv.id)
        per: dict[str, list[AffectedRange]] = {}
        for r in adv.ranges:
            per.setdefault(r.component, []).append(r)
            if r.line is not None:
                for plat in _platforms_of(r):
                    key = (r.source or adv.source, r.component, plat, r.product_line)
                    idx.listed_lines.setdefault(key, set()).add(r.line)
            if r.component == "nvidia-driver" and r.platform == "windows" and r.line:
                win.add(int(r.line[1:]))
        for comp, rs in per.items():
            idx.by_component.setdefault(comp, []).append(_Prepared(adv, rs, cve))
    idx.windows_branches = sorted(win)
    _INDEXES.clear()  # one bundle at a time in practice; keeps memory bounded
    _INDEXES[id(bundle)] = idx
    return idx


def _platforms_of(r: AffectedRange) -> tuple[str, ...]:
    return PLATFORMS if r.platform == "any" else (r.platform,)


# ----------------------------------------------------------------------------- the query


def query(
    component: str,
    version: str,
    bundle: AdvisoryBundle | None = None,
    product_line: str | None = None,
    platform: str = "linux",
) -> QueryResult:
    """Advisories that affect ``component`` at ``version``, fixes on its line and the upgrade to make.

    Raises InputError for an unknown component, platform or product line, or a version that does not parse.
    The result is memoized and shared between calls: treat it as read-only.
    """
    from podium.advisories.bundle import load_default

    bundle = bundle if bundle is not None else load_default()
    comp = find_component(component)
    if comp is None:
        raise InputError("component", f"unknown component {component!r}; known: {', '.join(known_names())}")
    if platform not in PLATFORMS:
        raise InputError("--platform", f"unknown platform {platform!r}; known: {', '.join(PLATFORMS)}")
    pl = _product_line(comp, product_line)
    return _query_cached(index_for(bundle), comp.name, version.strip(), pl, platform)


def _product_line(comp: Component, product_line: str | None) -> str | None:
    if comp.name == "nvidia-driver":
        if product_line is None:
            return "datacenter"
        pl = DRIVER_PRODUCT_LINES.get(product_line.strip().lower())
        if pl is None:
            raise InputError(
                "--product-line",
                f"unknown driver product line {product_line!r}; known: {', '.join(sorted(set(DRIVER_PRODUCT_LINES)))}",
            )
        return pl
    return product_line.strip() if product_line else None


@lru_cache(maxsize=100_000)
def _query_cached(
    idx: BundleIndex, comp_name: str, version: str, pl: str | None, platform: str
) -> QueryResult:
    comp = find_component(comp_name)
    assert comp is not None
    notes: list[str] = []
    distro_version: str | None = None
    upstream = version
    if comp.ecosystem == "generic" and comp.name in ("slurm", "munge") and _DISTRO_RE.search(version):
        # A distro package version: grade its upstream part, and say that backports are not modelled.
        distro_version, upstream = version, debian_upstream(version)
        notes.append(
            f"{version} looks like a distro package; graded as upstream {upstream}. The distro may have "
            "backported fixes (check its security tracker); podium does not model backports."
        )
    try:
        vkey = version_key(comp.ecosystem, upstream)
        dkey = version_key("debian", distro_version) if distro_version else None
        vline = _line_of(idx, comp, upstream, platform)
    except VersionError as e:
        raise InputError("version", f"{comp.name} version {version!r} does not parse: {e}") from None

    ctx = _Ctx(idx, comp, platform, pl)
    findings: list[AdvisoryMatch] = []
    no_fix: list[str] = []
    retired_sources: list[str] = []
    for view in ctx.view():
        prep = view.prep
        verdict = ctx.evaluate(view, vkey, vline, dkey)
        if verdict is None:
            continue
        fixed_in, retired = verdict
        if retired:
            retired_sources.append(prep.advisory.source)
        a = prep.advisory
        findings.append(
            AdvisoryMatch(
                id=a.id,
                aliases=a.aliases,
                title=a.title,
                severity=a.severity,
                cvss=a.cvss,
                fixed_in=fixed_in,
                no_fix_on_line=fixed_in is None,
                source=a.source,
                source_url=a.source_url,
                references=a.references[:5],
            )
        )
        if fixed_in is None:
            no_fix.append(prep.cve)
    findings.sort(key=lambda m: (-SEVERITY_RANK.get(m.severity, 0), -(m.cvss or 0), m.id))
    if retired_sources:
        # A merged advisory names its first bulletin; the note is about the line, not the bulletin list.
        srcs = sorted(set(retired_sources))
        notes.append(
            f"{vline} is not listed in {', '.join(srcs)} although newer lines are: no fix on this line for "
            f"{len(retired_sources)} CVEs; move to a supported line."
        )
    if not idx.by_component.get(comp.name):
        notes.append(
            f"The bundle has no advisories for {comp.name}: no findings here is not evidence of safety."
        )
    upgrade_to, line_change = (None, False)
    if findings:
        upgrade_to, line_change = ctx.upgrade(vkey, vline)
        if upgrade_to is None:
            notes.append("No version in the bundle fixes every finding on this or a newer line.")
    return QueryResult(
        component=comp.name,
        version=version,
        line=vline,
        product_line=pl,
        findings=findings,
        no_fix_on_line=sorted(set(no_fix)),
        upgrade_to=upgrade_to,
        upgrade_line_change=line_change,
        notes=notes,
        bundle_version=idx.bundle.version,
    )


def _line_of(idx: BundleIndex, comp: Component, version: str, platform: str) -> str | None:
    line = release_line(comp, version)
    if comp.name == "nvidia-driver" and platform == "windows":
        # Windows driver numbers run ahead of their branch (539.56 is R535): take the nearest branch below.
        major = int(version.split(".")[0])
        below = [b for b in idx.windows_branches if b <= major]
        return f"R{below[-1]}" if below else line
    return line


@dataclass
class _Ctx:
    idx: BundleIndex
    comp: Component
    platform: str
    pl: str | None

    def applicable(self, r: AffectedRange) -> bool:
        if r.platform not in ("any", self.platform):
            return False
        if self.comp.name == "nvidia-driver":
            return r.product_line == self.pl
        if r.ecosystem == "debian" and self.comp.ecosystem != "debian":
            return self.pl is not None and r.product_line.lower() == self.pl.lower()
        return r.product_line == "any" or self.pl is None or r.product_line == self.pl

    def key(self, r: AffectedRange, text: str) -> tuple:
        return version_key(r.ecosystem, text)

    def contains(self, r: AffectedRange, vkey: tuple, dkey: tuple | None) -> bool:
        if r.ecosystem == "debian" and self.comp.ecosystem != "debian":
            if dkey is None:
                return False
            key = dkey
        else:
            key = vkey
        if r.versions and any(version_key(r.ecosystem, v) == key for v in r.versions):
            return True
        if r.introduced and key < version_key(r.ecosystem, r.introduced):
            return False
        if r.limit and key >= version_key(r.ecosystem, r.limit):
            return False
        if r.fixed:
            return key < version_key(r.ecosystem, r.fixed)
        if r.last_affected:
            return key <= version_key(r.ecosystem, r.last_affected)
        return True

    def line_of(self, text: str) -> str | None:
        ck = ("line", self.comp.name, self.platform, text)
        if ck in self.idx.clean_cache:
            return self.idx.clean_cache[ck]  # type: ignore[return-value]
        try:
            line = _line_of(self.idx, self.comp, text, self.platform)
        except VersionError:
            line = None
        self.idx.clean_cache[ck] = line  # type: ignore[assignment]
        return line

    def view(self) -> list[_View]:
        """Per advisory, the ranges that apply to this component/platform/product line (cached)."""
        ck = ("view", self.comp.name, self.platform, self.pl)
        cached = self.idx.clean_cache.get(ck)
        if cached is not None:
            return cached  # type: ignore[return-value]
        views: list[_View] = []
        for prep in self.idx.by_component.get(self.comp.name, []):
            rs = [r for r in prep.ranges if self.applicable(r)]
            if not rs:
                continue
            by_line: dict[str, list[AffectedRange]] = {}
            listed: set[str] = set()
            for r in rs:
                if r.line is not None:
                    by_line.setdefault(r.line, []).append(r)
                    listed |= self.idx.listed_lines.get(
                        (r.source or prep.advisory.source, r.component, self.platform, r.product_line), set()
                    )
            newest = max((line_sort_key(self.comp, ln) for ln in listed), default=None)
            views.append(_View(prep, [r for r in rs if r.line is None], by_line, listed, newest))
        self.idx.clean_cache[ck] = views  # type: ignore[assignment]
        return views

    def evaluate(
        self, view: _View, vkey: tuple, vline: str | None, dkey: tuple | None = None
    ) -> tuple[str | None, bool] | None:
        """None when not affected; else (fixed_in on this line or None, line-unsupported flag)."""
        hits = [r for r in view.free if self.contains(r, vkey, dkey)]
        if not hits and view.by_line:
            same = view.by_line.get(vline) if vline is not None else None
            if same:
                hits = [r for r in same if self.contains(r, vkey, dkey)]
            elif vline is not None:
                if view.listed and vline not in view.listed and line_sort_key(self.comp, vline) < view.newest:
                    return (None, True)
                return None
        if not hits:
            return None
        fixes = [r.fixed for r in hits]
        if any(f is None for f in fixes):
            return (None, False)
        if vline is None:
            on_line = [f for f in fixes if f is not None]
        else:
            on_line = [f for f in fixes if f is not None and self.line_of(f) == vline]
        if not on_line:
            return (None, False)
        # Several ranges of one advisory can hit (two sources, two product rows): the highest fix is the safe one.
        return (max(on_line, key=lambda f: version_key(self.comp.ecosystem, f)), False)

    def candidates(self) -> list[str]:
        ck = ("cands", self.comp.name, self.platform, self.pl)
        cached = self.idx.clean_cache.get(ck)
        if cached is not None:
            return cached  # type: ignore[return-value]
        found: set[str] = set()
        for prep in self.idx.by_component.get(self.comp.name, []):
            for r in prep.ranges:
                if r.fixed and r.ecosystem == self.comp.ecosystem and self.applicable(r):
                    found.add(r.fixed)
        out = sorted(found, key=lambda f: version_key(self.comp.ecosystem, f))
        self.idx.clean_cache[ck] = out  # type: ignore[assignment]
        return out

    def clean(self, version: str) -> bool:
        ck = ("clean", self.comp.name, self.platform, self.pl, version)
        hit = self.idx.clean_cache.get(ck)
        if hit is not None:
            return hit
        vkey = version_key(self.comp.ecosystem, version)
        vline = self.line_of(version)
        ok = all(self.evaluate(v, vkey, vline) is None for v in self.view())
        self.idx.clean_cache[ck] = ok
        return ok

    def upgrade(self, vkey: tuple, vline: str | None) -> tuple[str | None, bool]:
        later = [c for c in self.candidates() if version_key(self.comp.ecosystem, c) > vkey]
        for c in later:
            if self.line_of(c) == vline and self.clean(c):
                return c, False
        if vline is None:
            return None, False
        here = line_sort_key(self.comp, vline)
        for c in later:
            ln = self.line_of(c)
            if ln is not None and ln != vline and line_sort_key(self.comp, ln) > here and self.clean(c):
                return c, True
        return None, False


def severity_at_or_above(result: QueryResult, threshold: str) -> bool:
    """Whether any finding is at or above ``threshold`` (critical|high|medium|low|info|none|never)."""
    if threshold == "never":
        return False
    limit = 0 if threshold in ("info", "none") else SEVERITY_RANK[threshold]
    return any(SEVERITY_RANK.get(f.severity, 3) >= limit for f in result.findings)
