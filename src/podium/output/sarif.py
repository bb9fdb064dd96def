"""SARIF 2.1.0 output, so findings land in code-scanning dashboards and ticket systems."""

from __future__ import annotations

from podium import __version__
from podium.audit.report import AuditReport

_LEVEL = {"fail": "error", "warn": "warning", "unknown": "note", "skipped": "none", "pass": "none"}
_SCORE = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "2.0"}


def render_sarif(report: AuditReport) -> dict:
    rules: dict[str, dict] = {}
    results = []
    for c in report.checks:
        if c.status.value == "pass":
            continue
        rules.setdefault(
            c.id,
            {
                "id": c.id,
                "name": c.id.replace(".", "_"),
                "shortDescription": {"text": c.id},
                "helpUri": c.references[0] if c.references else "https://github.com/podium",
                "properties": {"category": c.category},
            },
        )
        props = {"status": c.status.value, "severity": c.severity.value, "host": c.host, "subject": c.subject}
        if c.severity.value in _SCORE:
            props["security-severity"] = _SCORE[c.severity.value]
        if c.details.get("cves"):
            props["cves"] = c.details["cves"]
        msg = (
            c.title
            + (f" Remediation: {c.remediation}" if c.remediation else "")
            + (f" Reason: {c.reason}" if c.reason else "")
        )
        results.append(
            {
                "ruleId": c.id,
                "level": _LEVEL[c.status.value],
                "message": {"text": msg},
                "locations": [
                    {
                        "logicalLocations": [
                            {
                                "name": c.host or "unknown-host",
                                "kind": "host",
                                "fullyQualifiedName": f"{c.host}/{c.subject or c.id}",
                            }
                        ]
                    }
                ],
                "partialFingerprints": {"podium/v1": f"{c.id}|{c.host}|{c.subject}"},
                "properties": props,
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "podium",
                        "version": __version__,
                        "informationUri": "https://github.com/podium",
                        "rules": list(rules.values()),
                    }
                },
                "results": results,
                "properties": {
                    "advisoryBundle": report.advisory_bundle.version if report.advisory_bundle else None,
                    "runId": report.run_id,
                },
            }
        ],
    }
