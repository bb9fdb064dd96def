"""``python -m podium``: the same CLI, for nodes where only the interpreter path is known."""

from podium.cli.main import entry

entry()
