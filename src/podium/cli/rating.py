"""``podium evaluate``, ``podium score`` and ``podium rank``: evidence -> scorecards -> tiers."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from podium.cli.common import JSON_OPTION, emit_json

DB_OPTION = typer.Option(
    None,
    "--db",
    help="Results store: a SQLite path or a SQLAlchemy URL (default $PODIUM_DB or ~/.local/share/podium/podium.db).",
)
NO_STORE_OPTION = typer.Option(
    False, "--no-store", help="Do not write runs, scorecards or rankings to the store."
)
RUBRIC_OPTION = typer.Option(None, "--rubric", help="Rubric YAML (default: the built-in v1).", dir_okay=False)


class Backend(str, Enum):
    local = "local"
    slurm = "slurm"
    k8s = "k8s"


def _fail_below(card_tier: str, fail_below: str | None, rubric) -> int:
    if not fail_below:
        return 0
    names = [t.name.lower() for t in rubric.tiers]
    if fail_below.lower() not in names:
        from podium.errors import UsageError

        raise UsageError(
            f"--fail-below: unknown tier '{fail_below}'; one of: {', '.join(t.name for t in rubric.tiers)}"
        )
    return 1 if names.index(card_tier.lower()) > names.index(fail_below.lower()) else 0


def _print_ranking(ranking, outputs) -> None:
    from rich.markup import escape
    from rich.table import Table

    from podium.cli.common import stderr_console

    con = stderr_console()
    if not con.is_terminal:
        con.width = 140
    table = Table(title=f"podium ranking (rubric v{ranking.rubric_version})", title_justify="left")
    for col in ("#", "Provider", "Tier", "Score", "Critical failures", "Move"):
        table.add_column(col, justify="right" if col in ("#", "Score") else "left")
    for p in ranking.providers:
        move = (
            ""
            if p.movement is None
            else (f"▲{p.movement}" if p.movement > 0 else f"▼{-p.movement}" if p.movement < 0 else "=")
        )
        table.add_row(
            str(p.rank), escape(p.name), p.tier, f"{p.score:.1f}", ", ".join(p.critical_failures) or "-", move
        )
    con.print(table)
    con.print("Podium: " + "  ".join(f"{i}. {n}" for i, n in enumerate(ranking.podium, 1)), markup=False)
    for tier, names in ranking.tiers.items():
        con.print(f"  {tier:<16} {', '.join(names) or '-'}", markup=False)
    if outputs:
        con.print(
            f"Report: {outputs['html']}  (also {outputs['markdown'].name}, {outputs['json'].name})",
            markup=False,
        )


def _print_card(card, outputs) -> None:
    from rich.markup import escape

    from podium.cli.common import stderr_console

    con = stderr_console()
    con.print(
        f"{escape(card.name)}: [bold]{card.tier}[/bold] (score {card.score:.1f}, coverage {card.coverage:.0%})"
    )
    for c in card.categories:
        con.print(f"  {c.id:<14} {'unknown' if c.score is None else f'{c.score:.1f}'}", markup=False)
    for f in card.critical_failures:
        con.print(f"  critical: {f.title} (caps at {f.cap})", markup=False)
    t = card.to_next_tier
    if t.target:
        con.print(f"To reach {t.target} (+{t.points_needed:.1f} points), cheapest first:", markup=False)
        for i, f in enumerate(t.fixes, 1):
            con.print(f"  {i}. [{f.cost}] {f.action} (+{f.gain:.2f})", markup=False)
    if outputs:
        con.print(f"Report: {outputs['html']}", markup=False)


def register(app: typer.Typer) -> None:
    @app.command("rank")
    def rank_cmd(
        source: str = typer.Argument(
            None, help="Directory of provider evaluations, or a store (.db path or URL)."
        ),
        examples: bool = typer.Option(
            False, "--examples", help="Rank the example providers shipped with podium."
        ),
        out: Path = typer.Option(
            Path("podium-ranking"), "--out", help="Write index.html, ranking.md, ranking.json here."
        ),
        json_out: bool = JSON_OPTION,
        db: str = DB_OPTION,
        no_store: bool = NO_STORE_OPTION,
        rubric_path: Path = RUBRIC_OPTION,
    ) -> None:
        """Rank providers into tiers: tier list, podium, category leaders, movement since the last ranking."""
        from podium.cli.common import stderr_console
        from podium.errors import UsageError
        from podium.rating.ranking import load_providers_dir, packaged_examples, rank
        from podium.rating.rubric import load_rubric
        from podium.report.write import write_ranking

        if examples == bool(source):
            raise UsageError("give a directory (or store) to rank, or --examples")
        rubric = load_rubric(rubric_path)
        store = None
        is_store = bool(source) and ("://" in source or source.endswith((".db", ".sqlite", ".sqlite3")))
        if is_store:
            from podium.store.db import Store

            store = Store.open(source)
            evaluations = store.evaluations()
            if not evaluations:
                raise UsageError(
                    f"{source}: the store holds no evaluations (import some with `podium runs import`)"
                )
            label = source
        else:
            root = packaged_examples() if examples else Path(source)
            if (
                not examples
                and not root.exists()
                and Path(source).as_posix().rstrip("/") == "examples/providers"
            ):
                root = packaged_examples()
                stderr_console().print(
                    f"(no ./examples/providers here: using the copy shipped with podium, {root})",
                    markup=False,
                )
            evaluations = load_providers_dir(root)
            label = "examples/providers" if root == packaged_examples() else str(root)
        if not no_store and store is None:
            from podium.store.db import Store

            store = Store.open(db)
            for ev in evaluations:
                store.import_evaluation(ev, Path(ev.root))
        previous = store.last_ranking(label) if store and not no_store else None
        ranking, cards = rank(evaluations, rubric, label, previous)
        outputs = write_ranking(ranking, cards, rubric, out)
        if store and not no_store:
            store.save_ranking(ranking)
            for card in cards:
                store.save_scorecard(card)
        if json_out:
            emit_json(ranking)
        else:
            _print_ranking(ranking, outputs)

    @app.command("score")
    def score_cmd(
        evaluation: Path = typer.Argument(
            ..., help="Evaluation directory (JSON evidence + provider.yaml) or one JSON file."
        ),
        provider: Path = typer.Option(
            None, "--provider", help="Provider file (default: EVALUATION/provider.yaml).", dir_okay=False
        ),
        peers: Path = typer.Option(
            None, "--peers", help="Directory of other providers, for peer-relative prices."
        ),
        out: Path = typer.Option(
            None, "--out", help="Write index.html, scorecard.md and scorecard.json here."
        ),
        json_out: bool = JSON_OPTION,
        db: str = DB_OPTION,
        no_store: bool = NO_STORE_OPTION,
        rubric_path: Path = RUBRIC_OPTION,
        fail_below: str = typer.Option(None, "--fail-below", help="Exit 1 when the tier is below this one."),
    ) -> None:
        """Score one evaluation: category scores with evidence, critical failures, tier, cheapest fixes."""
        from podium.rating.evidence import load_evaluation
        from podium.rating.ranking import load_providers_dir, peer_prices
        from podium.rating.rubric import load_rubric
        from podium.rating.scoring import score_evaluation
        from podium.report.write import write_scorecard

        rubric = load_rubric(rubric_path)
        ev = load_evaluation(evaluation, provider)
        prices = None
        if peers:
            others = [e for e in load_providers_dir(peers) if e.provider.name != ev.provider.name]
            prices = peer_prices([ev, *others], rubric)
        card = score_evaluation(ev, rubric, prices)
        outputs = write_scorecard(card, rubric, out) if out else None
        if not no_store:
            from podium.store.db import Store

            store = Store.open(db)
            store.import_evaluation(ev, evaluation if evaluation.is_dir() else evaluation.parent)
            store.save_scorecard(card)
        if json_out:
            emit_json(
                {
                    **card.summary(),
                    "to_next_tier": card.to_next_tier.model_dump(mode="json"),
                    "scorecard": card.model_dump(mode="json"),
                }
            )
        else:
            _print_card(card, outputs)
        code = _fail_below(card.tier, fail_below, rubric)
        if code:
            raise typer.Exit(code)

    @app.command("evaluate")
    def evaluate_cmd(
        out: Path = typer.Option(
            ..., "--out", help="Folder for the evidence, the run record and the report."
        ),
        provider: Path = typer.Option(
            None, "--provider", help="Provider file with declared facts (YAML).", dir_okay=False
        ),
        backend: Backend = typer.Option(
            Backend.local, "--backend", help="Where the checks and the quick bench run."
        ),
        skip: list[str] = typer.Option(
            [], "--skip", help="Skip a step: audit, isolation, health, bench (repeatable)."
        ),
        json_out: bool = JSON_OPTION,
        db: str = DB_OPTION,
        no_store: bool = NO_STORE_OPTION,
        rubric_path: Path = RUBRIC_OPTION,
        fail_below: str = typer.Option(None, "--fail-below", help="Exit 1 when the tier is below this one."),
    ) -> None:
        """Run audit, isolation, health and the quick bench here, store and score them, write the report."""
        from podium.rating.evaluate import STEPS, evaluate
        from podium.rating.rubric import load_rubric

        unknown = [s for s in skip if s not in STEPS]
        if unknown:
            from podium.errors import UsageError

            raise UsageError(f"--skip: unknown step(s) {', '.join(unknown)}; one of: {', '.join(STEPS)}")
        rubric = load_rubric(rubric_path)
        result = evaluate(
            out, provider, backend.value, rubric, skip=set(skip), db=None if no_store else (db or "")
        )
        if json_out:
            emit_json(
                {
                    **result.card.summary(),
                    "to_next_tier": result.card.to_next_tier.model_dump(mode="json"),
                    "steps": [s.model_dump(mode="json") for s in result.steps],
                    "report": str(result.outputs["html"]),
                }
            )
        else:
            from podium.cli.common import stderr_console

            con = stderr_console()
            for s in result.steps:
                con.print(f"  {s.name:<10} {s.state}{': ' + s.reason if s.reason else ''}", markup=False)
            _print_card(result.card, result.outputs)
        code = _fail_below(result.card.tier, fail_below, rubric)
        if code:
            raise typer.Exit(code)
