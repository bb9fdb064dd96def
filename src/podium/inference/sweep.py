"""``podium inference sweep``: a concurrency sweep through the ``podium endpoint`` load generator.

Each concurrency level is one call of :func:`podium.endpoint.api.run_endpoint_bench` with its own
sub-run directory, ``<run>/levels/conc-<N>/``, which keeps that level's raw per-request records
(``requests.jsonl``) and report. Levels are independent, so the request count can grow with the
concurrency like InferenceX's protocol (``--num-prompts = 10 × concurrency``).

Turning measured levels into points (:func:`build_sweep_result`) is pure and tested apart.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from podium import __version__
from podium.errors import UsageError
from podium.inference.metrics import LevelMeasurement, compute_point, level_from_report_level
from podium.inference.results import SweepResult, curve_shape
from podium.inference.system import EconomicsSource, SystemDescription, resolve_economics
from podium.models.common import Evidence, Provenance, utcnow
from podium.runs import RunDirectory

ProgressCallback = Callable[[str, int, "int | None"], None]


def doubling_concurrencies(start: int = 1, stop: int = 256) -> list[int]:
    """1, 2, 4 … up to ``stop`` (inclusive when it is on the doubling path)."""
    if start < 1 or stop < start:
        raise UsageError(f"concurrency range {start}..{stop} is empty")
    out, c = [], start
    while c <= stop:
        out.append(c)
        c *= 2
    return out


def parse_concurrency(text: str) -> list[int]:
    """``'1,2,4'`` (explicit) or ``'1..256'`` (doubling). Values are sorted and de-duplicated."""
    text = text.strip()
    try:
        if ".." in text:
            a, b = text.split("..", 1)
            return doubling_concurrencies(int(a), int(b))
        values = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"--concurrency '{text}': expected '1,2,4' or '1..256'") from None
    if not values or values[0] < 1:
        raise UsageError(f"--concurrency '{text}': values must be at least 1")
    return values


class SweepConfig(BaseModel):
    """How to sweep one server."""

    model_config = ConfigDict(extra="forbid")

    base_url: str
    model: str = Field(description="Model name sent in requests")
    api: str = "chat"
    api_key_env: str | None = None
    concurrencies: list[int] = Field(default_factory=lambda: doubling_concurrencies(1, 256))
    requests_per_level: int | None = Field(
        None, ge=1, description="Fixed measured requests per level; default is multiplier × concurrency"
    )
    requests_multiplier: int = Field(10, ge=1, description="Requests per level = this × concurrency")
    warmup: int = Field(0, ge=0, description="Warm-up requests per level, not counted")
    seed: int = 42
    ignore_eos: bool = Field(False, description="Ask the server to always produce OSL tokens")
    timeout_s: float = 300.0
    max_error_rate: float = Field(0.5, ge=0, le=1, description="Stop the sweep when a level fails more")

    def requests_for(self, concurrency: int) -> int:
        return self.requests_per_level or self.requests_multiplier * concurrency


def build_sweep_result(
    system: SystemDescription,
    levels: Sequence[LevelMeasurement],
    economics: EconomicsSource | None = None,
    **meta,
) -> SweepResult:
    """Compute every point from measured levels (pure)."""
    econ = economics or resolve_economics(system.hw, system.price_usd_per_gpu_hour, system.power_kw_per_gpu)
    points = [compute_point(system, lv, econ) for lv in sorted(levels, key=lambda lv: lv.concurrency)]
    result = SweepResult(
        system=system,
        economics=econ,
        concurrencies=[p.concurrency for p in points],
        points=points,
        curve=curve_shape(points),
        notes=list(system.notes),
        **meta,
    )
    if econ.price_source == "default-table":
        result.notes.append(f"price ${econ.price_usd_per_gpu_hour}/GPU-hr is the default for {system.hw}")
    return result


def run_sweep(
    system: SystemDescription,
    config: SweepConfig,
    run: RunDirectory,
    progress: ProgressCallback | None = None,
    economics: EconomicsSource | None = None,
) -> SweepResult:
    """Measure every concurrency level against ``config.base_url`` and return the sweep result."""
    from podium.endpoint.api import run_endpoint_bench
    from podium.endpoint.models import EndpointBenchConfig

    started = utcnow()
    levels: list[LevelMeasurement] = []
    errors: list[str] = []
    evidence: list[Evidence] = []
    for conc in config.concurrencies:
        bench_cfg = EndpointBenchConfig(
            base_url=config.base_url,
            model=config.model,
            api=config.api,  # type: ignore[arg-type]
            api_key_env=config.api_key_env,
            concurrency=[conc],
            requests=config.requests_for(conc),
            warmup=config.warmup,
            input_tokens=system.isl,
            output_tokens=system.osl,
            seed=config.seed,
            ignore_eos=config.ignore_eos,
            timeout_s=config.timeout_s,
        )
        level_run = RunDirectory.create(
            "inference-level", root=run.path / "levels", run_id=f"conc-{conc}", argv=[f"concurrency={conc}"]
        )
        with run.step(f"concurrency-{conc}", output=f"levels/conc-{conc}/report.json"):
            try:
                report = run_endpoint_bench(bench_cfg, run=level_run, progress=progress)
            finally:
                level_run.close(0)
        for lv in report.levels:
            m = level_from_report_level(lv)
            m.records_path = f"levels/conc-{conc}/requests.jsonl"
            levels.append(m)
            total = m.requests_ok + m.requests_failed
            evidence.append(
                Evidence(
                    summary=(
                        f"concurrency {conc}: {m.requests_ok}/{total} ok, "
                        f"{m.output_tokens_per_s:.2f} output tok/s, median TPOT {m.tpot_ms.p50} ms"
                    ),
                    value=m.output_tokens_per_s,
                    source=Provenance(
                        command=f"podium endpoint bench --base-url {config.base_url} --model {config.model} "
                        f"--concurrency {conc} --requests {config.requests_for(conc)}",
                        host=socket.gethostname(),
                        collected_at=report.started_at,
                        tool_version=f"podium {__version__}",
                        raw_output=m.records_path,
                    ),
                )
            )
            if total and m.requests_failed / total > config.max_error_rate:
                errors.append(
                    f"concurrency {conc}: {m.requests_failed}/{total} requests failed; sweep stopped"
                )
        if errors:
            break
    result = build_sweep_result(
        system,
        levels,
        economics,
        base_url=config.base_url,
        api=config.api,
        started_at=started,
        finished_at=utcnow(),
        host=socket.gethostname(),
        podium_version=__version__,
        run_id=run.record.run_id,
        run_dir=str(run.path),
        evidence=evidence,
        errors=errors,
    )
    return result
