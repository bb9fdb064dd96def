"""Servers podium uses to test and benchmark its endpoint tools on loopback: a ground-truth
reference server (exact chunk schedule), a hostile server (failure modes) and a TLS wrapper."""
