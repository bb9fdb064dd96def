"""Scheduler and monitoring integrations: Slurm, Kubernetes, Prometheus textfile."""
