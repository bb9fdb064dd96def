"""Isolation and configuration checks: InfiniBand, network exposure, Slurm, Kubernetes, host.

Public entry points are in :mod:`podium.checks.api` (``run_checks``, ``list_checks``).
Each area has one module with pure parsers (text in, typed model out) apart from the
functions that run commands, read files or send probes.
"""
