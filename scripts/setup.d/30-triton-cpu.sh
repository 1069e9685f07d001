#!/usr/bin/env bash
# torch + triton in the project's .venv, for tests that run Triton kernels on the CPU through the
# interpreter (TRITON_INTERPRET=1): tests/profile (local and SSH profiling). Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv/bin/python ] || python3 -m venv .venv
if ! .venv/bin/python -c 'import torch, triton' >/dev/null 2>&1; then
    .venv/bin/pip install -q 'torch==2.13.0' triton
fi
