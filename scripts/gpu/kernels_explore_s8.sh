#!/usr/bin/env bash
# Session 8's second device call: the stream-K GPU tests, the stream-K sweep against cuBLAS
# (benchmarks/kernels_explore_s8.py --part gemm2), then Nsight Compute on four more attention shapes
# (ours against cuDNN; benchmarks/attention_ncu.py) for the results table's per-shape "why".
# Through the device tool:  run(command="bash scripts/gpu/kernels_explore_s8.sh")   (writes into $OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/argus-kernels-explore}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu-tests.txt"
timeout 150 python3 -m pytest -q -p no:cacheprovider --noconftest -m gpu -o addopts="" -k "streamk" \
  tests/gpu/test_reference_kernels_gpu.py 2>&1 | tee -a "$OUT/gpu-tests.txt" | tail -n 8
timeout "${SWEEP_TIMEOUT_S:-260}" python3 benchmarks/kernels_explore_s8.py --out "$OUT" --part "${PART:-gemm2}" --budget-s 220 2>&1 \
  | grep -v -e UserWarning -e "scaled_dot_product_attention(" | tee "$OUT/explore-s8b.txt" | grep -v "^  check"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)"
[ -n "$NCU" ] || { echo "no ncu"; exit 0; }
# S1024 full and causal, S16384 causal (D128), S4096 causal D64: each shape's tile is the launcher's
# fixed one, so no autotuning launch is profiled; ours then cuDNN per shape (-c 8).
timeout "${NCU_TIMEOUT_S:-150}" "$NCU" --clock-control none -k 'regex:attention_|sdpa|fprop|fmha|flash' -c 8 \
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --metrics \
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active \
  python3 benchmarks/attention_ncu.py 4,32,32,1024,128,0 4,32,32,1024,128,1 4,32,32,16384,128,1 4,32,32,4096,64,1 2>&1 \
  | grep -v UserWarning > "$OUT/attention-ncu-s8.txt"
grep -E "^  [a-zA-Z_]|rel err|Duration|gmma|pipe_xu|pipe_fma|pipe_alu|Issued Warp|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Block Limit" "$OUT/attention-ncu-s8.txt" | head -n 90
