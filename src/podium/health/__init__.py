"""Node health: parsers for captured GPU/IB/kernel outputs, checks, a verdict and an action per node.

Layout: one parser module per output kind (pure text -> pydantic model), ``checks/`` grades the parsed
models into :class:`~podium.models.results.CheckResult`, ``verdict.py`` folds the results into a node
verdict and action, ``collect.py`` / ``replay.py`` gather the raw inputs, ``api.py`` ties it together.
"""
