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
    from podium.cli import schema

    for module in (schema,):
        module.register(app)


_register()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; expected errors print one line and exit 2, unexpected ones exit 3."""
    from podium.errors import ExitCode, PodiumError

    try:
        app(args=argv, prog_name="podium", standalone_mode=False)
    except SystemExit as e:  # typer.Exit inside standalone_mode=False surfaces as return value
        return int(e.code or 0)
    except PodiumError as e:
        print(f"podium: error: {e}", file=sys.stderr)
        return int(e.exit_code)
    except KeyboardInterrupt:
        print("podium: interrupted; finished steps are kept, re-run with --resume", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the one place that turns crashes into exit 3
        import click

        if isinstance(e, click.exceptions.Exit):
            return int(e.exit_code)
        if isinstance(e, click.exceptions.Abort):
            return 130
        if isinstance(e, click.ClickException):
            e.show()
            return int(ExitCode.BAD_INPUT)
        print(f"podium: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        if "PODIUM_DEBUG" in __import__("os").environ:
            raise
        return int(ExitCode.INTERNAL)
    return 0


def entry() -> None:
    sys.exit(main())
