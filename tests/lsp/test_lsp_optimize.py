""" "Optimize this kernel" end to end: a real server process driven by pytest-lsp, no GPU.

The server is tests/lsp/optimize_server.py (the real server with gate 3's clock replaced: a `# FAST`
candidate takes half the time); the `llm` policy talks to a real local chat-completions server with
scripted replies (tests/agent/scripted_openai.py). Gates 1 and 2 run for real: the checker, and the
worker subprocess under the Triton interpreter. Checked: the lens and the code action on a kernel
with a task, work-done progress with the stage and candidate count, the edit sent on `apply` equals
the patch, refusals (untrusted workspace, a candidate that did not pass every gate, a document
changed since the run started), and cancel.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import REPO, make_client
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from argus_lsp.features.optimize import OptimizeSettings, line_edits, parse_settings
from tests.profile.conftest import triton_python

sys.path.insert(0, str(REPO / "tests" / "agent"))
from scripted_openai import ScriptedOpenAI  # noqa: E402

EXAMPLE = REPO / "examples" / "naive_matmul.py"
REPLIES = REPO / "tests" / "agent" / "replies"
KEY = "sk-lsp-test-key"
SERVER = [sys.executable, str(Path(__file__).with_name("optimize_server.py"))]
ENV = {**os.environ, "ARGUS_TEST_KEY": KEY, "PYTHONPATH": str(REPO)}


def reply(name: str) -> str:
    return (REPLIES / f"{name}.md").read_text()


def _client() -> LanguageClient:
    client = make_client()
    client.edits = []  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def _apply(c: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        c.edits.append(params.edit)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _refresh(c: LanguageClient, params: None) -> None:
        pass

    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=_client, server_env=ENV))
async def lsp(lsp_client: LanguageClient):
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def needs_triton() -> None:
    if triton_python() is None:
        pytest.skip("no interpreter with torch + triton (scripts/setup.d/30-triton-cpu.sh installs them)")


@pytest.fixture
def kernel_file(tmp_path: Path) -> Path:
    """A copy of the naive matmul example and its task, so applying a patch changes only the copy."""
    dest = tmp_path / EXAMPLE.name
    shutil.copyfile(EXAMPLE, dest)
    shutil.copyfile(
        EXAMPLE.with_name(EXAMPLE.name + ".argus.toml"), tmp_path / (EXAMPLE.name + ".argus.toml")
    )
    return dest


async def _init(
    client: LanguageClient, base_url: str = "http://127.0.0.1:9/v1", trusted: bool = True
) -> None:
    client.set_configuration(
        {
            "policy": "llm",
            "baseUrl": base_url,
            "model": "scripted",
            "apiKeyEnv": "ARGUS_TEST_KEY",
            "budget": 1,
        },
        section="argus.optimize",
    )
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"argus": {"debounceMs": 0, "trusted": trusted}},
        )
    )


def _open(client: LanguageClient, path: Path) -> str:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=1, text=path.read_text()
            )
        )
    )
    return path.as_uri()


async def _command(client: LanguageClient, command: str, uri: str, timeout: float = 300) -> dict:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=[{"uri": uri, "kernel": "matmul_kernel"}])
        ),
        timeout,
    )


def _apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply whole-line edits (character 0) the way a client does: from the last to the first."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: e.range.start.line, reverse=True):
        assert e.range.start.character == 0 and e.range.end.character == 0
        new = e.new_text.split("\n")[:-1] if e.new_text else []
        lines[e.range.start.line : e.range.end.line] = new
    return "\n".join(lines)


def _action_titles(actions) -> list[str]:
    """Titles of the optimize actions. lsprotocol's client-side converter turns every code action that
    has a `command` key into a `Command` (its command then holds the nested Command's repr)."""
    titles = []
    for a in actions or []:
        if isinstance(a, types.CodeAction) and a.command and a.command.command == "argus.optimize":
            titles.append(a.title)
        elif isinstance(a, types.Command) and a.command.startswith("{"):
            nested = ast.literal_eval(a.command)
            if nested["command"] == "argus.optimize" and nested["arguments"][0]["kernel"] == "matmul_kernel":
                titles.append(a.title)
    return titles


async def _code_actions(client: LanguageClient, uri: str, line: int):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


async def _lens_titles(client: LanguageClient, uri: str) -> list[str]:
    got = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return [lens.command.title for lens in got or [] if lens.command]


async def test_offered_on_kernels_with_a_task(lsp: LanguageClient, kernel_file: Path) -> None:
    await _init(lsp)
    uri = _open(lsp, kernel_file)
    assert "✨ Optimize" in await _lens_titles(lsp, uri)
    lines = kernel_file.read_text().split("\n")
    inside = next(i for i, s in enumerate(lines) if s.startswith("def matmul_kernel(")) + 3
    assert _action_titles(await _code_actions(lsp, uri, inside)) == [
        "Optimize this kernel (matmul_kernel) with Argus"
    ]
    before = next(i for i, s in enumerate(lines) if s.startswith("import"))
    assert _action_titles(await _code_actions(lsp, uri, before)) == []


async def test_untrusted_workspace_is_refused(lsp: LanguageClient, kernel_file: Path) -> None:
    await _init(lsp, trusted=False)
    uri = _open(lsp, kernel_file)
    assert "✨ Optimize" not in await _lens_titles(lsp, uri)
    with pytest.raises(JsonRpcException, match="not trusted"):
        await _command(lsp, "argus.optimize", uri)
    with pytest.raises(JsonRpcException, match="not trusted"):
        await _command(lsp, "argus.optimize.apply", uri)


@pytest.mark.usefixtures("needs_triton")
async def test_improved_result_previewed_then_applied(lsp: LanguageClient, kernel_file: Path) -> None:
    with ScriptedOpenAI([reply("faster")]) as llm:
        await _init(lsp, llm.base_url)
        uri = _open(lsp, kernel_file)
        out = await _command(lsp, "argus.optimize", uri)
    assert out["status"] == "improved" and out["applicable"], out
    assert "64, 64, 32" in out["patch"] and out["candidates"] == 1
    old = kernel_file.read_text()
    assert kernel_file.read_text() == old and not lsp.edits  # nothing changes before the user accepts
    reports = [r for rs in lsp.progress_reports.values() for r in rs]
    messages = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert "baseline: 0 candidates" in messages and "gates: 1 candidate" in messages
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and reports[-1].message == "improved"

    applied = await _command(lsp, "argus.optimize.apply", uri)
    assert applied["status"] == "applied"
    (edit,) = lsp.edits
    (change,) = edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == 1
    new = _apply_edits(old, change.edits)
    assert new == out["newText"]
    patch = "".join(
        difflib.unified_diff(
            old.splitlines(True), new.splitlines(True), "a/" + kernel_file.name, "b/" + kernel_file.name
        )
    )
    assert patch.split("\n")[2:] == out["patch"].split("\n")[2:]  # the same hunks as the agent's patch
    with pytest.raises(JsonRpcException, match="no finished optimization"):  # applied once
        await _command(lsp, "argus.optimize.apply", uri)


@pytest.mark.usefixtures("needs_triton")
async def test_apply_refused_unless_every_gate_passed_and_unchanged(
    lsp: LanguageClient, kernel_file: Path
) -> None:
    with ScriptedOpenAI([reply("slower"), reply("faster")]) as llm:
        await _init(lsp, llm.base_url)
        uri = _open(lsp, kernel_file)
        slower = await _command(lsp, "argus.optimize", uri)
        assert slower["status"] == "no-better" and not slower["applicable"]
        assert slower["rejected"]["performance"] == 1
        with pytest.raises(JsonRpcException, match="only a kernel that passed every gate"):
            await _command(lsp, "argus.optimize.apply", uri)

        faster = await _command(lsp, "argus.optimize", uri)
        assert faster["status"] == "improved"
    lsp.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=kernel_file.read_text() + "# edited\n")
            ],
        )
    )
    await asyncio.sleep(0.2)
    with pytest.raises(JsonRpcException, match="document changed since the optimization started"):
        await _command(lsp, "argus.optimize.apply", uri)
    assert not lsp.edits


async def test_unsaved_buffer_refused_before_anything_runs(lsp: LanguageClient, kernel_file: Path) -> None:
    await _init(lsp)
    uri = _open(lsp, kernel_file)
    lsp.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=kernel_file.read_text() + "\n")
            ],
        )
    )
    with pytest.raises(JsonRpcException, match="save naive_matmul.py first"):
        await _command(lsp, "argus.optimize", uri, timeout=30)


@pytest.mark.usefixtures("needs_triton")
async def test_cancel_stops_the_run(lsp: LanguageClient, kernel_file: Path) -> None:
    with ScriptedOpenAI([reply("faster")]) as llm:
        await _init(lsp, llm.base_url)
        uri = _open(lsp, kernel_file)
        running = asyncio.ensure_future(_command(lsp, "argus.optimize", uri))
        for _ in range(300):  # the run has begun once its progress shows
            if any(
                isinstance(r, types.WorkDoneProgressBegin) for rs in lsp.progress_reports.values() for r in rs
            ):
                break
            await asyncio.sleep(0.1)
        (token,) = lsp.progress_reports
        assert any("Optimizing" in t for t in await _lens_titles(lsp, uri))
        lsp.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        out = await asyncio.wait_for(running, 60)
    assert out["status"] == "cancelled"
    with pytest.raises(JsonRpcException, match="no finished optimization"):
        await _command(lsp, "argus.optimize.apply", uri)


# -- pure parts: the edit and the settings (no server) ------------------------------------------------
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),  # one line replaced
        ("a\nb\nc\n", "a\nb\nx\ny\nc\n"),  # lines inserted
        ("a\nb\nc\nd\n", "a\nd\n"),  # lines deleted
        ("a\r\nb\r\n", "a\r\nz\r\n"),  # CRLF kept as it is
        ("", "x\n"),
    ],
)
def test_line_edits_turn_old_into_new(old: str, new: str) -> None:
    edits = line_edits(old, new)
    assert _apply_edits(old, edits) == new
    assert all(e.range.start.character == 0 for e in edits)


def test_line_edits_without_final_newline_replace_the_whole_text() -> None:
    (edit,) = line_edits("a\nb", "a\nc")
    assert edit.new_text == "a\nc" and (edit.range.end.line, edit.range.end.character) == (1, 1)


def test_settings_read_from_either_shape_and_bad_values_reported() -> None:
    s, problems = parse_settings(
        {"argus": {"optimize": {"policy": "llm", "baseUrl": " http://h/v1 ", "budget": 3}}}
    )
    assert s == OptimizeSettings(policy="llm", base_url="http://h/v1", budget=3) and problems == []
    s, problems = parse_settings({"policy": "magic", "budget": 0, "model": 7, "minutes": "x"})
    assert s == OptimizeSettings()
    assert len(problems) == 4 and "argus.optimize.policy" in problems[0]
    assert parse_settings(None) == (OptimizeSettings(), [])
