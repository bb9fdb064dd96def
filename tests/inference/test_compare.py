"""`podium inference compare`: JSON shape, values at a target, ratios, HTML report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.cli.main import main
from podium.inference.metrics import LevelMeasurement
from podium.inference.sweep import build_sweep_result
from podium.inference.system import SystemDescription

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def write_sweep(path, hw, precision, pairs, gpus=1, price=None, model="llama-70b"):
    """A sweep result whose points sit at the given (interactivity, tok/s/GPU) pairs."""
    system = SystemDescription(
        hw=hw,
        gpu_count=gpus,
        engine="vllm",
        model=model,
        precision=precision,
        isl=1024,
        osl=1024,
        price_usd_per_gpu_hour=price,
    )
    levels = [
        LevelMeasurement(
            concurrency=2**i,
            requests_ok=10,
            tpot_ms={"p50": 1000.0 / x, "mean": 1000.0 / x},
            output_tokens_per_s=y * gpus / 2,
            total_tokens_per_s=y * gpus,
        )
        for i, (x, y) in enumerate(pairs)
    ]
    path.write_text(build_sweep_result(system, levels).model_dump_json(indent=2))
    return str(path)


@pytest.fixture
def two_systems(tmp_path):
    h200 = write_sweep(tmp_path / "h200.json", "h200", "fp8", [(100, 20), (50, 100), (25, 200), (20, 150)])
    b200 = write_sweep(tmp_path / "b200.json", "b200", "fp8", [(100, 60), (50, 300), (25, 600)])
    return h200, b200


def run_json(capsys, *argv):
    code = main(["inference", "compare", *argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_compare_json_shape_and_values(capsys, two_systems):
    code, data = run_json(capsys, *two_systems, "--target-interactivity", "50")
    assert code == 0
    assert {"systems", "ratios", "target_interactivity", "warnings"} <= set(data)
    names = [s["name"] for s in data["systems"]]
    assert names == ["b200", "h200"]  # one precision among the inputs: names are the hw
    b200, h200 = data["systems"]
    assert set(b200) >= {"name", "pareto", "at_target"}
    for p in h200["pareto"]:
        assert set(p) >= {"interactivity", "throughput_per_gpu", "cost_per_million_tokens"}
    # (20, 150) is beaten by (25, 200): the front has 3 of h200's 4 points.
    assert [(p["interactivity"], p["throughput_per_gpu"]) for p in h200["pareto"]] == [
        (25.0, 200.0),
        (50.0, 100.0),
        (100.0, 20.0),
    ]
    assert h200["at_target"]["throughput_per_gpu"] == pytest.approx(100.0)
    # Default prices (SemiAnalysis table): h200 $1.41, b200 $1.95 per GPU-hour.
    assert h200["at_target"]["cost_per_million_tokens"] == pytest.approx(1.41 / (100 * 3600 / 1e6))
    assert b200["at_target"]["cost_per_million_tokens"] == pytest.approx(1.95 / (300 * 3600 / 1e6))
    assert h200["economics"]["price_source"] == "default-table"
    (ratio,) = data["ratios"]
    assert (ratio["a"], ratio["b"]) == ("b200", "h200")
    assert ratio["throughput_per_gpu_ratio"] == pytest.approx(3.0)
    assert ratio["cost_per_million_tokens_ratio"] == pytest.approx((1.95 / 300) / (1.41 / 100))


def test_between_points_outside_front_and_price_flag(capsys, two_systems):
    code, data = run_json(
        capsys,
        *two_systems,
        "--target-interactivity",
        "75",
        "--interpolation",
        "linear",
        "--price",
        "b200=2.5",
    )
    assert code == 0
    b200, h200 = data["systems"]
    assert h200["at_target"]["throughput_per_gpu"] == pytest.approx(60.0)
    assert b200["at_target"]["throughput_per_gpu"] == pytest.approx(180.0)
    assert b200["economics"]["price_source"] == "flag"
    assert b200["at_target"]["cost_per_million_tokens"] == pytest.approx(2.5 / (180 * 3600 / 1e6))
    _, data = run_json(capsys, *two_systems, "--target-interactivity", "200")
    for s in data["systems"]:
        assert s["at_target"] is None
        assert s["at_target_reason"] == "outside the front: interactivity spans 25 to 100"
    assert data["ratios"] == []


def test_names_carry_precision_when_several_and_mix_with_inferencex_rows(capsys, tmp_path, two_systems):
    fp4 = write_sweep(tmp_path / "b200fp4.json", "b200", "fp4", [(100, 90), (50, 450)])
    rows = sorted(str(p) for p in (FIXTURES / "inferencex").glob("agg_*8k1k*.json"))
    code, data = run_json(capsys, *two_systems, fp4, *rows, "--target-interactivity", "4")
    assert code == 0
    assert [s["name"] for s in data["systems"]] == ["b200-fp4", "b200-fp8", "h200-fp8", "mi355x-int4"]
    mi = data["systems"][-1]
    assert [p["concurrency"] for p in mi["pareto"]] == [64, 32]
    assert mi["economics"]["price_usd_per_gpu_hour"] == 1.48
    assert mi["at_target"]["throughput_per_gpu"] > 157.12165563281164
    assert any("mix" in w for w in data["warnings"])


def test_bad_inputs_exit_2_with_one_line(capsys, tmp_path, two_systems):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{]")
    assert main(["inference", "compare", str(garbage), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("podium: error: ") and "garbage.json" in err and "\n" not in err
    assert main(["inference", "compare", *two_systems, "--price", "nosuch=1", "--json"]) == 2
    assert "no such system" in capsys.readouterr().err
    assert main(["inference", "compare", *two_systems, "--price", "b200=free", "--json"]) == 2
    assert main(["inference", "compare", str(tmp_path / "missing.json")]) == 2


def test_html_report_is_self_contained_and_escaped(capsys, tmp_path, two_systems):
    hostile = write_sweep(tmp_path / "x.json", "<img src=x onerror=alert(1)>", "fp8", [(40, 50), (20, 80)])
    out = tmp_path / "report.html"
    code = main(
        ["inference", "compare", *two_systems, hostile, "--target-interactivity", "30", "--html", str(out)]
    )
    assert code == 0
    html = out.read_text()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    # Nothing is fetched: no scripts, stylesheets, images or fonts from anywhere.
    for needle in ("<script", "<link", "<img", "src=", "href=", "@import", "url("):
        assert needle not in html.replace("&lt;img src=x", "")
    assert html.count("<svg") == 2
    assert (
        "Throughput per GPU vs interactivity" in html and "Cost per million tokens vs interactivity" in html
    )
    assert "<polyline" in html


def test_chart_axes_cover_every_point():
    import re

    from podium.inference.charts import _nice_ticks, svg_chart
    from podium.inference.compare import ComparePoint, CompareSystem
    from podium.inference.system import EconomicsSource

    assert _nice_ticks(0, 25.06) == [0, 10, 20, 30]
    assert _nice_ticks(0, 0.47) == [0, 0.1, 0.2, 0.3, 0.4, 0.5]
    pts = [
        ComparePoint(
            interactivity=x, throughput_per_gpu=y, output_throughput_per_gpu=y, concurrency=1, source="s"
        )
        for x, y in ((12.7, 233.0), (23.9, 114.0))
    ]
    system = CompareSystem(
        name="cpu", hw="cpu", precision="bf16", economics=EconomicsSource(), points=pts, pareto=pts
    )
    svg = svg_chart([system], "throughput_per_gpu", "tok/s/GPU", "t")
    for cx, cy in re.findall(r'<circle cx="([\d.-]+)" cy="([\d.-]+)"', svg):
        assert 78 <= float(cx) <= 700 and 20 <= float(cy) <= 368
