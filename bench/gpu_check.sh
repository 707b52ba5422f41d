#!/usr/bin/env bash
# GPU verification in one run (under 10 minutes), from anywhere:  bash bench/gpu_check.sh
#
# On a CUDA machine: every CUDA-capable exercise's stub must fail and its solution pass
# (`tutor check ID --stubs/--solutions --device cuda`), with their CUDA-event timings and
# allocator peak memory; the memory exercises' reference solutions on CUDA; and each timed
# exercise's reference timed against itself. Without a GPU it runs its CPU fallback on a few
# exercises (plumbing only). Extra arguments go to bench/gpu_check.py (--cpu, --exercises ...).
# Exit status: 0 when every stub failed and every solution passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
PY="${PYTHON:-python}"
if [ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ]; then PY=.venv/bin/python; fi
# A learner's shell: no unbuffered or no-bytecode settings from the environment.
unset PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
fi
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available:", torch.cuda.is_available())' || exit 2
# The whole run stops at 10 minutes whatever happens; the script itself aims at 9.5.
exec timeout --signal=INT --kill-after=10 600 "$PY" bench/gpu_check.py "$@"
