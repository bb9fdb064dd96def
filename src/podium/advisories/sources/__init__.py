"""Upstream advisory sources: NVIDIA PSIRT CSAF, OSV feeds, hand-curated OSV records."""
