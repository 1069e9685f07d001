#!/usr/bin/env bash
# CPU torch + triton in .venv, for tests/knowledge/test_reference_kernels_cpu.py (TRITON_INTERPRET=1).
# Without them those tests skip. The core package itself never needs torch or triton.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv/bin/python ] || python3 -m venv .venv
if ! .venv/bin/python -c "import torch, triton" >/dev/null 2>&1; then
    .venv/bin/pip install -q "torch==2.13.0" triton
fi
