#!/usr/bin/env bash
# The H200 acceptance runs of `argus optimize --policy knowledge` (issue 14). Through the device tool,
# with the tree-sitter wheels (cp312) in .whl/ (git-ignored):
#     run(command="bash scripts/gpu/optimize_h200.sh matmul moe attention", carry=[".whl"])
# or on any NVIDIA host with torch and triton:  OUT=/tmp/opt bash scripts/gpu/optimize_h200.sh matmul attention moe
# For each example it runs the command below and writes $OUT/optimize-h200-NAME.{json,md,txt}
# (and the roofline plot); benchmarks/results/ keeps the committed copies.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/argus-optimize-h200}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then  # the checker's tree-sitter, absent from the GPU image
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 2
    export PYTHONPATH="/tmp/site:$PWD"
else
    export PYTHONPATH="$PWD"
fi
export PYTHONUNBUFFERED=1
declare -A TARGET=([matmul]=examples/naive_matmul.py::matmul_kernel
                   [attention]=examples/naive_attention.py::attention_kernel
                   [moe]=examples/naive_moe.py::moe_gate_up_kernel)
declare -A COMPARE=([matmul]=torch.matmul [attention]=argus.knowledge.kernels.attention.attention
                    [moe]=argus.knowledge.kernels.moe.fused_moe)
BUDGET=${BUDGET:-2}
for name in "$@"; do
    CMD=(python3 -m argus_lsp.cli_optimize "${TARGET[$name]}" --policy knowledge --budget "$BUDGET"
         --minutes 9 --timeout 400 --compare "${COMPARE[$name]}" --report "$OUT" --report-stem "optimize-h200-$name")
    {
        echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
        echo "== command: ${CMD[*]}"
        start=$(date +%s)
        "${CMD[@]}"
        echo "== exit status: $? after $(( $(date +%s) - start )) s"
    } > "$OUT/optimize-h200-$name.txt" 2>&1
    tail -5 "$OUT/optimize-h200-$name.txt"
done
ls -la "$OUT"
