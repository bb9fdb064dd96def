"""``podium advisories build|query|info``: the offline advisory database."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from podium.cli.common import FAIL_ON_OPTION, JSON_OPTION, FailOn, done, emit_json, stderr_console

advisories_app = typer.Typer(
    name="advisories",
    help="Offline advisory database: build the bundle, query a component version, show bundle info.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def _load(bundle: Path | None):
    from podium.advisories.bundle import load_bundle, load_default, staleness_warning

    b = load_bundle(bundle) if bundle else load_default()
    warning = staleness_warning(b)
    if warning:
        print(f"podium: warning: {warning}", file=sys.stderr)
    return b


@advisories_app.command("build")
def build(
    from_dir: Path = typer.Option(..., "--from", help="Snapshot folder (nvidia-psirt/, osv/...)."),
    out: Path = typer.Option(..., "--out", help="Bundle file to write (.json or .json.gz)."),
    commit: list[str] = typer.Option(
        [], "--commit", help="NAME=SHA upstream commit of a source (overrides SOURCES.md)."
    ),
    json_out: bool = JSON_OPTION,
) -> None:
    """Build a dated bundle; fails closed when any source yields nothing."""
    from podium.advisories.bundle import build_bundle, bundle_summary, save_bundle
    from podium.errors import UsageError

    commits = {}
    for c in commit:
        name, sep, sha = c.partition("=")
        if not sep or not sha:
            raise UsageError(f"--commit expects NAME=SHA, got {c!r}")
        commits[name] = sha
    bundle = build_bundle(from_dir, commits=commits)
    save_bundle(bundle, out)
    summary = bundle_summary(bundle)
    if json_out:
        emit_json({"out": str(out), **summary})
    else:
        con = stderr_console()
        con.print(
            f"wrote {out}: bundle {bundle.version}, {summary['advisories']} advisories, "
            f"{summary['ranges']} ranges, {summary['unparsed']} unparsed items",
            markup=False,
        )
        for s in bundle.sources:
            con.print(
                f"  {s.name}: {s.records} files, {s.advisories} advisories, commit {s.commit or 'unknown'}",
                markup=False,
            )


@advisories_app.command("query")
def query_cmd(
    component: str = typer.Argument(..., help="Component name or alias, e.g. nvidia-driver, runc, kubelet."),
    version: str = typer.Argument(..., help="Installed version, e.g. 535.104.05."),
    product_line: str = typer.Option(
        None,
        "--product-line",
        help="Driver: datacenter (default), geforce, rtx, vgpu-host, vgpu-guest, cloud-gaming. "
        "Distro packages: the distro release, e.g. Ubuntu:22.04:LTS.",
    ),
    platform: str = typer.Option("linux", "--platform", help="linux or windows."),
    bundle: Path = typer.Option(None, "--bundle", help="Bundle file (default: the one shipped with podium)."),
    json_out: bool = JSON_OPTION,
    fail_on: FailOn = FAIL_ON_OPTION,
) -> None:
    """Advisories that affect one component version, the fix on its line and the upgrade to make."""
    from podium.advisories.match import query, severity_at_or_above
    from podium.errors import ExitCode

    b = _load(bundle)
    result = query(component, version, bundle=b, product_line=product_line, platform=platform)
    if json_out:
        emit_json(result)
    else:
        _print_result(result)
    failing = severity_at_or_above(result, fail_on.value)
    done(ExitCode.FINDINGS if failing else ExitCode.OK)


def _print_result(result) -> None:
    from rich.table import Table

    con = stderr_console()
    line = f" (line {result.line})" if result.line else ""
    con.print(
        f"{result.component} {result.version}{line}: {len(result.findings)} advisories, bundle {result.bundle_version}",
        markup=False,
    )
    if result.findings:
        table = Table(show_header=True, header_style="bold")
        for col in ("id", "aliases", "severity", "cvss", "fixed_in", "source"):
            table.add_column(col)
        for f in result.findings:
            table.add_row(
                f.id,
                ", ".join(a for a in f.aliases if a.startswith("CVE-"))[:40],
                f.severity,
                "" if f.cvss is None else f"{f.cvss:.1f}",
                f.fixed_in or "no fix on line",
                f.source,
            )
        con.print(table)
    if result.no_fix_on_line:
        con.print(f"no fix on this line: {', '.join(result.no_fix_on_line)}", markup=False)
    if result.upgrade_to:
        change = " (moves to another line)" if result.upgrade_line_change else ""
        con.print(f"upgrade to: {result.upgrade_to}{change}", markup=False)
    for n in result.notes:
        con.print(f"note: {n}", markup=False)


@advisories_app.command("info")
def info(
    bundle: Path = typer.Option(None, "--bundle", help="Bundle file (default: the one shipped with podium)."),
    json_out: bool = JSON_OPTION,
) -> None:
    """Bundle version, date, sources, counts, unparsed items and age."""
    from podium.advisories.bundle import bundle_age_days, bundle_summary

    b = _load(bundle)
    summary = {**bundle_summary(b), "age_days": bundle_age_days(b)}
    if json_out:
        emit_json(summary)
        return
    con = stderr_console()
    con.print(
        f"bundle {summary['version']} (built {summary['built_at']}, {summary['age_days']} days old), "
        f"podium {summary['podium_version']}",
        markup=False,
    )
    con.print(
        f"{summary['advisories']} advisories, {summary['ranges']} ranges, {summary['unparsed']} unparsed items",
        markup=False,
    )
    for s in summary["sources"]:
        con.print(
            f"  {s['name']}: {s['records']} files, {s['advisories']} advisories, "
            f"commit {s['commit'] or 'unknown'} {s['date'] or ''}",
            markup=False,
        )
    con.print("components: " + ", ".join(f"{k} {v}" for k, v in summary["components"].items()), markup=False)


def register(app: typer.Typer) -> None:
    """Add the ``advisories`` command group to the root app."""
    app.add_typer(advisories_app, name="advisories")
