"""End-to-end ``podium advisories`` against the shipped bundle (built from the full shared snapshot).

Expected values were read from the upstream files by hand, e.g. NVIDIA-5821 (May 2026, the newest driver
bulletin) lists Linux Tesla R595, R580 and R535 with fixes 595.71.05, 580.159.03 and 535.309.01 and no
longer lists R570 or R550; NVIDIA-5586 lists CVE-2024-0126 for Linux R565 GeForce (prior to 565.57.01)
but has no R565 Tesla row; go-vulndb GO-2024-2491 says runc 1.0.0-rc93..1.1.12.
"""

from __future__ import annotations

import json

import pytest

from podium.cli.main import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def query_json(capsys, *argv: str) -> tuple[int, dict]:
    code, out, _ = run(capsys, "advisories", "query", *argv, "--json")
    return code, json.loads(out)


def finding(result: dict, ident: str) -> dict:
    return next(f for f in result["findings"] if f["id"] == ident or ident in f["aliases"])


def test_driver_535_datacenter(capsys) -> None:
    code, r = query_json(capsys, "nvidia-driver", "535.104.05")
    assert code == 1  # high findings at the default --fail-on high
    assert set(r) >= {"component", "version", "findings", "no_fix_on_line", "upgrade_to"}
    assert (r["component"], r["version"], r["line"], r["product_line"]) == (
        "nvidia-driver",
        "535.104.05",
        "R535",
        "datacenter",
    )
    assert r["upgrade_to"] == "535.309.01"
    assert r["upgrade_line_change"] is False
    assert r["no_fix_on_line"] == []
    f = finding(r, "CVE-2026-24187")
    assert (f["fixed_in"], f["source"], f["severity"], f["cvss"]) == (
        "535.309.01",
        "NVIDIA-5821",
        "high",
        8.8,
    )
    assert finding(r, "CVE-2024-0126")["fixed_in"] == "535.216.01"  # NVIDIA-5586: prior to 535.216.01
    assert finding(r, "CVE-2025-23280")["fixed_in"] == "535.274.02"  # NVIDIA-5703
    assert set(f[k] for f in r["findings"] for k in ("source",)) <= {
        f"NVIDIA-{n}" for n in (5468, 5491, 5520, 5551, 5586, 5614, 5630, 5670, 5703, 5747, 5821)
    }


def test_driver_535_at_the_fix_is_clean(capsys) -> None:
    code, r = query_json(capsys, "driver", "535.309.01")
    assert (code, r["findings"], r["upgrade_to"]) == (0, [], None)


def test_unsupported_branch_470_moves_to_r535(capsys) -> None:
    code, r = query_json(capsys, "nvidia-driver", "470.82.01")
    assert code == 1
    assert r["line"] == "R470"
    # R470's last Linux rows are in NVIDIA-5551 (June 2024); every later bulletin's CVE is "no fix on R470".
    assert "CVE-2026-24187" in r["no_fix_on_line"]  # NVIDIA-5821
    assert "CVE-2024-0126" in r["no_fix_on_line"]  # NVIDIA-5586
    assert finding(r, "CVE-2026-24187")["fixed_in"] is None
    assert finding(r, "CVE-2022-28181")["fixed_in"] == "470.129.06"  # NVIDIA-5353, still on R470 then
    assert (r["upgrade_to"], r["upgrade_line_change"]) == ("535.309.01", True)
    assert any("R470 is not listed in" in n for n in r["notes"])


def test_branch_dropped_by_newer_bulletins_550(capsys) -> None:
    _, r = query_json(capsys, "nvidia-driver", "550.90.07")
    assert finding(r, "CVE-2024-0126")["fixed_in"] == "550.127.05"
    assert "CVE-2025-23280" in r["no_fix_on_line"]  # NVIDIA-5703 lists no R550
    # R570 is not in NVIDIA-5821 either, so the nearest supported newer branch is R580.
    assert (r["upgrade_to"], r["upgrade_line_change"]) == ("580.159.03", True)


def test_geforce_differs_from_datacenter(capsys) -> None:
    _, gf = query_json(capsys, "nvidia-driver", "565.50.01", "--product-line", "geforce")
    _, dc = query_json(capsys, "nvidia-driver", "565.50.01")
    assert finding(gf, "CVE-2024-0126")["fixed_in"] == "565.57.01"
    assert all("CVE-2024-0126" not in (f["id"], *f["aliases"]) for f in dc["findings"])
    assert (gf["product_line"], dc["product_line"]) == ("geforce", "datacenter")


def test_windows_rows_are_apart(capsys) -> None:
    _, r = query_json(capsys, "nvidia-driver", "539.56", "--platform", "windows")
    assert r["line"] == "R535"  # Windows 539.x is branch R535
    assert finding(r, "CVE-2025-33217")["fixed_in"] == "539.64"
    # Linux numbering does not apply: 539.56 on Linux would be branch R539, which no bulletin lists.
    _, lin = query_json(capsys, "nvidia-driver", "539.56")
    assert lin["line"] == "R539"


def test_runc(capsys) -> None:
    code, r = query_json(capsys, "runc", "1.1.11")
    assert code == 1
    f = finding(r, "CVE-2024-21626")
    assert (f["fixed_in"], f["severity"], f["cvss"]) == ("1.1.12", "high", 8.6)
    assert set(f["aliases"]) == {"GO-2024-2491", "GHSA-xr7r-f8xq-vfvv"}
    assert finding(r, "CVE-2024-45310")["fixed_in"] == "1.1.14"
    _, fixed = query_json(capsys, "runc", "v1.1.12")
    assert all(f["id"] != "CVE-2024-21626" for f in fixed["findings"])


def test_containerd(capsys) -> None:
    _, r = query_json(capsys, "containerd", "1.7.2")
    f = finding(r, "GHSA-7ww5-4wqc-m92c")  # GO-2023-2412 = GHSA-7ww5: 1.7.0 up to 1.7.11
    assert (f["fixed_in"], f["severity"]) == ("1.7.11", "medium")
    # The v1 module path github.com/containerd/containerd never got a fix for GO-2026-5064.
    assert finding(r, "GO-2026-5064")["fixed_in"] is None
    _, v2 = query_json(capsys, "containerd", "2.0.1")
    assert all(f["id"] != "GO-2026-5064" for f in v2["findings"])  # /v2 range starts at 2.1.0


def test_kubelet(capsys) -> None:
    _, r = query_json(capsys, "kubelet", "1.27.1")
    assert r["component"] == "kubernetes"
    assert r["line"] == "1.27"
    assert finding(r, "CVE-2023-3676")["fixed_in"] == "1.27.5"
    assert r["upgrade_line_change"] is False


def test_slurm_23_02_6(capsys) -> None:
    code, r = query_json(capsys, "slurm", "23.02.6")
    assert code == 1
    ids = {f["id"] for f in r["findings"]}
    assert {"CVE-2023-49933", "CVE-2023-49935", "CVE-2023-49936", "CVE-2023-49937", "CVE-2023-49938"} <= ids
    assert "CVE-2023-41914" not in ids  # fixed in 23.02.6
    assert "CVE-2024-48936" not in ids  # 24.05 only
    assert finding(r, "CVE-2023-49933")["fixed_in"] == "23.02.7"
    # CVE-2025-43904 was fixed in 23.11.11/24.05.8/24.11.5 only: nothing on 23.02.
    assert r["no_fix_on_line"] == ["CVE-2025-43904"]
    assert (r["upgrade_to"], r["upgrade_line_change"]) == ("23.11.11", True)


def test_slurm_distro_version_is_graded_upstream_with_a_note(capsys) -> None:
    _, r = query_json(capsys, "slurm", "22.05.8-4+deb12u3")
    assert finding(r, "CVE-2023-41914")["fixed_in"] == "22.05.10"
    assert any("backport" in n for n in r["notes"])


def test_munge(capsys) -> None:
    code, r = query_json(capsys, "munge", "0.5.15")
    assert code == 1
    f = finding(r, "CVE-2026-25506")
    assert (f["fixed_in"], f["severity"], f["cvss"]) == ("0.5.18", "high", 7.7)
    assert "GHSA-r9cr-jf4v-75gh" in f["aliases"]
    assert r["upgrade_to"] == "0.5.18"
    assert query_json(capsys, "munge", "0.5.18")[1]["findings"] == []
    assert query_json(capsys, "munge", "0.4.5")[1]["findings"] == []  # affected from 0.5 on


def test_fail_on_threshold(capsys) -> None:
    code, _, _ = run(capsys, "advisories", "query", "runc", "1.1.11", "--json", "--fail-on", "never")
    assert code == 0
    code, _, _ = run(capsys, "advisories", "query", "munge", "0.5.15", "--json", "--fail-on", "critical")
    assert code == 0  # CVSS 7.7 is high, below critical


def test_human_output_goes_to_stderr(capsys) -> None:
    code, out, err = run(capsys, "advisories", "query", "munge", "0.5.15")
    assert code == 1
    assert out == ""
    assert "CVE-2026-25506" in err and "upgrade to: 0.5.18" in err
    assert "days old" in err  # the shipped bundle is older than 30 days on this machine's clock


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["advisories", "query", "flux-capacitor", "1.0"], "unknown component 'flux-capacitor'; known:"),
        (["advisories", "query", "nvidia-driver", "latest"], "does not parse"),
        (
            ["advisories", "query", "nvidia-driver", "535.1", "--product-line", "tegra"],
            "unknown driver product line",
        ),
    ],
)
def test_bad_input_exits_2(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err


def test_corrupt_bundle_flag(capsys, tmp_path) -> None:
    bad = tmp_path / "bundle.json.gz"
    bad.write_bytes(b"\x1f\x8bnot gzip")
    code, _, err = run(capsys, "advisories", "query", "runc", "1.1.11", "--bundle", str(bad))
    assert code == 2
    assert str(bad) in err and "not a valid podium advisory bundle" in err


def test_info_json(capsys) -> None:
    code, out, err = run(capsys, "advisories", "info", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["version"] == "2026.08.21"
    assert info["unparsed"] == 26
    assert [s["name"] for s in info["sources"]] == [
        "nvidia-psirt",
        "curated",
        "go-vulndb",
        "ghsa",
        "kubernetes-cve-feed",
        "ubuntu-slurm",
    ]
    assert info["components"]["munge"] == 1
    assert "warning" in err and "days old" in err


def test_build_command(capsys, tmp_path) -> None:
    from pathlib import Path

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "advisories"
    out_file = tmp_path / "b.json.gz"
    code, out, _ = run(
        capsys,
        "advisories",
        "build",
        "--from",
        str(fixtures),
        "--out",
        str(out_file),
        "--json",
        "--commit",
        "ghsa=02a8b9a4f9d305f0e028ef58f0dcf28f55bf10ae",
    )
    assert code == 0
    summary = json.loads(out)
    assert summary["unparsed"] == 15
    assert {s["name"]: s["commit"] for s in summary["sources"]}[
        "ghsa"
    ] == "02a8b9a4f9d305f0e028ef58f0dcf28f55bf10ae"
    code, r = query_json(capsys, "munge", "0.5.17", "--bundle", str(out_file))
    assert r["upgrade_to"] == "0.5.18"
