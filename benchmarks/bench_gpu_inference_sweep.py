"""One-command inference sweep on a lent GPU (e.g. one H200), with no model download.

    python benchmarks/bench_gpu_inference_sweep.py                # on the GPU machine
    python benchmarks/bench_gpu_inference_sweep.py --device cpu --tiny --concurrency 1,2   # dry run here

What it does:
1. builds a **randomly initialised** Llama-style model (default ~1.1B parameters, bf16) and a
   byte-level tokenizer in a temporary folder: nothing is downloaded, and the result says so;
2. serves it with ``transformers serve --continuous-batching`` through ``podium inference serve``
   (local backend: launch, wait for /health, tear down);
3. runs ``podium inference sweep`` (concurrency 1, 2, 4 … 64 by default) and writes the sweep
   result and InferenceX ``agg_*.json`` rows under ``benchmarks/results/<stamp>-<hw>-<label>/``.

Without a GPU (and without ``--device cpu``) it prints why and exits 0 without writing anything.
Needs torch and ``transformers[serving]`` in the running Python (``pip install -e '.[llm-server]'``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

RANDOM_NOTE = (
    "randomly initialised Llama-style model (no download): throughput and latency reflect the serving "
    "stack and the GPU, not a trained model; outputs are random tokens"
)


def gpu_identity() -> tuple[str | None, int, str]:
    """(hw label such as 'h200', GPU count, full name) from nvidia-smi; (None, 0, why) without a GPU."""
    from podium.runner import LocalRunner

    out = LocalRunner().run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], timeout=30)
    if not out.ok or not out.stdout.strip():
        return None, 0, out.why_not() if not out.ok else "nvidia-smi lists no GPU"
    names = [n.strip() for n in out.stdout.strip().splitlines() if n.strip()]
    full = names[0]
    label = "gpu"
    for sku in (
        "gb300",
        "gb200",
        "b300",
        "b200",
        "h200",
        "h100",
        "a100",
        "l40s",
        "mi355x",
        "mi325x",
        "mi300x",
    ):
        if sku in full.lower().replace(" ", "").replace("-", ""):
            label = sku
            break
    return label, len(names), full


def build_random_model(path: Path, tiny: bool, seed: int, vocab_size: int = 32000) -> dict:
    """A random Llama-style model and a word-level tokenizer with a chat template.

    The tokenizer knows the words podium's random prompts are made of (one token each), so the
    requested ISL is close to the real input length, and every vocabulary entry is visible text,
    so every generated token streams as content.
    """
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from podium.endpoint import datasets

    specials = ["<|unk|>", "<|bos|>", "<|eos|>", "<|pad|>"]
    words = list(dict.fromkeys([*getattr(datasets, "_WORDS", []), "user:", "assistant:", "system:"]))
    fill = [f"w{i}" for i in range(max(0, vocab_size - len(specials) - len(words)))]
    vocab = {tok: i for i, tok in enumerate(specials + words + fill)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|unk|>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<|unk|>",
        bos_token="<|bos|>",
        eos_token="<|eos|>",
        pad_token="<|pad|>",
    )
    fast.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}"
    )
    dims = (
        dict(
            hidden_size=256,
            intermediate_size=688,
            num_hidden_layers=4,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
        if tiny
        else dict(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=22,
            num_attention_heads=32,
            num_key_value_heads=4,
        )
    )
    cfg = LlamaConfig(
        vocab_size=len(vocab),
        max_position_embeddings=8192,
        bos_token_id=vocab["<|bos|>"],
        eos_token_id=vocab["<|eos|>"],
        pad_token_id=vocab["<|pad|>"],
        tie_word_embeddings=True,
        **dims,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    # A random model samples EOS like any other token; never stop early so every request gives OSL tokens.
    model.generation_config.eos_token_id = None
    model.save_pretrained(path)
    fast.save_pretrained(path)
    params = sum(p.numel() for p in model.parameters())
    return {"parameters": params, **dims, "vocab_size": len(vocab), "seed": seed, "tokenizer": "word-level"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", default="1..64")
    ap.add_argument("--isl", type=int, default=1024)
    ap.add_argument("--osl", type=int, default=256)
    ap.add_argument("--requests-multiplier", type=int, default=4)
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu for a dry run")
    ap.add_argument("--tiny", action="store_true", help="a tiny model (for a CPU dry run)")
    ap.add_argument("--price", type=float, default=None, help="USD per GPU-hour (default: podium's table)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ready-timeout", type=float, default=600.0)
    args = ap.parse_args(argv)

    from podium.inference.inferencex import point_to_row, row_filename
    from podium.inference.serve import ServeSpec, engine_installed, launched
    from podium.inference.sweep import SweepConfig, parse_concurrency, run_sweep
    from podium.inference.system import SystemDescription
    from podium.runs import RunDirectory

    if args.device == "cuda":
        hw, count, name = gpu_identity()
        if hw is None:
            print(f"skipped: no GPU here ({name}); use --device cpu --tiny for a dry run", file=sys.stderr)
            return 0
    else:
        hw, count, name = "cpu", 1, socket.gethostname()
    ok, why = engine_installed("transformers")
    if not ok:
        print(f"skipped: {why}; pip install -e '.[llm-server]'", file=sys.stderr)
        return 0
    import transformers

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    label = "transformers-random-llama" + ("-tiny" if args.tiny else "")
    dest = args.out / f"{stamp}-{hw}-{label}"
    work = Path(tempfile.mkdtemp(prefix="podium-random-llama-"))
    try:
        t0 = time.monotonic()
        model_info = build_random_model(work / "model", args.tiny, args.seed)
        print(
            f"built random model: {model_info['parameters'] / 1e6:.0f}M parameters in {time.monotonic() - t0:.0f}s",
            file=sys.stderr,
        )
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        spec = ServeSpec(
            engine="transformers",
            backend="local",
            model=str(work / "model"),
            port=port,
            gpus=1 if args.device == "cuda" else 0,
            device=args.device,
            dtype="bfloat16",
            env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
            ready_timeout_s=args.ready_timeout,
        )
        system = SystemDescription(
            hw=hw,
            gpu_count=1,
            engine="transformers",
            engine_version=transformers.__version__,
            model=f"random-llama-{model_info['parameters'] / 1e9:.2f}b",
            precision="bf16",
            isl=args.isl,
            osl=args.osl,
            price_usd_per_gpu_hour=args.price,
            notes=[RANDOM_NOTE, f"device: {name} (x{count} visible, 1 used)"],
        )
        run = RunDirectory.create("inference-gpu-bench", root=work / "runs")
        with launched(spec, work / "serve") as outcome:
            if not outcome.base_url:
                print(f"server not ready: {outcome.reason}", file=sys.stderr)
                return 1
            print(f"server ready after {outcome.ready_after_s}s at {outcome.base_url}", file=sys.stderr)
            cfg = SweepConfig(
                base_url=outcome.base_url,
                model=str(work / "model"),
                api="completions",
                concurrencies=parse_concurrency(args.concurrency),
                requests_multiplier=args.requests_multiplier,
                warmup=1,
                seed=args.seed,
            )
            result = run_sweep(system, cfg, run)
        run.close(0)
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "sweep.json").write_text(result.model_dump_json(indent=2) + "\n")
        (dest / "model.json").write_text(json.dumps({"note": RANDOM_NOTE, **model_info}, indent=2) + "\n")
        for p in result.points:
            row = point_to_row(result.system, p)
            (dest / row_filename(row)).write_text(json.dumps(row, indent=2) + "\n")
        # Keep the raw per-request records next to the result (they are small: one line per request).
        shutil.copytree(
            run.path / "levels", dest / "levels", ignore=shutil.ignore_patterns("run.log", "run.json")
        )
        for p in result.points:
            print(
                f"conc {p.concurrency:4d}  {p.throughput_per_gpu.total:10.1f} tok/s/GPU  "
                f"{p.interactivity_inferencex.p50 or 0:8.1f} tok/s/user  ok {p.requests_ok} failed {p.requests_failed}"
            )
        print(f"curve: {result.curve}\nwritten: {dest}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
