"""``podium schema NAME``: the JSON Schema of every model podium reads or writes."""

from __future__ import annotations

import typer

from podium.cli.common import emit_json


def register(app: typer.Typer) -> None:
    @app.command("schema")
    def schema(
        name: str = typer.Argument(None, help="Model name; omit to list them."),
    ) -> None:
        """Print the JSON Schema of a model (NodeFacts, CheckResult, RunRecord, ...)."""
        from podium.errors import UsageError
        from podium.models.registry import MODELS, load_model

        if not name:
            for n in sorted(MODELS):
                print(n)
            return
        if name not in MODELS:
            raise UsageError(f"unknown model '{name}'; one of: {', '.join(sorted(MODELS))}")
        emit_json(load_model(name).model_json_schema())
