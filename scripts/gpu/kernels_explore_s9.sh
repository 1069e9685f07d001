#!/usr/bin/env bash
# Session 9's exploration call (gpu7): the GPU tests of the changed kernels (MoE plan and align, stream-K),
# then this branch's launchers against main's on every MoE and GEMM benchmark shape, with the library,
# and candidate GEMM pins (benchmarks/kernels_explore_s9.py).
# Needs main's knowledge/kernels/{moe,gemm}.py in .before/ (from git show main:...; see that script).
# Through the device tool:  run(command="bash scripts/gpu/kernels_explore_s9.sh")   (writes into $OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/argus-kernels-explore}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu-tests-s9.txt"
timeout "${TESTS_TIMEOUT_S:-170}" python3 -m pytest -q -p no:cacheprovider --noconftest -m gpu -o addopts="" \
  -k "moe or align or streamk" tests/gpu/test_reference_kernels_gpu.py 2>&1 | tee -a "$OUT/gpu-tests-s9.txt" | tail -n 12
timeout "${SWEEP_TIMEOUT_S:-330}" python3 benchmarks/kernels_explore_s9.py --out "$OUT" --before .before \
  --part "${PART:-moe,gemm}" --budget-s "${BUDGET_S:-150}" 2>&1 | grep -v -e UserWarning | tee "$OUT/explore-s9.txt" \
  | grep -v "^  check"
