"""The one version comparator of podium, per ecosystem.

Each ecosystem turns a version string into a sort key; two versions compare by their keys.

- ``nvidia-driver``: dotted integers (535.104.05, 581.42). The branch is the major: R535.
- ``semver`` / ``go``: SemVer 2.0 precedence; a leading ``v`` is accepted and missing minor/patch
  count as 0 (NVIDIA writes "v1.17"). Pre-releases sort before the release (1.2.0-rc.1 < 1.2.0).
- ``debian``: dpkg's ordering, epochs and ``~`` included (implemented here, no external tool).
- ``generic``: dpkg's upstream-part ordering on the whole string; fits dotted numbers with
  letters and dashes (CUDA 12.4.1, DOCA 2.9.2-0.1.6, MLNX_OFED 24.10-1.1.4.0, DCGM 3.3.9).
"""

from __future__ import annotations

import re
from functools import lru_cache

ECOSYSTEMS = ("nvidia-driver", "semver", "go", "debian", "generic")


class VersionError(ValueError):
    """A version string that its ecosystem cannot read."""


_DRIVER_RE = re.compile(r"^\d+(?:\.\d+){0,3}$")
_SEMVER_RE = re.compile(
    r"^v?(?P<major>\d+)(?:\.(?P<minor>\d+))?(?:\.(?P<patch>\d+))?"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+(?P<build>[0-9A-Za-z.-]+))?$"
)
_DEBIAN_RE = re.compile(r"^(?:(?P<epoch>\d+):)?(?P<rest>[0-9][A-Za-z0-9.+~:-]*)$")
_GENERIC_RE = re.compile(r"^v?[0-9][A-Za-z0-9.+~_-]*$")


def _driver_key(text: str) -> tuple:
    if not _DRIVER_RE.match(text):
        raise VersionError(f"not an NVIDIA driver version (digits and dots, e.g. 535.104.05): {text!r}")
    return tuple(int(p) for p in text.split("."))


def _semver_key(text: str) -> tuple:
    m = _SEMVER_RE.match(text)
    if not m:
        raise VersionError(f"not a semantic version (e.g. 1.7.13, v1.2.0-rc.1): {text!r}")
    core = (int(m["major"]), int(m["minor"] or 0), int(m["patch"] or 0))
    pre = m["pre"]
    if pre is None:
        # A release sorts after every pre-release of the same core version.
        return (*core, (1,))
    ids = []
    for part in pre.split("."):
        # Numeric identifiers sort before alphanumeric ones, numerically among themselves.
        ids.append((0, int(part), "") if part.isdigit() else (1, 0, part))
    return (*core, (0, *ids))


def _char_weight(c: str) -> int:
    # dpkg: '~' sorts before everything, even the end of the string; letters before other symbols.
    if c == "~":
        return -1
    if c.isalpha():
        return ord(c)
    return ord(c) + 256


_END_PAIR = ((0,), 0)


def _verrev_key(text: str) -> tuple:
    """dpkg's verrevcmp as a key: alternating (non-digit run, digit run) pairs, then an end marker.

    The end marker equals an empty pair, so a shorter string compares like dpkg's
    end-of-string (after '~', before anything else).
    """
    pairs = []
    i, n = 0, len(text)
    while i < n:
        j = i
        while j < n and not text[j].isdigit():
            j += 1
        lex = (*(_char_weight(c) for c in text[i:j]), 0)
        k = j
        while k < n and text[k].isdigit():
            k += 1
        num = int(text[j:k]) if k > j else 0
        pairs.append((lex, num))
        i = k
    pairs.append(_END_PAIR)
    return tuple(pairs)


def _debian_key(text: str) -> tuple:
    m = _DEBIAN_RE.match(text)
    if not m:
        raise VersionError(f"not a Debian version ([epoch:]upstream[-revision]): {text!r}")
    rest = m["rest"]
    upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "")
    return (int(m["epoch"] or 0), _verrev_key(upstream), _verrev_key(revision))


def _generic_key(text: str) -> tuple:
    if not _GENERIC_RE.match(text):
        raise VersionError(f"not a version (digits with dots, dashes or letters): {text!r}")
    if text[0] == "v":
        text = text[1:]
    return _verrev_key(text.lower())


_KEYS = {
    "nvidia-driver": _driver_key,
    "semver": _semver_key,
    "go": _semver_key,
    "debian": _debian_key,
    "generic": _generic_key,
}


@lru_cache(maxsize=65536)
def version_key(ecosystem: str, text: str) -> tuple:
    """Sort key of ``text`` in ``ecosystem``; raises VersionError when it does not parse."""
    try:
        fn = _KEYS[ecosystem]
    except KeyError:
        raise VersionError(
            f"unknown version ecosystem {ecosystem!r}; known: {', '.join(ECOSYSTEMS)}"
        ) from None
    return fn(text.strip())


def compare(ecosystem: str, a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` sorts before, equal to or after ``b`` in ``ecosystem``."""
    ka, kb = version_key(ecosystem, a), version_key(ecosystem, b)
    return (ka > kb) - (ka < kb)


def is_valid(ecosystem: str, text: str) -> bool:
    """Whether ``text`` parses as a version of ``ecosystem``."""
    try:
        version_key(ecosystem, text)
    except VersionError:
        return False
    return True


def driver_branch(version: str) -> str:
    """'R535' for an NVIDIA driver version such as 535.104.05."""
    return f"R{_driver_key(version.strip())[0]}"


def debian_upstream(version: str) -> str:
    """The upstream part of a Debian version: '22.05.8' for '22.05.8-4+deb12u3' (epoch dropped)."""
    v = version.strip()
    if ":" in v:
        v = v.split(":", 1)[1]
    return v.rsplit("-", 1)[0] if "-" in v else v
