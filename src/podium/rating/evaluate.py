"""``podium evaluate``: run audit, isolation, health and the quick bench, then store, score and report.

Each step calls its component's library function, imported lazily. A component that is not
installed makes its step ``skipped`` with the reason "component not installed"; a step that
raises is ``failed`` with the error; either way the evaluation goes on and the report says so.
Nothing is ever counted as a pass because it did not run.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from podium.models.common import utcnow
from podium.rating.evidence import load_evaluation
from podium.rating.provider import load_provider
from podium.rating.rubric import Rubric
from podium.rating.scoring import Scorecard, score_evaluation

STEPS = ("audit", "isolation", "health", "bench")


class ComponentMissing(Exception):
    """The podium component (or a dependency of it) is not installed."""


class StepOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    state: Literal["ran", "skipped", "failed"]
    reason: str | None = None
    file: str | None = Field(None, description="Evidence file, relative to the run directory")


class EvaluateResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    card: Scorecard
    steps: list[StepOutcome]
    outputs: dict[str, Path]
    run_dir: Path


def import_component(module: str) -> Any:
    """Import a podium component; ComponentMissing names what is missing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        missing = e.name or module
        if module == missing or module.startswith(missing + "."):
            raise ComponentMissing("component not installed") from None
        raise ComponentMissing(f"dependency not installed: {missing}") from None


def _dump(value: Any, kind: str) -> Any:
    """A component's result as JSON data, tagged with its kind and time when it has none."""
    if isinstance(value, BaseModel):
        data: Any = value.model_dump(mode="json", by_alias=True)
    elif isinstance(value, list):
        data = {
            "checks": [
                v.model_dump(mode="json", by_alias=True) if isinstance(v, BaseModel) else v for v in value
            ]
        }
    else:
        data = value
    if isinstance(data, dict):
        data.setdefault("kind", kind)
        data.setdefault("collected_at", utcnow().isoformat())
    return data


def _audit(runner, backend: str, state: dict) -> Any:
    facts_mod = import_component("podium.facts.collect")
    audit_mod = import_component("podium.audit.api")
    if backend == "slurm":  # every node of the cluster, one srun task each
        fanout = import_component("podium.facts.fanout")
        facts_all, problems = fanout.collect_slurm(runner)
        state["facts"] = facts_all[0]
        report = audit_mod.run_audit(facts_all)
        report.warnings.extend(problems)
        return report
    facts = facts_mod.collect_local_facts(runner)
    state["facts"] = facts
    return audit_mod.run_audit([facts])


def _isolation(runner, backend: str, state: dict) -> Any:
    checks_mod = import_component("podium.checks.api")
    return checks_mod.run_checks(["isolation", "config"], runner, targets=None, facts=state.get("facts"))


def _health(runner, backend: str, state: dict) -> Any:
    if backend == "slurm":  # passive checks on every node through srun, merged
        slurm_mod = import_component("podium.health.integrations.slurm")
        return slurm_mod.fan_out(runner, ["--quick"])
    health_mod = import_component("podium.health.api")
    return health_mod.run_health(mode="quick", runner=runner)


def _bench(runner, backend: str, state: dict) -> Any:
    bench_mod = import_component("podium.bench.api")
    # the bench records its own resumable steps ('bench:<name>') in the evaluation's run directory
    return bench_mod.run_bench(suite="quick", backend=backend, run=state.get("run"))


STEP_FUNCTIONS: dict[str, Callable[[Any, str, dict], Any]] = {
    "audit": _audit,
    "isolation": _isolation,
    "health": _health,
    "bench": _bench,
}


def evaluate(
    out: Path,
    provider_path: Path | None,
    backend: str,
    rubric: Rubric,
    skip: set[str] | None = None,
    db: str | None = None,
    functions: dict[str, Callable[[Any, str, dict], Any]] | None = None,
) -> EvaluateResult:
    """Run the evaluation into ``out`` (runs/<run-id>/ for evidence, index.html for the report).

    ``db``: None = do not store; "" = the default store; else a path or URL.
    """
    from podium.report.write import write_scorecard
    from podium.runner import LocalRunner
    from podium.runs import RunDirectory

    if provider_path is not None:
        load_provider(provider_path)  # bad input stops here, before anything runs
    skip = skip or set()
    functions = functions or STEP_FUNCTIONS
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    run = RunDirectory.create("evaluate", argv=sys.argv[1:], root=out / "runs")
    runner = LocalRunner(raw_dir=run.raw_dir)
    state: dict = {"run": run}
    steps: list[StepOutcome] = []
    for name in STEPS:
        if name in skip:
            steps.append(StepOutcome(name=name, state="skipped", reason="skipped with --skip"))
            continue
        try:
            with run.step(name, output=f"evidence/{name}.json"):
                result = functions[name](runner, backend, state)
                run.write_json(f"evidence/{name}.json", _dump(result, name))
            steps.append(StepOutcome(name=name, state="ran", file=f"evidence/{name}.json"))
        except ComponentMissing as e:
            steps.append(StepOutcome(name=name, state="skipped", reason=str(e)))
        except Exception as e:  # one failed step must not lose the others
            steps.append(StepOutcome(name=name, state="failed", reason=f"{type(e).__name__}: {e}"[:300]))
    if "facts" in state:
        run.write_json("evidence/facts.json", state["facts"])
    if backend == "slurm":
        note = (
            "backend slurm: audit facts and health came from every node through srun, the bench ran through "
            "sbatch; isolation checks ran on this host (a tenant's view)"
        )
    elif backend != "local":
        note = f"backend {backend}: the bench ran through {backend}; audit and health ran on this host"
    else:
        note = None
    evidence_dir = run.path / "evidence"
    evidence_dir.mkdir(exist_ok=True)
    ev = load_evaluation(evidence_dir, provider_path)
    if provider_path is None:
        ev.provider.name = f"this cluster ({run.record.host})"
    for s in steps:
        if s.state != "ran":
            ev.notes.append(f"step {s.name} {s.state}: {s.reason}; its rubric items are unknown (gaps)")
    if note:
        ev.notes.append(note)
    card = score_evaluation(ev, rubric)
    run.write_json("steps.json", [s.model_dump(mode="json") for s in steps])
    if db is not None:
        from podium.store.db import Store

        store = Store.open(db or None)
        store.import_evaluation(ev, evidence_dir)
        store.save_scorecard(card)
    outputs = write_scorecard(card, rubric, out)
    run.close(0)
    return EvaluateResult(card=card, steps=steps, outputs=outputs, run_dir=run.path)
