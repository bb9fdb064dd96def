"""Grade a result against its reference: pass, warn or fail; no reference means ``unknown``."""

from __future__ import annotations

from podium.bench.model import BenchResult, Reference
from podium.bench.references import find_reference
from podium.models.common import Status


def verdict_for(value: float, ref: Reference) -> Status:
    """Pass within ``pass_within`` of target, warn within ``warn_within``, fail beyond.

    For higher-is-better metrics only the shortfall counts: beating the target passes.
    """
    if ref.target <= 0:
        return Status.UNKNOWN
    shortfall = (
        (ref.target - value) / ref.target if ref.higher_is_better else (value - ref.target) / ref.target
    )
    if shortfall <= ref.pass_within + 1e-12:
        return Status.PASS
    if shortfall <= ref.warn_within + 1e-12:
        return Status.WARN
    return Status.FAIL


def grade(result: BenchResult, reference: Reference | None = None, reason: str | None = None) -> BenchResult:
    """Return ``result`` with reference and verdict set. Results that did not run keep their status."""
    if result.verdict == Status.SKIPPED or result.value is None:
        if result.verdict not in (Status.SKIPPED, Status.FAIL):
            result.verdict = Status.UNKNOWN
            result.reason = result.reason or "no value measured"
        return result
    if reference is None and reason is None:
        reference, reason = find_reference(
            result.sku,
            result.benchmark,
            result.metric,
            dtype=result.dtype,
            op=result.params.get("op"),
            gpus=result.params.get("gpus"),
        )
    if reference is None and not result.sku:
        reason = f"no reference: '{result.device or 'this device'}' is not a known GPU SKU"
    if reference is None:
        result.reference = None
        result.verdict = Status.UNKNOWN
        result.reason = reason or "no reference"
        return result
    result.reference = reference
    result.verdict = verdict_for(result.value, reference)
    if result.verdict != Status.PASS:
        pct = 100.0 * result.value / reference.target
        result.reason = (
            f"{result.value:.4g} {result.unit} is {pct:.1f}% of the {reference.sku} reference "
            f"{reference.target:g} {reference.unit}"
        )
    return result
