"""Parsers on the real upstream files in tests/fixtures/advisories (copied from the shared snapshot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.advisories.components import find_component
from podium.advisories.cvss import cvss3_base_score
from podium.advisories.sources.csaf import parse_affected, parse_csaf_document, parse_fixed
from podium.advisories.sources.osv import parse_osv_dir, parse_osv_record
from podium.errors import ParseError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "advisories"
PSIRT = FIX / "nvidia-psirt"


def _ranges(advisories, cve, **match):
    adv = next(a for a in advisories if a.id == cve)
    return [r for r in adv.ranges if all(getattr(r, k) == v for k, v in match.items())]


# ----------------------------------------------------------------------------- prose


@pytest.mark.parametrize(
    ("component", "text", "expect"),
    [
        ("nvidia-driver", "All driver versions prior to 580.95.05", {"before": "580.95.05"}),
        ("nvidia-driver", "All drivers versions prior to 510.47.03", {"before": "510.47.03"}),
        (
            "nvidia-driver",
            "535.183.04(All versions prior to and including vGPU 16.7)",
            {"last_affected": "535.183.04"},
        ),
        ("nvidia-driver", "All driver versions", {"whole_line": True}),
        ("nvidia-container-toolkit", "All versions up to and including v1.16.1", {"last_affected": "1.16.1"}),
        (
            "nvidia-container-toolkit",
            "All versions up to and including 1.17.7 (CDI mode only for versions prior to 1.17.5)",
            {"last_affected": "1.17.7"},
        ),
        (
            "doca-host",
            "All 2.9 versions prior to 2.9.3",
            {"introduced": "2.9.0", "before": "2.9.3", "line": "2.9"},
        ),
        ("doca-host", "All 2.10 versions", {"introduced": "2.10.0", "line": "2.10", "whole_line": True}),
        ("dcgm", "0.0  to 4.5.2", {"introduced": None, "last_affected": "4.5.2"}),
        ("cuda-toolkit", "All versions prior to CUDA Toolkit 11.6 Update 2", {"before": "11.6.2"}),
        ("cuda-toolkit", "All versions up to and including CUDA Toolkit 12.5U1", {"last_affected": "12.5.1"}),
        ("ufm", "6.15.x LTS prior to 6.15.6-4 LTS", {"introduced": "6.15.0", "before": "6.15.6-4"}),
        ("connectx-firmware", "All versions prior to xx.41.1000", {"before": "41.1000"}),
        ("mlnx-ofed", "All versions prior to 24.10-3.2.5.0", {"before": "24.10-3.2.5.0"}),
    ],
)
def test_affected_prose(component: str, text: str, expect: dict) -> None:
    parsed = parse_affected(text, find_component(component))
    assert parsed is not None
    for key, value in expect.items():
        assert getattr(parsed, key) == value, key


@pytest.mark.parametrize(
    ("component", "text"),
    [
        ("ufm", "6.15.x, 6.16.x, 6.17.x"),
        ("bluefield", "All versions after 18.24.1000"),
        ("cumulus-linux", "Cumulus Linux 5.12, 5.11, 5.10, 5.9 and older"),
    ],
)
def test_affected_prose_not_understood(component: str, text: str) -> None:
    assert parse_affected(text, find_component(component)) is None


@pytest.mark.parametrize(
    ("component", "text", "expect"),
    [
        ("nvidia-driver", "580.95.05", "580.95.05"),
        ("nvidia-driver", "580.95.02(vGPU 19.2)", "580.95.02"),
        ("nvidia-container-toolkit", "v1.17", "1.17"),
        ("dcgm", "2.3.4 and 2.3.5 (latest)", "2.3.4"),
        ("cuda-toolkit", "CUDA Toolkit v12.4U1", "12.4.1"),
        ("bluefield", "24.35.3006 or later(BFB 3.9.5 or later)", "35.3006"),
        ("nvidia-driver", "Available the week of June 29, 2023", None),
    ],
)
def test_fixed_prose(component: str, text: str, expect: str | None) -> None:
    assert parse_fixed(text, find_component(component)) == expect


# ----------------------------------------------------------------------------- CSAF documents


def test_csaf_october_2025_driver_bulletin() -> None:
    advisories, unparsed = parse_csaf_document(PSIRT / "2025/5703/5703.json")
    assert len(advisories) == 9
    # Windows-only CVE: seven rows, R580/R570/R535, no Linux row.
    win = _ranges(advisories, "CVE-2025-23309")
    assert {r.platform for r in win} == {"windows"}
    assert {(r.product_line, r.line, r.fixed) for r in win} == {
        ("geforce", "R580", "581.42"),
        ("rtx", "R580", "581.42"),
        ("rtx", "R570", "573.76"),
        ("rtx", "R535", "539.56"),
        ("datacenter", "R580", "581.42"),
        ("datacenter", "R570", "573.76"),
        ("datacenter", "R535", "539.56"),
    }
    linux_dc = _ranges(advisories, "CVE-2025-23280", platform="linux", product_line="datacenter")
    assert sorted((r.line, r.introduced, r.fixed) for r in linux_dc) == [
        ("R535", None, "535.274.02"),
        ("R570", None, "570.195.03"),
        ("R580", None, "580.95.05"),
    ]
    host = _ranges(advisories, "CVE-2025-23282", product_line="vgpu-host", line="R570")
    assert [(r.platform, r.fixed) for r in host] == [("any", "570.195.02")]
    a = next(a for a in advisories if a.id == "CVE-2025-23309")
    assert (a.cvss, a.severity, a.cvss_vector) == (
        8.2,
        "high",
        "CVSS:3.1/AV:L/AC:L/PR:L/UI:R/S:C/C:H/I:H/A:H",
    )
    assert a.cwes == ["CWE-427"]
    assert a.source == "NVIDIA-5703"
    # The vGPU 16 rows name fixed versions 575.274.02/03 under R535 (guest driver and host manager):
    # reported as unparsed, not guessed.
    odd = [u for u in unparsed if u.reason == "fixed version is not on branch R535"]
    guest = sorted(u.advisory for u in odd if "Guest driver" in u.text)
    host = sorted(u.advisory for u in odd if "Virtual GPU Manager" in u.text)
    assert guest == [
        "CVE-2025-23280",
        "CVE-2025-23282",
        "CVE-2025-23300",
        "CVE-2025-23330",
        "CVE-2025-23332",
        "CVE-2025-23345",
    ]
    assert host == ["CVE-2025-23282", "CVE-2025-23300", "CVE-2025-23332", "CVE-2025-23352"]
    assert len(odd) == 10
    assert all("575.274.0" in u.text for u in odd)


def test_csaf_vgpu_rows_pair_by_driver_family() -> None:
    advisories, _ = parse_csaf_document(PSIRT / "2022/5312/5312.json")
    guest = sorted(
        (r.line, r.fixed)
        for a in advisories
        for r in a.ranges
        if r.product_line == "vgpu-guest" and r.line == "R470" and r.platform == "windows"
    )
    # 470.82.00 -> 470.103.01 and 472.39 -> 472.98 are two families on one branch; each CVE lists both.
    assert ("R470", "470.103.01") in guest
    assert ("R470", "472.98") in guest


def test_csaf_prose_without_version_is_reported() -> None:
    _, unparsed = parse_csaf_document(PSIRT / "2023/5468/5468.json")
    assert [(u.advisory, u.reason) for u in unparsed] == [
        ("CVE-2022-34671", "fixed prose names no version"),
        ("CVE-2023-25515", "fixed prose names no version"),
    ]
    assert "Available the week of June 29, 2023" in unparsed[0].text


def test_csaf_per_line_doca_and_ofed() -> None:
    advisories, unparsed = parse_csaf_document(PSIRT / "2025/5654/5654.json")
    assert unparsed == []
    rs = advisories[0].ranges
    assert sorted((r.component, r.line, r.fixed) for r in rs) == [
        ("doca-host", "2.5", "2.5.3-0.1.2"),
        ("doca-host", "2.9", "2.9.2-0.1.6"),
        ("doca-host", "3.0", "3.0.0-058001"),
        ("mlnx-ofed", "23.10", "23.10-5.1.4.0"),
        ("mlnx-ofed", "24.10", "24.10-3.2.5.0"),
        ("mlnx-ofed", "5.8", "5.8-7.0.6.1"),
    ]


def test_csaf_garbage_is_a_parse_error(tmp_path: Path) -> None:
    p = tmp_path / "1.json"
    p.write_text("{not json")
    with pytest.raises(ParseError, match=r"1\.json"):
        parse_csaf_document(p)
    p.write_text(json.dumps({"document": {}}))
    with pytest.raises(ParseError, match="not a CSAF"):
        parse_csaf_document(p)


# ----------------------------------------------------------------------------- OSV


def test_osv_go_runc_record() -> None:
    data = json.loads((FIX / "osv/go-vulndb/runc/GO-2024-2491.json").read_text())
    adv, unparsed = parse_osv_record(data, "GO-2024-2491.json", "go-vulndb")
    assert unparsed == []
    assert adv.aliases == ["CVE-2024-21626", "GHSA-xr7r-f8xq-vfvv"]
    assert [(r.component, r.introduced, r.fixed, r.limit) for r in adv.ranges] == [
        ("runc", "1.0.0-rc93", "1.1.12", "2.0.0-0")
    ]
    assert adv.severity == "unknown"  # go-vulndb carries no severity


def test_osv_go_module_major_paths() -> None:
    data = json.loads((FIX / "osv/go-vulndb/containerd/GO-2026-5064.json").read_text())
    adv, _ = parse_osv_record(data, "x", "go-vulndb")
    got = sorted((r.package, r.introduced, r.fixed, r.limit) for r in adv.ranges)
    assert got == [
        ("github.com/containerd/containerd", None, None, "2.0.0-0"),
        ("github.com/containerd/containerd/v2", "2.1.0", "2.1.9", "3.0.0-0"),
        ("github.com/containerd/containerd/v2", "2.2.0", "2.2.5", "3.0.0-0"),
        ("github.com/containerd/containerd/v2", "2.3.0", "2.3.2", "3.0.0-0"),
    ]


def test_osv_custom_ranges_and_withdrawn() -> None:
    data = json.loads((FIX / "osv/go-vulndb/ingress-nginx/GO-2024-2428.json").read_text())
    adv, _ = parse_osv_record(data, "x", "go-vulndb")
    assert [(r.introduced, r.fixed) for r in adv.ranges] == [(None, "1.9.0")]
    data = json.loads((FIX / "osv/go-vulndb/runc/GO-2025-3543.json").read_text())
    adv, unparsed = parse_osv_record(data, "x", "go-vulndb")
    assert adv is None
    assert unparsed[0].reason == "withdrawn upstream; not graded"


def test_osv_ghsa_two_affected_entries_and_cvss() -> None:
    data = json.loads((FIX / "osv/ghsa/GHSA-jfvp-7x6p-h2pv.json").read_text())
    adv, _ = parse_osv_record(data, "x", "ghsa")
    assert sorted((r.introduced or "", r.fixed) for r in adv.ranges) == [
        ("", "1.1.14"),
        ("1.2.0-rc.1", "1.2.0-rc.3"),
    ]
    assert (adv.cvss, adv.severity) == (3.6, "low")
    data = json.loads((FIX / "osv/ghsa/GHSA-7ww5-4wqc-m92c.json").read_text())
    adv, _ = parse_osv_record(data, "x", "ghsa")
    assert adv.severity == "medium"  # no vector: GHSA's database_specific.severity MODERATE
    assert sorted((r.introduced or "", r.fixed) for r in adv.ranges) == [("", "1.6.26"), ("1.7.0", "1.7.11")]


def test_osv_kubernetes_feed_per_minor_series() -> None:
    advisories, unparsed, files = parse_osv_dir(FIX / "osv/kubernetes-cve-feed", "kubernetes-cve-feed")
    assert (files, unparsed) == (2, [])
    adv = next(a for a in advisories if a.id == "CVE-2023-3676")
    assert sorted((r.introduced, r.fixed) for r in adv.ranges) == [
        ("1.24.0", "1.24.17"),
        ("1.25.0", "1.25.13"),
        ("1.26.0", "1.26.8"),
        ("1.27.0", "1.27.5"),
        ("1.28.0", "1.28.1"),
    ]
    assert (adv.cvss, adv.severity) == (8.8, "high")
    old = next(a for a in advisories if a.id == "CVE-2018-1002100")
    assert (old.cvss_vector, old.cvss) == ("CVSS:3.0/AV:N/AC:H/PR:H/UI:R/S:U/C:N/I:H/A:N", 4.2)


def test_osv_ubuntu_records_are_distro_ranges() -> None:
    advisories, _, _ = parse_osv_dir(FIX / "osv/ubuntu-slurm", "ubuntu-slurm")
    adv = next(a for a in advisories if a.id == "CVE-2022-29500")
    by_release = {r.product_line: r for r in adv.ranges}
    # Plain 22.04 has no fix; the fix ships in Ubuntu Pro (ESM) for 22.04 and in 24.04's package.
    assert by_release["Ubuntu:22.04:LTS"].fixed is None
    assert by_release["Ubuntu:Pro:22.04:LTS"].fixed == "21.08.5-2ubuntu1+esm1"
    assert by_release["Ubuntu:24.04:LTS"].fixed == "23.02.3-2ubuntu1"
    assert {r.ecosystem for r in adv.ranges} == {"debian"}


# ----------------------------------------------------------------------------- CVSS


@pytest.mark.parametrize(
    ("vector", "score"),
    [
        ("CVSS:3.1/AV:L/AC:L/PR:L/UI:R/S:C/C:H/I:H/A:H", 8.2),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8),
        ("CVSS:3.1/AV:L/AC:H/PR:L/UI:N/S:C/C:H/I:H/A:L", 7.7),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:H/A:N", 7.5),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N", 0.0),
        ("CVSS:3.0/AV:N/AC:H/PR:H/UI:R/S:U/C:N/I:H/A:N", 4.2),
    ],
)
def test_cvss3_base_score(vector: str, score: float) -> None:
    assert cvss3_base_score(vector) == score


def test_cvss3_matches_every_score_nvidia_published() -> None:
    # NVIDIA's CSAF gives both the vector and the base score: podium's calculator must agree on all of them.
    seen = 0
    for path in sorted(PSIRT.glob("*/*/*.json")):
        if path.stem != path.parent.name:
            continue
        for vuln in json.loads(path.read_text())["vulnerabilities"]:
            for s in vuln.get("scores", []):
                v3 = s["cvss_v3"]
                assert cvss3_base_score(v3["vectorString"]) == v3["baseScore"], (path.name, vuln["cve"])
                seen += 1
    assert seen == 36
