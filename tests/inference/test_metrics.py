"""Per-point formulas, checked against InferenceX's published arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.inference.metrics import (
    LevelMeasurement,
    compute_point,
    cost_per_million_tokens,
    interactivity_from_tpot_ms,
    joules_per_token,
    level_from_report_level,
    tokens_per_megawatt,
)
from podium.inference.system import SystemDescription, resolve_economics

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_b200_cost_matches_inferencex_arithmetic():
    # InferenceX: B200 at $1.95/GPU-hr and 5,857 tok/s/GPU gives about $0.092 per million tokens.
    cost = cost_per_million_tokens(1.95, 5857)
    assert round(cost, 3) == 0.092
    assert cost == pytest.approx(1.95 / (5857 * 3600 / 1e6))
    assert cost == pytest.approx(0.0924819, abs=1e-7)


def test_power_formulas():
    # tok/s/MW = tput × 1000 / kW per GPU; J/token = kW × 1000 / tput (B200 all-in 2.17 kW).
    assert tokens_per_megawatt(5857, 2.17) == pytest.approx(2_699_078.34, abs=0.01)
    assert joules_per_token(2.17, 5857) == pytest.approx(0.370497, abs=1e-6)
    assert cost_per_million_tokens(1.95, 0) is None
    assert joules_per_token(2.17, 0) is None


def test_default_table_holds_the_b200_price():
    econ = resolve_economics("B200")
    assert (econ.price_usd_per_gpu_hour, econ.price_source) == (1.95, "default-table")
    assert (econ.power_kw_per_gpu, econ.power_source) == (2.17, "default-table")
    assert "SemiAnalysis" in econ.reference
    own = resolve_economics("b200", system_price=2.5, flag_power=1.0)
    assert (own.price_usd_per_gpu_hour, own.price_source, own.power_kw_per_gpu, own.power_source) == (
        2.5,
        "system",
        1.0,
        "flag",
    )
    assert resolve_economics("cpu").price_source == "none"


def test_interactivity_matches_inferencex_rows():
    row = json.loads(
        (
            FIXTURES
            / "inferencex"
            / "agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json"
        ).read_text()
    )
    for stat in ("mean", "median", "p90", "p99"):
        assert interactivity_from_tpot_ms(row[f"{stat}_tpot"] * 1000) == pytest.approx(
            row[f"{stat}_intvty"], rel=1e-9
        )
    assert interactivity_from_tpot_ms(0) is None
    assert interactivity_from_tpot_ms(None) is None


def test_compute_point_both_conventions_per_gpu_and_cost():
    system = SystemDescription(
        hw="b200",
        tp=4,
        engine="vllm",
        model="m",
        precision="fp8",
        isl=1024,
        osl=1024,
        price_usd_per_gpu_hour=2.0,
        power_kw_per_gpu=2.0,
    )
    level = LevelMeasurement(
        concurrency=8,
        requests_ok=80,
        tpot_ms={"p50": 20.0, "p90": 25.0, "p99": 40.0, "mean": 21.0},
        ttft_ms={"p50": 100.0},
        output_tokens_per_s=400.0,
        total_tokens_per_s=800.0,
    )
    p = compute_point(system, level, resolve_economics("b200", 2.0, 2.0))
    assert (p.throughput_per_gpu.total, p.throughput_per_gpu.output, p.throughput_per_gpu.input) == (
        200,
        100,
        100,
    )
    assert p.interactivity_inferencex.p50 == 50.0
    assert p.interactivity_inferencex.p99 == 25.0  # the slow tail: 1000 / p99 TPOT
    assert p.interactivity_vllm.value == 50.0  # 400 tok/s ÷ 8 users
    assert p.interactivity_inferencex.convention.startswith("inferencex")
    assert p.interactivity_vllm.convention.startswith("vllm")
    assert p.cost_per_million_tokens.total == pytest.approx(2.0 / (200 * 3600 / 1e6))
    assert p.cost_per_million_tokens.output == pytest.approx(2.0 / (100 * 3600 / 1e6))
    assert p.tokens_per_mw.total == pytest.approx(100_000.0)
    no_price = compute_point(
        system.model_copy(update={"hw": "cpu", "price_usd_per_gpu_hour": None}),
        level,
        resolve_economics("cpu"),
    )
    assert no_price.cost_per_million_tokens.total is None
    assert "no price" in no_price.cost_per_million_tokens.reason


def test_gpu_count_defaults_to_layout():
    s = SystemDescription(
        hw="H200", tp=2, pp=2, dp=2, engine="vllm", model="m", precision="FP8", isl=1, osl=1
    )
    assert (s.gpus, s.hw, s.precision) == (8, "h200", "fp8")


def test_level_from_endpoint_report_shape():
    # The documented shape of one `podium endpoint bench --json` level.
    level = {
        "index": 0,
        "concurrency": 4,
        "requests_ok": 9,
        "requests_failed": {"count": 1, "reasons": {"timeout": 1}, "examples": []},
        "metrics": {
            k: {"p50": 10.0, "p90": 11.0, "p99": 12.0, "mean": 10.5}
            for k in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms")
        },
        "output_tokens_per_s": 57.0,
        "input_tokens_per_s": 20.0,
        "total_tokens_per_s": 77.0,
        "token_count_source": "usage",
    }
    m = level_from_report_level(level)
    assert (m.concurrency, m.requests_ok, m.requests_failed) == (4, 9, 1)
    assert m.tpot_ms.p50 == 10.0 and m.input_tokens_per_s == 20.0 and m.token_count_source == "usage"
