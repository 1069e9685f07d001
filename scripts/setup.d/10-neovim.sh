#!/usr/bin/env bash
# Neovim for tests/lsp/test_lsp_nvim.py (a real editor talking to the language server).
# Debian 12 ships 0.7.2, which editors/nvim/argus.lua supports. Idempotent and quiet.
set -euo pipefail
command -v nvim >/dev/null 2>&1 || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq neovim >/dev/null
}
