"""CVSS v3.0/v3.1 base score from a vector string (FIRST specification), and score -> severity.

v4 vectors are not scored here: v4's base score needs the spec's full macro-vector lookup table.
A record with only a v4 vector uses the qualitative severity its source gives.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal

_AV = {"N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2}
_AC = {"L": 0.77, "H": 0.44}
_PR_UNCHANGED = {"N": 0.85, "L": 0.62, "H": 0.27}
_PR_CHANGED = {"N": 0.85, "L": 0.68, "H": 0.5}
_UI = {"N": 0.85, "R": 0.62}
_CIA = {"H": 0.56, "L": 0.22, "N": 0.0}


class CvssError(ValueError):
    """A CVSS vector that is not a valid v3.x base vector."""


def _roundup_31(value: float) -> float:
    # CVSS v3.1 Appendix A: round up to one decimal, robust against floating-point error.
    as_int = round(value * 100000)
    if as_int % 10000 == 0:
        return as_int / 100000.0
    return (math.floor(as_int / 10000) + 1) / 10.0


def _roundup_30(value: float) -> float:
    return float(Decimal(str(value)).quantize(Decimal("0.1"), rounding=ROUND_CEILING))


def cvss3_base_score(vector: str) -> float:
    """Base score of a 'CVSS:3.x/AV:../AC:../PR:../UI:../S:../C:../I:../A:..' vector."""
    parts = vector.strip().split("/")
    if not parts or parts[0] not in ("CVSS:3.0", "CVSS:3.1"):
        raise CvssError(f"not a CVSS v3 vector: {vector!r}")
    metrics: dict[str, str] = {}
    for p in parts[1:]:
        key, sep, val = p.partition(":")
        if not sep:
            raise CvssError(f"malformed metric {p!r} in {vector!r}")
        metrics[key] = val
    try:
        changed = {"U": False, "C": True}[metrics["S"]]
        av, ac, ui = _AV[metrics["AV"]], _AC[metrics["AC"]], _UI[metrics["UI"]]
        pr = (_PR_CHANGED if changed else _PR_UNCHANGED)[metrics["PR"]]
        c, i, a = _CIA[metrics["C"]], _CIA[metrics["I"]], _CIA[metrics["A"]]
    except KeyError as e:
        raise CvssError(f"missing or invalid base metric {e} in {vector!r}") from None
    iss = 1 - (1 - c) * (1 - i) * (1 - a)
    impact = 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02) ** 15 if changed else 6.42 * iss
    exploitability = 8.22 * av * ac * pr * ui
    if impact <= 0:
        return 0.0
    roundup = _roundup_31 if parts[0] == "CVSS:3.1" else _roundup_30
    raw = min(1.08 * (impact + exploitability), 10) if changed else min(impact + exploitability, 10)
    return roundup(raw)


def severity_from_score(score: float | None) -> str:
    """FIRST's qualitative bands (podium's one mapping, Severity.from_cvss); 'unknown' when there is no score."""
    from podium.models.common import Severity

    return "unknown" if score is None else Severity.from_cvss(score).value


SEVERITY_RANK = {"none": 0, "low": 1, "medium": 2, "high": 3, "critical": 4, "unknown": 3}
"""Ordering for --fail-on. 'unknown' (no score anywhere upstream) ranks with 'high' so that an
unscored advisory is never a silent pass under the default threshold."""
