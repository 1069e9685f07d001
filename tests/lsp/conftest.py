"""A real `python -m argus_lsp.server` process per test, driven by pytest-lsp as VS Code (push,
UTF-16) and as Neovim (the latest profile pytest-lsp knows: pull diagnostics, UTF-8)."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsp_support import SERVER, Session, make_client
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

PROFILES = ["visual-studio-code", "neovim"]


@pytest_lsp.fixture(
    params=PROFILES, config=ClientServerConfig(server_command=SERVER, client_factory=make_client)
)
async def client(lsp_client: LanguageClient, request):
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            initialization_options={"argus": {"debounceMs": 0}},
        )
    )
    enc = result.capabilities.position_encoding or "utf-16"
    lsp_client.encoding = getattr(enc, "value", enc)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def session(client: LanguageClient) -> Session:
    return Session(client, client.encoding)  # type: ignore[attr-defined]
