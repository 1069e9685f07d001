"""The "Profile" code lens end to end: a real server process, driven by pytest-lsp.

Lenses appear only for kernels that have a task; `argus.profile` runs the CPU task through the
Triton interpreter (skipped without an interpreter that has torch + triton) with work-done
progress, a resolved lens and a hover; cancel and timeout stop the worker; an untrusted workspace
is refused. The measured PF hints need a GPU's peaks, so their end-to-end test runs the server with
`profile` replaced by a replay of the committed H200 run (benchmarks/results/profile-h200.json);
which hint a measurement supports is tested on its own in tests/profile/test_hints.py.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import REPO, SERVER, make_client
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from argus_lsp import settings as settings_mod
from argus_lsp.features import profile_lens
from tests.profile.conftest import triton_python

TASKS = REPO / "tests/profile/tasks"
VADD = TASKS / "vadd.py"
ATTENTION = TASKS / "attention.py"
H200_JSON = REPO / "benchmarks/results/profile-h200.json"

REPLAY = f"""
import json, sys
from argus.agent.profile.result import ProfileResult
from argus_lsp.features import profile_lens
runs = {{r["kernel"]: r for r in json.load(open({str(H200_JSON)!r}))}}
def replay(task, progress=None, **kw):
    progress("timing", 1, 2)
    return ProfileResult.from_json(runs[task.kernel])
profile_lens.profile = replay
from argus_lsp.server import main
sys.exit(main())
"""


def _client() -> LanguageClient:
    client = make_client()
    client.lens_refreshes = 0  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _refresh(c: LanguageClient, params: None) -> None:
        c.lens_refreshes += 1  # type: ignore[attr-defined]

    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=_client))
async def lsp(lsp_client: LanguageClient):
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[sys.executable, "-c", REPLAY], client_factory=_client),
)
async def replay_lsp(lsp_client: LanguageClient, request):
    await _init(lsp_client, {"argus": {"debounceMs": 0, "trusted": True}}, request.param)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def tpy() -> str:
    py = triton_python()
    if py is None:
        pytest.skip("no interpreter with torch + triton (scripts/setup.d/30-triton-cpu.sh installs them)")
    return py


async def _init(client: LanguageClient, options: dict, profile: str = "visual-studio-code") -> None:
    await client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities(profile), initialization_options=options)
    )


def _open(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=path.read_text() if text is None else text
            )
        )
    )
    return uri


async def _lenses(client: LanguageClient, uri: str) -> dict[str, types.CodeLens]:
    got = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return {lens.command.arguments[0]["kernel"]: lens for lens in got or []}


async def _profile(client: LanguageClient, uri: str, kernel: str, timeout: float = 120) -> dict:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="argus.profile", arguments=[{"uri": uri, "kernel": kernel}])
        ),
        timeout,
    )


async def _hover(client: LanguageClient, uri: str, text: str, name: str) -> types.Hover | None:
    line = next(i for i, s in enumerate(text.splitlines()) if s.startswith(f"def {name}("))
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=len("def ") + 2),
        )
    )


# -- lenses and trust (no code runs) ----------------------------------------------------------------
async def test_lens_only_above_kernels_with_a_task(lsp: LanguageClient, tmp_path: Path) -> None:
    await _init(lsp, {"argus": {"debounceMs": 0, "trusted": True}})
    text = VADD.read_text()
    uri = _open(lsp, VADD)
    lenses = await _lenses(lsp, uri)
    assert set(lenses) == {"add_kernel", "slow"}  # the two [[task]] tables of vadd.py.argus.toml
    add = lenses["add_kernel"]
    assert add.command.title == "▶ Profile" and add.command.command == "argus.profile"
    assert text.splitlines()[add.range.start.line] == "@triton.jit"  # above the decorator
    assert text.splitlines()[lenses["slow"].range.start.line].startswith("def slow(")

    bare = tmp_path / "vadd.py"  # the same kernel without a sidecar: no task, no lens
    bare.write_text(text)
    assert await _lenses(lsp, _open(lsp, bare)) == {}
    untitled = "untitled:Untitled-1"
    lsp.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=untitled, language_id="python", version=1, text=text)
        )
    )
    assert await _lenses(lsp, untitled) == {}


async def test_untrusted_workspace_is_refused(lsp: LanguageClient) -> None:
    await _init(lsp, {"argus": {"trusted": False}})
    uri = _open(lsp, VADD)
    assert await _lenses(lsp, uri) == {}
    with pytest.raises(JsonRpcException, match="not trusted"):
        await _profile(lsp, uri, "add_kernel")
    assert any("not trusted" in m.message for m in lsp.messages)


async def test_silence_about_trust_means_untrusted(lsp: LanguageClient) -> None:
    # A client that says nothing (Neovim without an opt-in, any generic LSP client) gets no
    # lenses and no profiling: those run the workspace's code.
    await _init(lsp, {"argus": {"debounceMs": 0}})
    uri = _open(lsp, VADD)
    assert await _lenses(lsp, uri) == {}
    with pytest.raises(JsonRpcException, match="not trusted"):
        await _profile(lsp, uri, "add_kernel")


async def test_unknown_kernel_is_an_error(lsp: LanguageClient) -> None:
    await _init(lsp, {"trusted": True})
    uri = _open(lsp, VADD)
    with pytest.raises(JsonRpcException, match="no task for 'nope'"):
        await _profile(lsp, uri, "nope")


# -- real runs on the CPU (Triton interpreter) ------------------------------------------------------
async def test_profile_cpu_task_progress_lens_and_hover(lsp: LanguageClient, tpy: str) -> None:
    await _init(
        lsp, {"argus": {"debounceMs": 0, "trusted": True, "profile": {"python": tpy, "timeout": 240}}}
    )
    text = VADD.read_text()
    uri = _open(lsp, VADD)
    assert (await _lenses(lsp, uri))["add_kernel"].command.title == "▶ Profile"

    out = await _profile(lsp, uri, "add_kernel")
    assert out["status"] == "ok", out
    assert out["lens"].endswith("CPU interpreter, no peaks") and " ms" in out["lens"]

    (token, reports), *_ = [(t, r) for t, r in lsp.progress_reports.items() if str(t).startswith("argus")]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert reports[0].title == "Profiling add_kernel"
    middle = [r for r in reports[1:-1] if isinstance(r, types.WorkDoneProgressReport)]
    assert {r.message.split()[0] for r in middle} >= {"compile", "timing"}
    pcts = [r.percentage for r in middle]
    assert pcts == sorted(pcts) and 0 < pcts[-1] <= 100
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and reports[-1].message == out["lens"]
    assert lsp.lens_refreshes >= 2  # type: ignore[attr-defined]

    assert (await _lenses(lsp, uri))["add_kernel"].command.title == out["lens"]
    hover = await _hover(lsp, uri, text, "add_kernel")
    assert hover is not None and "Profile of `add_kernel`" in hover.contents.value
    assert "time (median)" in hover.contents.value and "Triton interpreter" in hover.contents.value


async def test_cancel_through_the_progress_token(lsp: LanguageClient, tpy: str) -> None:
    await _init(lsp, {"argus": {"trusted": True, "profile": {"python": tpy, "timeout": 300}}})
    uri = _open(lsp, VADD)
    running = asyncio.ensure_future(_profile(lsp, uri, "slow", timeout=60))  # the launcher sleeps 600 s
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not any(str(t).startswith("argus") and r for t, r in lsp.progress_reports.items()):
        assert loop.time() < deadline, "no work-done progress began"
        await asyncio.sleep(0.05)
    token = next(t for t in lsp.progress_reports if str(t).startswith("argus"))
    assert (await _lenses(lsp, uri))["slow"].command.command == "argus.profile.cancel"
    await asyncio.sleep(1.0)  # let the worker start its subprocess
    t0 = loop.time()
    lsp.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    out = await running
    assert out["status"] == "cancelled" and loop.time() - t0 < 20
    assert lsp.progress_reports[token][-1].message == "cancelled"
    assert (await _lenses(lsp, uri))["slow"].command.title == "▶ Profile"


async def test_timeout_setting_stops_the_worker(lsp: LanguageClient, tpy: str) -> None:
    await _init(lsp, {"argus": {"trusted": True, "profile.python": tpy, "profile.timeout": 4}})
    uri = _open(lsp, VADD)
    out = await _profile(lsp, uri, "slow", timeout=40)
    assert out["status"] == "error" and "timed out after 4 s" in out["message"]
    assert (await _lenses(lsp, uri))["slow"].command.title.startswith("⚠ profile failed: ")
    assert any("profiling slow failed" in m.message for m in lsp.messages)


# -- measured PF hints (replayed H200 run) ----------------------------------------------------------
async def _pf_diagnostics(client: LanguageClient, uri: str, timeout: float = 30) -> list[types.Diagnostic]:
    caps = client.capabilities
    pulls = bool(caps and caps.text_document and caps.text_document.diagnostic is not None)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if pulls:
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            diags = list(report.items)
        else:
            diags = list(client.diagnostics.get(uri, []))
        found = [d for d in diags if str(d.code).startswith("PF") and "measured" in d.message]
        if found:
            return found
        await asyncio.sleep(0.1)
    raise TimeoutError("no measured PF diagnostic")


async def test_measured_pf_hint_hover_and_lens(replay_lsp: LanguageClient) -> None:
    text = ATTENTION.read_text()
    uri = _open(replay_lsp, ATTENTION)
    out = await _profile(replay_lsp, uri, "attn_fwd_kernel")
    assert out == {
        "status": "ok",
        "kernel": "attn_fwd_kernel",
        "lens": "2.53 ms, 435 TFLOP/s, 44% of H200 peak, compute-bound",
        "bound": "compute-bound",
    }
    (pf,) = await _pf_diagnostics(replay_lsp, uri)
    assert pf.severity == types.DiagnosticSeverity.Hint and pf.source == "argus"
    assert "435 TFLOP/s (44% of H200 bfloat16 peak)" in pf.message and "compute-bound" in pf.message
    assert pf.code in {"PF001", "PF002", "PF004", "PF005", "PF006"}  # a code whose card covers compute
    assert "card `" in pf.message and pf.code_description is not None
    line = next(i for i, s in enumerate(text.splitlines()) if s.startswith("def attn_fwd_kernel("))
    assert pf.range.start.line == line and pf.range.start.character == 4
    hover = await _hover(replay_lsp, uri, text, "attn_fwd_kernel")
    assert hover is not None
    for want in (
        "2.53 ms",
        "434.8",
        "44% of 989",
        "compute-bound",
        "ncu: tensor pipe active",
        "48.2%",
        "p90 2.53 ms",
    ):
        assert want in hover.contents.value, want
    lens = (await _lenses(replay_lsp, uri))["attn_fwd_kernel"]
    assert lens.command.title == out["lens"]


# -- pure parts -------------------------------------------------------------------------------------
def test_progress_percent_is_monotonic_through_the_phases() -> None:
    events = [("start", 0, 0), ("compile", 0, 0), ("check", 0, 0)]
    events += [("timing", i, 10) for i in range(11)] + [("counters", 0, 0)]
    pcts = [profile_lens.percent(*e) for e in events]
    assert pcts == sorted(pcts) and pcts[0] == 10 and pcts[-1] == 88


def test_profile_settings() -> None:
    base = settings_mod.Settings()
    s, problems = settings_mod.merge(
        base, {"argus": {"profile": {"target": "ssh://me@gpu-1:2222", "python": "/opt/py", "timeout": 30}}}
    )
    assert (s.profile_target, s.profile_python, s.profile_timeout, problems) == (
        "ssh://me@gpu-1:2222",
        "/opt/py",
        30.0,
        [],
    )
    s, problems = settings_mod.merge(base, {"profile.counters": True, "profile.python": ""})
    assert s.profile_counters and s.profile_python is None and not problems
    s, problems = settings_mod.merge(base, {"profile": {"target": "http://x", "timeout": -1, "python": 3}})
    assert s == base and len(problems) == 3
