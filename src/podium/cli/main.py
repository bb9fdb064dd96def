"""The ``podium`` entry point. Maps errors onto the stable exit codes (see podium.errors)."""

from __future__ import annotations

import sys

import typer

from podium import __version__

app = typer.Typer(
    name="podium",
    help="Rate GPU clouds with evidence: audit, health, benchmarks, endpoints and a published rubric.\n\n"
    "Exit codes: 0 ok, 1 findings at or above --fail-on, 2 bad usage or input, 3 internal error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"podium {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """podium: rate GPU clouds with evidence."""


def _register() -> None:
    # One line per command group; each module exposes `register(app)`.
    from podium.cli import (
        advisories,
        audit,
        bench,
        checks,
        endpoint,
        facts,
        health,
        inference,
        rating,
        runs,
        schema,
    )

    for module in (
        schema,
        facts,
        audit,
        advisories,
        checks,
        health,
        bench,
        rating,
        runs,
        endpoint,
        inference,
    ):
        module.register(app)


_register()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; expected errors print one line and exit 2, unexpected ones exit 3.

    Typer's standalone mode already turns usage errors into exit 2 with a message.
    """
    import os

    from podium.errors import ExitCode, PodiumError

    try:
        app(args=argv, prog_name="podium")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except PodiumError as e:
        print(f"podium: error: {e}", file=sys.stderr)
        return int(e.exit_code)
    except KeyboardInterrupt:
        print("podium: interrupted; finished steps are kept, re-run with --resume", file=sys.stderr)
        return 130
    except Exception as e:  # the one place that turns crashes into exit 3
        print(f"podium: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        if os.environ.get("PODIUM_DEBUG"):
            raise
        return int(ExitCode.INTERNAL)
    return 0


def entry() -> None:
    sys.exit(main())
