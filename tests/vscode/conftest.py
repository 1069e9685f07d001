from __future__ import annotations

import pytest
from vscode_support import npm_ready


@pytest.fixture(scope="session")
def npm() -> str:
    return npm_ready()
