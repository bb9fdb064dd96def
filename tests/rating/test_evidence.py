"""Evidence ingestion: kinds detected from names, 'kind' keys and shapes; health verdicts honest."""

from __future__ import annotations

import json

import pytest

from podium.errors import ParseError
from podium.rating.evidence import detect_kind, load_evaluation


@pytest.mark.parametrize(
    ("name", "data", "kind"),
    [
        ("x.json", {"kind": "endpoint-bench", "levels": []}, "endpoint-bench"),
        ("endpoint-audit.json", {"checks": []}, "endpoint-audit"),
        ("checks.json", {"checks": []}, "isolation"),
        ("x.json", {"podium_version": "0.1.0", "advisory_bundle": {}, "checks": []}, "audit"),
        ("x.json", {"checks": []}, "isolation"),
        ("x.json", [], "isolation"),
        ("x.json", [{"id": "ib.mkey", "status": "pass", "title": "t"}], "isolation"),
        ("steps.json", [{"name": "audit", "state": "ran"}], None),
        ("x.json", {"tool_version": "0.1.0", "nodes": []}, "health"),
        ("x.json", {"results": []}, "bench"),
        ("x.json", {"levels": []}, "endpoint-bench"),
        ("x.json", {"something": 1}, None),
    ],
)
def test_detect_kind(name, data, kind):
    assert detect_kind(name, data) == kind


def _node(verdict: str, gpu_status: str) -> dict:
    return {
        "host": "n1",
        "verdict": verdict,
        "action": "none",
        "checks": [
            {"id": "gpu.ecc", "title": "ECC", "status": gpu_status, "reason": "no NVIDIA GPU"},
            {"id": "kernel.xid", "title": "No Xid", "status": "pass"},
        ],
    }


def test_health_pass_without_any_gpu_check_is_unknown(tmp_path):
    (tmp_path / "health.json").write_text(
        json.dumps({"tool_version": "0.1.0", "nodes": [_node("pass", "skipped")]})
    )
    ev = load_evaluation(tmp_path)
    node = next(c.result for c in ev.checks if c.result.id == "health.node")
    assert (node.status.value, node.reason) == (
        "unknown",
        "health passed, but no GPU check ran on this node (no GPU visible?)",
    )
    (tmp_path / "health.json").write_text(
        json.dumps({"tool_version": "0.1.0", "nodes": [_node("pass", "pass")]})
    )
    node = next(c.result for c in load_evaluation(tmp_path).checks if c.result.id == "health.node")
    assert node.status.value == "pass"


def test_unrecognised_json_is_noted_not_scored(tmp_path):
    (tmp_path / "notes.json").write_text('{"hello": "world"}')
    ev = load_evaluation(tmp_path)
    assert ev.sources == [] and any("notes.json: not recognised" in n for n in ev.notes)
    (tmp_path / "bench.json").write_text('{"results": [{"benchmark": "gemm"}]}')
    with pytest.raises(ParseError, match=r"bench\.json: /results/0: a result needs 'benchmark' and 'metric'"):
        load_evaluation(tmp_path)


def test_endpoint_audit_results_are_checks():
    from pathlib import Path

    ev = load_evaluation(Path(__file__).resolve().parents[2] / "examples" / "providers" / "borealis")
    ep = [c for c in ev.checks if c.kind == "endpoint-audit"]
    assert [(c.result.id, c.result.status.value, c.pointer) for c in ep] == [
        ("endpoint.tls", "pass", "/results/0"),
        ("endpoint.auth-required", "pass", "/results/1"),
        ("endpoint.metrics-exposed", "warn", "/results/2"),
    ]
