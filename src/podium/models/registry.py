"""Names for ``podium schema``: model name -> 'module:Class'. Add a line when you add a boundary model."""

from __future__ import annotations

import importlib

MODELS: dict[str, str] = {
    "NodeFacts": "podium.models.facts:NodeFacts",
    "ComponentFact": "podium.models.facts:ComponentFact",
    "CheckResult": "podium.models.results:CheckResult",
    "Finding": "podium.models.results:CheckResult",
    "RunRecord": "podium.models.run:RunRecord",
    "AuditReport": "podium.audit.report:AuditReport",
    "AdvisoryBundle": "podium.advisories.model:AdvisoryBundle",
    "AdvisoryQueryResult": "podium.advisories.model:QueryResult",
    "Advisory": "podium.advisories.model:Advisory",
    "AffectedRange": "podium.advisories.model:AffectedRange",
    "AdvisoryMatch": "podium.advisories.model:AdvisoryMatch",
    "CheckInfo": "podium.checks.model:CheckInfo",
    "ChecksReport": "podium.checks.model:ChecksReport",
    "HealthReport": "podium.health.models:HealthReport",
    "NodeHealth": "podium.health.models:NodeHealth",
    "BenchResult": "podium.bench.model:BenchResult",
    "BenchReport": "podium.bench.model:BenchReport",
    "BenchReference": "podium.bench.model:Reference",
    "NcclTestsRun": "podium.bench.nccl_tests_parse:NcclTestsRun",
    "FioRun": "podium.bench.storage:FioRun",
    "ProviderFile": "podium.rating.provider:ProviderFile",
    "Rubric": "podium.rating.rubric:Rubric",
    "Scorecard": "podium.rating.scoring:Scorecard",
    "Ranking": "podium.rating.ranking:Ranking",
    "SchedulerReliability": "podium.rating.scheduler:SchedulerReliability",
    "RunDiff": "podium.store.db:RunDiff",
    "EndpointBenchConfig": "podium.endpoint.models:EndpointBenchConfig",
    "EndpointBenchReport": "podium.endpoint.models:EndpointBenchReport",
    "EndpointRequestRecord": "podium.endpoint.models:RequestRecord",
    "InferenceSystem": "podium.inference.system:SystemDescription",
    "InferenceSweepResult": "podium.inference.results:SweepResult",
    "InferenceCompareReport": "podium.inference.compare:CompareReport",
    "InferenceXRow": "podium.inference.inferencex:InferenceXRow",
    "InferenceServeOutcome": "podium.inference.serve:ServeOutcome",
}


def load_model(name: str):
    module, cls = MODELS[name].split(":")
    return getattr(importlib.import_module(module), cls)
