"""InferenceX agg_*.json rows: import real rows, export ours, round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.errors import ParseError
from podium.inference.inferencex import parse_rows, point_to_row, row_filename, row_system, row_to_point
from podium.inference.metrics import LevelMeasurement
from podium.inference.sweep import build_sweep_result
from podium.inference.system import SystemDescription

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

ROWS = sorted((FIXTURES / "inferencex").glob("agg_*.json"))


def test_real_rows_import_and_round_trip_unchanged():
    assert len(ROWS) == 3
    for path in ROWS:
        original = json.loads(path.read_text())
        (row,) = parse_rows(path.read_text(), str(path))
        assert row.as_dict() == original  # every key kept, including p99.9_* and std_*
        assert json.loads(json.dumps(row.as_dict())) == original


def test_row_to_point_values():
    path = next(p for p in ROWS if "conc64" in p.name)
    (row,) = parse_rows(path.read_text())
    p = row_to_point(row)
    assert p.concurrency == 64
    assert p.throughput_per_gpu.total == 234.47462632067425
    assert p.throughput_per_gpu.input == 208.4617128733839
    assert p.interactivity_inferencex.p50 == 3.3149489360725264
    assert p.ttft_ms.p99 == pytest.approx(25793.88037742116)
    assert p.e2e_ms.p50 == pytest.approx(281419.7772970656)
    # vLLM convention from the row: 26.0129 tok/s/GPU × 8 GPUs ÷ 64 users.
    assert p.interactivity_vllm.value == pytest.approx(26.012913447290337 * 8 / 64)
    s = row_system(row)
    assert (s.hw, s.precision, s.gpus, s.engine, s.isl, s.osl) == ("mi355x", "int4", 8, "vllm", 8192, 1024)


def test_older_rows_without_input_throughput():
    # Rows written by InferenceMAX's first process_result.py had no input_tput_per_gpu/isl/osl.
    data = json.loads(ROWS[0].read_text())
    for k in ("input_tput_per_gpu", "isl", "osl", "image", "is_multinode"):
        data.pop(k)
    (row,) = parse_rows(json.dumps(data))
    p = row_to_point(row)
    assert p.throughput_per_gpu.input == pytest.approx(55.62670336516291 - 27.678011491816765)


def test_export_then_import_round_trip():
    system = SystemDescription(
        hw="h200",
        tp=1,
        engine="transformers",
        engine_version="5.24.0",
        model="/cache/smollm2-hf",
        precision="bf16",
        isl=128,
        osl=32,
    )
    levels = [
        LevelMeasurement(
            concurrency=c,
            requests_ok=10,
            output_tokens_per_s=o,
            total_tokens_per_s=o * 5,
            input_tokens_per_s=o * 4,
            tpot_ms={"p50": t, "p90": t * 1.1, "p99": t * 1.2, "mean": t},
            ttft_ms={"p50": 100.0, "p90": 120.0, "p99": 150.0, "mean": 105.0},
            itl_ms={"p50": t, "mean": t},
            e2e_ms={"p50": 2000.0, "p99": 2500.0},
        )
        for c, o, t in ((1, 17.0, 55.0), (2, 31.0, 60.0), (4, 57.0, 62.0))
    ]
    result = build_sweep_result(system, levels)
    rows = [point_to_row(result.system, p) for p in result.points]
    assert list(rows[0])[:18] == [
        "hw",
        "conc",
        "image",
        "model",
        "infmax_model_prefix",
        "framework",
        "precision",
        "spec_decoding",
        "disagg",
        "isl",
        "osl",
        "is_multinode",
        "tp",
        "ep",
        "dp_attention",
        "tput_per_gpu",
        "output_tput_per_gpu",
        "input_tput_per_gpu",
    ]
    assert rows[0]["median_tpot"] == pytest.approx(0.055)
    assert rows[0]["median_intvty"] == pytest.approx(1000 / 55.0)
    assert rows[2]["p99_ttft"] == pytest.approx(0.150)
    back = parse_rows(json.dumps(rows))
    for orig, row in zip(result.points, back, strict=True):
        p = row_to_point(row)
        assert p.concurrency == orig.concurrency
        assert p.throughput_per_gpu == orig.throughput_per_gpu
        assert p.interactivity_inferencex.p50 == pytest.approx(orig.interactivity_inferencex.p50)
        assert p.interactivity_inferencex.p99 == pytest.approx(orig.interactivity_inferencex.p99)
        assert p.tpot_ms.p90 == pytest.approx(orig.tpot_ms.p90)
        assert p.interactivity_vllm.value == pytest.approx(orig.interactivity_vllm.value)
    assert row_filename(rows[0]) == "agg_smollm2-hf_isl128-osl32_bf16_transformers_tp1-ep1_conc1_h200.json"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "empty file"),
        ("{not json", "not JSON"),
        ('{"hw": "b200"}', "row 0: not an InferenceX row: conc: Field required"),
        ("[1, 2]", "row 0: expected an object, got int"),
        (
            '{"hw": "b200", "conc": 4, "precision": "fp4", "tput_per_gpu": "fast", "output_tput_per_gpu": 1}',
            "tput_per_gpu: Input should be a valid number",
        ),
    ],
)
def test_garbage_is_a_parse_error(text, problem):
    with pytest.raises(ParseError) as e:
        parse_rows(text, "x.json")
    assert problem in str(e.value)
    assert "\n" not in str(e.value)
