"""podium's benchmark suite: GEMM, HBM, collectives, InfiniBand, storage, training step, numerics.

Each benchmark is one module that returns typed :class:`~podium.bench.model.BenchResult` objects.
Running a command is kept apart from parsing its output, and parsing apart from grading
(:mod:`podium.bench.grading`, against :mod:`podium.bench.references`).
torch is an optional extra (``pip install 'podium[bench]'``) and is imported lazily.
"""
