#!/usr/bin/env bash
# One device call that checks and times the reference kernels' variants on the weak benchmark shapes
# (benchmarks/kernels_explore.py), after the GPU correctness tests; the winners get pinned in the kernels.
# Through the device tool:  run(command="bash scripts/gpu/kernels_explore_h200.sh")   (writes into $OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/argus-kernels-explore}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu-tests.txt"
[ -n "${SKIP_TESTS:-}" ] || timeout ${TEST_TIMEOUT_S:-200} python3 -m pytest -q -p no:cacheprovider --noconftest -m gpu -o addopts="" tests/gpu/test_reference_kernels_gpu.py 2>&1 | tee -a "$OUT/gpu-tests.txt" | tail -n 15
for fam in ${FAMILIES:-gemm attention moe}; do
  python3 benchmarks/kernels_explore.py --out "$OUT/$fam" --family "$fam" --budget-s "${BUDGET_S:-90}" 2>&1 | grep -v -i warn | tee "$OUT/explore-$fam.txt"
done
