"""Human table of grouped results, PASS/WARN/FAIL/UNKNOWN per check; -v adds versions, -vv links."""

from __future__ import annotations

from io import StringIO

from podium.audit.report import AuditReport

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "unknown": "magenta", "skipped": "dim"}


def render_table(report: AuditReport, verbosity: int = 0, color: bool = False, width: int = 140) -> str:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    buf = StringIO()
    console = Console(file=buf, force_terminal=color, width=width, highlight=False, no_color=not color)
    b = report.advisory_bundle
    if b:
        console.print(
            f"advisory bundle {b.version} (data to {b.data_date:%Y-%m-%d}, {b.age_days} days old)"
            if b.data_date
            else f"advisory bundle {b.version}"
        )
    nodes = len(report.nodes)
    console.print(f"{nodes} node{'s' if nodes != 1 else ''} audited, profiles: {', '.join(report.profiles)}")
    table = Table(show_lines=False, header_style="bold")
    table.add_column("STATUS")
    table.add_column("SEVERITY")
    table.add_column("NODES", justify="right")
    table.add_column("CHECK")
    table.add_column("FINDING")
    if verbosity >= 1:
        table.add_column("MIN VERSION")
    by_group = {}
    for c in report.checks:
        by_group.setdefault(c.group_key(), c)
    for g in report.groups:
        style = _STYLE.get(g.status, "")
        row = [
            f"[{style}]{g.status.upper()}[/]",
            g.severity,
            str(g.node_count),
            escape(g.id),
            escape(g.title),
        ]
        if verbosity >= 1:
            row.append(escape(g.upgrade_to or "-"))
        table.add_row(*row)
        rep = next(
            (
                c
                for c in report.checks
                if c.id == g.id and c.subject == g.subject and c.status.value == g.status
            ),
            None,
        )
        if verbosity >= 1 and g.findings:
            for f in g.findings:
                line = f"  {finding_label(f)} {f['severity']}"
                if f.get("cvss") is not None:
                    line += f" (CVSS {f['cvss']})"
                line += f": fixed in {f['fixed_in']}" if f.get("fixed_in") else ": no fix on this line"
                if verbosity >= 2:
                    line += f"  {f.get('source_url') or ''}"
                table.add_row("", "", "", "", f"[dim]{escape(line)}[/]", *([""] if verbosity >= 1 else []))
        if verbosity >= 2 and (g.remediation or (rep and rep.reason)):
            extra = g.remediation or f"reason: {rep.reason}"
            table.add_row("", "", "", "", f"[cyan]{escape(extra)}[/]", *([""] if verbosity >= 1 else []))
        if verbosity >= 2 and len(g.hosts) <= 20:
            table.add_row(
                "",
                "",
                "",
                "",
                f"[dim]hosts: {escape(', '.join(g.hosts))}[/]",
                *([""] if verbosity >= 1 else []),
            )
    console.print(table)
    s = report.summary
    console.print(f"PASS {s.pass_}  WARN {s.warn}  FAIL {s.fail}  UNKNOWN {s.unknown}  SKIPPED {s.skipped}")
    return buf.getvalue()


def finding_label(f: dict) -> str:
    """CVE id first (what people search for), with the source id when it differs."""
    cves = [a for a in [f["id"], *f.get("aliases", [])] if a.startswith("CVE-")]
    if cves and cves[0] != f["id"]:
        return f"{cves[0]} ({f['id']})"
    return f["id"]
