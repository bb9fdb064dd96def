"""FLOP counting (GEMM, training step), straggler flagging, and the numerics check on CPU."""

from __future__ import annotations

import pytest

from podium.bench.gemm import flag_stragglers, gemm_flops, tflops
from podium.bench.model import BenchResult
from podium.bench.numerics import NumericsRecord, compare
from podium.bench.train_step import LlamaConfig
from podium.models.common import Status

torch = pytest.importorskip("torch", reason="torch==2.13.0 is in scripts/test.sh; tests need the bench extra")


def test_gemm_flop_count():
    assert gemm_flops(2, 3, 4) == 48
    assert gemm_flops(4096, 4096, 4096) == 137438953472
    assert tflops(4096, 4096, 4096, 0.1375) == pytest.approx(0.99955602525, rel=1e-9)


def test_cpu_gemm_sweep_reports_best_shape():
    from podium.bench.devices import local_devices
    from podium.bench.gemm import sweep

    dev = local_devices()[0]
    r = sweep(dev, "fp32", [(64, 64, 64), (128, 128, 128)], warmup=1, iters=3)
    assert r.value == max(row["mean_tflops"] for row in r.breakdown)
    assert r.params["best_shape"] in ("64x64x64", "128x128x128")
    assert len(r.breakdown) == 2


def test_stragglers_more_than_5_percent_below_node_median():
    vals = {0: 100.0, 1: 99.0, 2: 90.0, 3: 101.0}
    results = [
        BenchResult(
            benchmark="gemm",
            metric="tflops",
            value=v,
            host="n1",
            dtype="bf16",
            verdict=Status.PASS,
            params={"device_index": i},
        )
        for i, v in vals.items()
    ]
    results.append(
        BenchResult(
            benchmark="gemm", metric="tflops", value=50.0, host="n2", dtype="bf16", verdict=Status.PASS
        )
    )
    flag_stragglers(results)
    flagged = [r.params.get("device_index") for r in results if r.params.get("straggler")]
    assert flagged == [2]  # median 99.5: 90 is 9.5% below; 99 is 0.5% below
    assert results[2].verdict == Status.WARN
    assert results[2].reason == "9.5% below the node median 99.5 TFLOP/s"
    assert results[4].params.get("straggler") is None  # alone on its node


def test_llama_flops_formula_by_hand():
    cfg = LlamaConfig()  # L=4, d=256, f=688, V=4096, T=256
    assert cfg.matmul_params() == 4 * (4 * 256 * 256 + 3 * 256 * 688) + 256 * 4096 == 4210688
    assert cfg.flops_per_token() == 6 * 4210688 + 12 * 4 * 256 * 256 == 28409856


def test_model_matmul_params_match_formula_and_train_step_runs():
    from podium.bench.devices import local_devices
    from podium.bench.train_step import PROFILES, build_model, count_matmul_params, measure

    cfg = PROFILES["smoke"][0]
    model = build_model(torch, cfg)
    assert count_matmul_params(model) == cfg.matmul_params()
    r = measure(local_devices()[0], "smoke")
    assert r.metric == "tokens_per_s" and r.value > 0
    assert r.params["flops_per_token"] == cfg.flops_per_token()
    assert r.params["achieved_tflops"] == pytest.approx(r.value * cfg.flops_per_token() / 1e12, rel=1e-3)
    assert r.params["mfu"] is None and r.params["mfu_reason"].startswith("no peak FLOP/s known")


def test_numerics_catches_planted_corrupted_rank():
    from podium.bench.devices import local_devices
    from podium.bench.numerics import compute

    records = compute(local_devices(), corrupt_rank=2, repeat_cpu=4)
    results = compare(records)
    verdicts = {r.params["rank"]: r.verdict for r in results}
    assert verdicts == {0: Status.PASS, 1: Status.PASS, 2: Status.FAIL, 3: Status.PASS}
    bad = results[2]
    assert bad.value == 1.0 and bad.params["mismatches"] == ["gemm_chain_2"]
    assert "differs bitwise from 3 of 4" in bad.reason


def test_numerics_clean_run_passes_and_single_device_is_unknown():
    from podium.bench.devices import local_devices
    from podium.bench.numerics import compute

    assert all(r.verdict == Status.PASS for r in compare(compute(local_devices(), repeat_cpu=2)))
    single = compare(compute(local_devices(), repeat_cpu=1))
    assert [r.verdict for r in single] == [Status.UNKNOWN]


def _rec(rank: int, sku: str, digest: str, total: float) -> NumericsRecord:
    return NumericsRecord(
        rank=rank, host="h", device=f"dev-{sku}", sku=sku, digests={"out": digest}, summaries={"out": total}
    )


def test_numerics_across_skus_uses_tolerance():
    recs = [
        _rec(0, "H100", "a", 100.0),
        _rec(1, "H100", "a", 100.0),
        _rec(2, "MI300X", "z", 100.05),
        _rec(3, "MI300X", "z", 100.05),
    ]
    assert {r.verdict for r in compare(recs, rtol=1e-3)} == {
        Status.PASS
    }  # 5e-4 relative: same maths, other kernels
    recs[3] = _rec(3, "MI300X", "y", 101.0)
    out = {r.params["rank"]: r for r in compare(recs, rtol=1e-3)}
    assert (
        out[3].verdict == Status.FAIL and out[2].verdict == Status.FAIL
    )  # no majority between the two MI300X
    assert out[0].verdict == Status.PASS


def test_train_step_data_parallel_two_cpu_ranks():
    from podium.bench.devices import local_devices
    from podium.bench.train_step import PROFILES, run

    cfg, batch, steps = PROFILES["smoke"]
    single, ddp = run(local_devices(), "smoke", local_ranks=2)
    assert single.params["world"] == 1 and ddp.params["world"] == 2
    # tokens/s counts both ranks' batches; FLOPs per token do not change with data parallelism
    assert ddp.params["flops_per_token"] == single.params["flops_per_token"] == cfg.flops_per_token()
    assert (ddp.params["batch"], ddp.params["steps"]) == (batch, steps)  # per rank
    assert ddp.value > 0
