#!/usr/bin/env bash
# The test command (README quick start, step 2; .ci/run calls exactly this).
# Installs what the tests need (Debian packages through scripts/setup.d/*.sh, the Python package
# with its dev extra into .venv), then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
for step in scripts/setup.d/*.sh; do
    [ -e "$step" ] || continue
    echo "== setup: $step"
    bash "$step"
done
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/pip install -q -e '.[dev]'
export PATH="$PWD/.venv/bin:$PATH"
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
