"""Small builders for in-memory evaluations (the rubric and the scoring code are the real ones)."""

from __future__ import annotations

from podium.models.common import Severity, Status
from podium.models.results import CheckResult
from podium.rating.evidence import EvaluationEvidence, Measurement, SourcedCheck
from podium.rating.provider import ProviderFile

SRC = {"url": "https://provider.example/trust", "date": "2026-11-01", "fictional": True}


def check(kind: str, cid: str, status: str, severity: str = "none", n: int = 0, **extra) -> SourcedCheck:
    return SourcedCheck(
        kind=kind,
        file=f"{kind}.json",
        pointer=f"/checks/{n}",
        result=CheckResult(
            id=cid, title=cid, status=Status(status), severity=Severity(severity), host="gpu-001", **extra
        ),
    )


def bench(name: str, verdict: str, value: float = 1.0, ref: float = 1.0, n: int = 0) -> Measurement:
    return Measurement(
        kind="bench",
        file="bench.json",
        pointer=f"/results/{n}",
        benchmark=name,
        metric="m",
        value=value,
        reference=ref,
        verdict=Status(verdict),
    )


def provider(name: str = "P", certs: bool = True, price: float | None = None, **declared) -> ProviderFile:
    d: dict = {"certifications": {}}
    if certs:
        d["certifications"] = {
            "soc2_type2": {"value": True, "source": SRC},
            "iso27001": {"value": True, "source": SRC},
        }
    if price is not None:
        d["pricing"] = [{"sku": "H100-SXM5-80GB", "on_demand": price, "source": SRC}]
    d.update(declared)
    return ProviderFile.model_validate({"name": name, "declared": d})


def evaluation(checks=(), measurements=(), prov: ProviderFile | None = None) -> EvaluationEvidence:
    return EvaluationEvidence(
        root="mem", provider=prov or provider(), checks=list(checks), measurements=list(measurements)
    )
