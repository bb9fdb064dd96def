"""Pure parts: SSE decoding, metric definitions, datasets, token counts, cost, arrivals."""

from __future__ import annotations

import json

import pytest
from tests.conftest import FIXTURES

from podium.endpoint.cost import cost_basis, estimate_cost, parse_price_table, price_table
from podium.endpoint.datasets import load_dataset, random_prompts
from podium.endpoint.loadgen import arrival_offsets
from podium.endpoint.metrics import latency_stats, meets_slos, percentile, tpot_ms, ttft_and_itl
from podium.endpoint.models import EndpointBenchConfig, RequestRecord
from podium.endpoint.sse import decode_stream, failure_kind_for_status
from podium.endpoint.tokens import TokenCounter, output_tokens_from
from podium.errors import InputError


def _events(text: str, t0: int = 1000, step: int = 10) -> list[tuple[int, bytes]]:
    blocks = [b for b in text.encode().split(b"\n\n") if b.strip()]
    return [(t0 + i * step, b) for i, b in enumerate(blocks)]


def test_decode_real_transformers_serve_stream():
    raw = (FIXTURES / "endpoint" / "transformers-serve-chat.sse").read_text()
    d = decode_stream(_events(raw), "chat")
    assert d.error_kind is None
    assert d.role_only_chunks == 1
    assert [c.text for c in d.chunks] == ["Hello", " there", "!"]
    # The role-only chunk at t=1000 is skipped: the first content chunk arrived at t=1010.
    assert [c.t_ns for c in d.chunks] == [1010, 1020, 1030]
    assert d.usage == {"completion_tokens": 3, "prompt_tokens": 31, "total_tokens": 34}
    assert d.finish_reason == "length" and d.done is False  # this server sends no [DONE]
    assert d.response_id == "cba5a2db-c05c-4ee0-ae3d-735dc0a71b2d"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: not json\n\n', "malformed_sse"),
        ('data: {"choices":[{"delta":{"content":"a"}}]}\n\n', "stream_cut"),
        ('data: {"choices":[{"delta":{"role":"assistant"}}]}\n\ndata: [DONE]\n\n', "empty_response"),
        ('data: {"error":{"message":"overloaded"}}\n\n', "error_event"),
        ("data: [1, 2]\n\n", "malformed_sse"),
        ("garbage line\n\n", "malformed_sse"),
    ],
)
def test_decode_failures(text, kind):
    assert decode_stream(_events(text), "chat").error_kind == kind


def test_decode_reasoning_multiline_comments_and_completions():
    text = (
        ": keep-alive\n\n"
        'data: {"choices":[{"delta":{"reasoning_content":"think"}}]}\n\n'
        'data: {"choices":\ndata: [{"delta":{"content":"x"},"finish_reason":"stop"}]}\n\n'
        "data: [DONE]\n\n"
    )
    d = decode_stream(_events(text), "chat")
    assert d.error_kind is None and [c.text for c in d.chunks] == ["think", "x"] and d.done
    comp = 'data: {"choices":[{"text":"hi","finish_reason":"length"}]}\n\n'
    assert decode_stream(_events(comp), "completions").text == "hi"


def test_status_kinds():
    assert [failure_kind_for_status(s) for s in (200, 401, 402, 403, 404, 429, 400, 422, 500, 503)] == [
        None, "http_401", "http_402", "http_403", "http_404", "http_429", "http_4xx", "http_4xx", "http_5xx", "http_5xx",
    ]  # fmt: skip


def test_percentiles_match_numpy_linear():
    v = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert percentile(v, 50) == 3.0
    assert percentile(v, 90) == pytest.approx(7.6)
    assert percentile(v, 99) == pytest.approx(9.76)
    s = latency_stats(v)
    assert (s.mean, s.min, s.max, s.count) == (4.0, 1.0, 10.0, 5)
    assert latency_stats([]).p50 is None


def test_ttft_itl_tpot_definitions():
    ttft, itl = ttft_and_itl(0, [5_000_000, 7_000_000, 10_000_000])
    assert ttft == 5.0 and itl == [2.0, 3.0]
    assert tpot_ms(10.0, 5.0, 3) == 2.5
    assert tpot_ms(10.0, 5.0, 1) is None
    r = RequestRecord(
        level=0,
        index=0,
        ok=True,
        sent_unix_ns=0,
        scheduled_offset_s=0,
        queue_ms=0,
        ttft_ms=90,
        tpot_ms=30,
        e2e_ms=500,
    )
    assert (
        meets_slos(r, 100, 40, None)
        and not meets_slos(r, 80, None, None)
        and not meets_slos(r, None, None, 400)
    )


def test_random_prompts_reproducible_with_range():
    a = random_prompts(20, 100, 50, 0.5, seed=3)
    b = random_prompts(20, 100, 50, 0.5, seed=3)
    assert [x.prompt for x in a] == [x.prompt for x in b]
    assert all(50 <= x.input_tokens_estimate <= 150 and 25 <= x.output_tokens <= 75 for x in a)
    assert len({x.prompt.split()[0] for x in a}) == 20  # unique prefixes: no prefix-cache help
    assert len(random_prompts(1, 64, 8, 0, 0)[0].prompt.split()) == 64


def test_jsonl_and_sharegpt(tmp_path):
    j = tmp_path / "p.jsonl"
    j.write_text(
        '{"prompt": "hi", "output_tokens": 7}\n\n{"messages": [{"role": "user", "content": "yo"}]}\n'
    )
    items = load_dataset(str(j), "auto", 4, 0, 9, 0, seed=1)
    assert len(items) == 4 and {i.output_tokens for i in items} == {7, 9}
    sg = tmp_path / "sg.json"
    sg.write_text(
        json.dumps(
            [
                {
                    "conversations": [
                        {"from": "human", "value": "question"},
                        {"from": "gpt", "value": "a" * 40},
                    ]
                },
                {"conversations": []},
            ]
        )
    )
    items = load_dataset(str(sg), "auto", 2, 0, 100, 0, seed=1)
    assert [i.prompt for i in items] == ["question", "question"] and items[0].output_tokens == 10
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(InputError, match="line 1 is not JSON"):
        load_dataset(str(bad), "jsonl", 1, 0, 1, 0, 0)
    with pytest.raises(InputError, match="dataset file not found"):
        load_dataset(str(tmp_path / "missing.jsonl"), "auto", 1, 0, 1, 0, 0)


def test_token_sources():
    c = TokenCounter(None)
    assert c.source == "chars-estimate"
    assert output_tokens_from({"completion_tokens": 12}, "whatever", c).source == "usage"
    t = output_tokens_from(None, "abcdefgh", c)
    assert (t.tokens, t.source) == (2, "chars-estimate")


def test_local_tokenizer_counts(tmp_path):
    hf = __import__("pathlib").Path(__file__).resolve().parents[2] / ".cache" / "smollm2-hf"
    if not (hf / "tokenizer.json").exists():
        pytest.skip("no local SmolLM2 tokenizer (scripts/ci/llm-server.sh prepare makes one)")
    pytest.importorskip("transformers")
    c = TokenCounter(str(hf))
    assert c.source == "tokenizer"
    assert c.count("Hello there!").tokens == 3


def test_arrivals_seeded_and_rate():
    a = arrival_offsets(10.0, 2000, "poisson", 1.0, seed=5)
    assert a == arrival_offsets(10.0, 2000, "poisson", 1.0, seed=5)
    assert a[-1] / 2000 == pytest.approx(0.1, rel=0.1)
    g = arrival_offsets(10.0, 2000, "gamma", 0.25, seed=5)
    gaps = [y - x for x, y in zip([0.0, *g], g, strict=False)]
    mean = sum(gaps) / len(gaps)
    cv = (sum((x - mean) ** 2 for x in gaps) / len(gaps)) ** 0.5 / mean
    assert mean == pytest.approx(0.1, rel=0.15) and cv > 1.5  # burstier than Poisson (cv 1)


def test_price_table_and_cost():
    table = price_table()
    assert all(e.source for e in table.entries)
    cfg = EndpointBenchConfig(base_url="http://x/v1", model="m", price="openai/gpt-4o-mini")
    est = estimate_cost(cost_basis(cfg), 1_000_000, 500_000, 10.0)
    assert est.usd == pytest.approx(0.15 + 0.30)
    assert est.blended_usd_per_m_tokens == pytest.approx(0.45 / 1.5)
    gpu = EndpointBenchConfig(base_url="http://x/v1", model="m", gpu_hour_usd=3.6, gpu_count=2)
    est = estimate_cost(cost_basis(gpu), 1000, 1000, 60.0)
    assert est.usd == pytest.approx(2 * 60 / 3600 * 3.6)
    assert cost_basis(EndpointBenchConfig(base_url="http://x/v1", model="m")).basis == "none"
    with pytest.raises(InputError, match="no price entry 'nope/x'"):
        cost_basis(EndpointBenchConfig(base_url="http://x/v1", model="m", price="nope/x"))
    with pytest.raises(InputError, match="invalid price table"):
        parse_price_table(
            "schema_version: 1\nupdated: x\nentries:\n  - {key: a, provider: p, model: m, source: s}\n"
        )
