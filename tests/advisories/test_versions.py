"""Version ordering per ecosystem, edge cases and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podium.advisories.components import find_component, release_line
from podium.advisories.versions import VersionError, compare, debian_upstream, driver_branch, version_key


@pytest.mark.parametrize(
    ("eco", "lower", "higher"),
    [
        ("nvidia-driver", "535.104.05", "535.104.12"),
        ("nvidia-driver", "535.104.05", "535.274.02"),
        ("nvidia-driver", "550.90.07", "580.95.05"),
        ("nvidia-driver", "539.56", "539.64"),
        ("nvidia-driver", "470.82", "470.103.01"),
        ("go", "v1.1.11", "1.1.12"),
        ("go", "1.2.0-rc.1", "1.2.0"),
        ("go", "1.2.0-rc.1", "1.2.0-rc.3"),
        ("go", "1.0.0-rc93", "1.0.0"),
        ("go", "1.2.0-alpha", "1.2.0-alpha.1"),
        ("go", "1.2.0-alpha.1", "1.2.0-alpha.beta"),
        ("go", "1.2.0-beta.2", "1.2.0-beta.11"),
        ("go", "1.9.9", "1.10.0"),
        ("semver", "v1.16.2", "v1.17"),
        ("debian", "22.05.8-4", "22.05.8-4+deb12u3"),
        ("debian", "1.0~rc1-1", "1.0-1"),
        ("debian", "1.0-1", "1:0.9-1"),
        ("debian", "0.5.15-4ubuntu0.1", "0.5.15-4ubuntu0.2"),
        ("debian", "23.02.3-2ubuntu1", "23.02.3-2ubuntu1+esm1"),
        ("debian", "1.0", "1.0-0"),
        ("generic", "12.4", "12.4.1"),
        ("generic", "12.5", "12.5.1"),
        ("generic", "2.9.2", "2.9.2-0.1.6"),
        ("generic", "24.10-1.1.4.0", "24.10-3.2.5.0"),
        ("generic", "3.3.9", "3.3.10"),
        ("generic", "22.05.11", "23.02.6"),
        ("generic", "10.24.09", "10.24.09a"),
    ],
)
def test_ordering(eco: str, lower: str, higher: str) -> None:
    assert compare(eco, lower, higher) == -1
    assert compare(eco, higher, lower) == 1


@pytest.mark.parametrize(
    ("eco", "a", "b"),
    [
        ("go", "v1.2.3", "1.2.3"),
        ("semver", "1.17", "1.17.0"),
        ("go", "1.2.3+build.5", "1.2.3"),
        ("debian", "0:1.2-1", "1.2-1"),
        ("nvidia-driver", "535.104.05", "535.104.5"),
    ],
)
def test_equal(eco: str, a: str, b: str) -> None:
    assert compare(eco, a, b) == 0


@pytest.mark.parametrize(
    ("eco", "bad"),
    [
        ("nvidia-driver", "abc"),
        ("nvidia-driver", "535.x"),
        ("go", "1.2.3.4.5"),
        ("debian", "x1.0"),
        ("generic", ""),
    ],
)
def test_unparsable(eco: str, bad: str) -> None:
    with pytest.raises(VersionError):
        version_key(eco, bad)


def test_driver_branch_and_lines() -> None:
    assert driver_branch("535.104.05") == "R535"
    assert release_line(find_component("driver"), "580.95.05") == "R580"
    assert release_line(find_component("containerd"), "1.7.13") == "1.7"
    assert release_line(find_component("kubelet"), "v1.30.2") == "1.30"
    assert release_line(find_component("slurm"), "23.02.6") == "23.02"
    assert release_line(find_component("ofed"), "24.10-1.1.4.0") == "24.10"
    assert release_line(find_component("connectx-firmware"), "28.39.5050") == "39"
    assert release_line(find_component("munge"), "0.5.15") is None
    assert debian_upstream("22.05.8-4+deb12u3") == "22.05.8"
    assert debian_upstream("1:0.5.15-4ubuntu0.1") == "0.5.15"


_ident = st.from_regex(r"[0-9A-Za-z]{1,6}", fullmatch=True).filter(
    lambda s: not (s.isdigit() and s.startswith("0") and s != "0")
)
_semver = st.builds(
    lambda a, b, c, pre: f"{a}.{b}.{c}" + (f"-{'.'.join(pre)}" if pre else ""),
    st.integers(0, 50),
    st.integers(0, 50),
    st.integers(0, 50),
    st.lists(_ident, max_size=3),
)


@given(_semver, _semver, _semver)
def test_semver_is_a_total_order(a: str, b: str, c: str) -> None:
    assert compare("go", a, b) == -compare("go", b, a)
    if compare("go", a, b) <= 0 and compare("go", b, c) <= 0:
        assert compare("go", a, c) <= 0


@given(_semver)
def test_prerelease_sorts_before_release(v: str) -> None:
    core = v.split("-")[0]
    if "-" in v:
        assert compare("go", v, core) == -1
    assert compare("go", "v" + v, v) == 0


_deb = st.from_regex(r"([0-9]:)?[0-9][0-9a-z.~+]{0,6}(-[0-9a-z.~+]{1,5})?", fullmatch=True)


@given(_deb, _deb)
def test_debian_antisymmetric(a: str, b: str) -> None:
    assert compare("debian", a, b) == -compare("debian", b, a)


@given(_deb)
def test_debian_tilde_sorts_before(v: str) -> None:
    upstream = v.split("-")[0]
    assert compare("debian", upstream + "~rc1", upstream) == -1
