"""busbw maths per nccl-tests PERFORMANCE.md, checked on real numbers, and a real gloo run."""

from __future__ import annotations

import pytest

from podium.bench.collectives import algbw_gbps, bus_factor, busbw_gbps

torch = pytest.importorskip("torch", reason="torch==2.13.0 is in scripts/test.sh; tests need the bench extra")


@pytest.mark.parametrize(
    ("op", "n", "factor"),
    [
        ("all_reduce", 8, 1.75),
        ("all_reduce", 16, 1.875),
        ("all_reduce", 2, 1.0),
        ("all_gather", 8, 0.875),
        ("reduce_scatter", 4, 0.75),
        ("alltoall", 8, 0.875),
        ("broadcast", 8, 1.0),
        ("all_reduce", 1, 0.0),
    ],
)
def test_bus_factor(op, n, factor):
    assert bus_factor(op, n) == factor


def test_unknown_op_is_an_error():
    with pytest.raises(ValueError):
        bus_factor("allreduce", 8)


def test_matches_real_nccl_tests_row():
    # ztan fixture, 16 ranks: 8589934592 B all_reduce in 47535 us -> algbw 180.71, busbw 338.82 (printed)
    assert round(algbw_gbps(8589934592, 47535e-6), 2) == 180.71
    assert (
        round(busbw_gbps("all_reduce", 8589934592, 47535e-6, 16), 2) == 338.83
    )  # nccl-tests rounds algbw first
    assert round(180.71 * bus_factor("all_reduce", 16), 2) == 338.83
    # 1 GiB all_reduce in 6759.0 us -> 158.86 / 297.86
    assert round(algbw_gbps(1073741824, 6759.0e-6), 2) == 158.86
    assert round(busbw_gbps("all_reduce", 1073741824, 6759.0e-6, 16), 2) == 297.86


def test_real_gloo_run_two_processes():
    from podium.bench import collectives

    results = collectives.run("smoke", local_world=2, ops=["all_reduce", "all_gather"])
    assert [r.params["op"] for r in results] == ["all_reduce", "all_gather"]
    for r in results:
        assert r.params["ranks"] == 2 and r.params["backend"] == "gloo"
        assert "gpus" not in r.params  # CPU ranks are not GPUs: no GPU reference applies
        for row in r.breakdown:
            t = row["time_us"] / 1e6
            assert row["algbw_gbps"] == pytest.approx(row["size_bytes"] / t / 1e9, rel=1e-3)
            assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * bus_factor(row["op"], 2), rel=1e-3)
        assert r.value == max(r.breakdown, key=lambda x: x["size_bytes"])["busbw_gbps"]
        assert r.value > 0
