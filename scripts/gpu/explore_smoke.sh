#!/usr/bin/env bash
# Smoke run of every exploration call after their shared parts moved into benchmarks/explore_common.py
# and benchmarks/kernels.py (sweep_gemm_plan): one shape of each part, a budget of one second per part,
# so each call builds, checks and times its first shape and then skips the rest. Not a measurement.
# Through the device tool:  run(command="bash scripts/gpu/explore_smoke.sh")   (writes into $OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/argus-explore-smoke}"
mkdir -p "$OUT" .before
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
cp knowledge/kernels/moe.py knowledge/kernels/gemm.py .before/
run() {  # name, then the command; each call bounded, its log kept, its exit status said
  local name="$1"; shift
  timeout "${CALL_TIMEOUT_S:-150}" "$@" > "$OUT/$name.txt" 2>&1
  echo "== $name rc=$? rows=$(grep -c -E 'ms ratio|baseline|ok' "$OUT/$name.txt")"
  grep -E "Error|Traceback|ERROR|ms ratio" "$OUT/$name.txt" | head -n 8
}
run s7-gemm2 python3 benchmarks/kernels_explore_s7.py --out "$OUT" --part gemm2 --budget-s 1
run s7-attention python3 benchmarks/kernels_explore_s7.py --out "$OUT" --part attention --budget-s 1
run s8-gemm python3 benchmarks/kernels_explore_s8.py --out "$OUT" --part gemm --budget-s 1
run s8-attention python3 benchmarks/kernels_explore_s8.py --out "$OUT" --part attention --budget-s 1
run s9-gemm python3 benchmarks/kernels_explore_s9.py --out "$OUT" --before .before --part gemm --budget-s 1
run explore-gemm python3 benchmarks/kernels_explore.py --out "$OUT" --family gemm --budget-s 1
