"""Hover, the ignore action's text, and settings (initializationOptions, workspace/configuration)."""

from __future__ import annotations

import asyncio

import pytest
from lsp_support import HALF_TYPED, SERVER, Session, make_client
from lsprotocol import types

from argus_lsp.convert import UTF8, UTF16, LineIndex
from argus_lsp.features.code_actions import ignore_edit
from argus_lsp.settings import Settings, merge

IGNORED = HALF_TYPED.replace(
    "    pid = tl.program_id(0)\n", "    pid = tl.program_id(0)  # argus: ignore[MB003, AR002]\n"
)


async def test_hover_on_a_code_in_an_ignore_comment_shows_the_rule(session: Session) -> None:
    uri = "file:///work/ignored.py"
    session.open(uri, IGNORED)
    line = IGNORED.split("\n").index("    pid = tl.program_id(0)  # argus: ignore[MB003, AR002]")
    col = IGNORED.split("\n")[line].index("AR002") + 2
    hover = await session.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=col),
        )
    )
    assert hover is not None and "# AR002 parse-error" in hover.contents.value
    assert hover.range.start.character == col - 2


async def test_hover_on_a_variable_answers(session: Session) -> None:
    """`describe_at` may know nothing (None): then no hover, and never an error."""
    uri = "file:///work/half.py"
    session.open(uri, HALF_TYPED)
    line = HALF_TYPED.split("\n").index("    pid = tl.program_id(0)")
    hover = await session.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=5),
        )
    )
    assert hover is None or hover.contents.value


@pytest.mark.parametrize("encoding", [UTF8, UTF16])
def test_ignore_edit_appends_or_extends(encoding: str) -> None:
    src = "a = 1\nb = 'é'  # argus: ignore[MB003]\nc = 2  # argus: ignore\n".encode()
    index = LineIndex(src)
    add = ignore_edit(index, 0, "AR002", encoding)
    assert add.new_text == "  # argus: ignore[AR002]" and add.range.start == types.Position(
        line=0, character=5
    )
    extend = ignore_edit(index, 1, "DF002", encoding)
    assert extend.new_text == "MB003, DF002"
    start = 25 if encoding == UTF16 else 26
    assert (extend.range.start.character, extend.range.end.character) == (start, start + 5)
    assert ignore_edit(index, 1, "MB003", encoding) is None  # already silenced
    assert ignore_edit(index, 2, "DF002", encoding) is None  # a bare ignore silences everything


def test_settings_merge_and_report_bad_values() -> None:
    s, problems = merge(
        Settings(), {"argus": {"select": ["df", "MB"], "severity": {"PF": "off"}, "run": "onSave"}}
    )
    assert s.select == ("DF", "MB") and s.severity == {"PF": "off"} and s.run == "onSave" and not problems
    s2, problems = merge(s, {"run": "sometimes", "severity": {"MB": "loud"}, "debounceMs": -1})
    assert s2.run == "onSave" and s2.severity == {} and s2.debounce_ms == s.debounce_ms
    assert len(problems) == 3


async def test_configuration_change_rechecks_open_documents(session: Session) -> None:
    uri = "file:///work/half.py"
    session.open(uri, HALF_TYPED)
    assert [d.code for d in await session.diagnostics(uri)] == ["AR002"]
    before = len(session.client.published)  # type: ignore[attr-defined]
    session.client.set_configuration({"severity": {"AR002": "warning"}}, section="argus")
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    if not session.pulls:
        async with asyncio.timeout(20):
            while len(session.client.published) == before:  # type: ignore[attr-defined]
                await asyncio.sleep(0.01)
        assert [d.severity for d in session.client.published[-1].diagnostics] == [
            types.DiagnosticSeverity.Warning
        ]  # type: ignore[attr-defined]
        return
    async with asyncio.timeout(20):
        while True:
            diags = await session.diagnostics(uri)
            if diags and diags[0].severity == types.DiagnosticSeverity.Warning:
                break
            await asyncio.sleep(0.02)
    session.client.set_configuration({"ignore": ["AR"]}, section="argus")
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    async with asyncio.timeout(20):
        while await session.diagnostics(uri):
            await asyncio.sleep(0.02)


async def test_on_save_mode_waits_for_save(session: Session) -> None:
    session.client.set_configuration({"run": "onSave"}, section="argus")
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await asyncio.sleep(0.3)  # let the server fetch the new settings
    uri = "file:///work/half.py"
    session.open(uri, HALF_TYPED)
    assert [d.code for d in await session.diagnostics(uri)] == ["AR002"]  # opening always checks
    tail = HALF_TYPED.index("    x = tl.load")
    session.edit(uri, tail, len(HALF_TYPED), "")  # the kernel parses now
    await asyncio.sleep(0.3)
    if session.pulls:
        assert [d.code for d in await session.diagnostics(uri)] == ["AR002"]  # still the saved state
    else:
        assert all(p.version == 1 for p in session.client.published)  # type: ignore[attr-defined]
    session.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    async with asyncio.timeout(20):
        while "AR002" in [d.code for d in await session.diagnostics(uri, timeout=20)]:
            await asyncio.sleep(0.02)


async def test_utf8_is_preferred_whenever_offered() -> None:
    """pygls would take the client's first choice; the analyzers count bytes, so UTF-8 wins."""
    client = make_client()
    await client.start_io(*SERVER)
    try:
        caps = types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=["utf-16", "utf-8"])
        )
        result = await client.initialize_session(types.InitializeParams(capabilities=caps))
        assert result.capabilities.position_encoding == "utf-8"
        await client.shutdown_session()
    finally:
        await client.stop()
