#!/usr/bin/env bash
# `argus record` on the GPU machine's Triton (3.6 there, 3.9 in CI): the hook observed through
# JITFunction.run on real CUDA launches, and through the interpreter by the record tests.
# Through the device tool, with the tree-sitter wheels (cp312) in .whl/:
#     run(command="bash scripts/gpu/record_h200.sh", carry=[".whl"])
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/argus-record-h200}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1
{
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
    python3 -m argus_lsp record --out "$OUT/launches-cuda.json" -- python3 tests/record/drivers/cuda_driver.py
    echo "== record exit status: $?"
    python3 -m argus_lsp check tests/fixtures/record_project/mini_ops/kernels.py --launches "$OUT/launches-cuda.json"
    echo "== check exit status: $? (1: findings)"
    python3 -m pytest -q -p no:cacheprovider tests/record/test_hook.py tests/record/test_record_project.py
    echo "== record tests under triton's interpreter: exit status $?"
} 2>&1 | tee "$OUT/record-h200.txt"
