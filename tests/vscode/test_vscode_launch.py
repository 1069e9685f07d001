"""Every VS Code launch path, with the exact argv and cwd the extension builds, in a hostile
workspace (issue 13): no workspace file runs, and the project's own `analyzers/` and `agent/`
packages do not stop its kernel from being checked.

The argv and cwd come from the extension's compiled code (`resolveServerCommand` with the real
probes of probes.ts, then `launchSpec`), run by node with the workspace as its working directory,
as an extension host may well have; then the server is started exactly so and a kernel of the
workspace is opened. The hostile workspace is tests/lsp/hostile.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vscode_support import EXT, REPO

sys.path.insert(0, str(REPO / "tests" / "lsp"))
from hostile import assert_safe, console_script, findings_in, make_workspace  # noqa: E402
from lsp_support import server_env  # noqa: E402

SOURCES = ["argus.path", "argus.interpreter", "python-extension", "PATH"]

SCRIPT = """
const { resolveServerCommand, launchSpec } = require('./out/src/serverCommand.js');
const probes = require('./out/src/probes.js');
const [source, argus, python, safeDir] = process.argv.slice(1);
(async () => {
  const res = await resolveServerCommand({
    path: source === 'argus.path' ? argus : '',
    interpreter: source === 'argus.interpreter' ? python : '',
    trusted: true,
    pythonExtensionInterpreter: async () => (source === 'python-extension' ? python : undefined),
    isExecutable: probes.isExecutable,
    hasArgusPackage: (py) => probes.hasArgusPackage(py, safeDir),
    which: (name) => probes.which(name, require('node:path').dirname(argus)),
  });
  if (!res.server) throw new Error(res.problem);
  console.log(JSON.stringify({ source: res.server.source, ...launchSpec(res.server, safeDir) }));
})().catch((e) => { console.error(String(e)); process.exit(1); });
"""


@pytest.fixture(scope="module")
def compiled(npm: str) -> Path:
    tsc = EXT / "node_modules" / ".bin" / "tsc"
    build = subprocess.run(
        [str(tsc), "-p", "tsconfig.test.json"], cwd=EXT, capture_output=True, text=True, timeout=300
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-2000:]
    return EXT


def spec_for(source: str, workspace: Path, safe_dir: Path, python: str) -> dict:
    argus = console_script("argus")
    proc = subprocess.run(
        ["node", "-e", SCRIPT.replace("./out/", f"{EXT / 'out'}/"), source, argus, python, str(safe_dir)],
        cwd=workspace,  # the extension host's cwd is not ours to choose: the probe must not care
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("source", SOURCES)
def test_launch_path_runs_no_workspace_file(compiled: Path, tmp_path: Path, source: str) -> None:
    ws = make_workspace(tmp_path)
    safe_dir = tmp_path / "globalStorage" / "argus-dev.argus"  # what extension.ts creates
    safe_dir.mkdir(parents=True)
    spec = spec_for(source, ws.root, safe_dir, sys.executable)
    assert spec["source"] == source
    assert spec["cwd"] == str(safe_dir)
    if source in ("argus.interpreter", "python-extension"):
        assert spec["command"] == sys.executable and spec["args"] == ["-P", "-m", "argus_lsp.server"]
    else:
        assert spec["command"] == console_script("argus") and spec["args"] == ["serve"]
    env = server_env({"PYTHONUNBUFFERED": "1"})  # client.ts: process.env plus this
    assert_safe(ws, findings_in(ws, [spec["command"], *spec["args"]], spec["cwd"], env))
    assert os.listdir(safe_dir) == []  # the server leaves nothing behind where it runs
