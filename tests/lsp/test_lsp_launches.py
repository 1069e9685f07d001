"""Recorded launches in the language server, end to end: a real server process, a real client
(pytest-lsp), the fixture project `tests/fixtures/record_project` copied into tmp_path, and a
launch file that a real `argus record` run wrote (Triton's CPU interpreter runs the project's
tests). Without the file the seeded bugs are not judged; with it MB001 and GR002 are published at
their lines; a new or changed file is picked up (watched-files notification and the stat before
each check); a broken file gives one message and checks go on; `argus.record` is refused in an
untrusted workspace and records in a trusted one.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import REPO, SERVER, Session, make_client
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from argus_lsp import settings as settings_mod
from argus_lsp.features import record_command

pytest.importorskip("torch")
pytest.importorskip("triton")

PROJECT = REPO / "tests" / "fixtures" / "record_project"
KERNELS = Path("mini_ops") / "kernels.py"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["TRITON_INTERPRET"] = "1"  # no GPU here: the interpreter runs the project's tests
    env.pop("ARGUS_RECORD_DIR", None)
    return env


def _line_of(marker: str) -> int:
    """0-based line of the marker in the fixture's kernels (LSP lines)."""
    lines = (PROJECT / KERNELS).read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines) if marker in text)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A launch file written by `argus record -- python -m pytest` in a copy of the project."""
    project = tmp_path_factory.mktemp("recorded") / "project"
    shutil.copytree(PROJECT, project)
    out = project / ".argus" / "launches.json"
    cmd = [
        sys.executable,
        "-m",
        "argus_lsp",
        "record",
        "--out",
        str(out),
        "--",
        sys.executable,
        "-m",
        "pytest",
    ]
    r = subprocess.run(cmd, cwd=project, env=_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest)
    return dest


def _client() -> LanguageClient:
    """The shared test client, also answering the server's dynamic registrations (VS Code does)."""
    client = make_client()
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(c: LanguageClient, params: types.RegistrationParams) -> None:
        c.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def _unregister(c: LanguageClient, params: types.UnregistrationParams) -> None:
        gone = {u.id for u in params.unregisterations}
        c.registrations[:] = [r for r in c.registrations if r.id not in gone]  # type: ignore[attr-defined]

    return client


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, client_factory=_client, server_env=_env())
)
async def lsp(lsp_client: LanguageClient):
    yield lsp_client
    await lsp_client.shutdown_session()


async def _start(
    client: LanguageClient, folder: Path, options: dict, profile: str = "visual-studio-code"
) -> Session:
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(profile),
            root_uri=folder.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="project")],
            initialization_options={"argus": {"debounceMs": 0, **options}},
        )
    )
    enc = result.capabilities.position_encoding or "utf-16"
    return Session(client, getattr(enc, "value", enc))


def _open(session: Session, folder: Path) -> str:
    path = folder / KERNELS
    uri = path.as_uri()
    session.open(uri, path.read_text(encoding="utf-8"))
    return uri


def _gating(diags: list[types.Diagnostic]) -> list[tuple[str, int]]:
    serious = (types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning)
    return sorted((str(d.code), d.range.start.line) for d in diags if d.severity in serious)


SEEDED = sorted([("GR002", _line_of("# seeded race:")), ("MB001", _line_of("# seeded bug:"))])


async def _push_with(client: LanguageClient, uri: str, after: int, want: list, timeout: float = 60) -> list:
    """The gating findings of the first push for `uri` after the `after`-th that equal `want`.

    A re-check of several kernels publishes each as it finishes, with the waiting kernels'
    previous findings carried over (docs/server.md, "Incremental"): only the last push of a
    re-check is complete, so a test of the end state waits for it rather than the first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    seen: list = []
    while loop.time() < deadline:
        for p in client.published[after:]:  # type: ignore[attr-defined]
            if p.uri == uri:
                seen = _gating(list(p.diagnostics))
                if seen == want:
                    return seen
        await asyncio.sleep(0.05)
    return seen


def _watched(client: LanguageClient, path: Path, kind: types.FileChangeType) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=kind)])
    )


async def _messages(client: LanguageClient, needle: str, timeout: float = 20) -> list[str]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        found = [m.message for m in client.messages if needle in m.message]
        if found:
            return found
        await asyncio.sleep(0.02)
    return []


# -- binding from the launch file ---------------------------------------------------------------
@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim"])
async def test_without_a_launch_file_the_seeded_bugs_are_not_judged(
    lsp: LanguageClient, project: Path, profile: str
) -> None:
    session = await _start(lsp, project, {}, profile)
    uri = _open(session, project)
    assert _gating(await session.diagnostics(uri)) == []


@pytest.mark.parametrize("profile", ["visual-studio-code", "neovim"])
async def test_default_launch_file_binds_both_seeded_bugs(
    lsp: LanguageClient, project: Path, recorded: Path, profile: str
) -> None:
    (project / ".argus").mkdir()
    shutil.copy(recorded, project / ".argus" / "launches.json")
    session = await _start(lsp, project, {}, profile)
    uri = _open(session, project)
    diags = await session.diagnostics(uri)
    assert _gating(diags) == SEEDED
    for d in diags:
        if d.code in ("MB001", "GR002"):
            assert "bound from 1 recorded launch signature" in d.data["witness"]["recorded"]
            notes = [r.message for r in d.related_information or [] if r.message.startswith("recorded: ")]
            assert len(notes) == 1 and "bound from 1 recorded launch signature" in notes[0]


async def test_setting_names_the_launch_file(lsp: LanguageClient, project: Path, recorded: Path) -> None:
    shutil.copy(recorded, project / "my-launches.json")
    session = await _start(lsp, project, {"launches": "my-launches.json"})
    uri = _open(session, project)
    assert _gating(await session.diagnostics(uri)) == SEEDED


async def test_setting_naming_a_missing_file_says_so(lsp: LanguageClient, project: Path) -> None:
    session = await _start(lsp, project, {"launches": "nowhere.json"})
    uri = _open(session, project)
    assert _gating(await session.diagnostics(uri)) == []
    assert await _messages(lsp, "nowhere.json")


async def test_changed_launch_file_is_picked_up_by_the_watcher(
    lsp: LanguageClient, project: Path, recorded: Path
) -> None:
    target = project / ".argus" / "launches.json"
    target.parent.mkdir()
    shutil.copy(recorded, target)
    session = await _start(lsp, project, {})
    uri = _open(session, project)
    assert _gating(await session.diagnostics(uri)) == SEEDED
    (watch,) = lsp.registrations  # type: ignore[attr-defined]
    assert watch.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert watch.register_options["watchers"][0]["globPattern"] == target.as_posix()
    # a recording that no longer launches the buggy kernel: its findings go
    doc = json.loads(target.read_text(encoding="utf-8"))
    doc["launches"] = [lr for lr in doc["launches"] if lr["kernel"]["name"] != "scale_rows_kernel"]
    before = len(lsp.published)  # type: ignore[attr-defined]
    target.write_text(json.dumps(doc), encoding="utf-8")
    _watched(lsp, target, types.FileChangeType.Changed)
    assert [code for code, _ in await _push_with(lsp, uri, before, [f for f in SEEDED if f[0] == "GR002"])] == ["GR002"]
    before = len(lsp.published)  # type: ignore[attr-defined]
    target.unlink()
    _watched(lsp, target, types.FileChangeType.Deleted)
    assert await _push_with(lsp, uri, before, []) == []


async def test_no_watcher_is_registered_in_a_workspace_without_a_launch_file(
    lsp: LanguageClient, project: Path
) -> None:
    session = await _start(lsp, project, {})
    uri = _open(session, project)
    await session.diagnostics(uri)
    assert lsp.registrations == []  # type: ignore[attr-defined]


async def test_changed_launch_file_is_seen_at_the_next_check_without_a_watcher(
    lsp: LanguageClient, project: Path, recorded: Path
) -> None:
    session = await _start(lsp, project, {}, "neovim")  # pulls, and no watched-files notification
    uri = _open(session, project)
    assert _gating(await session.diagnostics(uri)) == []
    (project / ".argus").mkdir()
    shutil.copy(recorded, project / ".argus" / "launches.json")
    assert _gating(await session.diagnostics(uri)) == SEEDED


async def test_broken_launch_file_gives_one_message_and_checks_go_on(
    lsp: LanguageClient, project: Path, recorded: Path
) -> None:
    target = project / ".argus" / "launches.json"
    target.parent.mkdir()
    target.write_text('{"format": "argus-launches", "version": 1, "launches": [{"kernel": 3}]}')
    session = await _start(lsp, project, {})
    uri = _open(session, project)
    assert _gating(await session.diagnostics(uri)) == []
    said = await _messages(lsp, "cannot be used")
    assert len(said) == 1 and str(target) in said[0]
    session.edit(uri, 0, 0, "\n")  # another check of the same broken file: no second message
    await session.diagnostics(uri)
    assert len([m for m in lsp.messages if "cannot be used" in m.message]) == 1
    before = len(lsp.published)  # type: ignore[attr-defined]
    shutil.copy(recorded, target)  # fixed: the seeded bugs appear (one line lower, after the edit)
    _watched(lsp, target, types.FileChangeType.Changed)
    want = [(code, line + 1) for code, line in SEEDED]
    assert await _push_with(lsp, uri, before, want) == want


# -- the record command -------------------------------------------------------------------------
async def _record(client: LanguageClient, args: list, timeout: float = 300) -> dict:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=record_command.COMMAND, arguments=args)
        ),
        timeout,
    )


@pytest.mark.parametrize("options", [{}, {"trusted": False}])
async def test_record_is_refused_in_an_untrusted_workspace(
    lsp: LanguageClient, project: Path, options: dict
) -> None:
    await _start(lsp, project, options)
    with pytest.raises(JsonRpcException, match="not trusted"):
        await _record(lsp, [{"command": "touch ran"}])
    assert any("not trusted" in m.message for m in lsp.messages)
    assert not (project / "ran").exists() and not (project / ".argus").exists()


async def test_record_in_a_trusted_workspace_binds_the_open_file(lsp: LanguageClient, project: Path) -> None:
    session = await _start(lsp, project, {"trusted": True})
    uri = _open(session, project)
    assert _gating(await session.diagnostics(uri)) == []
    before = len(lsp.published)  # type: ignore[attr-defined]
    out = await _record(lsp, [{"command": f"{sys.executable} -m pytest -q", "timeout": 500}], timeout=560)
    assert out["status"] == "ok" and out["exit_status"] == 0, out
    assert Path(out["out"]) == project / ".argus" / "launches.json" and Path(out["out"]).exists()
    assert "4 launch signatures of 4 kernels" in out["message"]
    assert await _push_with(lsp, uri, before, SEEDED) == SEEDED
    assert [r.method for r in lsp.registrations] == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]  # type: ignore[attr-defined]
    token = next(t for t in lsp.progress_reports if str(t).startswith("argus-record"))
    reports = lsp.progress_reports[token]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].title == "Recording launches"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)


async def test_record_is_cancellable_and_reports_failures(lsp: LanguageClient, project: Path) -> None:
    await _start(lsp, project, {"trusted": True})
    sleeper = f"{sys.executable} -c 'import time; time.sleep(600)'"
    running = asyncio.ensure_future(_record(lsp, [{"command": sleeper}], timeout=60))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not any(str(t).startswith("argus-record") for t in lsp.progress_reports):
        assert loop.time() < deadline, "no work-done progress began"
        await asyncio.sleep(0.05)
    token = next(t for t in lsp.progress_reports if str(t).startswith("argus-record"))
    await asyncio.sleep(1.0)  # let the recorder start the command
    t0 = loop.time()
    lsp.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    out = await running
    assert out["status"] == "cancelled" and loop.time() - t0 < 15
    failing = await _record(lsp, [f"{sys.executable} -c 'raise SystemExit(3)'"], timeout=60)
    assert failing["status"] == "error" and failing["exit_status"] == 3
    assert any("recording launches failed" in m.message for m in lsp.messages)
    short = await _record(lsp, [{"command": sleeper, "timeout": 2}], timeout=60)
    assert short["status"] == "timeout" and "timed out after 2 s" in short["message"]


async def test_record_rejects_bad_arguments(lsp: LanguageClient, project: Path) -> None:
    await _start(lsp, project, {"trusted": True})
    for bad in ([{"command": "pytest 'unclosed"}], [{"timeout": -1}], [42]):
        with pytest.raises(JsonRpcException, match="argus.record"):
            await _record(lsp, bad)


# -- units ----------------------------------------------------------------------------------------
def test_launches_setting() -> None:
    s, problems = settings_mod.merge(settings_mod.Settings(), {"launches": "  rec/l.json "})
    assert (s.launches, problems) == ("rec/l.json", [])
    s, problems = settings_mod.merge(s, {"launches": None})
    assert (s.launches, problems) == (None, [])
    _, problems = settings_mod.merge(s, {"launches": 3})
    assert problems and "argus.launches" in problems[0]
    _, problems = settings_mod.from_project({"launches": "x.json"}, "pyproject.toml")
    assert "editor setting" in problems[0]


def test_record_arguments() -> None:
    assert record_command.parse_args([]) == (["pytest"], record_command.DEFAULT_TIMEOUT_S)
    assert record_command.parse_args(["pytest -k 'a b'"])[0] == ["pytest", "-k", "a b"]
    assert record_command.parse_args([{"command": "make test", "timeout": 5}]) == (["make", "test"], 5.0)
    argv = record_command.record_argv("/w/.argus/launches.json", ["pytest"])
    assert argv[-7:] == ["-m", "argus_lsp", "record", "--out", "/w/.argus/launches.json", "--", "pytest"]
    assert argv[0] == sys.executable and ("-P" in argv[1:2]) == (sys.version_info >= (3, 11))


# -- Neovim: :ArgusRecord -------------------------------------------------------------------------
NVIM_INIT = """
local argus = dofile(os.getenv("ARGUS_LUA"))
local notes = {}
vim.notify = function(msg, level) table.insert(notes, msg) end
local trusted = os.getenv("ARGUS_TRUSTED_ROOT")
argus.setup({
  cmd = vim.fn.json_decode(os.getenv("ARGUS_LSP_CMD")),
  init_options = { argus = { debounceMs = 0 } },
  trusted_roots = trusted and { trusted } or {},
})
vim.api.nvim_create_autocmd("VimEnter", { callback = function()
  vim.wait(30000, function() return #vim.lsp.get_active_clients() > 0
    and vim.lsp.get_active_clients()[1].initialized end, 50)
  vim.cmd("ArgusRecord " .. os.getenv("ARGUS_RECORD_LINE"))
  local want = tonumber(os.getenv("ARGUS_NOTES"))  -- the refusal; or "recording ..." and the outcome
  vim.wait(120000, function() return #notes >= want end, 100)
  local f = assert(io.open(os.getenv("ARGUS_NVIM_OUT"), "w"))
  f:write(vim.fn.json_encode({ notes = notes }))
  f:close()
  vim.cmd("qall!")
end })
"""


def _nvim_record(tmp_path: Path, project: Path, line: str, trusted: bool) -> list[str]:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not on PATH (CI installs it: scripts/setup.d/10-neovim.sh)")
    tmp_path.mkdir()
    init = tmp_path / "init.lua"
    init.write_text(NVIM_INIT, encoding="utf-8")
    out = tmp_path / "nvim.json"
    env = {
        **_env(),
        "ARGUS_LUA": str(REPO / "editors" / "nvim" / "argus.lua"),
        "ARGUS_LSP_CMD": json.dumps(SERVER),
        "ARGUS_NVIM_OUT": str(out),
        "ARGUS_RECORD_LINE": line,
        "ARGUS_NOTES": "2" if trusted else "1",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    if trusted:
        env["ARGUS_TRUSTED_ROOT"] = str(project)
    proc = subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(init), str(project / KERNELS)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.exists(), f"nvim wrote no report (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(out.read_text(encoding="utf-8"))["notes"]


def test_nvim_argus_record_refused_unless_trusted_then_runs(tmp_path: Path, project: Path) -> None:
    line = f"{sys.executable} -c \"open('ran', 'w').close()\""
    (project / "pyproject.toml").write_text('[project]\nname = "mini-ops"\n')  # argus.lua's root marker
    notes = _nvim_record(tmp_path / "untrusted", project, line, trusted=False)
    assert any("recording runs the project's code" in n for n in notes), notes
    assert not (project / "ran").exists()
    notes = _nvim_record(tmp_path / "trusted", project, line, trusted=True)
    assert (project / "ran").exists(), notes  # run in the project folder
    assert (project / ".argus" / "launches.json").exists(), notes
    assert any("0 launch signatures" in n for n in notes), notes
