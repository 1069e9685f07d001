#!/usr/bin/env bash
# The H200 run behind benchmarks/results/kernels-h200.{json,md}: GPU correctness tests, the benchmark,
# then Nsight Compute on one attention shape (ours against cuDNN) and on the skinny GEMMs (ours against
# cuBLAS) for the evidence of where time goes.
# Through the device tool:  run(command="bash scripts/gpu/kernels_h200.sh")   (writes into $OUT)
# Elsewhere:                OUT=/tmp/out bash scripts/gpu/kernels_h200.sh [--quick]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/argus-kernels}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
[ -n "${SKIP_TESTS:-}" ] || timeout 240 python3 -m pytest -q -p no:cacheprovider --noconftest -m gpu -o addopts="" tests/gpu/test_reference_kernels_gpu.py 2>&1 | tee "$OUT/gpu-tests.txt" | tail -n 15
python3 benchmarks/kernels.py --out "$OUT" --budget-s "${BUDGET_S:-130}" --command "SKIP_TESTS=${SKIP_TESTS:-} BUDGET_S=${BUDGET_S:-130} bash scripts/gpu/kernels_h200.sh $*" "$@" 2>&1 | grep -v -e UserWarning -e "scaled_dot_product_attention(" | tee "$OUT/bench-log.txt"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)"
if [ -n "${SKIP_NCU:-}" ] || [ -z "$NCU" ] || [ "$SECONDS" -gt "${NCU_AFTER_S:-420}" ]; then
  echo "ncu skipped (SKIP_NCU, no ncu, or ${SECONDS}s already spent)" | tee "$OUT/attention-ncu.txt"
  exit 0
fi
kernels='regex:attention_|sdpa|fprop|fmha|flash'
{
  timeout 90 "$NCU" --clock-control none -k "$kernels" -c 2 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section Occupancy --section LaunchStats python3 benchmarks/attention_ncu.py
  # Pipe utilisation: tensor cores (GMMA), the special-function unit (exp2), FMA and ALU.
  timeout 60 "$NCU" --clock-control none -k "$kernels" -c 2 --metrics \
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active \
    python3 benchmarks/attention_ncu.py
} 2>&1 | grep -v -e UserWarning | tee "$OUT/attention-ncu.txt" | tail -n 60
if [ "$SECONDS" -gt "${NCU_GEMM_AFTER_S:-520}" ]; then
  echo "gemm ncu skipped (${SECONDS}s already spent)" | tee "$OUT/gemm-ncu.txt"
  exit 0
fi
# The skinny GEMMs still below cuBLAS: our launch and cuBLAS's, one each per shape (benchmarks/gemm_ncu.py).
timeout 70 "$NCU" --clock-control none --profile-from-start off --section SpeedOfLight --section LaunchStats \
  --section Occupancy python3 benchmarks/gemm_ncu.py 2>&1 | grep -v -e UserWarning > "$OUT/gemm-ncu.txt"
grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|Grid Size|Registers Per|Achieved Occupancy|rel err" "$OUT/gemm-ncu.txt" | head -n 60
