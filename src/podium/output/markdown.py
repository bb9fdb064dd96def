"""Markdown rendering of an audit report (for tickets, PRs and provider hand-offs)."""

from __future__ import annotations

from podium.audit.report import AuditReport


def md_escape(text: str | None) -> str:
    """Node-supplied strings are untrusted: neutralise table pipes, HTML and newlines."""
    if text is None:
        return ""
    out = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(out.split())


def render_markdown(report: AuditReport, verbosity: int = 1) -> str:
    lines = ["# podium audit", ""]
    b = report.advisory_bundle
    lines.append(f"- podium {report.podium_version}, generated {report.generated_at:%Y-%m-%d %H:%M UTC}")
    if report.run_id:
        lines.append(f"- run `{md_escape(report.run_id)}`")
    if b:
        lines.append(f"- advisory bundle `{b.version}` ({b.age_days} days old{', STALE' if b.stale else ''})")
    lines.append(f"- nodes: {len(report.nodes)}; profiles: {', '.join(report.profiles)}")
    s = report.summary
    lines += [
        "",
        f"**PASS {s.pass_} · WARN {s.warn} · FAIL {s.fail} · UNKNOWN {s.unknown} · SKIPPED {s.skipped}**",
        "",
    ]
    for w in report.warnings:
        lines.append(f"> warning: {md_escape(w)}")
    lines += [
        "",
        "| status | severity | nodes | check | finding | upgrade to |",
        "|---|---|---:|---|---|---|",
    ]
    for g in report.groups:
        lines.append(
            f"| {g.status.upper()} | {g.severity} | {g.node_count} | `{md_escape(g.id)}` | {md_escape(g.title)} | "
            f"{md_escape(g.upgrade_to) or '-'} |"
        )
    if verbosity >= 1:
        details = [c for c in report.checks if c.status.value in ("fail", "warn", "unknown")]
        findings_of = {(g.id, g.subject): g.findings for g in report.groups}
        seen = set()
        if details:
            lines += ["", "## Details", ""]
        for c in details:
            key = c.group_key()
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"### {c.status.value.upper()}: {md_escape(c.title)}")
            if c.reason:
                lines.append(f"- reason: {md_escape(c.reason)}")
            if c.remediation:
                lines.append(f"- remediation: {md_escape(c.remediation)}")
            for f in findings_of.get((c.id, c.subject), []):
                fixed = f.get("fixed_in") or "no fix on this line"
                lines.append(
                    f"- {f['id']} ({f['severity']}{', CVSS ' + str(f['cvss']) if f.get('cvss') is not None else ''}): fixed in {md_escape(fixed)} — {md_escape(f.get('source'))}"
                )
            for e in c.evidence:
                src = e.source
                where = (
                    f" (`{md_escape(src.command)}` on {md_escape(src.host)} at {src.collected_at:%Y-%m-%d %H:%M})"
                    if src and src.command and src.collected_at
                    else ""
                )
                lines.append(f"- evidence: {md_escape(e.summary)}{where}")
            lines.append("")
    return "\n".join(lines) + "\n"
