#!/usr/bin/env bash
# The H200 run behind benchmarks/results/kernels-h200.{json,md}: GPU correctness tests, then the benchmark.
# Through the device tool:  run(command="bash scripts/gpu/kernels_h200.sh")   (writes into $OUT)
# Elsewhere:                OUT=/tmp/out bash scripts/gpu/kernels_h200.sh [--quick]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/argus-kernels}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
[ -n "${SKIP_TESTS:-}" ] || timeout 150 python3 -m pytest -q -p no:cacheprovider --noconftest -m gpu -o addopts="" tests/gpu/test_reference_kernels_gpu.py 2>&1 | tee "$OUT/gpu-tests.txt" | tail -n 15
python3 benchmarks/kernels.py --out "$OUT" --budget-s "${BUDGET_S:-130}" --command "SKIP_TESTS=${SKIP_TESTS:-} BUDGET_S=${BUDGET_S:-130} bash scripts/gpu/kernels_h200.sh $*" "$@" 2>&1 | tee "$OUT/bench-log.txt"
