"""``podium checks``: list the isolation/config checks (and run them, for testing without the audit command)."""

from __future__ import annotations

import typer

from podium.cli.common import FAIL_ON_OPTION, JSON_OPTION, FailOn, done, emit_json, exit_for, stderr_console


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="checks",
        help="Isolation and configuration checks (what they read, what they send).",
        no_args_is_help=True,
        rich_markup_mode=None,
    )

    @group.command("list")
    def list_(json_out: bool = JSON_OPTION) -> None:
        """List every check with its id, category, profile, what it reads and what it sends."""
        from podium.checks.api import list_checks

        infos = list_checks()
        if json_out:
            emit_json({"checks": [i.model_dump() for i in infos]})
            return
        from rich.table import Table

        table = Table(title=f"{len(infos)} checks (docs/safety.md: what podium sends)", show_lines=False)
        table.add_column("id", no_wrap=True)
        for col in ("profile", "title", "reads", "sends"):
            table.add_column(col, overflow="fold")
        for i in infos:
            table.add_row(i.id, i.profile, i.title, "\n".join(i.reads) or "-", i.sends)
        stderr_console().print(table)

    @group.command("run", hidden=True)
    def run(
        profile: str = typer.Option(
            "isolation,config", "--profile", help="isolation, config or all (comma-separated)."
        ),
        targets: list[str] = typer.Option(
            [],
            "--targets",
            help="Addresses or CIDRs to probe (repeat or comma-separate; at most 256 addresses).",
        ),
        only: list[str] = typer.Option(
            [], "--only", help="Run only check ids matching this pattern (repeatable), e.g. 'exposure.*'."
        ),
        no_default_targets: bool = typer.Option(
            False,
            "--no-default-targets",
            help="Probe only --targets: not the default gateway, not 169.254.169.254.",
        ),
        sysfs_root: str = typer.Option("/", "--root", help="Root of the node filesystem to read (tests)."),
        timeout_s: float = typer.Option(2.0, "--timeout", help="Seconds per probe."),
        json_out: bool = JSON_OPTION,
        fail_on: FailOn = FAIL_ON_OPTION,
    ) -> None:
        """Run the checks of a profile here and print {"checks": [...]} (the audit command's shape)."""
        from podium.checks.api import run_checks, run_checks_matching
        from podium.checks.model import ChecksReport
        from podium.runner import LocalRunner

        common = {"targets": targets or None, "sysfs_root": sysfs_root, "timeout_s": timeout_s}
        profiles = [p for p in profile.split(",") if p.strip()]
        if only or no_default_targets:
            from podium.checks.api import select

            patterns = only or [c.id for c in select(profiles)]
            results = run_checks_matching(
                patterns, LocalRunner(), **common, include_default_targets=not no_default_targets
            )
        else:
            results = run_checks(profiles, LocalRunner(), **common)
        if json_out:
            emit_json(ChecksReport(checks=results))
        else:
            from rich.table import Table
            from rich.text import Text

            table = Table(title=f"{len(results)} results")
            table.add_column("status", no_wrap=True)
            table.add_column("severity", no_wrap=True)
            table.add_column("id", no_wrap=True)
            table.add_column("subject / reason", overflow="fold")
            for r in results:
                # Text() so that brackets in reasons are never read as Rich markup
                table.add_row(r.status.value, r.severity.value, r.id, Text(r.subject or r.reason or ""))
            stderr_console().print(table)
        done(exit_for(results, fail_on))

    app.add_typer(group)
