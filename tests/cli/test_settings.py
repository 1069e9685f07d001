"""The one settings model: `[tool.argus]` strictly, editor settings over it, and the language
server reading the project's table (a real server process, driven by pytest-lsp)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from cli_helpers import HALF_TYPED
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from argus_lsp.settings import Settings, editor_over, from_project, merge, resolve

# What the VS Code extension sends when the user set nothing (editors/vscode/src/settings.ts).
VSCODE_DEFAULTS = {"select": None, "ignore": [], "severity": {}, "run": "onType", "debounceMs": 0}


def test_project_table_parses_and_reports_every_problem():
    s, problems = from_project({"select": "df, MB", "ignore": ["mb003"], "severity": {"pf": "off"}}, "p.toml")
    assert (s.select, s.ignore, s.severity, problems) == (("DF", "MB"), ("MB003",), {"PF": "off"}, [])
    s, problems = from_project({"selct": ["DF"], "ignroe": [], "select": []}, "p.toml")
    assert s == Settings()
    assert problems[:2] == [
        "p.toml: unknown key `selct` (did you mean `select`?)",
        "p.toml: unknown key `ignroe` (did you mean `ignore`?)",
    ]
    assert problems[2].startswith("p.toml: `select = []` in [tool.argus] selects no rule, so nothing")
    _, problems = from_project({"severity": {"XY9": "hint"}, "profile.target": "local"}, "p.toml")
    assert problems == [
        "p.toml: `profile.target` is an editor setting, not a project one (set it in the editor)",
        "unknown rule code in p.toml ([tool.argus] severity): XY9 (`argus rules` lists them)",
    ]
    assert from_project(["select"], "p.toml")[1] == ["p.toml: [tool.argus] must be a table"]


def test_editor_settings_override_only_what_they_set():
    project, _ = from_project({"ignore": ["PF"], "severity": {"MB": "hint"}}, "p.toml")
    s, problems = editor_over(project, {"argus": VSCODE_DEFAULTS})
    assert (s.ignore, s.severity, s.select, problems) == (("PF",), {"MB": "hint"}, None, [])
    s, _ = editor_over(project, {"select": ["DF"], "ignore": ["MB004"], "severity": {"DF": "off"}})
    assert (s.select, s.ignore, s.severity) == (("DF",), ("MB004",), {"DF": "off"})
    s, problems = editor_over(project, {"run": "sometimes"})
    assert s == project and problems == ["argus.run must be one of onType, onSave, got 'sometimes'"]


def test_the_latest_editor_answer_replaces_the_initialization_options():
    project, _ = from_project({"ignore": ["PF"]}, "p.toml")
    init = {"argus": {"ignore": ["MB"], "run": "onSave"}}
    assert resolve(project, init, None)[0].ignore == ("MB",)
    assert resolve(project, init, {})[0].run == "onSave"  # an empty answer keeps the options
    s, _ = resolve(project, init, {"run": "onType", "ignore": []})  # cleared in the editor
    assert (s.ignore, s.run) == (("PF",), "onType")
    s, problems = resolve(project, init, "onSave")  # a malformed answer is named, the options kept
    assert s.run == "onSave" and problems == ["argus settings must be an object, got 'onSave'"]


def test_neovim_empty_settings_array_is_an_empty_object():
    """Neovim 0.7 encodes `settings = {}` (an empty Lua table) as a JSON array."""
    assert merge(Settings(), []) == (Settings(), [])
    assert merge(Settings(), {"argus": []}) == (Settings(), [])
    assert resolve(Settings(), [], []) == (Settings(), [])
    assert merge(Settings(), [1])[1] == ["argus settings must be an object, got [1]"]


def test_severity_level_for_takes_the_longest_prefix():
    s = Settings(severity={"MB": "hint", "MB002": "off"})
    assert (s.level_for("MB002", "error"), s.level_for("MB001", "error"), s.level_for("DF1", "x")) == (
        "off",
        "hint",
        "x",
    )


# --- the language server reads the project's [tool.argus] ------------------------------------------

SERVER = [sys.executable, "-m", "argus_lsp.server"]
CONFIG = ClientServerConfig(server_command=SERVER)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.argus]\nignore = ["AR"]\n')
    return tmp_path


@pytest_lsp.fixture(config=CONFIG)
async def vscode(lsp_client: LanguageClient, project: Path):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="p")],
            initialization_options={"argus": VSCODE_DEFAULTS},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _codes_after(client: LanguageClient, uri: str, count: int, timeout: float = 30) -> list[str]:
    """The codes of the `count`-th publish for `uri` (the client keeps only the latest set)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    seen = 0
    while seen < count:
        remaining = deadline - loop.time()
        params = await asyncio.wait_for(client.wait_for_notification("textDocument/publishDiagnostics"), remaining)
        seen += params.uri == uri
    return sorted(str(d.code) for d in params.diagnostics)


async def test_server_applies_the_project_table_and_the_editor_overrides_it(vscode, project: Path):
    client: LanguageClient = vscode
    uri = (project / "two.py").as_uri()
    waiting = asyncio.ensure_future(_codes_after(client, uri, 1))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri, "python", 1, HALF_TYPED))
    )
    assert "AR002" not in await waiting  # [tool.argus] ignore = ["AR"]
    assert client.messages == []  # VS Code's defaults are not problems, and do not override
    client.set_configuration({**VSCODE_DEFAULTS, "ignore": ["PF"]}, section="argus")
    waiting = asyncio.ensure_future(_codes_after(client, uri, 1))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert "AR002" in await waiting  # the editor's ignore replaced the project's


@pytest_lsp.fixture(config=CONFIG)
async def neovim(lsp_client: LanguageClient, project: Path):
    lsp_client.set_configuration([], section="argus")  # Neovim 0.7: `settings = {}` arrives as []
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim"),
            root_uri=project.as_uri(),
            initialization_options=[],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_neovim_empty_settings_do_not_warn(neovim, project: Path):
    client: LanguageClient = neovim
    uri = (project / "two.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri, "python", 1, HALF_TYPED))
    )
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert "AR002" not in [d.code for d in report.items]  # the project's table applies here too
    assert client.messages == []


def test_the_optimize_sub_table_is_known_but_a_misspelt_one_is_not():
    """`[tool.argus.optimize]` belongs to `argus optimize`, which validates it; `check` must not
    refuse the project because of it. A table under another name is still an unknown key."""
    from argus_lsp.settings import from_project

    _, problems = from_project({"select": ["MB"], "optimize": {"model": "m"}}, "pyproject.toml")
    assert problems == []
    _, problems = from_project({"optimise": {"model": "m"}}, "pyproject.toml")
    assert len(problems) == 1 and "unknown key `optimise`" in problems[0]
