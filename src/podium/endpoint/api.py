"""Public entry point of the load generator: :func:`run_endpoint_bench`.

Other podium parts (``podium inference sweep``) call this; its signature and the report model
(podium.endpoint.models.EndpointBenchReport) are kept stable.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import time
from collections.abc import Callable

from podium import __version__
from podium.endpoint.cost import cost_basis, estimate_cost
from podium.endpoint.datasets import load_dataset
from podium.endpoint.loadgen import LoadGenerator
from podium.endpoint.metrics import combined_source, failure_summary, level_metrics, meets_slos
from podium.endpoint.models import BenchLevel, EndpointBenchConfig, EndpointBenchReport, RequestRecord
from podium.endpoint.tokens import TokenCounter
from podium.errors import InputError
from podium.models.common import Provenance, utcnow
from podium.runs import RunDirectory
from podium.secrets import redact, register_secret

# Called with (level label, requests done, requests planned or None for duration-bound levels).
ProgressCallback = Callable[[str, int, "int | None"], None]

# Enough distinct prompts for duration-bound levels; they are cycled past this.
_DURATION_POOL = 4096


def read_api_key(api_key_env: str | None) -> str | None:
    """The API key from the named environment variable, registered for redaction."""
    if not api_key_env:
        return None
    key = os.environ.get(api_key_env)
    if not key:
        raise InputError("--api-key-env", f"environment variable {api_key_env} is not set or empty")
    register_secret(key)
    return key


def summarise_level(
    index: int,
    records: list[RequestRecord],
    duration_s: float,
    config: EndpointBenchConfig,
    concurrency: int | None,
    rate: float | None,
) -> BenchLevel:
    """Aggregate one level's measured (non-warm-up) records."""
    measured = [r for r in records if not r.warmup]
    ok = [r for r in measured if r.ok]
    out_tok = sum(r.output_tokens or 0 for r in ok)
    in_tok = sum(r.input_tokens or 0 for r in ok)
    dur = max(duration_s, 1e-9)
    slos = (config.slo_ttft_ms, config.slo_tpot_ms, config.slo_e2e_ms)
    good = None
    if any(s is not None for s in slos):
        good = sum(1 for r in measured if meets_slos(r, *slos))
    level = BenchLevel(
        index=index,
        concurrency=concurrency,
        rate=rate,
        requests_ok=len(ok),
        requests_failed=failure_summary(measured),
        requests_total=len(measured),
        duration_s=round(duration_s, 6),
        metrics=level_metrics(measured),
        output_tokens_per_s=round(out_tok / dur, 4),
        input_tokens_per_s=round(in_tok / dur, 4),
        total_tokens_per_s=round((in_tok + out_tok) / dur, 4),
        requests_per_s=round(len(ok) / dur, 4),
        output_tokens_total=out_tok,
        input_tokens_total=in_tok,
        goodput_requests_per_s=round(good / dur, 4) if good is not None else None,
        goodput_fraction=round(good / len(measured), 4) if good is not None and measured else None,
        token_count_source=combined_source(r.token_count_source for r in ok),  # type: ignore[arg-type]
        error_rate=round((len(measured) - len(ok)) / len(measured), 4) if measured else 0.0,
    )
    level.cost = estimate_cost(cost_basis(config), in_tok, out_tok, duration_s)
    return level


def _planned_levels(config: EndpointBenchConfig) -> list[tuple[int | None, float | None]]:
    rates = config.rate_levels()
    if rates:
        return [(config.max_concurrency, r) for r in rates]
    if config.sweep:
        levels, c = [], config.concurrency[0]
        while c <= config.sweep_max_concurrency:
            levels.append((c, None))
            c *= 2
        return levels
    return [(c, None) for c in config.concurrency]


async def _run(
    config: EndpointBenchConfig,
    api_key: str | None,
    run: RunDirectory | None,
    progress: ProgressCallback | None,
) -> EndpointBenchReport:
    counter = TokenCounter(config.tokenizer)
    gen = LoadGenerator(config, api_key, counter)
    per_level = (config.requests or _DURATION_POOL) + config.warmup
    if config.duration_s and not config.requests:
        per_level = _DURATION_POOL + config.warmup
    report = EndpointBenchReport(base_url=config.base_url, model=config.model, api=config.api, config=config)
    req_file = open(run.path / "requests.jsonl", "a", encoding="utf-8") if run else None  # noqa: SIM115
    best_tps = 0.0
    try:
        for idx, (conc, rate) in enumerate(_planned_levels(config)):
            items = load_dataset(
                config.dataset,
                config.dataset_format,
                per_level,
                config.input_tokens,
                config.output_tokens,
                config.range_ratio,
                config.seed + idx,
            )
            label = f"rate {rate:g}/s" if rate is not None else f"concurrency {conc}"
            if run:
                run.log.info("level %d (%s) started", idx, label)
            gen.records = []
            # No cyclic GC pauses while requests are timed (objects of a level are freed by
            # reference counting; a full collection runs between levels).
            gc.collect()
            gc.disable()
            if rate is not None:
                dur = await gen.open_loop(
                    idx,
                    items,
                    rate,
                    conc or 0,
                    config.warmup,
                    config.duration_s,
                    config.seed + idx,
                    progress,
                    label,
                )
            else:
                dur = await gen.closed_loop(
                    idx, items, conc, config.warmup, config.duration_s, progress, label
                )
            gc.enable()
            gen.flush()
            records = sorted(gen.records, key=lambda r: (r.warmup is False, r.index))
            if req_file:
                for r in records:
                    req_file.write(redact(r.model_dump_json()) + "\n")
                req_file.flush()
            level = summarise_level(idx, records, dur, config, conc, rate)
            report.levels.append(level)
            if run:
                run.log.info(
                    "level %d done: ok=%d failed=%d out_tok/s=%.1f",
                    idx,
                    level.requests_ok,
                    level.requests_failed.count,
                    level.output_tokens_per_s,
                )
            if config.sweep and rate is None:
                if level.error_rate > config.max_error_rate:
                    report.stopped_because = f"error rate {level.error_rate:.1%} above {config.max_error_rate:.1%} at concurrency {conc}"
                    break
                if best_tps and level.output_tokens_per_s < best_tps * (1 + config.saturation_gain):
                    report.stopped_because = (
                        f"saturated: output tok/s {level.output_tokens_per_s:.1f} at concurrency {conc} is less than "
                        f"{config.saturation_gain:.0%} above {best_tps:.1f}"
                    )
                    break
                best_tps = max(best_tps, level.output_tokens_per_s)
        else:
            if config.sweep:
                report.stopped_because = f"reached --sweep-max-concurrency {config.sweep_max_concurrency}"
    finally:
        gc.enable()
        if req_file:
            req_file.close()
    return report


def run_endpoint_bench(
    config: EndpointBenchConfig, run: RunDirectory | None = None, progress: ProgressCallback | None = None
) -> EndpointBenchReport:
    """Load the endpoint as ``config`` says and return the report (one entry in ``levels`` per level).

    With ``run``, per-request records go to ``<run>/requests.jsonl`` and the report to
    ``<run>/report.json``. The API key is read from ``config.api_key_env`` and never written.
    """
    api_key = read_api_key(config.api_key_env)
    started = utcnow()
    t0 = time.perf_counter()
    report = asyncio.run(_run(config, api_key, run, progress))
    report.started_at, report.finished_at = started, utcnow()
    sources = [lv.token_count_source for lv in report.levels if lv.requests_ok]
    report.token_count_source = combined_source(sources)  # type: ignore[assignment]
    in_tok = sum(lv.input_tokens_total for lv in report.levels)
    out_tok = sum(lv.output_tokens_total for lv in report.levels)
    report.cost = estimate_cost(
        cost_basis(config), in_tok, out_tok, sum(lv.duration_s for lv in report.levels)
    )
    report.provenance = Provenance(
        command=f"podium endpoint bench --base-url {config.base_url} --model {config.model} --api {config.api}",
        host=socket.gethostname(),
        collected_at=started,
        tool_version=f"podium {__version__}",
        raw_output="requests.jsonl" if run else None,
    )
    if run:
        report.run_id, report.run_dir = run.record.run_id, str(run.path)
        run.write_json("report.json", report)
        run.log.info("bench finished in %.1fs", time.perf_counter() - t0)
    return report


def report_json(report: EndpointBenchReport) -> str:
    """The report as redacted JSON text."""
    return redact(json.dumps(report.model_dump(mode="json"), indent=2))
