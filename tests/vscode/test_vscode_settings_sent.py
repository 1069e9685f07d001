"""What the extension sends is what the server reads (issue 13): the compiled `toServerSettings`
(editors/vscode/src/settings.ts), given the settings package.json declares at their defaults,
produces an object the server parses without a problem into its own defaults; and a change of
each scheduling setting arrives under the server's name."""

from __future__ import annotations

import json
import subprocess

from vscode_support import EXT


def sent(npm: str, overrides: dict) -> dict:
    tsc = EXT / "node_modules" / ".bin" / "tsc"
    build = subprocess.run(
        [str(tsc), "-p", "tsconfig.test.json"], cwd=EXT, capture_output=True, text=True, timeout=300
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-2000:]
    props = json.loads((EXT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    raw = {k[len("argus.") :]: v.get("default") for k, v in props.items()} | overrides
    script = (
        "const s = require('./out/src/settings.js');"
        f"const raw = {json.dumps(raw)};"
        "console.log(JSON.stringify(s.initializationOptions(s.toServerSettings(k => raw[k]), true)));"
    )
    proc = subprocess.run(["node", "-e", script], cwd=EXT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_declared_defaults_arrive_as_the_servers_defaults(npm: str) -> None:
    from argus_lsp.settings import Settings, merge

    assert merge(Settings(), sent(npm, {})) == (Settings(), [])


def test_the_scheduling_settings_arrive_under_the_servers_names(npm: str) -> None:
    from argus_lsp.settings import Settings, merge

    settings, problems = merge(
        Settings(), sent(npm, {"debounceMs": 40, "kernelTimeout": 3, "checkProcesses": 2})
    )
    assert problems == []
    assert (settings.debounce_ms, settings.kernel_timeout, settings.check_processes) == (40, 3.0, 2)
