"""``podium audit``: grade node facts against advisories (and, with --profile, isolation/config checks)."""

from __future__ import annotations

from pathlib import Path

import typer

from podium.cli.common import (
    FAIL_ON_OPTION,
    FailOn,
    OutputFormat,
    done,
    emit_json,
    emit_text,
    exit_for,
    stderr_console,
)

PROFILES = ("versions", "isolation", "config")


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)


def audit(
    local: bool = typer.Option(False, "--local", help="Audit this node (the default)."),
    slurm: bool = typer.Option(False, "--slurm", help="Collect on every node through srun."),
    k8s: bool = typer.Option(False, "--k8s", help="Collect on every GPU node through Kubernetes pods."),
    facts_files: list[str] = typer.Option(None, "--facts", help="Audit saved facts files (repeatable)."),
    nodes: str = typer.Option(None, "--nodes", help="Slurm nodelist or count for --slurm."),
    image: str = typer.Option(
        "python:3.12-slim", "--image", help="Container image for --k8s pods (needs podium)."
    ),
    profile: str = typer.Option(
        "versions", "--profile", help="Comma list: versions, isolation, config, all."
    ),
    targets: str = typer.Option(
        None, "--targets", help="Isolation probe targets: addresses or CIDRs, comma list."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print only the JSON report on stdout."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json, markdown or sarif."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="-v minimum versions, -vv CVE links."),
    bundle_path: Path = typer.Option(
        None, "--bundle", help="Advisory bundle file (default: the shipped one)."
    ),
    fail_on: FailOn = FAIL_ON_OPTION,
    resume: str = typer.Option(None, "--resume", help="Resume a run id; finished steps are skipped."),
    runs_dir: Path = typer.Option(
        None, "--runs-dir", help="Where run directories go (default ./podium-runs)."
    ),
) -> None:
    """Audit node software against the offline advisory bundle and print PASS/WARN/FAIL/UNKNOWN per check."""
    import sys

    from podium.advisories.bundle import load_bundle, load_default
    from podium.audit.api import run_audit
    from podium.errors import UsageError
    from podium.facts.collect import collect_node_facts
    from podium.facts.fanout import collect_k8s, collect_slurm, load_facts_files
    from podium.models.facts import NodeFacts
    from podium.models.results import CheckResult
    from podium.runner import LocalRunner
    from podium.runs import RunDirectory

    console = stderr_console()
    if sum([local, slurm, k8s, bool(facts_files)]) > 1:
        raise UsageError("choose one of --local, --slurm, --k8s, --facts")
    profiles = _parse_profiles(profile)
    if json_out:
        fmt = OutputFormat.json
    bundle = load_bundle(bundle_path) if bundle_path else load_default()

    run = (
        RunDirectory.resume(resume, root=runs_dir)
        if resume
        else RunDirectory.create(
            "audit", ["audit", *sys.argv[2:]], root=runs_dir, advisory_bundle_version=bundle.version
        )
    )
    runner = LocalRunner(raw_dir=run.raw_dir)
    code = 3
    try:
        # Step 1: facts (kept, so a resumed run does not collect again)
        if run.is_done("facts"):
            facts = [NodeFacts.model_validate(x) for x in run.read_json("facts.json")]
            console.print(f"resume: reusing facts for {len(facts)} node(s)")
        else:
            with run.step("facts", output="facts.json"):
                if facts_files:
                    facts = load_facts_files(facts_files)
                elif slurm:
                    facts, problems = collect_slurm(runner, nodes=nodes)
                    for p in problems:
                        console.print(f"[yellow]warning:[/] {p}")
                elif k8s:
                    facts, problems = collect_k8s(runner, image=image)
                    for p in problems:
                        console.print(f"[yellow]warning:[/] {p}")
                else:
                    with console.status("collecting facts on this node"):
                        facts = [collect_node_facts(runner)]
                run.write_json("facts.json", [f.model_dump(mode="json") for f in facts])

        # Step 2: isolation / configuration checks (another step, so a crash there keeps the facts)
        extra: list[CheckResult] = []
        other = [p for p in profiles if p != "versions"]
        if other:
            if run.is_done("checks"):
                extra = [CheckResult.model_validate(x) for x in run.read_json("checks.json")]
            else:
                with run.step("checks", output="checks.json"):
                    from podium.checks.api import run_checks

                    target_list = [t.strip() for t in targets.split(",") if t.strip()] if targets else None
                    with console.status(f"running {', '.join(other)} checks"):
                        extra = run_checks(
                            other, runner, targets=target_list, facts=facts[0] if facts else None
                        )
                    run.write_json("checks.json", [c.model_dump(mode="json") for c in extra])

        # Step 3: grade and report
        with run.step("report", output="report.json"):
            report = run_audit(
                facts, bundle=bundle, extra_checks=extra, profiles=profiles, run_id=run.record.run_id
            )
            run.write_json("report.json", report)
            from podium.output.markdown import render_markdown

            (run.path / "report.md").write_text(render_markdown(report, verbosity=2))
        for w in report.warnings:
            console.print(f"[yellow]warning:[/] {w}")
        if fmt == OutputFormat.json:
            emit_json(report)
        elif fmt == OutputFormat.markdown:
            from podium.output.markdown import render_markdown

            emit_text(render_markdown(report, verbosity=max(verbose, 1)))
        elif fmt == OutputFormat.sarif:
            from podium.output.sarif import render_sarif

            emit_json(render_sarif(report))
        else:
            from podium.output.table import render_table

            emit_text(render_table(report, verbosity=verbose, color=sys.stdout.isatty()))
        console.print(f"run directory: {run.path}")
        code = exit_for(report.checks, fail_on)
    finally:
        run.close(int(code))
    done(code)


def _parse_profiles(text: str) -> list[str]:
    from podium.errors import UsageError

    names = [p.strip() for p in text.split(",") if p.strip()]
    if "all" in names:
        return list(PROFILES)
    bad = [n for n in names if n not in PROFILES]
    if bad or not names:
        raise UsageError(
            f"--profile: unknown profile {', '.join(bad) or '(empty)'}; use {', '.join(PROFILES)} or all"
        )
    return names
