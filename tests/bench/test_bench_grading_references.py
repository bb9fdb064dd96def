"""Grading against references: pass/warn/fail bands, and `unknown` (never pass) without a reference."""

from __future__ import annotations

import pytest

from podium.bench.grading import grade, verdict_for
from podium.bench.model import BenchResult, Reference
from podium.bench.references import find_reference, load_table, peak_bf16_tflops, sku_of
from podium.errors import InputError
from podium.models.common import Status


def _gemm(value: float, sku: str | None, dtype: str = "bf16") -> BenchResult:
    return BenchResult(
        benchmark="gemm", metric="tflops", value=value, unit="TFLOP/s", sku=sku, dtype=dtype, device="dev"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (800.0, Status.PASS),
        (794.5, Status.PASS),
        (754.775, Status.PASS),
        (754.0, Status.WARN),
        (715.05, Status.WARN),
        (715.0, Status.FAIL),
    ],
)
def test_h100_bf16_gemm_bands(value, expected):
    # H100 target 794.5 TFLOP/s, pass within 5% (>= 754.775), warn within 10% (>= 715.05)
    r = grade(_gemm(value, "H100"))
    assert r.verdict == expected
    assert r.reference is not None and r.reference.target == 794.5
    assert "ml-engineering" in r.reference.source


def test_lower_is_better_reference():
    ref = Reference(
        sku="X", benchmark="b", metric="latency_us", target=2.0, unit="us", higher_is_better=False, source="s"
    )
    assert verdict_for(2.05, ref) == Status.PASS
    assert verdict_for(2.2, ref) == Status.WARN
    assert verdict_for(2.4, ref) == Status.FAIL


def test_no_reference_is_unknown_with_reason_never_pass():
    r = grade(_gemm(1000.0, "H200"))  # no published MAMF for H200 in the table
    assert r.verdict == Status.UNKNOWN
    assert r.reason == "no reference for H200 gemm/tflops/bf16"
    r = grade(_gemm(1000.0, None))
    assert r.verdict == Status.UNKNOWN
    assert r.reason == "no reference: 'dev' is not a known GPU SKU"


def test_collective_reference_needs_matching_gpu_count():
    res = BenchResult(
        benchmark="collectives",
        metric="busbw_gbps",
        value=470.0,
        sku="H100",
        params={"op": "all_reduce", "gpus": 8},
    )
    assert grade(res).verdict == Status.PASS
    res16 = BenchResult(
        benchmark="collectives",
        metric="busbw_gbps",
        value=470.0,
        sku="H100",
        params={"op": "all_reduce", "gpus": 16},
    )
    assert grade(res16).verdict == Status.UNKNOWN
    assert grade(res16).reason == "no reference for H100 collectives/busbw_gbps/all_reduce with 16 GPUs"


def test_skipped_stays_skipped():
    r = BenchResult(benchmark="gemm", metric="tflops", verdict=Status.SKIPPED, reason="no NVIDIA GPU")
    assert grade(r).verdict == Status.SKIPPED


@pytest.mark.parametrize(
    ("name", "sku"),
    [
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA H200 NVL", None),
        ("NVIDIA B200", "B200"),
        ("NVIDIA GB200", "GB200"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("NVIDIA A100-SXM4-40GB", None),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD Instinct MI355X", "MI355X"),
        ("NVIDIA H100 PCIe", None),
        ("cpu: AMD EPYC", None),
    ],
)
def test_sku_detection(name, sku):
    assert sku_of(name) == sku


def test_every_reference_has_a_source_and_the_issue_numbers():
    table = load_table()
    assert all(e["source"] for e in table["references"])
    skus = set(table["skus"])
    assert {"H100", "H200", "B200", "B300", "GB200", "MI300X", "MI325X", "MI355X", "A100"} <= skus
    assert find_reference("B200", "gemm", "tflops", dtype="bf16")[0].target == 1745.0
    assert find_reference("MI300X", "gemm", "tflops", dtype="bf16")[0].target == 668.4
    assert find_reference("B200", "collectives", "busbw_gbps", op="all_reduce", gpus=8)[0].target == 840
    assert find_reference("NIC-400G", "ib_write_bw", "bw_gbps")[0].target == 390
    for sku in ("H100", "H200", "B200", "B300", "GB200", "MI300X", "MI325X", "MI355X", "A100"):
        ref, _ = find_reference(sku, "hbm", "copy_gbps")
        assert ref is not None and ref.source, sku
    assert peak_bf16_tflops("H100")[0] == 989


def test_reference_without_source_is_rejected():
    text = "skus: {}\nreferences:\n  - {sku: X, benchmark: gemm, metric: tflops, target: 1, unit: u}\n"
    with pytest.raises(InputError, match="has no source"):
        load_table(text)
