"""``podium endpoint bench|monitor|audit``: rate an OpenAI-compatible inference endpoint."""

from __future__ import annotations

from pathlib import Path

import typer

from podium.cli.common import FAIL_ON_OPTION, JSON_OPTION, FailOn

endpoint_app = typer.Typer(
    help="Rate an OpenAI-compatible endpoint: load and latency (bench), reliability (monitor), "
    "security (audit) and cost.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

BASE_URL = typer.Option(..., "--base-url", help="API base URL, e.g. https://api.example.com/v1")
MODEL = typer.Option(..., "--model", help="Model name sent in each request")
API = typer.Option("chat", "--api", help="chat (/chat/completions) or completions (/completions)")
API_KEY_ENV = typer.Option(
    None, "--api-key-env", help="Name of the environment variable holding the API key (never the key itself)"
)
RUNS_DIR = typer.Option(None, "--runs-dir", help="Where run directories go (default podium-runs/)")


def _int_list(text: str, flag: str) -> list[int]:
    from podium.errors import InputError

    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(flag, f"expected integers separated by commas, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise InputError(flag, f"expected positive integers, got {text!r}")
    return values


def _float_list(text: str, flag: str) -> list[float]:
    from podium.errors import InputError

    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(flag, f"expected numbers separated by commas, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise InputError(flag, f"expected positive numbers, got {text!r}")
    return values


def _config_error(e: Exception):
    from podium.errors import InputError

    first = e.errors()[0] if hasattr(e, "errors") else None
    where = "--" + str(first["loc"][0]).replace("_", "-") if first and first.get("loc") else "flags"
    return InputError(where, first["msg"] if first else str(e))


@endpoint_app.command("bench")
def bench(
    base_url: str = BASE_URL,
    model: str = MODEL,
    api: str = API,
    api_key_env: str = API_KEY_ENV,
    concurrency: str = typer.Option("1", "--concurrency", help="Closed-loop levels, e.g. 1,4,16"),
    rate: str = typer.Option(None, "--rate", help="Open-loop arrival rate(s) in requests/s, e.g. 2 or 1,2,4"),
    max_concurrency: int = typer.Option(
        None, "--max-concurrency", help="Cap on in-flight requests with --rate"
    ),
    arrival: str = typer.Option("poisson", "--arrival", help="poisson or gamma (with --burstiness)"),
    burstiness: float = typer.Option(1.0, "--burstiness", help="Gamma shape; <1 is burstier"),
    requests: int = typer.Option(None, "--requests", help="Measured requests per level (default 100)"),
    duration: float = typer.Option(None, "--duration", help="Seconds per level (instead of --requests)"),
    warmup: int = typer.Option(0, "--warmup", help="Warm-up requests per level, not counted"),
    input_tokens: int = typer.Option(128, "--input-tokens", help="Random prompts: input length (tokens)"),
    output_tokens: int = typer.Option(128, "--output-tokens", help="Requested output length (max_tokens)"),
    range_ratio: float = typer.Option(0.0, "--range-ratio", help="Lengths uniform in [n(1-r), n(1+r)]"),
    dataset: str = typer.Option("random", "--dataset", help="'random', a JSONL file or a ShareGPT JSON file"),
    seed: int = typer.Option(0, "--seed", help="Seed for prompts, lengths and arrivals"),
    slo_ttft_ms: float = typer.Option(None, "--slo-ttft-ms", help="Goodput SLO on TTFT"),
    slo_tpot_ms: float = typer.Option(None, "--slo-tpot-ms", help="Goodput SLO on TPOT"),
    slo_e2e_ms: float = typer.Option(None, "--slo-e2e-ms", help="Goodput SLO on end-to-end latency"),
    timeout: float = typer.Option(300.0, "--timeout", help="Whole-request timeout in seconds"),
    ignore_eos: bool = typer.Option(False, "--ignore-eos", help="Send ignore_eos (vLLM/SGLang)"),
    tokenizer: str = typer.Option(
        None, "--tokenizer", help="Local tokenizer folder for counts without usage"
    ),
    sweep: bool = typer.Option(False, "--sweep", help="Double concurrency until saturation or errors"),
    sweep_max: int = typer.Option(1024, "--sweep-max-concurrency", help="Highest concurrency a sweep tries"),
    saturation_gain: float = typer.Option(
        0.10, "--saturation-gain", help="Sweep stops below this tok/s gain"
    ),
    max_error_rate: float = typer.Option(
        0.05, "--max-error-rate", help="Sweep stops above this failure rate"
    ),
    price: str = typer.Option(None, "--price", help="Price-table key, e.g. together/dedicated-h100"),
    price_input: float = typer.Option(None, "--price-input", help="USD per million input tokens"),
    price_output: float = typer.Option(None, "--price-output", help="USD per million output tokens"),
    gpu_hour_usd: float = typer.Option(None, "--gpu-hour-usd", help="Dedicated endpoint: USD per GPU-hour"),
    gpu_count: int = typer.Option(1, "--gpus", help="GPUs behind a dedicated endpoint"),
    insecure: bool = typer.Option(False, "--insecure", help="Do not verify the TLS certificate"),
    ca_file: str = typer.Option(None, "--ca-file", help="CA bundle to verify the endpoint's certificate"),
    runs_dir: Path = RUNS_DIR,
    json_out: bool = JSON_OPTION,
) -> None:
    """Measure TTFT, ITL, TPOT, E2E, throughput, goodput and cost at each load level."""
    import sys

    from pydantic import ValidationError

    from podium.cli.common import emit_json, stderr_console
    from podium.endpoint.api import run_endpoint_bench
    from podium.endpoint.models import EndpointBenchConfig
    from podium.runs import RunDirectory

    try:
        config = EndpointBenchConfig(
            base_url=base_url,
            model=model,
            api=api,
            api_key_env=api_key_env,
            concurrency=_int_list(concurrency, "--concurrency"),
            rates=_float_list(rate, "--rate") if rate else [],
            max_concurrency=max_concurrency,
            arrival=arrival,
            burstiness=burstiness,
            requests=requests,
            duration_s=duration,
            warmup=warmup,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            range_ratio=range_ratio,
            dataset=dataset,
            seed=seed,
            slo_ttft_ms=slo_ttft_ms,
            slo_tpot_ms=slo_tpot_ms,
            slo_e2e_ms=slo_e2e_ms,
            timeout_s=timeout,
            ignore_eos=ignore_eos,
            tokenizer=tokenizer,
            sweep=sweep,
            sweep_max_concurrency=sweep_max,
            saturation_gain=saturation_gain,
            max_error_rate=max_error_rate,
            price=price,
            price_input_per_m=price_input,
            price_output_per_m=price_output,
            gpu_hour_usd=gpu_hour_usd,
            gpu_count=gpu_count,
            verify_tls=not insecure,
            ca_file=ca_file,
        )
        from podium.endpoint.http import Target

        Target.parse(config.base_url)
    except ValidationError as e:
        raise _config_error(e) from None
    except ValueError as e:
        from podium.errors import InputError

        raise InputError("--base-url", str(e)) from None
    console = stderr_console()
    run = RunDirectory.create("endpoint-bench", argv=sys.argv[1:], root=runs_dir)

    def progress(label: str, done: int, total: int | None) -> None:
        if done == total or (done % 50 == 0):
            console.print(
                f"  {label}: {done}/{total if total is not None else '?'} requests", highlight=False
            )

    code = 3
    try:
        report = run_endpoint_bench(config, run, progress)
        code = 0
    finally:
        run.close(code)
    if json_out:
        emit_json(report)
        return
    from podium.endpoint.render import bench_table

    console.print(bench_table(report))
    console.print(f"per-request records: {run.path / 'requests.jsonl'}")


@endpoint_app.command("monitor")
def monitor(
    base_url: str = BASE_URL,
    model: str = MODEL,
    api: str = API,
    api_key_env: str = API_KEY_ENV,
    interval: float = typer.Option(60.0, "--interval", help="Seconds between probes"),
    duration: float = typer.Option(
        3600.0, "--duration", help="Seconds to keep probing (planned end is stored)"
    ),
    timeout: float = typer.Option(30.0, "--timeout", help="Timeout of one probe in seconds"),
    max_tokens: int = typer.Option(8, "--max-tokens", help="Output tokens asked per probe"),
    max_probes: int = typer.Option(None, "--max-probes", help="Stop after this many probes in this session"),
    db: str = typer.Option(
        None,
        "--db",
        help="Results store: SQLite path or SQLAlchemy URL (default $PODIUM_DB or ~/.local/share/podium/podium.db)",
    ),
    resume: str = typer.Option(None, "--resume", help="Run id of an earlier monitor run to continue"),
    insecure: bool = typer.Option(False, "--insecure", help="Do not verify the TLS certificate"),
    ca_file: str = typer.Option(None, "--ca-file", help="CA bundle to verify the endpoint's certificate"),
    runs_dir: Path = RUNS_DIR,
    json_out: bool = JSON_OPTION,
) -> None:
    """Probe the endpoint periodically; report availability, uptime windows, latency over time, a plot."""
    import sys

    from pydantic import ValidationError

    from podium.cli.common import emit_json, stderr_console
    from podium.endpoint.monitor import MonitorConfig, render_svg, run_monitor
    from podium.runs import RunDirectory
    from podium.store.probes import StoreProbeStore

    try:
        config = MonitorConfig(
            base_url=base_url,
            model=model,
            api=api,
            api_key_env=api_key_env,
            interval_s=interval,
            duration_s=duration,
            timeout_s=timeout,
            max_tokens=max_tokens,
            max_probes=max_probes,
            verify_tls=not insecure,
            ca_file=ca_file,
        )
    except ValidationError as e:
        raise _config_error(e) from None
    console = stderr_console()
    if resume:
        run = RunDirectory.resume(resume, root=runs_dir)
    else:
        run = RunDirectory.create("endpoint-monitor", argv=sys.argv[1:], root=runs_dir)
    store = StoreProbeStore.open(db)
    db_path = store.location

    def on_probe(p) -> None:
        ttft = f"{p.ttft_ms:.0f} ms" if p.ttft_ms is not None else "-"
        console.print(f"  {p.at:%H:%M:%S} {p.outcome} TTFT {ttft}", highlight=False)

    code = 3
    try:
        with run.step("monitor", output="monitor.json"):
            report = run_monitor(config, store, on_probe)
            plot = run.path / "monitor.svg"
            plot.write_text(render_svg(report))
            report.plot, report.db = str(plot), str(db_path)
            run.write_json("monitor.json", report)
        code = 0
    finally:
        store.close()
        run.close(code)
    if json_out:
        emit_json(report)
        return
    avail = "n/a" if report.availability is None else f"{report.availability:.3%}"
    console.print(f"{report.target}: {report.probes} probes, availability {avail}")
    console.print("outcomes: " + ", ".join(f"{k} {v}" for k, v in report.outcomes.items()))
    for w in report.uptime:
        a = "n/a" if w.availability is None else f"{w.availability:.3%}"
        console.print(
            f"  uptime {w.window}: {a} over {w.probes} probes{'' if w.complete else ' (window not yet covered)'}"
        )
    console.print(f"plot: {report.plot}; probes: {db_path}; resume with --resume {run.record.run_id}")


@endpoint_app.command("audit")
def audit(
    base_url: str = BASE_URL,
    model: str = MODEL,
    api: str = API,
    api_key_env: str = API_KEY_ENV,
    timeout: float = typer.Option(15.0, "--timeout", help="Timeout of each probe request in seconds"),
    insecure: bool = typer.Option(False, "--insecure", help="Do not verify the TLS certificate for requests"),
    ca_file: str = typer.Option(None, "--ca-file", help="CA bundle to verify the endpoint's certificate"),
    fail_on: FailOn = FAIL_ON_OPTION,
    runs_dir: Path = RUNS_DIR,
    json_out: bool = JSON_OPTION,
) -> None:
    """Security checks: TLS, auth (no key, wrong key, key echo), side routes, rate-limit headers, CORS, ids."""
    import sys

    from podium.cli.common import done, emit_json, exit_for, stderr_console
    from podium.endpoint.audit import run_endpoint_audit
    from podium.runs import RunDirectory

    run = RunDirectory.create("endpoint-audit", argv=sys.argv[1:], root=runs_dir)
    code = 3
    try:
        report = run_endpoint_audit(base_url, model, api, api_key_env, ca_file, not insecure, timeout)
        run.write_json("audit.json", report)
        code = int(exit_for(report.results, fail_on))
    finally:
        run.close(code)
    if json_out:
        emit_json(report)
    else:
        console = stderr_console()
        colors = {"pass": "green", "warn": "yellow", "fail": "red", "unknown": "magenta", "skipped": "dim"}
        for r in report.results:
            ev = r.evidence[0].summary if r.evidence else (r.reason or "")
            console.print(f"[{colors[r.status.value]}]{r.status.value:7}[/] {r.id:34} {ev}", highlight=False)
        s = report.summary
        console.print(f"{s.pass_} pass, {s.warn} warn, {s.fail} fail, {s.unknown} unknown")
    done(code)


def register(app: typer.Typer) -> None:
    app.add_typer(endpoint_app, name="endpoint")
