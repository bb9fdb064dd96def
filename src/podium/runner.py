"""The one command runner: argv lists (no shell), a timeout, raw output kept.

Collectors and checks never call ``subprocess`` themselves. They take a ``CommandRunner``
so that tests (and ``--replay``) can hand them captured real outputs instead.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from podium import __version__
from podium.models.common import Provenance, utcnow
from podium.secrets import redact


class CommandOutput(BaseModel):
    """What one command printed, and whether it ran at all."""

    argv: list[str]
    returncode: int | None = Field(None, description="None when the command did not run")
    stdout: str = ""
    stderr: str = ""
    started_at: datetime = Field(default_factory=utcnow)
    duration_s: float = 0.0
    host: str = ""
    error: str | None = Field(None, description="'not found', 'timed out after Ns', 'permission denied'...")
    raw_path: str | None = Field(None, description="Raw output file, relative to the run directory")

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def ran(self) -> bool:
        return self.error is None

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    def provenance(self) -> Provenance:
        return Provenance(
            command=self.command,
            host=self.host,
            collected_at=self.started_at,
            tool_version=f"podium {__version__}",
            raw_output=self.raw_path,
        )

    def why_not(self) -> str:
        """One-line reason this output cannot be used."""
        if self.error:
            return f"`{self.command}`: {self.error}"
        tail = (self.stderr or self.stdout).strip().splitlines()[-1:] or [""]
        return f"`{self.command}` exited {self.returncode}: {tail[0][:200]}"


class CommandRunner(Protocol):
    def run(self, argv: Sequence[str], timeout: float = 30.0, name: str | None = None) -> CommandOutput: ...

    def read_file(self, path: str) -> str | None: ...


def _safe_name(argv: Sequence[str]) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(argv))[:120].strip("_") or "command"


class LocalRunner:
    """Runs commands on this host. Keeps every raw output in ``raw_dir`` when given."""

    def __init__(self, raw_dir: Path | None = None, env: Mapping[str, str] | None = None):
        self.raw_dir = raw_dir
        self.env = dict(env) if env is not None else None
        self.host = socket.gethostname()

    def run(self, argv: Sequence[str], timeout: float = 30.0, name: str | None = None) -> CommandOutput:
        argv = [str(a) for a in argv]
        started = utcnow()
        t0 = time.monotonic()
        out = CommandOutput(argv=argv, started_at=started, host=self.host)
        if shutil.which(argv[0], path=(self.env or os.environ).get("PATH")) is None:
            out.error = "not found"
            return out
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                env=self.env,
                check=False,
            )
            out.returncode = proc.returncode
            out.stdout = proc.stdout.decode("utf-8", "replace")
            out.stderr = proc.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            out.error = f"timed out after {timeout:g}s"
            out.stdout = (e.stdout or b"").decode("utf-8", "replace")
        except PermissionError:
            out.error = "permission denied"
        except OSError as e:
            out.error = f"could not start: {e.strerror or e}"
        out.duration_s = round(time.monotonic() - t0, 4)
        self._keep(out, name)
        return out

    def read_file(self, path: str) -> str | None:
        try:
            return Path(path).read_text(errors="replace")
        except OSError:
            return None

    def _keep(self, out: CommandOutput, name: str | None) -> None:
        if self.raw_dir is None:
            return
        self.raw_dir.mkdir(parents=True, exist_ok=True)
        fname = (name or _safe_name(out.argv)) + ".txt"
        path = self.raw_dir / fname
        header = (
            f"# command: {out.command}\n# host: {out.host}\n# started: {out.started_at.isoformat()}\n"
            f"# returncode: {out.returncode}\n# error: {out.error}\n# duration_s: {out.duration_s}\n"
        )
        path.write_text(
            redact(header + "# --- stdout ---\n" + out.stdout + "# --- stderr ---\n" + out.stderr)
        )
        out.raw_path = str(Path(self.raw_dir.name) / fname)


class ReplayRunner:
    """Answers commands from captured outputs: ``{argv0 or full command line: stdout}``.

    Unknown commands are 'not found', like a missing tool on a real node.
    """

    def __init__(
        self, outputs: Mapping[str, str], files: Mapping[str, str] | None = None, host: str = "replay"
    ):
        self.outputs = dict(outputs)
        self.files = dict(files or {})
        self.host = host
        self.calls: list[list[str]] = []

    def run(self, argv: Sequence[str], timeout: float = 30.0, name: str | None = None) -> CommandOutput:
        argv = [str(a) for a in argv]
        self.calls.append(argv)
        key = " ".join(argv)
        for k in (key, argv[0]):
            if k in self.outputs:
                return CommandOutput(argv=argv, returncode=0, stdout=self.outputs[k], host=self.host)
        return CommandOutput(argv=argv, host=self.host, error="not found")

    def read_file(self, path: str) -> str | None:
        return self.files.get(path)
