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
