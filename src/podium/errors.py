"""Error types that map onto podium's stable exit codes.

Exit codes are the same in every command:
0 = ran, nothing at or above ``--fail-on``; 1 = findings at or above that level;
2 = bad usage or bad input; 3 = internal error.
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1
    BAD_INPUT = 2
    INTERNAL = 3


class PodiumError(Exception):
    """Base class for errors podium expects and reports in one line."""

    exit_code: ExitCode = ExitCode.INTERNAL


class InputError(PodiumError):
    """Bad input from the user: a file, a flag value or a document that does not parse.

    The message always names the file (or flag) and the problem, on one line.
    """

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, source: str | Path, problem: str):
        self.source = str(source)
        self.problem = " ".join(str(problem).split())  # one line, always
        super().__init__(f"{self.source}: {self.problem}")


class ParseError(InputError):
    """A parser met truncated, empty or garbage input. Typed, never a traceback."""


class UsageError(PodiumError):
    """Flags that contradict each other or name something unknown."""

    exit_code = ExitCode.BAD_INPUT
