"""Bundle build (fails closed), save/load round trip, corrupt files, age, and the shipped bundle."""

from __future__ import annotations

import gzip
import shutil
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

from podium.advisories.bundle import (
    SHIPPED_BUNDLE,
    build_bundle,
    bundle_age_days,
    load_bundle,
    load_default,
    save_bundle,
    staleness_warning,
)
from podium.advisories.match import query
from podium.errors import InputError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "advisories"
BUILT = datetime(2026, 11, 30, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def fixture_bundle():
    return build_bundle(FIX, built_at=BUILT)


def test_build_from_fixture_subset(fixture_bundle) -> None:
    b = fixture_bundle
    assert b.version == "2026.08.21"  # newest source commit date (go-vulndb, from SOURCES.md)
    by_name = {s.name: s for s in b.sources}
    assert list(by_name) == [
        "nvidia-psirt",
        "curated",
        "go-vulndb",
        "ghsa",
        "kubernetes-cve-feed",
        "ubuntu-slurm",
    ]
    assert by_name["nvidia-psirt"].commit == "dbb4ada053156ea7f41a15229c7b85e2380b3b87"
    assert (by_name["nvidia-psirt"].records, by_name["nvidia-psirt"].advisories) == (7, 36)
    assert by_name["go-vulndb"].commit == "a752ea54fd1b989d208a270aeef772f55a36b87a"
    assert (by_name["go-vulndb"].records, by_name["go-vulndb"].advisories) == (6, 5)  # one withdrawn
    assert by_name["curated"].advisories == 13
    counts = Counter((u.source, u.reason) for u in b.unparsed)
    assert counts == {
        ("NVIDIA-5468", "fixed prose names no version"): 2,
        ("NVIDIA-5703", "fixed version is not on branch R535"): 10,
        # May 2026 vGPU host rows: "(R595 vGPU 20)" says fixed 580.159.01, "(R580 vGPU 19)" says 535.309.01.
        ("NVIDIA-5821", "fixed version is not on branch R595"): 1,
        ("NVIDIA-5821", "fixed version is not on branch R580"): 1,
        ("go-vulndb", "withdrawn upstream; not graded"): 1,
    }


def test_merge_keeps_one_advisory_per_vulnerability(fixture_bundle) -> None:
    runc = [a for a in fixture_bundle.advisories if a.id == "CVE-2024-21626"]
    assert len(runc) == 1
    a = runc[0]
    assert set(a.aliases) == {"GO-2024-2491", "GHSA-xr7r-f8xq-vfvv"}
    assert a.source == "GO-2024-2491"  # go-vulndb ranks before GHSA for ranges
    assert (a.cvss, a.severity) == (8.6, "high")  # the score comes from the GHSA copy
    assert [(r.introduced, r.fixed) for r in a.ranges] == [("1.0.0-rc93", "1.1.12")]
    # The NVIDIA CSAF record and go-vulndb's record of CVE-2024-0133 (GO-2024-3237) are one advisory
    # with NVIDIA's ranges for the components NVIDIA lists.
    nct = next(a for a in fixture_bundle.advisories if a.id == "CVE-2024-0133")
    assert {"GO-2024-3237", "GHSA-f748-7hpg-88ch"} <= set(nct.aliases)
    assert nct.source == "NVIDIA-5582"
    assert sorted(
        (r.component, r.fixed, r.text is not None)
        for r in nct.ranges
        if r.component == "nvidia-container-toolkit"
    ) == [("nvidia-container-toolkit", "1.16.2", True)]


@pytest.mark.parametrize("source", ["nvidia-psirt", "osv/ghsa", "osv/kubernetes-cve-feed"])
def test_build_fails_closed_on_an_empty_source(tmp_path: Path, source: str) -> None:
    root = tmp_path / "advisories"
    shutil.copytree(FIX, root)
    shutil.rmtree(root / source)
    (root / source).mkdir()
    with pytest.raises(InputError, match="yielded no advisories"):
        build_bundle(root)


def test_build_fails_closed_on_a_missing_source(tmp_path: Path) -> None:
    root = tmp_path / "advisories"
    shutil.copytree(FIX, root)
    shutil.rmtree(root / "osv" / "go-vulndb")
    with pytest.raises(InputError, match="'go-vulndb' is missing"):
        build_bundle(root)


def test_save_load_round_trip(tmp_path: Path, fixture_bundle) -> None:
    gz = save_bundle(fixture_bundle, tmp_path / "b.json.gz")
    plain = save_bundle(fixture_bundle, tmp_path / "b.json")
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    assert load_bundle(gz) == fixture_bundle
    assert load_bundle(plain) == fixture_bundle


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "not a valid podium advisory bundle"),
        (b'{"version": "x"}', "not a valid podium advisory bundle"),
        (gzip.compress(b"{truncated"), "not a valid podium advisory bundle"),
        (b"\x1f\x8b\x08garbage", "not a valid podium advisory bundle"),
    ],
)
def test_corrupt_bundle_names_the_file(tmp_path: Path, content: bytes, problem: str) -> None:
    p = tmp_path / "bad.json.gz"
    p.write_bytes(content)
    with pytest.raises(InputError) as e:
        load_bundle(p)
    assert str(p) in str(e.value) and problem in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_bundle_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read advisory bundle"):
        load_bundle(tmp_path / "nope.json.gz")


def test_age_and_staleness(fixture_bundle) -> None:
    assert bundle_age_days(fixture_bundle, now=datetime(2026, 9, 10, tzinfo=timezone.utc)) == 20
    assert staleness_warning(fixture_bundle, now=datetime(2026, 9, 10, tzinfo=timezone.utc)) is None
    assert bundle_age_days(fixture_bundle, now=BUILT) == 101
    assert "101 days old" in staleness_warning(fixture_bundle, now=BUILT)


def test_shipped_bundle_is_the_full_snapshot() -> None:
    b = load_default()
    assert SHIPPED_BUNDLE.exists()
    by_name = {s.name: s for s in b.sources}
    assert by_name["nvidia-psirt"].records == 53
    assert by_name["nvidia-psirt"].advisories == 256
    assert by_name["go-vulndb"].records == 58
    assert by_name["kubernetes-cve-feed"].advisories == 47
    assert b.version == "2026.08.21"
    assert len(b.unparsed) > 0  # reported, not hidden


def test_query_uses_the_given_bundle(fixture_bundle) -> None:
    # The fixture subset's newest driver bulletin is also 5821, so R535's fix is the same.
    r = query("nvidia-driver", "535.104.05", bundle=fixture_bundle)
    assert r.upgrade_to == "535.309.01"
    assert r.bundle_version == "2026.08.21"


@pytest.mark.parametrize(("version", "branch"), [("535.104.05", "535"), ("580.65.06", "580")])
def test_driver_findings_match_an_independent_reading_of_product_ids(fixture_bundle, version, branch) -> None:
    """Cross-check the prose-based ranges against NVIDIA's machine product ids.

    NVIDIA's product ids spell the bound too (``linuxr535_tesla_all_driver_versions_prior_to_535_309_01``);
    reading those gives the same CVE set as parsing the prose, for branches every bulletin lists.
    """
    import json
    import re

    from podium.advisories.versions import compare

    expected = set()
    rx = re.compile(rf"linuxr{branch}_tesla_all_drivers?_versions?_prior_to_(\d+)_(\d+)_(\d+)")
    for path in (FIX / "nvidia-psirt").glob("*/*/*.json"):
        if path.stem != path.parent.name:
            continue
        for vuln in json.loads(path.read_text())["vulnerabilities"]:
            for pid in vuln["product_status"]["known_affected"]:
                m = rx.fullmatch(pid)
                if m and compare("nvidia-driver", version, ".".join(m.groups())) < 0:
                    expected.add(vuln["cve"])
    got = {f.id for f in query("nvidia-driver", version, bundle=fixture_bundle).findings}
    assert expected  # the fixture bulletins do list this branch
    assert got == expected
