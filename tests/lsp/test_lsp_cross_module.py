"""The language server resolves a kernel's helpers and launches over its workspace folder (a real
server process and pytest-lsp client, the package written to tmp_path): the helper imported
from another module is inlined, the launch in a third module binds the kernel, and an edit of
the helper module (on disk, or unsaved in the editor) changes the kernel's diagnostics: the
kernel's cache key holds the text of every module its result read."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from cross_module_package import EXT_SEEDED, KERNEL_CALL_LINE, package_files, write_package
from lsp_support import SERVER, Session, make_client, server_env
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

FILES = package_files(nested=False)
KERNELS = FILES["pkg/kernels.py"]
OPS = FILES["pkg/ops.py"]
EXT_BUGGY = EXT_SEEDED
CALL_LINE = KERNEL_CALL_LINE


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    write_package(tmp_path, nested=False)
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, client_factory=make_client, server_env=server_env())
)
async def lsp(lsp_client: LanguageClient):
    yield lsp_client
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, folder: Path) -> Session:
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=folder.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="ws")],
            initialization_options={"argus": {"debounceMs": 0}},
        )
    )
    enc = result.capabilities.position_encoding or "utf-16"
    return Session(client, getattr(enc, "value", enc))


async def next_publish(client: LanguageClient, uri: str, after: int, timeout: float = 60) -> list:
    """The diagnostics of the first publish for `uri` after the first `after` publishes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for p in client.published[after:]:  # type: ignore[attr-defined]
            if p.uri == uri:
                return list(p.diagnostics)
        await asyncio.sleep(0.01)
    raise TimeoutError(f"no new diagnostics for {uri} within {timeout}s")


def gating(diags: list[types.Diagnostic]) -> list[tuple[str, int]]:
    serious = (types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning)
    return sorted((str(d.code), d.range.start.line) for d in diags if d.severity in serious)


@pytest.mark.asyncio
async def test_helper_module_edits_change_the_kernels_diagnostics(
    lsp: LanguageClient, workspace: Path
) -> None:
    session = await start(lsp, workspace)
    kernels = (workspace / "pkg" / "kernels.py").as_uri()
    session.open(kernels, KERNELS)
    diags = await session.diagnostics(kernels)
    assert diags == [], [d.message for d in diags]  # tle.program_id and load_row are inlined

    # the helper changes on disk (another tool, a git checkout): the next check of the kernel sees it
    (workspace / "pkg" / "ext.py").write_text(EXT_BUGGY)
    session.edit(kernels, len(KERNELS), len(KERNELS), "\n")
    diags = await session.diagnostics(kernels)
    assert ("MB001", CALL_LINE) in gating(diags), [d.message for d in diags]
    assert any("inside `load_row` at pkg/ext.py:11" in d.message for d in diags)

    # the helper is opened and fixed in the editor and saved: the kernel's document is re-checked
    ext = (workspace / "pkg" / "ext.py").as_uri()
    session.open(ext, EXT_BUGGY)
    await session.diagnostics(ext)
    session.edit(ext, EXT_BUGGY.index("ptr + offs + 1"), EXT_BUGGY.index("ptr + offs + 1") + 14, "ptr + offs")
    await session.diagnostics(ext)
    before = len(lsp.published)  # type: ignore[attr-defined]
    lsp.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=ext))
    )
    assert gating(await next_publish(lsp, kernels, before)) == []


@pytest.mark.asyncio
async def test_launch_in_another_module_binds_the_kernel(lsp: LanguageClient, workspace: Path) -> None:
    (workspace / "pkg" / "ops.py").write_text(OPS.replace("(triton.cdiv(n, 128),)", "(n // 128,)"))
    session = await start(lsp, workspace)
    kernels = (workspace / "pkg" / "kernels.py").as_uri()
    session.open(kernels, KERNELS)
    diags = await session.diagnostics(kernels)
    assert ("GR001", 12) in gating(diags), [d.message for d in diags]
