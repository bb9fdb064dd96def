"""Run directories: ``podium-runs/<run-id>/`` keeps raw outputs, facts, results and a log.

A run is resumable: each named step records its state in ``run.json``. With
``--resume <run-id>`` podium skips the steps that finished and reuses their outputs.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets as _random
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from podium import __version__
from podium.errors import InputError
from podium.models.common import utcnow
from podium.models.run import RunRecord, StepRecord, StepState
from podium.secrets import RedactingFilter, redact

DEFAULT_RUNS_ROOT = Path(os.environ.get("PODIUM_RUNS_DIR", "podium-runs"))
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def new_run_id(command: str) -> str:
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{command}-{_random.token_hex(3)}"


class RunDirectory:
    """One run's directory and its record. Create with :meth:`create` or :meth:`resume`."""

    def __init__(self, path: Path, record: RunRecord):
        self.path = path
        self.record = record
        self.raw_dir = path / "raw"
        self.log = logging.getLogger(f"podium.run.{record.run_id}")
        self._handler: logging.Handler | None = None

    # ---- lifecycle
    @classmethod
    def create(
        cls,
        command: str,
        argv: list[str] | None = None,
        root: Path | None = None,
        advisory_bundle_version: str | None = None,
        run_id: str | None = None,
    ) -> RunDirectory:
        root = root or DEFAULT_RUNS_ROOT
        run_id = run_id or new_run_id(command)
        path = root / run_id
        path.mkdir(parents=True, exist_ok=False)
        record = RunRecord(
            run_id=run_id,
            command=command,
            argv=[redact(a) for a in (argv or [])],
            podium_version=__version__,
            advisory_bundle_version=advisory_bundle_version,
            host=socket.gethostname(),
        )
        run = cls(path, record)
        run._open_log()
        run.save()
        run.log.info("run %s started: podium %s %s", run_id, __version__, " ".join(record.argv))
        return run

    @classmethod
    def resume(cls, run_id: str, root: Path | None = None) -> RunDirectory:
        root = root or DEFAULT_RUNS_ROOT
        if not _RUN_ID.match(run_id):
            raise InputError("--resume", f"'{run_id}' is not a valid run id")
        path = root / run_id
        meta = path / "run.json"
        if not meta.is_file():
            raise InputError(meta, "no such run to resume (run.json missing)")
        try:
            record = RunRecord.model_validate_json(meta.read_text())
        except ValueError as e:
            raise InputError(meta, f"corrupt run record: {str(e).splitlines()[0]}") from None
        run = cls(path, record)
        run._open_log()
        run.log.info("run %s resumed; done steps: %s", run_id, ", ".join(run.done_steps()) or "none")
        return run

    def _open_log(self) -> None:
        self.log.setLevel(logging.INFO)
        handler = logging.FileHandler(self.path / "run.log")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        handler.addFilter(RedactingFilter())
        self.log.addHandler(handler)
        self.log.propagate = False
        self._handler = handler

    def close(self, exit_code: int) -> None:
        self.record.finished_at = utcnow()
        self.record.exit_code = exit_code
        self.save()
        self.log.info("run finished with exit code %d", exit_code)
        if self._handler:
            self.log.removeHandler(self._handler)
            self._handler.close()

    def save(self) -> None:
        tmp = self.path / "run.json.tmp"
        tmp.write_text(self.record.model_dump_json(indent=2))
        tmp.replace(self.path / "run.json")

    # ---- steps
    def done_steps(self) -> list[str]:
        return [s.name for s in self.record.steps if s.state == StepState.DONE]

    def is_done(self, name: str) -> bool:
        return name in self.done_steps()

    @contextmanager
    def step(self, name: str, output: str | None = None) -> Iterator[StepRecord]:
        """Record a step; a failure is recorded (and re-raised) so that resume retries it."""
        self.record.steps = [s for s in self.record.steps if s.name != name]
        rec = StepRecord(name=name, state=StepState.RUNNING, output=output)
        self.record.steps.append(rec)
        self.save()
        self.log.info("step %s started", name)
        try:
            yield rec
        except BaseException as e:
            rec.state, rec.error, rec.finished_at = StepState.FAILED, redact(str(e))[:500], utcnow()
            self.save()
            self.log.error("step %s failed: %s", name, e)
            raise
        rec.state, rec.finished_at = StepState.DONE, utcnow()
        self.save()
        self.log.info("step %s done", name)

    # ---- files
    def write_json(self, relpath: str, data: BaseModel | list | dict) -> Path:
        path = self.path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, BaseModel):
            text = data.model_dump_json(indent=2, by_alias=True)
        else:
            text = json.dumps(_jsonable(data), indent=2, default=str)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(redact(text))
        tmp.replace(path)
        return path

    def read_json(self, relpath: str):
        return json.loads((self.path / relpath).read_text())


def _jsonable(data):
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True)
    if isinstance(data, list):
        return [_jsonable(x) for x in data]
    if isinstance(data, dict):
        return {k: _jsonable(v) for k, v in data.items()}
    return data
