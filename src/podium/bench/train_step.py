"""Training step: a small Llama-style transformer in plain torch; tokens/s and MFU.

Model: token embedding, L blocks of [RMSNorm → causal multi-head attention with rotary position
embeddings → RMSNorm → SwiGLU MLP], a final RMSNorm and an untied output projection.

FLOPs per token (forward + backward), PaLM (Chowdhery et al. 2022, Appendix B) / Chinchilla
(Hoffmann et al. 2022, Appendix F):

    flops_per_token = 6·N + 12·L·d·T

N counts the weights of every matmul (attention q, k, v, o: 4·d²; SwiGLU: 3·d·f per layer; the
output projection d·V). The input embedding is a lookup, not a matmul, and RMSNorm weights are
elementwise, so neither is in N. 12·L·d·T is attention's score and value matmuls
(QKᵀ and AV: 2·2·d·T per token per layer forward, ×3 for forward+backward), with d = heads×head_dim
and T the sequence length. MFU = tokens/s · flops_per_token / (devices · peak FLOP/s).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from podium.bench.devices import Device, import_torch
from podium.bench.model import BenchResult
from podium.bench.references import peak_bf16_tflops, sku_of


@dataclass(frozen=True)
class LlamaConfig:
    vocab: int = 4096
    d_model: int = 256
    n_layers: int = 4
    n_heads: int = 4
    ffn: int = 688
    seq_len: int = 256

    def matmul_params(self) -> int:
        """N of the FLOPs formula: attention 4·d², SwiGLU 3·d·f per layer, output projection d·V."""
        d = self.d_model
        return self.n_layers * (4 * d * d + 3 * d * self.ffn) + d * self.vocab

    def flops_per_token(self) -> int:
        """6·N + 12·L·d·T (training: forward + backward)."""
        return 6 * self.matmul_params() + 12 * self.n_layers * self.d_model * self.seq_len


PROFILES = {
    "smoke": (LlamaConfig(vocab=512, d_model=64, n_layers=2, n_heads=2, ffn=172, seq_len=64), 4, 3),
    "quick": (LlamaConfig(), 8, 10),
    "full": (LlamaConfig(vocab=32000, d_model=2048, n_layers=16, n_heads=16, ffn=5504, seq_len=2048), 8, 20),
}
CPU_PROFILES = {
    "quick": (LlamaConfig(vocab=2048, d_model=128, n_layers=2, n_heads=4, ffn=344, seq_len=128), 4, 5)
}


def build_model(torch: Any, cfg: LlamaConfig):
    """The Llama-style model as a ``torch.nn.Module``."""
    nn = torch.nn
    F = torch.nn.functional

    class RMSNorm(nn.Module):
        def __init__(self, d: int):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    def rotary(x, cos, sin):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            d, f = cfg.d_model, cfg.ffn
            self.attn_norm, self.mlp_norm = RMSNorm(d), RMSNorm(d)
            self.wq, self.wk, self.wv, self.wo = (nn.Linear(d, d, bias=False) for _ in range(4))
            self.w1, self.w3 = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
            self.w2 = nn.Linear(f, d, bias=False)

        def forward(self, x, cos, sin):
            b, t, d = x.shape
            h = self.attn_norm(x)
            shape = (b, t, cfg.n_heads, d // cfg.n_heads)
            q = rotary(self.wq(h).view(shape), cos, sin).transpose(1, 2)
            k = rotary(self.wk(h).view(shape), cos, sin).transpose(1, 2)
            v = self.wv(h).view(shape).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.wo(a.transpose(1, 2).reshape(b, t, d))
            h = self.mlp_norm(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg.n_layers))
            self.norm = RMSNorm(cfg.d_model)
            self.out = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
            hd = cfg.d_model // cfg.n_heads
            inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
            ang = torch.outer(torch.arange(cfg.seq_len).float(), inv)
            self.register_buffer("cos", ang.cos()[None, :, None, :], persistent=False)
            self.register_buffer("sin", ang.sin()[None, :, None, :], persistent=False)

        def forward(self, tokens):
            x = self.embed(tokens)
            for blk in self.blocks:
                x = blk(x, self.cos, self.sin)
            return self.out(self.norm(x))

    return Llama()


def count_matmul_params(model: Any) -> int:
    """Weights of every Linear layer in ``model``: must equal :meth:`LlamaConfig.matmul_params`."""
    import torch

    return sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))


def measure(device: Device, profile: str = "quick", ddp: bool = False) -> BenchResult:
    """Time training steps (forward, backward, AdamW); tokens/s over all ranks when ``ddp``."""
    torch = import_torch()
    import torch.distributed as dist

    cfg, batch, steps = (
        (CPU_PROFILES.get(profile) or PROFILES[profile]) if device.kind == "cpu" else PROFILES[profile]
    )
    torch.manual_seed(0)
    dev = device.torch_device
    model = build_model(torch, cfg).to(dev)
    dtype = torch.bfloat16 if device.kind == "cuda" else torch.float32
    world = 1
    if ddp and dist.is_available() and dist.is_initialized():
        world = dist.get_world_size()
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.kind == "cuda" else None
        )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, cfg.vocab, (batch, cfg.seq_len + 1), device=dev)

    def step():
        with torch.autocast(
            device_type="cuda" if device.kind == "cuda" else "cpu", dtype=dtype, enabled=device.kind == "cuda"
        ):
            logits = model(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(
                logits.float().view(-1, cfg.vocab), tokens[:, 1:].reshape(-1)
            )
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    step()  # warm-up (allocations, autotuning)
    if device.kind == "cuda":
        torch.cuda.synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    if device.kind == "cuda":
        torch.cuda.synchronize(dev)
    elapsed = time.perf_counter() - t0
    tok_s = world * batch * cfg.seq_len * steps / elapsed
    fpt = cfg.flops_per_token()
    sku = sku_of(device.name)
    peak, peak_source = peak_bf16_tflops(sku)
    params: dict[str, Any] = {
        "config": asdict(cfg),
        "batch": batch,
        "steps": steps,
        "world": world,
        "matmul_params": cfg.matmul_params(),
        "flops_per_token": fpt,
        "achieved_tflops": float(f"{tok_s * fpt / 1e12:.6g}"),
        "final_loss": round(float(loss.item()), 4),
        "dtype": "bf16-autocast" if device.kind == "cuda" else "fp32",
    }
    if peak:
        params["mfu"] = round(tok_s * fpt / (world * peak * 1e12), 4)
        params["peak_tflops"], params["peak_source"] = peak, peak_source
    else:
        params["mfu"] = None
        params["mfu_reason"] = f"no peak FLOP/s known for {sku or device.name}"
    return BenchResult(
        benchmark="train_step",
        metric="tokens_per_s",
        value=round(tok_s, 2),
        unit="tokens/s",
        device=device.name,
        sku=sku,
        params=params,
    )


def _ddp_entry(rank: int, world: int, init: str, profile: str, out_path: str) -> None:
    import json
    import os

    os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank)})
    addr, port = init.removeprefix("tcp://").rsplit(":", 1)
    os.environ.update({"MASTER_ADDR": addr, "MASTER_PORT": port})
    from podium.bench.devices import local_devices

    results = run(local_devices(), profile, local_ranks=1)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump([r.model_dump(mode="json") for r in results], f)


def run_ddp_local(world: int, profile: str = "quick") -> BenchResult:
    """Data-parallel training step over ``world`` processes on this host (one per GPU, or gloo on CPU)."""
    import json
    import tempfile
    from pathlib import Path

    import torch.multiprocessing as mp

    from podium.bench.collectives import free_port

    with tempfile.TemporaryDirectory(prefix="podium-ddp-") as tmp:
        out = str(Path(tmp) / "result.json")
        mp.spawn(
            _ddp_entry, args=(world, f"tcp://127.0.0.1:{free_port()}", profile, out), nprocs=world, join=True
        )
        return BenchResult.model_validate(json.loads(Path(out).read_text())[0])


def run(devices: list[Device], profile: str = "quick", local_ranks: int | None = None) -> list[BenchResult]:
    """Single-device training step, plus data-parallel across the allocation.

    Launched with ranks (srun/torchrun): DDP over all ranks, reported by rank 0. Otherwise one
    device, and DDP over ``local_ranks`` processes (default: every local GPU; 1 on a CPU host).
    """
    import os

    torch = import_torch()
    from podium.bench.collectives import env_rank

    launched = env_rank()
    if launched:
        import torch.distributed as dist

        rank, world, init = launched
        backend = "nccl" if devices[0].kind == "cuda" else "gloo"
        local = int(os.environ.get("LOCAL_RANK", os.environ.get("SLURM_LOCALID", 0)))
        dev = devices[local % len(devices)]
        if dev.kind == "cuda":
            torch.cuda.set_device(dev.index)
        dist.init_process_group(backend, init_method=init, rank=rank, world_size=world)
        try:
            result = measure(dev, profile, ddp=True)
        finally:
            dist.destroy_process_group()
        return [result] if rank == 0 else []
    results = [measure(devices[0], profile)]
    world = local_ranks if local_ranks is not None else (len(devices) if devices[0].kind == "cuda" else 1)
    if world > 1:
        results.append(run_ddp_local(world, profile))
    return results
