#!/usr/bin/env bash
# Runs the own corpus's self-tests compiled on the GPU (no interpreter), as behind
# benchmarks/results/corpus-own-h200*.txt. Through the device tool:
#     run(command="bash scripts/gpu/corpus_own_h200.sh attn_desc.py moe_grouped.py ...")
# With no file names it runs every file. Output: $OUT/corpus-own-h200.txt
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/argus-corpus-own}"
mkdir -p "$OUT"
{
    python3 -c 'import torch, triton; print("triton", triton.__version__, "torch", torch.__version__)'
    nvidia-smi --query-gpu=name --format=csv,noheader
    TRITON_INTERPRET=0 PYTHON=python3 python3 scripts/corpus_selftest.py --all -j 4 "$@"
} 2>&1 | tee "$OUT/corpus-own-h200.txt"
