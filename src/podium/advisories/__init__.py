"""Offline advisory database: sources (NVIDIA CSAF, OSV, curated), versions, bundle, matching."""
