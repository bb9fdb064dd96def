"""Client accuracy and speed of ``podium endpoint bench`` against the ground-truth reference server,
with aiperf and guidellm run against the same server in the same script.

Two measurements, each on a fresh reference server (podium.endpoint.testservers.reference) whose
log holds every request's kernel arrival time (SO_TIMESTAMPNS) and the moment each chunk was
handed to the kernel:

1. TTFT error at N concurrent streams: client TTFT minus true TTFT (first content chunk sent -
   request arrival), joined per request by the server's id (x-request-id / body id). The error is
   what the client adds: its own send path, the loopback, and its event-loop lag on receipt.
2. Highest sustained token rate: the server answers every request at once (TTFT 0, ITL 0,
   many tokens) so the client's parsing is the bottleneck; tokens/s = tokens received / wall time.

Usage (peers live in their own venv, never in the project):
    python benchmarks/endpoint_client.py --peers-venv /tmp/peers-venv --tokenizer .cache/smollm2-hf
Writes benchmarks/results/endpoint-client-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from podium.endpoint.api import run_endpoint_bench  # noqa: E402
from podium.endpoint.metrics import latency_stats  # noqa: E402
from podium.endpoint.models import EndpointBenchConfig  # noqa: E402
from podium.endpoint.testservers.reference import spawn  # noqa: E402

SERVER_CPUS: set[int] = set()  # --pin: the reference server gets its own core


class Server:
    """A reference server process with its log."""

    def __init__(self, *args: str):
        self.dir = Path(tempfile.mkdtemp(prefix="podium-ref-"))
        self.log = self.dir / "server.jsonl"
        self.proc, self.port = spawn([*args, "--log", str(self.log)])
        if SERVER_CPUS:
            os.sched_setaffinity(self.proc.pid, SERVER_CPUS)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> dict[str, dict]:
        self.proc.terminate()
        self.proc.wait(30)
        truth = {}
        for line in self.log.read_text().splitlines():
            r = json.loads(line)
            truth[r["id"]] = r
        shutil.rmtree(self.dir, ignore_errors=True)
        return truth


def true_ttft_ms(t: dict) -> float:
    return (t["sent_ns"][0] - t["arrival_ns"]) / 1e6


def error_stats(pairs: list[tuple[float, float]]) -> dict:
    """pairs: (client TTFT ms, true TTFT ms) per request."""
    errs = [c - t for c, t in pairs]
    s = latency_stats(errs)
    return {
        "joined_requests": len(pairs),
        "error_ms": s.model_dump(),
        "negative_errors": sum(e < -0.05 for e in errs),
    }


# ---------------------------------------------------------------- podium
def run_podium_accuracy(streams: int, requests: int, ttft_ms: float, itl_ms: float, tokens: int) -> dict:
    srv = Server("--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms), "--tokens", str(tokens))
    cfg = EndpointBenchConfig(
        base_url=srv.url + "/v1",
        model="ref",
        concurrency=[streams],
        requests=requests,
        output_tokens=tokens,
        input_tokens=32,
    )
    from podium.endpoint.loadgen import LoadGenerator

    captured = []
    orig_flush = LoadGenerator.flush

    def flush(self):
        orig_flush(self)
        captured.extend(self.records)

    LoadGenerator.flush = flush
    try:
        t0 = time.perf_counter()
        report = run_endpoint_bench(cfg)
        wall = time.perf_counter() - t0
    finally:
        LoadGenerator.flush = orig_flush
    truth = srv.stop()
    pairs = [
        (r.ttft_ms, true_ttft_ms(truth[r.request_id])) for r in captured if r.ok and r.request_id in truth
    ]
    lv = report.levels[0]
    return {
        "client": "podium",
        "requests_ok": lv.requests_ok,
        "requests_failed": lv.requests_failed.count,
        "client_ttft_ms": lv.metrics.ttft_ms.model_dump(),
        "wall_s": round(wall, 3),
        **error_stats(pairs),
    }


def run_podium_rate(streams: int, requests: int, tokens: int) -> dict:
    srv = Server("--ttft-ms", "0", "--itl-ms", "0", "--tokens", str(tokens))
    cfg = EndpointBenchConfig(
        base_url=srv.url + "/v1",
        model="ref",
        concurrency=[streams],
        requests=requests,
        output_tokens=tokens,
        input_tokens=32,
    )
    t0 = time.perf_counter()
    report = run_endpoint_bench(cfg)
    wall = time.perf_counter() - t0  # includes podium's deferred decoding: nothing is left out
    srv.stop()
    lv = report.levels[0]
    return {
        "client": "podium",
        "requests_ok": lv.requests_ok,
        "output_tokens": lv.output_tokens_total,
        "wall_s": round(wall, 3),
        "tokens_per_s_wall": round(lv.output_tokens_total / wall, 1),
        "tokens_per_s_reported": lv.output_tokens_per_s,
    }


# ---------------------------------------------------------------- guidellm
def _guidellm(
    venv: Path, tokenizer: str, url: str, streams: int, requests: int, tokens: int, out: Path
) -> float:
    scen = out.with_suffix(".scenario.json")
    scen.write_text(
        json.dumps(
            {
                "spec": {
                    "backend": {
                        "kind": "openai_http",
                        "target": url,
                        "model": "ref",
                        "validate_backend": False,
                        "request_format": "/v1/chat/completions",
                    },
                    "profile": {"kind": "concurrent", "streams": [streams]},
                    "data": [{"kind": "synthetic_text", "prompt_tokens": 32, "output_tokens": tokens}],
                    "tokenizer": {"kind": "hf_auto", "model": tokenizer},
                    "constraints": [{"kind": "max_requests", "count": requests}],
                    "outputs": [{"kind": "json", "path": str(out)}],
                }
            }
        )
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t0 = time.perf_counter()
    subprocess.run(
        [str(venv / "bin" / "guidellm"), "run", "--scenario", str(scen), "--disable-console-interactive"],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=1800,
    )
    return time.perf_counter() - t0


def run_guidellm(
    venv: Path,
    tokenizer: str,
    streams: int,
    requests: int,
    ttft_ms: float,
    itl_ms: float,
    tokens: int,
    rate_mode: bool,
) -> dict:
    args = (
        ("--ttft-ms", "0", "--itl-ms", "0")
        if rate_mode
        else ("--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms))
    )
    srv = Server(*args, "--tokens", str(tokens))
    out = srv.dir.parent / f"guidellm-{srv.port}.json"
    try:
        wall = _guidellm(venv, tokenizer, srv.url, streams, requests, tokens, out)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        srv.stop()
        return {"client": "guidellm", "error": str(e)}
    truth = srv.stop()
    b = json.loads(out.read_text())["benchmarks"][0]
    reqs = b["requests"]["successful"]
    out_tok = sum(r.get("output_tokens") or 0 for r in reqs)
    duration = max(r["request_end_time"] for r in reqs) - min(r["request_start_time"] for r in reqs)
    res = {
        "client": "guidellm",
        "version": _version(venv, "guidellm"),
        "requests_ok": len(reqs),
        "requests_failed": len(b["requests"]["errored"]),
        "output_tokens": out_tok,
        "wall_s": round(wall, 3),
    }
    if rate_mode:
        res["tokens_per_s_reported"] = round(
            b["metrics"]["output_tokens_per_second"]["successful"]["mean"], 1
        )
        res["tokens_per_s_window"] = round(out_tok / duration, 1)
        return res
    ttfts = [r["time_to_first_token_ms"] for r in reqs if r.get("time_to_first_token_ms") is not None]
    res["client_ttft_ms"] = latency_stats(ttfts).model_dump()
    pairs = [
        (r["time_to_first_token_ms"], true_ttft_ms(truth[r["response_id"]]))
        for r in reqs
        if r.get("response_id") in truth
    ]
    res.update(error_stats(pairs))
    return res


# ---------------------------------------------------------------- aiperf
def _aiperf(
    venv: Path, tokenizer: str, url: str, streams: int, requests: int, tokens: int, outdir: Path
) -> float:
    cmd = [
        str(venv / "bin" / "aiperf"), "profile", "--model", "ref", "--url", url, "--endpoint-type", "chat", "--streaming",
        "--tokenizer", tokenizer, "--concurrency", str(streams), "--request-count", str(requests),
        "--prompt-input-tokens-mean", "32", "--prompt-output-tokens-mean", str(tokens), "--use-legacy-max-tokens",
        "--output-artifact-dir", str(outdir), "--ui-type", "none", "--export-http-trace",
    ]  # fmt: skip
    # Not HF_HUB_OFFLINE: aiperf 0.13 offline mode resolves a local tokenizer path as a hub repo id and
    # fails; a local folder loads without network anyway (and there is none here).
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    t0 = time.perf_counter()
    subprocess.run(
        cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800
    )
    return time.perf_counter() - t0


def _aiperf_records(outdir: Path) -> list[dict]:
    files = sorted(outdir.rglob("profile_export.jsonl"))
    if not files:
        return []
    return [json.loads(x) for x in files[0].read_text().splitlines() if x.strip()]


def _find(obj, key):
    """First value of ``key`` anywhere in a nested JSON object."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            r = _find(v, key)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj:
            r = _find(v, key)
            if r is not None:
                return r
    return None


def run_aiperf(
    venv: Path,
    tokenizer: str,
    streams: int,
    requests: int,
    ttft_ms: float,
    itl_ms: float,
    tokens: int,
    rate_mode: bool,
) -> dict:
    args = (
        ("--ttft-ms", "0", "--itl-ms", "0")
        if rate_mode
        else ("--ttft-ms", str(ttft_ms), "--itl-ms", str(itl_ms))
    )
    srv = Server(*args, "--tokens", str(tokens))
    outdir = srv.dir.parent / f"aiperf-{srv.port}"
    try:
        wall = _aiperf(venv, tokenizer, srv.url, streams, requests, tokens, outdir)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        srv.stop()
        return {"client": "aiperf", "error": str(e)}
    truth = srv.stop()
    recs = _aiperf_records(outdir)
    res = {
        "client": "aiperf",
        "version": _version(venv, "aiperf"),
        "records": len(recs),
        "wall_s": round(wall, 3),
    }
    summary = sorted(outdir.rglob("profile_export_aiperf.json"))
    if summary:
        s = json.loads(summary[0].read_text())
        res["output_token_throughput"] = _find(s, "output_token_throughput")
        ttft = _find(s, "time_to_first_token") or _find(s, "ttft")
        res["client_ttft_ms"] = ttft
    if summary:
        rt = _find(s, "request_throughput")
        res["requests_per_s"] = rt.get("avg") if isinstance(rt, dict) else rt
    if rate_mode:
        thr = res.get("output_token_throughput")
        res["output_token_throughput_own_count"] = thr.get("avg") if isinstance(thr, dict) else thr
        # aiperf counts output tokens by re-tokenising the text (" tok123" is several tokens), so
        # compare server chunks (one token each): requests/s x tokens per request.
        if res.get("requests_per_s"):
            res["tokens_per_s_reported"] = round(res["requests_per_s"] * tokens, 1)
        return res
    pairs = []
    for r in recs:
        metrics = r.get("metrics") or {}
        ttft = metrics.get("time_to_first_token") or metrics.get("ttft")
        value = ttft.get("value") if isinstance(ttft, dict) else ttft
        rid = _find(r, "x-request-id") or _find(r, "response_id") or _find(r, "id")
        if value is not None and rid in truth:
            pairs.append((float(value), true_ttft_ms(truth[rid])))
    if pairs:
        res.update(error_stats(pairs))
    else:
        res["join"] = "no per-request id in aiperf's export; error from distributions"
        truth_ttfts = sorted(true_ttft_ms(t) for t in truth.values())
        res["true_ttft_ms"] = latency_stats(truth_ttfts).model_dump()
    return res


def _version(venv: Path, pkg: str) -> str | None:
    try:
        out = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-c",
                f"import importlib.metadata as m; print(m.version('{pkg}'))",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--streams", type=int, default=256)
    p.add_argument("--requests", type=int, default=1024)
    p.add_argument("--ttft-ms", type=float, default=50.0)
    p.add_argument("--itl-ms", type=float, default=20.0)
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--rate-streams", type=int, default=64)
    p.add_argument("--rate-requests", type=int, default=1024)
    p.add_argument("--rate-tokens", type=int, default=256)
    p.add_argument("--peers-venv", type=Path, default=None, help="venv with aiperf and guidellm")
    p.add_argument(
        "--tokenizer", default=str(ROOT / ".cache" / "smollm2-hf"), help="local HF tokenizer for the peers"
    )
    p.add_argument("--clients", default="podium,aiperf,guidellm")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument(
        "--nice",
        type=int,
        default=0,
        help="Raise this process's priority (negative nice, root) for every client and server alike, "
        "to keep unrelated load on a shared machine out of the measurement",
    )
    p.add_argument("--pin", action="store_true", help="Reference server on one core, clients on the others")
    a = p.parse_args()
    if a.nice:
        os.nice(a.nice)  # children (servers, peers) inherit it
    if a.pin:
        # Server on the last core, every client under test (podium here, peers as children) on the rest.
        cpus = sorted(os.sched_getaffinity(0))
        SERVER_CPUS.add(cpus[-1])
        os.sched_setaffinity(0, set(cpus[:-1]) or set(cpus))
    clients = a.clients.split(",")
    result: dict = {
        "benchmark": "endpoint-client",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hardware": {
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
            "processor": _cpu_model(),
            "python": platform.python_version(),
            "kernel": platform.release(),
            "note": "client, server and peers share the same 2-core machine (shared with other work)",
            "load_average_at_start": os.getloadavg(),
        },
        "params": vars(a) | {"peers_venv": str(a.peers_venv), "out": str(a.out)},
        "accuracy": [],
        "max_rate": [],
    }
    for c in clients:
        print(f"accuracy: {c} at {a.streams} streams", file=sys.stderr)
        if c == "podium":
            r = run_podium_accuracy(a.streams, a.requests, a.ttft_ms, a.itl_ms, a.tokens)
        elif a.peers_venv is None:
            continue
        elif c == "guidellm":
            r = run_guidellm(
                a.peers_venv, a.tokenizer, a.streams, a.requests, a.ttft_ms, a.itl_ms, a.tokens, False
            )
        else:
            r = run_aiperf(
                a.peers_venv, a.tokenizer, a.streams, a.requests, a.ttft_ms, a.itl_ms, a.tokens, False
            )
        result["accuracy"].append(r)
        print(json.dumps(r)[:600], file=sys.stderr)
    for c in clients:
        print(f"max rate: {c}", file=sys.stderr)
        if c == "podium":
            r = run_podium_rate(a.rate_streams, a.rate_requests, a.rate_tokens)
        elif a.peers_venv is None:
            continue
        elif c == "guidellm":
            r = run_guidellm(
                a.peers_venv, a.tokenizer, a.rate_streams, a.rate_requests, 0, 0, a.rate_tokens, True
            )
        else:
            r = run_aiperf(
                a.peers_venv, a.tokenizer, a.rate_streams, a.rate_requests, 0, 0, a.rate_tokens, True
            )
        result["max_rate"].append(r)
        print(json.dumps(r)[:600], file=sys.stderr)
    result["hardware"]["load_average_at_end"] = os.getloadavg()
    out = (
        a.out or ROOT / "benchmarks" / "results" / f"endpoint-client-{datetime.now(timezone.utc):%Y%m%d}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(out)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
