"""The extension's own unit tests (`npm test` in editors/vscode): no VS Code needed."""

from __future__ import annotations

import json
import subprocess

from vscode_support import EXT


def test_npm_unit_tests(npm: str) -> None:
    proc = subprocess.run([npm, "test"], cwd=EXT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "# fail 0" in proc.stdout or "ℹ fail 0" in proc.stdout, proc.stdout[-3000:]


def test_extension_typechecks(npm: str) -> None:
    # The unit tests compile only the pure modules; this covers the vscode-facing ones too.
    proc = subprocess.run([npm, "run", "typecheck"], cwd=EXT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_e2e_strips_corpus_markers(npm: str) -> None:
    # The real-editor test shows the corpus file without its `# expect:` / `# also:` markers and
    # looks for the finding at the marked line.
    script = (
        "import { stripMarkers } from './test/e2e/run.mjs';"
        "console.log(JSON.stringify(stripMarkers("
        "'a = 1\\n    tl.store(p, x)  # expect: MB002  # also: MB004\\nb  # also: DF001\\n', 'MB002')));"
    )
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", script], cwd=EXT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"text": "a = 1\n    tl.store(p, x)\nb\n", "line": 2}


def test_server_reads_what_the_client_sends(npm: str) -> None:
    # The client's initializationOptions (src/settings.ts, compiled) fed to the server's own
    # parsing: every profile setting lands under the server's name, with no problem reported, and
    # `trusted: false` turns the Profile lens off (argus_lsp/features/profile_lens.py).
    from argus_lsp.features.profile_lens import ProfileFeature
    from argus_lsp.settings import Settings, merge

    tsc = EXT / "node_modules" / ".bin" / "tsc"
    build = subprocess.run([str(tsc), "-p", "tsconfig.test.json"], cwd=EXT, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-2000:]
    raw = {
        "select": [],
        "ignore": ["mb004"],
        "severityOverrides": {"MB002": "hint"},
        "run": "onSave",
        "profile.target": "ssh://me@gpu-box:2222",
        "profile.python": "/opt/venv/bin/python",
        "profile.timeout": 90,
        "profile.counters": True,
    }
    script = (
        "const s = require('./out/src/settings.js');"
        f"const raw = {json.dumps(raw)};"
        "const opts = t => s.initializationOptions(s.toServerSettings(k => raw[k]), t);"
        "console.log(JSON.stringify([opts(true), opts(false)]));"
    )
    proc = subprocess.run(["node", "-e", script], cwd=EXT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    trusted, untrusted = json.loads(proc.stdout)

    settings, problems = merge(Settings(), trusted)
    assert problems == []
    assert settings == Settings(
        select=None,
        ignore=("MB004",),
        severity={"MB002": "hint"},
        run="onSave",
        profile_target="ssh://me@gpu-box:2222",
        profile_python="/opt/venv/bin/python",
        profile_timeout=90.0,
        profile_counters=True,
    )
    assert merge(Settings(), untrusted) == (settings, [])

    feature = ProfileFeature.__new__(ProfileFeature)  # configure() needs no server
    feature.configure(trusted)
    assert feature.trusted is True
    feature.configure(untrusted)
    assert feature.trusted is False
