"""NVIDIA PSIRT CSAF 2.0 bulletins (+ sibling CVE JSON 5.1 records) into advisories with ranges.

How NVIDIA writes a bulletin (checked across all 53 selected bulletins, 2022-2026):

- ``product_tree`` has ``vendor / architecture / product_version`` branches. The architecture names
  the platform and the branch, e.g. ``Linux(R535)``, ``Windows(R580 vGPU 19)``,
  ``XenServer, VMware vSphere, ...(R570 vGPU 18)``, ``Linux(DOCA 2.9)``; the product_version's
  branch name is the product (``Tesla``, ``GeForce``, ``NVIDIA RTX, Quadro, NVS``, ``Guest driver``,
  ``Virtual GPU Manager``, ``NVIDIA Container Toolkit``...); the product's ``name`` is prose:
  "All driver versions prior to 580.95.05", "535.183.04(All versions prior to and including vGPU 16.7)",
  "All versions up to and including v1.16.1", "All 2.9 versions prior to 2.9.3", "0.0  to 4.5.2".
- Each vulnerability's ``product_status`` has ``known_affected`` and ``fixed`` product ids only.

Per vulnerability, the affected and fixed products of one (architecture, product) pair become one
AffectedRange. What cannot be read becomes an UnparsedItem, never silently dropped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from podium.advisories.components import Component, find_component
from podium.advisories.cvss import severity_from_score
from podium.advisories.model import Advisory, AffectedRange, UnparsedItem
from podium.advisories.versions import VersionError, version_key
from podium.errors import ParseError

SOURCE = "nvidia-psirt"
BULLETIN_URL = "https://nvidia.custhelp.com/app/answers/detail/a_id/{id}"


@dataclass
class CsafProduct:
    """One product_version leaf: where it sits in the tree and its prose version text."""

    product_id: str
    architecture: str
    product: str
    text: str


@dataclass
class Placement:
    """Component, product line, platform and release line of an (architecture, product) pair."""

    component: Component
    product_line: str
    platform: str
    line: str | None


def _walk(branches: list, path: list[tuple[str, str]], out: dict[str, CsafProduct]) -> None:
    for b in branches:
        here = [*path, (b.get("category", ""), b.get("name", ""))]
        product = b.get("product")
        if product and b.get("category") == "product_version":
            arch = next((n for c, n in here if c == "architecture"), "")
            out[product["product_id"]] = CsafProduct(
                product["product_id"],
                " ".join(arch.split()),
                " ".join(b.get("name", "").split()),
                product["name"],
            )
        if "branches" in b:
            _walk(b["branches"], here, out)


def _clean(text: str) -> str:
    return " ".join(text.replace("\t", " ").split()).strip(" ,")


# ----------------------------------------------------------------------------- placement


def _driver_product_line(product: str, arch: str) -> str | None:
    p = product.lower()
    if "gaming" in arch.lower() or "cloud gaming" in p:
        return "cloud-gaming"
    if "virtual gpu manager" in p:
        return "vgpu-host"
    if "guest driver" in p:
        return "vgpu-guest"
    if "tesla" in p:
        return "datacenter"
    if "geforce" in p or "studio" in p:
        return "geforce"
    if "rtx" in p or "quadro" in p:
        return "rtx"
    return None


def _driver_platform(arch: str, product_line: str) -> str:
    a = arch.lower()
    if a.startswith("windows"):
        return "windows"
    if a.startswith("linux"):
        return "linux"
    if "azure" in a or "windows server" in a:
        return "windows"  # Azure Stack HCI / Azure Local / Windows Server hosts
    # Hypervisor hosts (XenServer, vSphere, RHEL KVM, Ubuntu, Nutanix): the vGPU manager runs on the host.
    return "any" if product_line in ("vgpu-host", "cloud-gaming") else "linux"


_BRANCH_RE = re.compile(r"\(R(\d{3})")
_PAREN_LINE_RE = re.compile(r"\((?:DOCA|OFED|ConnectX)?\s*(\d+\.\d+)\)")


def _component_for(title: str, product: str) -> Component | None:
    """Which podium component an NVIDIA product name is, given the bulletin title."""
    p, t = product.lower(), title.lower()
    if "display driver" in t:
        return find_component("nvidia-driver")
    table = [
        ("container toolkit", "nvidia-container-toolkit"),
        ("gpu operator", "gpu-operator"),
        ("device plugin", "k8s-device-plugin"),
        ("mig manager", "mig-manager"),
        ("dcgm exporter", "dcgm-exporter"),
        ("dcgm", "dcgm"),
        ("nvjpeg2000", "nvjpeg2000"),
        ("nvjpeg", "nvjpeg"),
        ("nvtiff", "nvtiff"),
        ("cuda toolkit", "cuda-toolkit"),
        ("doca", "doca-host"),
        ("mellanox ofed", "mlnx-ofed"),
        ("dpdk", "dpdk"),
        ("bmc", "bluefield-bmc"),
        ("virtio-net", "bluefield-virtio-net"),
        ("bluefield", "bluefield"),
        ("connectx", "connectx-firmware"),
        ("nvos", "nvos"),
        ("cumulus", "cumulus-linux"),
        ("ufm", "ufm"),
        ("base command manager", "base-command-manager"),
        ("bright cluster manager", "base-command-manager"),
        ("kai scheduler", "kai-scheduler"),
    ]
    for needle, name in table:
        if needle in p:
            return find_component(name)
    if "dcgm" in t and p == "dcgm":
        return find_component("dcgm")
    if "vbios" in t or "ls10" in t:
        return None  # decided by architecture in _place
    return None


def _place(title: str, cp: CsafProduct) -> Placement | None:
    comp = _component_for(title, cp.product)
    arch = cp.architecture
    if comp is None and ("vbios" in title.lower() or "ls10" in title.lower()):
        comp = find_component("nvswitch" if arch.upper().startswith("LS10") else "gpu-vbios")
    if comp is None:
        return None
    if comp.name == "nvidia-driver":
        pl = _driver_product_line(cp.product, arch)
        if pl is None:
            return None
        m = _BRANCH_RE.search(arch)
        return Placement(comp, pl, _driver_platform(arch, pl), f"R{m.group(1)}" if m else None)
    line = None
    if comp.name in ("doca-host", "mlnx-ofed", "dcgm", "dcgm-exporter"):
        m = _PAREN_LINE_RE.search(arch)
        line = m.group(1) if m else None
    product_line = "any"
    if comp.name in ("gpu-vbios", "nvswitch"):
        product_line = "blackwell" if "blackwell" in cp.product.lower() else "hopper"
    return Placement(comp, product_line, "any", line)


# ----------------------------------------------------------------------------- prose


@dataclass
class AffectedText:
    """What an affected-product prose says: bounds of the affected versions."""

    introduced: str | None = None
    last_affected: str | None = None
    before: str | None = None  # "prior to X": X is the first fixed version
    line: str | None = None  # "All 2.9 versions ..." scopes the range to a line
    whole_line: bool = False  # "All driver versions" / "All 2.10 versions": no bound
    exact: str | None = None  # a bare version: only that version is affected


_PREFIX_RE = re.compile(r"^(?:NVIDIA\s+)?(?:CUDA Toolkit|nvJPEG2000|nvJPEG|nvTIFF)\s+", re.I)


def normalize_version(token: str, comp: Component) -> str | None:
    """NVIDIA's spelling of one version to the component's ecosystem, or None when it is not one."""
    t = _clean(token)
    t = _PREFIX_RE.sub("", t)
    t = re.sub(r"\s+(?:LTS|GA)$", "", t)
    t = re.sub(r"^v(?=\d)", "", t)
    t = re.sub(r"\s+Update\s+(\d+)$", r".\1", t, flags=re.I)  # CUDA "11.6 Update 2" = 11.6.2
    t = re.sub(r"^(\d+\.\d+)U(\d+)$", r"\1.\2", t)  # CUDA "12.5U1" = 12.5.1
    t = re.sub(r"^xx\.", "", t)  # ConnectX "xx.41.1000": xx is the device prefix
    t = re.sub(r"\.x$", ".0", t)  # "0.7.x" as a fixed version: the 0.7 series
    if comp.line_rule == "firmware":
        parts = t.split(".")
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            t = ".".join(parts[1:])
    if comp.name == "nvidia-driver" and t.endswith("."):
        t = t[:-1]
    try:
        version_key(comp.ecosystem, t)
    except VersionError:
        return None
    return t


_V = r"((?:xx\.)?v?[0-9][0-9A-Za-z._-]*(?:\s+Update\s+\d+)?)"
_PRIOR_RE = re.compile(
    r"^all\s+(?:drivers?\s+)?versions?\s+prior\s+(?:to\s+)?(?:CUDA Toolkit\s+|nvJPEG2000\s+|nvJPEG\s+|nvTIFF\s+)?"
    + _V
    + r"(?:\s+to)?\b",
    re.I,
)
_UPTO_RE = re.compile(
    r"^all\s+versions?\s+(?:up\s+to\s+and\s+including|prior\s+to\s+and\s+including)\s+(?:CUDA Toolkit\s+)?"
    + _V,
    re.I,
)
_UPTO_EXCL_RE = re.compile(r"^all\s+versions?\s+up\s+to\s+(?:CUDA Toolkit\s+)?" + _V + r"$", re.I)
_VER_PAREN_RE = re.compile(
    r"^" + _V + r"\s*\(\s*all versions (?:prior to and including|up to and including)\b", re.I
)
_LINE_PRIOR_RE = re.compile(r"^all\s+(\d+\.\d+)\s+versions\s+prior\s+to\s+" + _V + "$", re.I)
_LINE_ALL_RE = re.compile(r"^all\s+(\d+\.\d+)\s+versions$", re.I)
_SPAN_RE = re.compile(r"^" + _V + r"\s+to\s+" + _V + "$", re.I)
_SERIES_PRIOR_RE = re.compile(r"^(\d+\.\d+)\.x\s+(?:LTS\s+)?prior\s+to\s+" + _V + r"(?:\s+LTS)?$", re.I)
_ALL_RE = re.compile(r"^all\s+(?:driver\s+)?versions$", re.I)
_AND_OLDER_RE = re.compile(r"^" + _V + r"\s+and\s+older(?:\s+versions)?$", re.I)


def parse_affected(text: str, comp: Component) -> AffectedText | None:
    """Read NVIDIA's affected-versions prose; None when it says something podium cannot model."""
    t = _clean(text)

    def v(tok: str) -> str | None:
        return normalize_version(tok, comp)

    if m := _LINE_PRIOR_RE.match(t):
        before = v(m.group(2))
        return AffectedText(introduced=f"{m.group(1)}.0", before=before, line=m.group(1)) if before else None
    if m := _LINE_ALL_RE.match(t):
        return AffectedText(introduced=f"{m.group(1)}.0", line=m.group(1), whole_line=True)
    if m := _SERIES_PRIOR_RE.match(t):
        before = v(m.group(2))
        return AffectedText(introduced=f"{m.group(1)}.0", before=before) if before else None
    if _ALL_RE.match(t):
        return AffectedText(whole_line=True)
    if m := _UPTO_RE.match(t):
        last = v(m.group(1))
        return AffectedText(last_affected=last) if last else None
    if m := _UPTO_EXCL_RE.match(t):
        # "All versions up to CUDA Toolkit 12.8": NVIDIA means the release that ships the fix is later.
        last = v(m.group(1))
        return AffectedText(last_affected=last) if last else None
    if m := _PRIOR_RE.match(t):
        before = v(m.group(1))
        return AffectedText(before=before) if before else None
    if m := _VER_PAREN_RE.match(t):
        last = v(m.group(1))
        return AffectedText(last_affected=last) if last else None
    if m := _SPAN_RE.match(t):
        lo, hi = v(m.group(1)), v(m.group(2))
        if lo and hi:
            return AffectedText(introduced=None if re.fullmatch(r"0(\.0)*", lo) else lo, last_affected=hi)
        return None
    if m := _AND_OLDER_RE.match(t):
        last = v(m.group(1))
        return AffectedText(last_affected=last) if last else None
    if (m := _FIXED_RES[0].match(t)) and (exact := v(m.group(1))):
        return AffectedText(exact=exact)
    return None


_FIXED_RES = [
    re.compile(r"^" + _V + r"(?:\s+(?:LTS|GA))?$", re.I),
    re.compile(r"^(?:CUDA Toolkit|nvJPEG2000|nvJPEG|nvTIFF)\s+" + _V + "$", re.I),
    re.compile(r"^" + _V + r"\s*\(", re.I),  # "580.95.02(vGPU 19.2)", "510.47.03(January 2022 ...)"
    re.compile(r"^" + _V + r"\s+or\s+(?:later|newer)", re.I),
    re.compile(r"^" + _V + r"\s+and\s+" + _V + r"\s+\(latest\)$", re.I),  # DCGM "2.3.4 and 2.3.5 (latest)"
]


def parse_fixed(text: str, comp: Component) -> str | None:
    """First fixed version from NVIDIA's fixed-product prose, or None."""
    t = _clean(text)
    for rx in _FIXED_RES:
        if m := rx.match(t):
            return normalize_version(m.group(1), comp)
    return None


def _lead_int(text: str) -> int | None:
    m = re.search(r"\d+", text)
    return int(m.group()) if m else None


def _pair(
    affected: list[CsafProduct], fixed: list[CsafProduct]
) -> list[tuple[CsafProduct | None, CsafProduct | None]]:
    """Match affected and fixed rows of one (architecture, product) pair.

    vGPU rows list two driver families side by side (e.g. 470.82.00 -> 470.103.01 and 472.39 -> 472.98);
    rows pair up by their leading number.
    """
    if len(affected) <= 1 and len(fixed) <= 1:
        return [(affected[0] if affected else None, fixed[0] if fixed else None)]
    pairs: list[tuple[CsafProduct | None, CsafProduct | None]] = []
    left = list(fixed)
    for a in affected:
        lead = _lead_int(re.sub(r"^\D*", "", a.text))
        match = next((f for f in left if _lead_int(f.text) == lead), None)
        if match is None and len(left) == 1 and len(affected) == 1:
            match = left[0]
        if match is not None:
            left.remove(match)
        pairs.append((a, match))
    pairs.extend((None, f) for f in left)
    return pairs


# ----------------------------------------------------------------------------- documents


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ParseError(path, f"not a readable JSON document: {e}") from e
    if not isinstance(data, dict):
        raise ParseError(path, "expected a JSON object")
    return data


def _cve_record_details(path: Path) -> tuple[str, list[str], str | None, float | None]:
    """Description, CWE ids, CVSS vector and score from a CVE JSON 5.1 record."""
    data = _read_json(path)
    cna = data.get("containers", {}).get("cna", {})
    desc = next(
        (d.get("value", "") for d in cna.get("descriptions", []) if d.get("lang", "en").startswith("en")), ""
    )
    cwes = sorted(
        {
            d["cweId"]
            for pt in cna.get("problemTypes", [])
            for d in pt.get("descriptions", [])
            if d.get("cweId")
        }
    )
    vector = score = None
    for metric in cna.get("metrics", []):
        for key in ("cvssV3_1", "cvssV3_0"):
            if key in metric:
                vector, score = metric[key].get("vectorString"), metric[key].get("baseScore")
                break
    return desc, cwes, vector, score


def parse_csaf_document(path: Path) -> tuple[list[Advisory], list[UnparsedItem]]:
    """One CSAF 2.0 bulletin (and its sibling CVE records) into advisories and unparsed items."""
    doc = _read_json(path)
    try:
        document = doc["document"]
        bulletin = str(document["tracking"]["id"])
        title = document["title"]
        vulns = doc["vulnerabilities"]
    except (KeyError, TypeError) as e:
        raise ParseError(path, f"not a CSAF security advisory (missing {e})") from e
    if document.get("csaf_version") != "2.0":
        raise ParseError(path, f"unsupported csaf_version {document.get('csaf_version')!r}")
    products: dict[str, CsafProduct] = {}
    _walk(doc.get("product_tree", {}).get("branches", []), [], products)
    source_id = f"NVIDIA-{bulletin}"
    url = BULLETIN_URL.format(id=bulletin)
    published = document["tracking"].get("initial_release_date")
    advisories: list[Advisory] = []
    unparsed: list[UnparsedItem] = []

    def miss(cve: str, text: str, reason: str) -> None:
        unparsed.append(UnparsedItem(source=source_id, advisory=cve, text=text, reason=reason))

    for vuln in vulns:
        cve = vuln.get("cve")
        if not cve:
            miss("?", json.dumps(vuln)[:200], "vulnerability without a CVE id")
            continue
        status = vuln.get("product_status", {})
        groups: dict[tuple[str, str], tuple[list[CsafProduct], list[CsafProduct]]] = {}
        for kind in ("known_affected", "fixed"):
            for pid in status.get(kind, []):
                cp = products.get(pid)
                if cp is None:
                    miss(cve, pid, f"{kind} product id not in the product tree")
                    continue
                g = groups.setdefault((cp.architecture, cp.product), ([], []))
                g[0 if kind == "known_affected" else 1].append(cp)
        ranges: list[AffectedRange] = []
        for (arch, product), (aff, fix) in groups.items():
            place = _place(title, (aff or fix)[0])
            if place is None:
                miss(cve, f"{arch} / {product}", "product not mapped to a podium component")
                continue
            for a, f in _pair(aff, fix):
                rng = _range(place, a, f, cve, miss)
                if rng is not None:
                    rng.source = source_id
                    ranges.append(rng)
        score, vector = _csaf_score(vuln)
        desc = next((n.get("text", "") for n in vuln.get("notes", []) if n.get("category") == "summary"), "")
        cwes = [vuln["cwe"]["id"]] if vuln.get("cwe", {}).get("id") else []
        sibling = path.parent / f"{cve}.json"
        if sibling.exists():
            d2, cwes2, vec2, score2 = _cve_record_details(sibling)
            desc = desc or d2
            cwes = sorted(set(cwes) | set(cwes2))
            if score is None and score2 is not None:
                score, vector = float(score2), vec2
        advisories.append(
            Advisory(
                id=cve,
                aliases=[],
                title=_title(desc, title),
                description=desc,
                cwes=cwes,
                severity=severity_from_score(score),
                cvss=score,
                cvss_vector=vector,
                published=_date(vuln.get("release_date") or published),
                source=source_id,
                sources=[source_id],
                source_url=url,
                components=sorted({r.component for r in ranges}),
                ranges=ranges,
                references=[r["url"] for r in vuln.get("references", []) if r.get("url")],
            )
        )
    return advisories, unparsed


def _range(
    place: Placement, a: CsafProduct | None, f: CsafProduct | None, cve: str, miss
) -> AffectedRange | None:
    comp = place.component
    where = f"{(a or f).architecture} / {(a or f).product}"  # type: ignore[union-attr]
    if a is None:
        miss(cve, f"{where}: fixed {f.text!r}", "fixed version without an affected row")  # type: ignore[union-attr]
        return None
    parsed = parse_affected(a.text, comp)
    fixed = parse_fixed(f.text, comp) if f is not None else None
    if parsed is None:
        miss(
            cve,
            f"{where}: affected {a.text!r}; fixed {f.text if f else None!r}",
            "affected prose not understood",
        )
        return None
    if f is not None and fixed is None and parsed.before is None:
        miss(cve, f"{where}: affected {a.text!r}; fixed {f.text!r}", "fixed prose names no version")
        return None
    fixed = fixed or parsed.before
    line = parsed.line or place.line
    if comp.name == "nvidia-driver" and place.product_line == "cloud-gaming":
        # Cloud gaming releases move branch with each monthly release (R520 Gaming -> 525.60.11).
        line = None
    elif comp.name == "nvidia-driver":
        if line is None:
            # Cloud gaming rows name no branch; the fixed version's major is its branch.
            anchor = fixed or parsed.last_affected
            line = f"R{anchor.split('.')[0]}" if anchor and place.product_line != "cloud-gaming" else None
        elif place.platform != "windows" and fixed and f"R{fixed.split('.')[0]}" != line:
            miss(cve, f"{where}: fixed {f.text if f else fixed!r}", f"fixed version is not on branch {line}")
            return None
    elif comp.line_rule == "firmware" and fixed:
        line = fixed.split(".")[0]
    return AffectedRange(
        component=comp.name,
        ecosystem=comp.ecosystem,
        line=line,
        product_line=place.product_line,
        platform=place.platform,
        introduced=parsed.exact or parsed.introduced,
        fixed=fixed,
        last_affected=None if fixed else (parsed.last_affected or parsed.exact),
        text=_clean(f"{a.text} -> {f.text if f else 'no fixed row'}"),
    )


def _csaf_score(vuln: dict) -> tuple[float | None, str | None]:
    for s in vuln.get("scores", []):
        v3 = s.get("cvss_v3")
        if v3 and v3.get("baseScore") is not None:
            return float(v3["baseScore"]), v3.get("vectorString")
    return None, None


def _title(desc: str, bulletin_title: str) -> str:
    first = re.split(r"(?<=[.])\s", desc.strip(), maxsplit=1)[0] if desc else ""
    return (first[:157] + "...") if len(first) > 160 else (first or bulletin_title)


def _date(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def bulletin_paths(root: Path) -> list[Path]:
    """CSAF documents under an NVIDIA PSIRT snapshot laid out as YEAR/ID/ID.json."""
    return sorted(p for p in root.glob("*/*/*.json") if p.stem == p.parent.name)


def parse_psirt_dir(root: Path) -> tuple[list[Advisory], list[UnparsedItem], int]:
    """All bulletins under ``root``: advisories, unparsed items and the number of documents read."""
    advisories: list[Advisory] = []
    unparsed: list[UnparsedItem] = []
    paths = bulletin_paths(root)
    for p in paths:
        a, u = parse_csaf_document(p)
        advisories.extend(a)
        unparsed.extend(u)
    return advisories, unparsed, len(paths)
