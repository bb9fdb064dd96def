"""The active checks' cores on CPU with real torch (the GPU paths skip here: no NVIDIA GPU)."""

from __future__ import annotations

import importlib.util
import json
import socket

from tests.conftest import need

from podium.health.active import (
    allreduce_worker,
    gemm_checksum_loop,
    pattern_check,
    run_gemm_stress,
    run_memory_test,
)


def _torch():
    need(importlib.util.find_spec("torch") is not None, "torch==2.13.0 (CPU) is installed by scripts/test.sh")
    import torch

    return torch


def test_gemm_checksums_stable_on_cpu():
    torch = _torch()
    r = gemm_checksum_loop(torch, "cpu", duration_s=0.0, size=64, min_iterations=5)
    assert (r["iterations"], r["mismatches"], r["dtype"]) == (5, 0, "torch.float32")
    again = gemm_checksum_loop(torch, "cpu", duration_s=0.0, size=64, min_iterations=2)
    assert again["checksum"] == r["checksum"]  # fixed seed: the same inputs give the same sum


def test_gemm_detects_a_wrong_result():
    torch = _torch()
    calls = {"n": 0}

    def faulty(a, b):
        calls["n"] += 1
        c = a @ b
        if calls["n"] == 3:  # one silent corruption in the third iteration
            c[0, 0] += 1.0
        return c

    r = gemm_checksum_loop(torch, "cpu", duration_s=0.0, size=32, matmul=faulty, min_iterations=6)
    assert (r["iterations"], r["mismatches"]) == (6, 1)


def test_memory_pattern_check_on_cpu():
    torch = _torch()
    assert pattern_check(torch, "cpu", 10_000, chunk_words=4096) == 0

    def flip(t):
        t[7] ^= 1
        t[100] ^= 1 << 40

    assert pattern_check(torch, "cpu", 10_000, chunk_words=4096, corrupt=flip) == 6  # 2 per chunk, 3 chunks


def test_allreduce_worker_gloo_cpu(tmp_path):
    torch = _torch()
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "r.json"
    mp.spawn(allreduce_worker, args=(2, port, str(out), "gloo", 1024), nprocs=2, join=True)
    res = json.loads(out.read_text())
    assert (res["correct"], res["world"], res["bytes"]) == (True, 2, 4096)
    assert res["busbw_gbps"] >= 0 and torch is not None


def test_gpu_paths_skip_without_cuda():
    _torch()
    assert (run_gemm_stress("h", 1).status.value, run_gemm_stress("h", 1).reason) == (
        "skipped",
        "torch sees no CUDA device",
    )
    assert run_memory_test("h").reason == "torch sees no CUDA device"
