"""The quick-fix path end to end against the real server, as VS Code (versioned documentChanges,
UTF-16) and as Neovim (plain changes, UTF-8). The kernel has no launch site: it is bound to the one
size its masks mention, so the unmasked store is MB002 with the kernel's own mask as the fix.
The `client` fixture (conftest.py) runs each test once per editor profile."""

from __future__ import annotations

from lsp_support import Session, edits_of
from lsprotocol import types
from pytest_lsp import LanguageClient

TEXT = """import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # é 🎉
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask)
    s = "é🎉"; tl.store(out_ptr + offs, y)
"""


def unmasked_store(diags: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in diags if d.code == "MB002"]


async def actions_for(s: Session, uri: str, diags: list[types.Diagnostic]) -> list[types.CodeAction]:
    return list(
        await s.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diags[0].range,
                context=types.CodeActionContext(diagnostics=diags),
            )
        )
        or []
    )


async def test_fix_from_data_clears_the_diagnostic(client: LanguageClient) -> None:
    s = Session(client, client.encoding)  # type: ignore[attr-defined]
    uri = "file:///work/fix.py"
    s.open(uri, TEXT)
    found = unmasked_store(await s.diagnostics(uri))
    assert len(found) == 1 and found[0].data["fix"]["title"] == "Add `mask=mask`"
    actions = await actions_for(s, uri, found)
    fix = next(a for a in actions if a.is_preferred)
    assert fix.kind == types.CodeActionKind.QuickFix and fix.title == "Add `mask=mask`"
    if s.client.capabilities.workspace.workspace_edit.document_changes:
        assert fix.edit.document_changes[0].text_document.version == 1  # a stale edit is refused
    assert any(a.title == "Ignore MB002 on this line" for a in actions)
    s.apply(uri, edits_of(fix.edit, uri))
    assert 's = "é🎉"; tl.store(out_ptr + offs, y, mask=mask)' in s.texts[uri]
    assert unmasked_store(await s.diagnostics(uri)) == []


async def test_stale_fix_is_not_offered(client: LanguageClient) -> None:
    s = Session(client, client.encoding)  # type: ignore[attr-defined]
    uri = "file:///work/stale.py"
    s.open(uri, TEXT)
    found = unmasked_store(await s.diagnostics(uri))
    s.edit(uri, 0, 0, "# moved\n")  # the fix's ranges are now one line off
    actions = await actions_for(s, uri, found)
    assert not [a for a in actions if a.is_preferred]
