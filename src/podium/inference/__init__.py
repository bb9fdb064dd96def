"""``podium inference``: throughput per GPU against interactivity, Pareto fronts, $/M tokens,
InferenceX rows and serving recipes.

Modules: ``system`` (what was measured), ``metrics`` (per-point formulas), ``sweep`` (the
concurrency sweep), ``results`` (the result file), ``pareto`` (fronts and interpolation),
``compare`` (systems side by side), ``charts`` (HTML/SVG report), ``inferencex`` (row import
and export), ``serve`` (render, launch, wait for and tear down a server).
"""
