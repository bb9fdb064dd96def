"""``podium runs list|show|diff|import``: the results store."""

from __future__ import annotations

from pathlib import Path

import typer

from podium.cli.common import JSON_OPTION, emit_json
from podium.cli.rating import DB_OPTION

runs_app = typer.Typer(help="Runs in the results store: list, show, diff, import.", no_args_is_help=True)


@runs_app.command("list")
def list_cmd(
    provider: str = typer.Option(None, "--provider", help="Only this provider."),
    kind: str = typer.Option(None, "--kind", help="Only this kind (audit, isolation, health, bench, ...)."),
    db: str = DB_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """List stored runs, oldest first per provider and kind."""
    from podium.store.db import Store

    rows = Store.open(db).list_runs(provider, kind)
    if json_out:
        emit_json([r.model_dump(mode="json") for r in rows])
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="podium runs")
    for col in ("Run", "Provider", "Cluster", "Kind", "Collected", "Findings", "Measurements"):
        table.add_column(col)
    for r in rows:
        when = r.collected_at.isoformat(timespec="minutes") if r.collected_at else "-"
        table.add_row(
            r.run_id,
            escape(r.provider),
            escape(r.cluster),
            r.kind,
            when,
            str(r.findings),
            str(r.measurements),
        )
    _console().print(table)


@runs_app.command("show")
def show_cmd(
    run_id: str = typer.Argument(..., help="Run id (a unique prefix is enough)."),
    db: str = DB_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Show one run: its findings and measurements with provenance."""
    from podium.store.db import Store

    detail = Store.open(db).show(run_id)
    if json_out:
        emit_json(detail)
        return
    con = _console()
    r = detail.run
    con.print(
        f"{r.run_id}: {r.provider} / {r.cluster}, {r.kind}, collected {r.collected_at}, from {r.source_path}",
        markup=False,
    )
    for f in detail.findings:
        con.print(f"  {f.status:<8} {f.severity:<8} {f.check_id} {f.host or ''}: {f.title}", markup=False)
    for m in detail.measurements:
        con.print(
            f"  {m.verdict:<8} {m.benchmark} {m.metric} = {m.value} {m.unit or ''} (reference {m.reference})",
            markup=False,
        )


@runs_app.command("diff")
def diff_cmd(
    before: str = typer.Argument(..., help="Earlier run id."),
    after: str = typer.Argument(..., help="Later run id."),
    db: str = DB_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Compare two runs of the same kind and cluster: new, fixed and still-open findings."""
    from podium.store.db import Store

    d = Store.open(db).diff(before, after)
    if json_out:
        emit_json(d)
        return
    con = _console()
    con.print(f"{d.before.run_id} -> {d.after.run_id} ({d.hours_between} h apart)", markup=False)
    for label, items in (("fixed", d.fixed), ("new", d.new), ("still open", d.still_open)):
        for f in items:
            con.print(f"  {label:<10} {f.check_id} {f.host or ''}: {f.title}", markup=False)
    for m in d.measurements:
        if m.change_percent:
            con.print(
                f"  changed    {m.benchmark} {m.metric} {m.host or ''}: {m.before} -> {m.after} ({m.change_percent:+}%)",
                markup=False,
            )


@runs_app.command("import")
def import_cmd(
    evaluation: Path = typer.Argument(..., help="Evaluation directory, or a directory of them."),
    db: str = DB_OPTION,
    json_out: bool = JSON_OPTION,
) -> None:
    """Import evaluation directories (evidence JSON, provider.yaml, slurm/) into the store."""
    from podium.rating.evidence import PROVIDER_FILE_NAMES, load_evaluation
    from podium.rating.ranking import load_providers_dir
    from podium.store.db import Store

    store = Store.open(db)
    is_one = any((evaluation / n).is_file() for n in PROVIDER_FILE_NAMES) or any(evaluation.glob("*.json"))
    evaluations = [load_evaluation(evaluation)] if is_one else load_providers_dir(evaluation)
    ids = {ev.provider.name: store.import_evaluation(ev, Path(ev.root)) for ev in evaluations}
    if json_out:
        emit_json(ids)
    else:
        from podium.cli.common import stderr_console

        for name, runs in ids.items():
            stderr_console().print(f"{name}: {len(runs)} runs", markup=False)


def _console():
    from podium.cli.common import stderr_console

    con = stderr_console()
    if not con.is_terminal:
        con.width = 160
    return con


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
