"""Where benchmark tasks run: this host (local), Slurm (sbatch/srun) or Kubernetes (Jobs).

podium launches through these engines and invents no scheduler. Every launcher takes a benchmark
name, a profile and options and returns the :class:`~podium.bench.suite.TaskOutput` of each task.
"""
