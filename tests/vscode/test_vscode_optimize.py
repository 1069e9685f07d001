"""The real-editor test of "Optimize this kernel" (issue 14): the .vsix in code-server, driven by
headless Chromium (editors/vscode/test/e2e/optimize.mjs does the driving), no GPU.

The server under test is tests/lsp/optimize_server.py (the real server; gate 3's clock is fake,
because there is no GPU to time on); the `llm` policy talks to a real local chat-completions server
with one scripted reply, a correct candidate with larger tiles (tests/agent/replies/faster.md).
Gates 1 and 2 run for real. The test clicks the "✨ Optimize" lens, waits for the diff preview, clicks
"Apply", saves, and checks the candidate's line is in the file on disk.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from vscode_support import REPO, missing, run_driver

sys.path.insert(0, str(REPO / "tests" / "agent"))
from scripted_openai import ScriptedOpenAI  # noqa: E402

pytestmark = pytest.mark.slow

ARTIFACTS = REPO / "test-artifacts" / "vscode-optimize"
KERNEL = REPO / "examples" / "naive_matmul.py"
FASTER = REPO / "tests" / "agent" / "replies" / "faster.md"


@pytest.fixture(scope="module")
def optimize_env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from tests.profile.conftest import triton_python

    if triton_python() is None:
        missing("no interpreter with torch + triton for gate 2 (scripts/setup.d/30-triton-cpu.sh)")
    editor_env = request.getfixturevalue("editor_env")  # after the skip: no .vsix built for nothing
    # argus.path must name one executable: a script that starts the fake-clock server.
    wrapper = tmp_path_factory.mktemp("argus-bin") / "argus"
    wrapper.write_text(
        f'#!/bin/sh\nexport PYTHONPATH="{REPO}"\nexec "{sys.executable}" "{REPO}/tests/lsp/optimize_server.py"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {
        **os.environ,
        **editor_env,
        "ARGUS_E2E_ARGUS": str(wrapper),
        "ARGUS_E2E_KERNEL": str(KERNEL),
        "ARGUS_TEST_KEY": "sk-vscode-e2e",
    }


def test_optimize_preview_then_apply_in_real_vscode(optimize_env: dict[str, str]) -> None:
    with ScriptedOpenAI([FASTER.read_text()]) as llm:
        env = {
            **optimize_env,
            "ARGUS_E2E_BASE_URL": llm.base_url,
            "ARGUS_E2E_EXPECT": "BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32  # FAST",
        }
        result = run_driver("optimize.mjs", env, ARTIFACTS, timeout=600)
        prompts = len(llm.requests)
    assert prompts == 1  # the one candidate came from the scripted endpoint
    assert "Argus candidate" in result["diffTab"] and "passed every gate" in result["toast"]
    assert result["changed"] == ["    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32  # FAST"]
    assert Path(result["screenshot"]).stat().st_size > 10_000
