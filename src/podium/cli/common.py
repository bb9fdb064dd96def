"""Helpers every command uses: stderr console, JSON on stdout, exit codes, --fail-on."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Any

import typer

from podium.errors import ExitCode


class FailOn(str, Enum):
    critical = "critical"
    high = "high"
    medium = "medium"
    low = "low"
    info = "info"
    never = "never"


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    sarif = "sarif"


def stderr_console():
    """Human output, progress and warnings go to stderr so that stdout stays machine-readable."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=False)


def emit_json(data: Any) -> None:
    """Print machine output on stdout, and nothing else."""
    from pydantic import BaseModel

    from podium.secrets import redact

    if isinstance(data, BaseModel):
        text = data.model_dump_json(indent=2, by_alias=True)
    else:
        text = json.dumps(data, indent=2, default=str)
    sys.stdout.write(redact(text) + "\n")
    sys.stdout.flush()


def emit_text(text: str) -> None:
    from podium.secrets import redact

    sys.stdout.write(redact(text))
    if not text.endswith("\n"):
        sys.stdout.write("\n")
    sys.stdout.flush()


def exit_for(results, fail_on: FailOn) -> ExitCode:
    """0 when nothing is at or above --fail-on, else 1."""
    from podium.models.common import Severity
    from podium.models.results import exceeds

    if fail_on == FailOn.never:
        return ExitCode.OK
    return ExitCode.FINDINGS if exceeds(list(results), Severity(fail_on.value)) else ExitCode.OK


def done(code: ExitCode | int) -> None:
    raise typer.Exit(int(code))


FAIL_ON_OPTION = typer.Option(
    FailOn.high,
    "--fail-on",
    help="Exit 1 when a finding is at or above this severity ('never' to always exit 0).",
)
JSON_OPTION = typer.Option(False, "--json", help="Print only machine-readable JSON on stdout.")
