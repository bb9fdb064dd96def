"""``podium inference sweep|compare|serve|export``: throughput per GPU vs interactivity, $/M tokens."""

from __future__ import annotations

from pathlib import Path

import typer

from podium.cli.common import JSON_OPTION

inference_app = typer.Typer(
    help="Throughput per GPU vs interactivity: concurrency sweeps, Pareto fronts, $/M tokens, "
    "InferenceX rows and serving recipes.",
    no_args_is_help=True,
)


def _system_from_options(system_file, **flags):
    from podium.errors import UsageError
    from podium.inference.system import SystemDescription, load_system

    if system_file is not None:
        base = load_system(system_file).model_dump()
        for k, v in flags.items():
            if v is not None:
                base[k] = v
        return SystemDescription.model_validate(base)
    missing = [k for k in ("hw", "engine", "model", "precision") if not flags.get(k)]
    if missing:
        raise UsageError(f"give --system FILE or --{' --'.join(m.replace('_', '-') for m in missing)}")
    return SystemDescription.model_validate({k: v for k, v in flags.items() if v is not None})


def _write_result(result, out: Path | None, run) -> Path:
    path = out or (run.path / "sweep.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    from podium.secrets import redact

    path.write_text(redact(result.model_dump_json(indent=2)) + "\n")
    return path


def _print_sweep(result, console) -> None:
    from rich.table import Table

    t = Table(title=f"{result.system.hw} {result.system.precision} · {result.system.model}")
    for col in (
        "conc",
        "ok/failed",
        "tok/s/GPU",
        "out tok/s/GPU",
        "intvty (1000/TPOT)",
        "intvty (vLLM)",
        "TTFT p50 ms",
        "E2E p99 ms",
        "$/M tok",
    ):
        t.add_column(col, justify="right")
    for p in result.points:
        iv = p.interactivity_inferencex.p50
        cost = p.cost_per_million_tokens.total
        t.add_row(
            str(p.concurrency),
            f"{p.requests_ok}/{p.requests_failed}",
            f"{p.throughput_per_gpu.total:.2f}",
            f"{p.throughput_per_gpu.output:.2f}",
            "-" if iv is None else f"{iv:.2f}",
            "-" if p.interactivity_vllm.value is None else f"{p.interactivity_vllm.value:.2f}",
            "-" if p.ttft_ms.p50 is None else f"{p.ttft_ms.p50:.1f}",
            "-" if p.e2e_ms.p99 is None else f"{p.e2e_ms.p99:.1f}",
            "-" if cost is None else f"{cost:.4g}",
        )
    console.print(t)


def register(app: typer.Typer) -> None:
    @inference_app.command("sweep")
    def sweep(
        base_url: str = typer.Option(
            ..., "--base-url", help="OpenAI-compatible base URL, e.g. http://host:8000/v1"
        ),
        model: str = typer.Option(..., "--model", help="Model name sent in requests (and recorded)"),
        system_file: Path = typer.Option(None, "--system", help="YAML/JSON system description"),
        hw: str = typer.Option(None, "--hw", help="GPU SKU label, e.g. h200, b200, cpu"),
        gpu_count: int = typer.Option(None, "--gpu-count", help="GPUs serving (default tp×pp×dp)"),
        tp: int = typer.Option(None, "--tp"),
        pp: int = typer.Option(None, "--pp"),
        dp: int = typer.Option(None, "--dp"),
        engine: str = typer.Option(None, "--engine", help="vllm, sglang, transformers, ..."),
        engine_version: str = typer.Option(None, "--engine-version"),
        precision: str = typer.Option(None, "--precision", help="bf16, fp8, fp4, ..."),
        isl: int = typer.Option(None, "--isl", "--input-tokens", help="Input tokens per request"),
        osl: int = typer.Option(None, "--osl", "--output-tokens", help="Output tokens per request"),
        price: float = typer.Option(None, "--price", help="All-in USD per GPU-hour"),
        power_kw: float = typer.Option(None, "--power-kw", help="All-in kW per GPU"),
        concurrency: str = typer.Option("1..256", "--concurrency", help="'1,2,4' or doubling '1..256'"),
        requests: int = typer.Option(
            None, "--requests", help="Measured requests per level (default 10×conc)"
        ),
        multiplier: int = typer.Option(10, "--requests-multiplier", help="Requests per level = this × conc"),
        warmup: int = typer.Option(0, "--warmup", help="Warm-up requests per level"),
        api: str = typer.Option("chat", "--api", help="chat | completions"),
        api_key_env: str = typer.Option(None, "--api-key-env", help="Env var holding the API key"),
        seed: int = typer.Option(42, "--seed"),
        ignore_eos: bool = typer.Option(False, "--ignore-eos", help="Force OSL tokens (vLLM/SGLang)"),
        note: list[str] = typer.Option([], "--note", help="Caveat recorded in the result (repeatable)"),
        out: Path = typer.Option(None, "--out", help="Result file (default <run>/sweep.json)"),
        export_dir: Path = typer.Option(
            None, "--export-inferencex", help="Also write InferenceX agg rows here"
        ),
        runs_dir: Path = typer.Option(None, "--runs-dir", help="Where run directories go"),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Sweep concurrency against a server; keep raw per-request data; compute the curve.

        Exit 1 when a level failed too often (over half its requests) and the sweep stopped early.
        """
        from podium.cli.common import emit_json, stderr_console
        from podium.inference.sweep import SweepConfig, parse_concurrency, run_sweep
        from podium.runs import RunDirectory

        flags = dict(
            hw=hw,
            gpu_count=gpu_count,
            tp=tp,
            pp=pp,
            dp=dp,
            engine=engine,
            engine_version=engine_version,
            model=model,
            precision=precision,
            isl=isl,
            osl=osl,
            price_usd_per_gpu_hour=price,
            power_kw_per_gpu=power_kw,
        )
        if system_file is not None:
            flags["model"] = None  # --model is the name sent in requests; the file describes the model
        else:
            flags["isl"] = isl or 1024
            flags["osl"] = osl or 1024
        system = _system_from_options(system_file, **flags)
        if note:
            system.notes.extend(note)
        cfg = SweepConfig(
            base_url=base_url,
            model=model,
            api=api,
            api_key_env=api_key_env,
            concurrencies=parse_concurrency(concurrency),
            requests_per_level=requests,
            requests_multiplier=multiplier,
            warmup=warmup,
            seed=seed,
            ignore_eos=ignore_eos,
        )
        console = stderr_console()
        run = RunDirectory.create("inference-sweep", argv=["inference", "sweep"], root=runs_dir)
        code = 0
        try:
            with console.status("sweeping") as status:

                def progress(label: str, done: int, total: int | None) -> None:
                    status.update(f"{label}: {done}/{total if total is not None else '?'} requests")

                result = run_sweep(system, cfg, run, progress)
            path = _write_result(result, out, run)
            if export_dir:
                from podium.inference.inferencex import point_to_row, row_filename

                export_dir.mkdir(parents=True, exist_ok=True)
                import json

                for p in result.points:
                    row = point_to_row(result.system, p)
                    (export_dir / row_filename(row)).write_text(json.dumps(row, indent=2) + "\n")
        except BaseException:
            code = 3
            raise
        finally:
            run.close(code)
        if json_out:
            emit_json(result)
        else:
            _print_sweep(result, console)
            console.print(f"result: {path}\nraw per-request records: {run.path}/levels/*/requests.jsonl")
            for e in result.errors:
                console.print(f"[yellow]warning:[/] {e}")
        if result.errors:
            # A level failed too often and the sweep stopped early: the curve is incomplete.
            raise typer.Exit(1)

    @inference_app.command("compare")
    def compare(
        results: list[Path] = typer.Argument(..., help="Sweep results and/or InferenceX agg_*.json files"),
        target: float = typer.Option(None, "--target-interactivity", help="tok/s/user to compare at"),
        price: list[str] = typer.Option([], "--price", help="SYSTEM=USD_PER_GPU_HOUR (repeatable)"),
        power: list[str] = typer.Option([], "--power", help="SYSTEM=KW_PER_GPU (repeatable)"),
        convention: str = typer.Option("inferencex", "--convention", help="inferencex (1000/TPOT) | vllm"),
        method: str = typer.Option("pchip", "--interpolation", help="pchip | linear"),
        html: Path = typer.Option(None, "--html", help="Write a self-contained HTML report here"),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Pareto fronts per system and precision, values at a target interactivity, ratios, charts."""
        from podium.cli.common import emit_json, stderr_console
        from podium.errors import UsageError
        from podium.inference.compare import compare_results, parse_power_flags, parse_price_flags

        if method not in ("pchip", "linear"):
            raise UsageError(f"--interpolation '{method}': one of pchip, linear")
        report = compare_results(
            results, target, parse_price_flags(price), parse_power_flags(power), convention, method
        )  # type: ignore[arg-type]
        if html:
            from podium.inference.charts import render_html

            html.parent.mkdir(parents=True, exist_ok=True)
            html.write_text(render_html(report))
        if json_out:
            emit_json(report)
            return
        from rich.markup import escape
        from rich.table import Table

        console = stderr_console()
        t = Table(title=f"at {target} tok/s/user" if target else "systems")
        for col in ("system", "points", "front", "$/GPU-hr", "tok/s/GPU", "$/M tokens", "note"):
            t.add_column(col)
        for s in report.systems:
            at = s.at_target
            t.add_row(
                s.name,
                str(len(s.points)),
                str(len(s.pareto)),
                str(s.economics.price_usd_per_gpu_hour),
                f"{at.throughput_per_gpu:.4g}" if at else "-",
                f"{at.cost_per_million_tokens:.4g}" if at and at.cost_per_million_tokens else "-",
                s.at_target_reason or "",
            )
        console.print(t)
        for r in report.ratios:
            console.print(
                f"{r.a} / {r.b}: throughput ×{r.throughput_per_gpu_ratio:.3f}"
                + (f", $/M ×{r.cost_per_million_tokens_ratio:.3f}" if r.cost_per_million_tokens_ratio else "")
            )
        for w in report.warnings:
            console.print(f"[yellow]warning:[/] {escape(w)}")
        if html:
            console.print(f"report: {html}")

    @inference_app.command("export")
    def export(
        result: Path = typer.Argument(..., help="A podium sweep result (sweep.json)"),
        out_dir: Path = typer.Option(..., "--out", help="Directory for agg_*.json rows"),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Write a sweep's points as InferenceX agg_*.json rows."""
        import json

        from podium.cli.common import emit_json, stderr_console
        from podium.errors import InputError
        from podium.inference.inferencex import point_to_row, row_filename
        from podium.inference.results import load_result_file

        kind, payload = load_result_file(result)
        if kind != "sweep":
            raise InputError(result, "already InferenceX rows; nothing to export")
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for p in payload.points:  # type: ignore[attr-defined]
            row = point_to_row(payload.system, p)  # type: ignore[attr-defined]
            path = out_dir / row_filename(row)
            path.write_text(json.dumps(row, indent=2) + "\n")
            written.append(str(path))
        if json_out:
            emit_json({"written": written})
        else:
            stderr_console().print("\n".join(written))

    @inference_app.command("serve")
    def serve(
        engine: str = typer.Option(..., "--engine", help="vllm | sglang | transformers"),
        backend: str = typer.Option("local", "--backend", help="local | slurm | k8s"),
        model: str = typer.Option(..., "--model", help="Model id or path"),
        port: int = typer.Option(8000, "--port"),
        host: str = typer.Option("127.0.0.1", "--host", help="Listen address (local backend)"),
        gpus: int = typer.Option(1, "--gpus", help="GPUs (0 = CPU)"),
        tp: int = typer.Option(1, "--tp"),
        dtype: str = typer.Option(None, "--dtype"),
        device: str = typer.Option(None, "--device", help="transformers: cpu | cuda | auto"),
        image: str = typer.Option(None, "--image", help="Container image (k8s)"),
        name: str = typer.Option("podium-llm", "--name", help="Job / Deployment name"),
        namespace: str = typer.Option("default", "--namespace"),
        partition: str = typer.Option(None, "--partition", help="Slurm partition"),
        env: list[str] = typer.Option([], "--env", help="KEY=VALUE for the server (repeatable)"),
        extra: list[str] = typer.Option([], "--engine-arg", help="Extra engine flag (repeatable)"),
        ready_timeout: float = typer.Option(900.0, "--ready-timeout", help="Seconds to wait for readiness"),
        render_only: bool = typer.Option(False, "--render-only", help="Render and validate; do not launch"),
        hold: float = typer.Option(0.0, "--hold", help="Keep the server up this many seconds after ready"),
        sweep_system: Path = typer.Option(None, "--sweep-system", help="Run a sweep with this system file"),
        concurrency: str = typer.Option("1..256", "--concurrency", help="Sweep levels"),
        requests: int = typer.Option(None, "--requests", help="Sweep: requests per level"),
        out: Path = typer.Option(None, "--out", help="Sweep result file"),
        runs_dir: Path = typer.Option(None, "--runs-dir"),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Render and launch a server (local, sbatch or Deployment), wait for readiness, sweep, tear down.

        Exit 0 when it was ready (or only rendered because the engine or kubectl is missing here),
        1 when it was launched but never became ready, 2 when the rendered recipe is invalid.
        """
        import time

        from podium.cli.common import emit_json, stderr_console
        from podium.errors import ExitCode, UsageError
        from podium.inference.serve import ServeSpec, check_engine_backend, launched, render
        from podium.runs import RunDirectory

        check_engine_backend(engine, backend)
        envs = {}
        for item in env:
            k, sep, v = item.partition("=")
            if not sep or not k:
                raise UsageError(f"--env '{item}': expected KEY=VALUE")
            envs[k] = v
        spec = ServeSpec(
            engine=engine,
            backend=backend,
            model=model,
            port=port,
            host=host,
            gpus=gpus,
            tp=tp,
            dtype=dtype,
            device=device,
            image=image,
            name=name,
            namespace=namespace,
            slurm_partition=partition,
            env=envs,
            extra_args=extra,
            ready_timeout_s=ready_timeout,
        )
        console = stderr_console()
        run = RunDirectory.create("inference-serve", argv=["inference", "serve"], root=runs_dir)
        code = 0
        sweep_path = None
        try:
            if render_only:
                outcome = render(spec, run.path)
                if outcome.validation_errors:
                    code = int(ExitCode.BAD_INPUT)
            else:
                with launched(spec, run.path) as outcome:
                    if outcome.base_url:
                        console.print(f"ready: {outcome.base_url} after {outcome.ready_after_s}s")
                        if sweep_system is not None:
                            from podium.inference.sweep import SweepConfig, parse_concurrency, run_sweep
                            from podium.inference.system import load_system

                            system = load_system(sweep_system)
                            cfg = SweepConfig(
                                base_url=outcome.base_url,
                                model=spec.served_model_name or model,
                                concurrencies=parse_concurrency(concurrency),
                                requests_per_level=requests,
                            )
                            result = run_sweep(system, cfg, run)
                            sweep_path = _write_result(result, out, run)
                        elif hold > 0:
                            time.sleep(hold)
                    else:
                        # Invalid recipe: bad input. Launched but never ready: the check failed (1).
                        if outcome.validation_errors:
                            code = int(ExitCode.BAD_INPUT)
                        elif outcome.launched:
                            code = int(ExitCode.FINDINGS)
            run.write_json("serve.json", outcome)
        except BaseException:
            code = 3
            raise
        finally:
            run.close(code)
        if json_out:
            data = outcome.model_dump(mode="json")
            data["run_dir"] = str(run.path)
            data["sweep_result"] = str(sweep_path) if sweep_path else None
            emit_json(data)
        else:
            console.print(f"rendered: {', '.join(outcome.rendered)}")
            for e in outcome.validation_errors:
                console.print(f"[red]invalid:[/] {e}")
            if outcome.reason:
                console.print(f"not run: {outcome.reason}")
            if sweep_path:
                console.print(f"sweep result: {sweep_path}")
        if code:
            raise typer.Exit(code)

    app.add_typer(inference_app, name="inference")
