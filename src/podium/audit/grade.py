"""Grade one node's components against the advisory bundle.

Pure: NodeFacts + bundle in, CheckResults out. Queries are memoised per
(component, version, product line) because a fleet repeats the same few versions thousands of times.
"""

from __future__ import annotations

from functools import lru_cache

from podium.models.common import Evidence, Provenance, Severity, Status, trusted_copy
from podium.models.facts import ComponentFact, NodeFacts
from podium.models.results import CheckResult

# Components the version audit always reports on, visible or not: a tenant-facing GPU node runs these.
AUDITED = (
    "nvidia-driver",
    "cuda-toolkit",
    "nvidia-container-toolkit",
    "gpu-operator",
    "dcgm",
    "runc",
    "containerd",
    "kubernetes",
    "slurm",
    "munge",
    "doca-host",
    "mlnx-ofed",
    "connectx-firmware",
)
# Shown only when present: their absence is normal (a Slurm node has no containerd, say).
OPTIONAL_WHEN_ABSENT = {"gpu-operator", "kubernetes", "containerd", "doca-host", "mlnx-ofed", "cuda-toolkit"}

NVD = "https://nvd.nist.gov/vuln/detail/"


def check_id(component: str) -> str:
    return f"advisory.{component}"


class Grader:
    """Holds the bundle and a memo; one per audit."""

    def __init__(self, bundle=None):
        from podium.advisories.bundle import load_default

        self.bundle = bundle or load_default()
        from podium.advisories.components import is_known

        self._is_known = is_known
        self._template = lru_cache(maxsize=65536)(self._template_uncached)
        # Full advisory detail per graded subject ("runc 1.1.11"), kept once for the fleet groups
        # instead of on every node's result.
        self.findings_by_subject: dict[str, list[dict]] = {}
        # Validated once, then copied per node with trusted_copy (see the fleet benchmark).
        self._evidence_proto = Evidence(summary="", source=Provenance())
        self._source_proto = Provenance()

    def _template_uncached(self, component: str, version: str, product_line: str | None) -> CheckResult:
        """The node-independent part of a result; a fleet repeats a few versions thousands of times."""
        from podium.advisories.match import query

        q = query(component, version, bundle=self.bundle, product_line=product_line)
        result = result_from_query(q, None, None)
        findings = result.details.pop("findings", None)
        if findings:
            self.findings_by_subject[result.subject] = findings
        return result

    def grade_node(self, facts: NodeFacts) -> list[CheckResult]:
        results = []
        for name in AUDITED:
            fact = facts.component(name)
            if fact is None or (not fact.visible and name in OPTIONAL_WHEN_ABSENT):
                continue
            results.append(self.grade_component(facts, fact))
        return results

    def grade_component(self, facts: NodeFacts, fact: ComponentFact) -> CheckResult:
        cid = check_id(fact.name)
        source = trusted_copy(
            self._source_proto,
            command=fact.source_command,
            host=facts.host,
            collected_at=facts.collected_at,
            tool_version=f"podium {facts.collector_version}",
        )
        if not fact.visible or not fact.version:
            return CheckResult(
                id=cid,
                title=f"{fact.name}: version not visible",
                status=Status.UNKNOWN,
                severity=Severity.NONE,
                host=facts.host,
                subject=f"{fact.name} (not visible)",
                reason=fact.reason or "version not reported",
                evidence=[Evidence(summary=fact.reason or "no version", source=source)],
                remediation="Ask the provider to attest the installed version, or run podium with access to it.",
            )
        if not self._is_known(fact.name):
            return CheckResult(
                id=cid,
                title=f"{fact.name} {fact.version}: no advisory source",
                status=Status.SKIPPED,
                host=facts.host,
                subject=f"{fact.name} {fact.version}",
                reason="the advisory bundle has no feed for this component",
            )
        product_line = fact.details.get("product_line") if fact.name == "nvidia-driver" else None
        try:
            template = self._template(fact.name, fact.version, product_line)
        except Exception as e:  # an unparsable version is unknown, not a crash and not a pass
            return CheckResult(
                id=cid,
                title=f"{fact.name} {fact.version}: cannot grade",
                status=Status.UNKNOWN,
                host=facts.host,
                subject=f"{fact.name} {fact.version}",
                reason=str(e),
                evidence=[Evidence(summary=f"version {fact.version!r}", value=fact.version, source=source)],
            )
        # shallow copy: details are shared read-only between nodes with the same version
        evidence = [
            trusted_copy(
                self._evidence_proto,
                summary=f"{fact.name} version {fact.version}",
                value=fact.version,
                source=source,
            )
        ]
        result = trusted_copy(template, host=facts.host, evidence=evidence)
        distro = fact.details.get("distro_package_version")
        if distro and result.status in (Status.FAIL, Status.WARN):
            # Debian/Ubuntu patch old upstream versions in place; the upstream version alone overstates risk.
            result.details = dict(result.details)
            note = (
                f"distro package {distro}: the distribution may have backported fixes; "
                "check its security tracker before upgrading"
            )
            result.details["notes"] = [*result.details.get("notes", []), note]
            result.evidence.append(Evidence(summary=note, value=distro, source=source))
        return result


def result_from_query(q, host: str | None, source: Provenance | None) -> CheckResult:
    component, version = q.component, q.version
    subject = f"{component} {version}"
    evidence = [Evidence(summary=f"{component} version {version}", value=version, source=source)]
    if not q.findings and not q.no_fix_on_line:
        return CheckResult(
            id=check_id(component),
            title=f"{subject}: no known advisories",
            status=Status.PASS,
            host=host,
            subject=subject,
            evidence=evidence,
            details={"line": q.line, "bundle_version": q.bundle_version},
        )
    worst = Severity.NONE
    for f in q.findings:
        # An advisory with no score anywhere is graded as high so that it can never pass silently.
        sev = Severity.HIGH if f.severity == "unknown" else Severity.parse(f.severity)
        if sev.rank > worst.rank:
            worst = sev
    cves = sorted({a for f in q.findings for a in [f.id, *f.aliases] if a.startswith("CVE-")})
    n = len(cves) or len(q.findings)
    status = Status.FAIL if worst.rank >= Severity.HIGH.rank or q.no_fix_on_line else Status.WARN
    if q.upgrade_to:
        where = " (moves to another branch)" if q.upgrade_line_change else ""
        remediation = f"Upgrade {component} to {q.upgrade_to}{where}."
    else:
        remediation = (
            f"No fixed {component} version is known for these advisories; mitigate per the bulletins."
        )
    title = f"{subject}: {n} advisor{'y' if n == 1 else 'ies'}" + (
        f", upgrade to {q.upgrade_to}" if q.upgrade_to else ""
    )
    if q.no_fix_on_line:
        title += f"; no fix on {q.line or 'this line'} for {len(q.no_fix_on_line)}"
    refs = []
    for f in q.findings:
        refs.extend(f.references[:1] or ([f.source_url] if f.source_url else []))
    refs.extend(NVD + c for c in cves)
    return CheckResult(
        id=check_id(component),
        title=title,
        status=status,
        severity=worst if worst != Severity.NONE else Severity.MEDIUM,
        host=host,
        subject=subject,
        evidence=evidence,
        remediation=remediation,
        references=list(dict.fromkeys(r for r in refs if r)),
        details={
            "line": q.line,
            "product_line": q.product_line,
            "cves": cves,
            "upgrade_to": q.upgrade_to,
            "upgrade_line_change": q.upgrade_line_change,
            "no_fix_on_line": q.no_fix_on_line,
            "fixed_in": {f.id: f.fixed_in for f in q.findings},
            "findings": [f.model_dump(mode="json") for f in q.findings],
            "notes": q.notes,
            "bundle_version": q.bundle_version,
        },
    )
