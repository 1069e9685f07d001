from __future__ import annotations

import pytest
from vscode_support import build_vsix, editor_tools, npm_ready


@pytest.fixture(scope="session")
def npm() -> str:
    return npm_ready()


@pytest.fixture(scope="session")
def editor_env(npm: str) -> dict[str, str]:
    """The real-editor drivers' tools and the .vsix, built once per session from the current sources."""
    tools = editor_tools()
    return {"ARGUS_E2E_VSIX": str(build_vsix(npm)), **tools}
