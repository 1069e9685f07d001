""" "Optimize this kernel": run the agent on request, hand back a diff, apply it only on confirmation.

A code lens ("✨ Optimize") and a code action (kind `refactor.rewrite`) appear on each kernel that
has a task, the same tasks the Profile lens reads (`ProfileFeature.tasks`). Optimizing runs the
workspace's code, so, as for profiling, an untrusted workspace gets neither and a refusal.

The protocol is two commands, so that nothing changes the file without the user's say-so:

1. `argus.optimize {uri, kernel}` runs `agent.optimize.api.optimize` on a worker thread with
   work-done progress (stage, candidates so far; cancellable, also by `argus.optimize.cancel`) and
   returns the outcome: status, the unified diff, the new file text (for a diff preview) and
   whether it may be applied. The agent optimizes the file as saved, so a buffer with unsaved
   changes is refused before anything runs.
2. `argus.optimize.apply {uri, kernel}` is what the client sends once the user accepted the
   preview. The server applies the edit through `workspace/applyEdit` (a versioned
   `TextDocumentEdit`) only if every gate passed (status "improved") and the document is still
   the version and text the run started from; otherwise it refuses with the reason.

Policy and endpoint come from the `argus.optimize` settings section (`policy`, `baseUrl`,
`model`, `apiKeyEnv`, `budget`, `minutes`), pulled with `workspace/configuration` when the run
starts, else from initializationOptions.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import functools
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from argus.agent.optimize.types import LLMSettings, OptimizeError, OptimizeRequest, OptimizeResult
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from argus_lsp.features.kernel_runs import KernelRuns, Key, target_args
from argus_lsp.features.profile_lens import kernel_name_span, lens_anchor

if TYPE_CHECKING:
    from argus_lsp.server import ArgusServer

log = logging.getLogger(__name__)

COMMAND = "argus.optimize"
APPLY_COMMAND = "argus.optimize.apply"
CANCEL_COMMAND = "argus.optimize.cancel"
COMMANDS = [COMMAND, APPLY_COMMAND, CANCEL_COMMAND]
POLICIES = ("knowledge", "llm")

#: Gate 3's clock, replaced only by tests that have no GPU (see tests/lsp/optimize_server.py);
#: the result then carries the agent's note that its speedups are not measurements.
TIMER: Callable | None = None

@dataclass(frozen=True)
class OptimizeSettings:
    """The `argus.optimize` section; the key itself never travels, only the variable naming it."""

    policy: str = "knowledge"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    budget: int = 12
    minutes: float = 30.0


def parse_settings(raw: Any) -> tuple[OptimizeSettings, list[str]]:
    """Settings from `{"policy": ...}` or `{"argus": {"optimize": {...}}}`; bad values: defaults + a problem."""
    if isinstance(raw, dict) and isinstance(raw.get("argus"), dict):
        raw = raw["argus"]
    if isinstance(raw, dict) and isinstance(raw.get("optimize"), dict):
        raw = raw["optimize"]
    out, problems = OptimizeSettings(), []
    if not isinstance(raw, dict):
        return out, problems
    values: dict[str, Any] = {}
    if raw.get("policy") is not None:
        if raw["policy"] in POLICIES:
            values["policy"] = raw["policy"]
        else:
            problems.append(
                f"argus.optimize.policy must be one of {', '.join(POLICIES)}, got {raw['policy']!r}"
            )
    for key, attr in (("baseUrl", "base_url"), ("model", "model"), ("apiKeyEnv", "api_key_env")):
        v = raw.get(key)
        if isinstance(v, str) and v.strip():
            values[attr] = v.strip()
        elif v not in (None, ""):
            problems.append(f"argus.optimize.{key} must be a string, got {v!r}")
    for key, kind, low in (("budget", int, 1), ("minutes", float, 0.01)):
        v = raw.get(key)
        if v is None:
            continue
        if isinstance(v, int | float) and not isinstance(v, bool) and v >= low:
            values[key] = kind(v)
        else:
            problems.append(f"argus.optimize.{key} must be a number >= {low}, got {v!r}")
    return OptimizeSettings(**{**out.__dict__, **values}), problems


def line_edits(old: str, new: str) -> list[types.TextEdit]:
    """Whole-line edits turning `old` into `new` (positions at character 0: encoding-free).

    A text whose last line has no newline is replaced in one edit over the whole document."""
    if not (old.endswith("\n") and new.endswith("\n")):
        return [types.TextEdit(range=_whole(old), new_text=new)]
    a, b = _lines(old), _lines(new)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            where = types.Range(types.Position(i1, 0), types.Position(i2, 0))
            edits.append(types.TextEdit(range=where, new_text="".join(b[j1:j2])))
    return edits


def _lines(text: str) -> list[str]:
    """Lines as LSP counts them for "\n" and "\r\n" endings (str.splitlines also splits on \f, \x1c...)."""
    return [line + "\n" for line in text.split("\n")[:-1]]


def _whole(text: str) -> types.Range:
    lines = text.split("\n")
    return types.Range(
        types.Position(0, 0), types.Position(len(lines) - 1, len(lines[-1].encode("utf-16-le")) // 2)
    )


@dataclass
class Run:
    """An optimization in flight: its progress token and the event that stops it."""

    token: str
    cancel: threading.Event = field(default_factory=threading.Event)
    shown: bool = False


@dataclass
class Prepared:
    """A finished run: what it started from (version and text) and what it produced."""

    version: int | None
    source: bytes
    result: OptimizeResult


class OptimizeFeature(KernelRuns):
    """Lenses, code actions and the optimize/apply/cancel commands for one server."""

    cancel_command = CANCEL_COMMAND

    def __init__(self, server: ArgusServer) -> None:
        self.server = server
        super().__init__(2, "argus-optimize")
        self.runs: dict[Key, Run] = {}
        self.prepared: dict[Key, Prepared] = {}
        self.init_options: Any = None
        self._tokens = itertools.count(1)

    def configure(self, init_options: Any) -> None:
        self.init_options = init_options

    @property
    def trusted(self) -> bool:
        return self.server.profiles.trusted  # one trust decision, read from initializationOptions

    # -- offers -----------------------------------------------------------------------------------
    def _kernels(self, uri: str) -> list[tuple[str, tuple[int, int]]]:
        doc = self.server.store.get(uri)
        if doc is None or not self.trusted:
            return []
        out = []
        for task in self.server.profiles.tasks(uri):
            span = kernel_name_span(doc.source, task.kernel, task.line)
            if span is not None:
                out.append((task.kernel, span))
        return out

    def code_lenses(self, uri: str) -> list[types.CodeLens]:
        doc = self.server.store.get(uri)
        out = []
        for kernel, span in self._kernels(uri):
            at = doc.index().position(lens_anchor(doc.source, span[0]), self.server.encoding)
            args = [{"uri": uri, "kernel": kernel}]
            if (uri, kernel) in self.runs:
                cmd = types.Command(
                    title=f"Optimizing {kernel}… (cancel)", command=CANCEL_COMMAND, arguments=args
                )
            else:
                cmd = types.Command(
                    title="✨ Optimize",
                    command=COMMAND,
                    arguments=args,
                    tooltip=f"Search for a faster {kernel} that passes every gate (runs this file's code)",
                )
            out.append(types.CodeLens(range=types.Range(start=at, end=at), command=cmd))
        return out

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """ "Optimize this kernel" when the range touches a kernel with a task (from its def to the next)."""
        doc = self.server.store.get(params.text_document.uri)
        kernels = self._kernels(params.text_document.uri)
        if doc is None or not kernels:
            return []
        index, enc = doc.index(), self.server.encoding
        line = params.range.start.line
        starts = sorted((index.position(span[0], enc).line, kernel) for kernel, span in kernels)
        inside = [
            k
            for i, (first, k) in enumerate(starts)
            if first - 3 <= line and (i + 1 == len(starts) or line < starts[i + 1][0] - 3)
        ]
        return [
            types.CodeAction(
                title=f"Optimize this kernel ({k}) with Argus",
                kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(
                    title="Optimize this kernel",
                    command=COMMAND,
                    arguments=[{"uri": params.text_document.uri, "kernel": k}],
                ),
            )
            for k in inside
        ]

    # -- commands ---------------------------------------------------------------------------------
    async def execute(self, args: list[Any]) -> dict[str, Any]:
        uri, kernel = target_args(args, COMMAND)
        self._refuse_untrusted(COMMAND)
        task = next((t for t in self.server.profiles.tasks(uri) if t.kernel == kernel), None)
        if task is None:
            raise JsonRpcInvalidParams(message=f"{COMMAND}: no task for {kernel!r} in {uri}")
        doc = self.server.store.get(uri)
        if doc is None:
            raise JsonRpcInvalidParams(message=f"{COMMAND}: {uri} is not open")
        if doc.source != _read(task.path):
            raise JsonRpcInvalidRequest(
                message=f"{COMMAND}: save {task.path.name} first: the agent optimizes the file as saved"
            )
        key = (uri, kernel)
        if key in self.runs:
            return {"status": "running", "kernel": kernel}
        version, source = doc.version, doc.source  # what an apply must still find, taken before any await
        run = self.runs[key] = Run(token=f"argus-optimize-{next(self._tokens)}")
        self.prepared.pop(key, None)
        self._refresh_lenses()
        try:
            from argus.agent.optimize.api import (
                optimize,  # the agent loads when first asked for, not at startup
            )

            settings = await self._settings()
            request = OptimizeRequest(
                target=f"{task.path}::{kernel}",
                policy=settings.policy,
                budget=settings.budget,
                minutes=settings.minutes,
                llm=LLMSettings(
                    base_url=settings.base_url, model=settings.model, api_key_env=settings.api_key_env
                ),
            )
            progress = await self._begin(run, kernel, settings)
            call = functools.partial(optimize, request, progress=progress, cancel=run.cancel, timer=TIMER)
            result = await asyncio.get_running_loop().run_in_executor(self.executor, call)
        except Exception as exc:  # OptimizeError says what is wrong; anything else is our bug
            if run.cancel.is_set():
                self._end(run, "cancelled")
                return {"status": "cancelled", "kernel": kernel}
            if not isinstance(exc, OptimizeError | OSError):
                log.exception("%s %s failed", COMMAND, kernel)
            self._end(run, f"failed: {exc}")
            self._show(types.MessageType.Error, f"argus: optimizing {kernel} failed: {exc}")
            return {"status": "error", "kernel": kernel, "message": str(exc)}
        finally:
            self.runs.pop(key, None)
            self._refresh_lenses()
        self._end(run, result.status)
        if result.status == "cancelled":
            return {"status": "cancelled", "kernel": kernel}
        self.prepared[key] = Prepared(version, source, result)
        return outcome_json(kernel, result)

    async def apply(self, args: list[Any]) -> dict[str, Any]:
        """Send the prepared edit, if every gate passed and the document is as the run found it."""
        uri, kernel = target_args(args, APPLY_COMMAND)
        self._refuse_untrusted(APPLY_COMMAND)
        prepared = self.prepared.get((uri, kernel))
        reason = self._why_not_apply(uri, prepared)
        if reason is not None:
            raise JsonRpcInvalidRequest(message=f"{APPLY_COMMAND} refused: {reason}")
        assert prepared is not None and prepared.result.new_source is not None
        old = prepared.source.decode("utf-8")
        edit = types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=prepared.version
                    ),
                    edits=line_edits(old, prepared.result.new_source),
                )
            ]
        )
        self.prepared.pop((uri, kernel), None)  # one result, applied once (also under concurrent requests)
        answer = await self.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=f"Argus: optimize {kernel}")
        )
        if not answer.applied:  # the client declined: the result stays, to be applied later
            self.prepared.setdefault((uri, kernel), prepared)
            return {
                "status": "not-applied",
                "kernel": kernel,
                "message": answer.failure_reason or "the client declined",
            }
        return {"status": "applied", "kernel": kernel, "edits": len(edit.document_changes[0].edits)}

    def _why_not_apply(self, uri: str, prepared: Prepared | None) -> str | None:
        if prepared is None:
            return "no finished optimization of this kernel to apply"
        if prepared.result.status != "improved":
            return f"status {prepared.result.status!r}: only a kernel that passed every gate is applied"
        doc = self.server.store.get(uri)
        if doc is None:
            return "the document is closed"
        if doc.version != prepared.version or doc.source != prepared.source:
            return f"the document changed since the optimization started (version {prepared.version} -> {doc.version})"
        return None

    # -- helpers ----------------------------------------------------------------------------------
    def _refuse_untrusted(self, command: str) -> None:
        if not self.trusted:
            msg = f"{command} refused: the workspace is not trusted, and optimizing runs its code"
            self._show(types.MessageType.Warning, msg)
            raise JsonRpcInvalidRequest(message=msg)

    async def _settings(self) -> OptimizeSettings:
        raw = self.init_options
        if self.server.supports("workspace.configuration"):
            try:
                items = await self.server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="argus.optimize")])
                )
                raw = items[0] if items and items[0] is not None else raw
            except Exception as exc:  # a client that cannot answer: initializationOptions
                log.warning("workspace/configuration failed: %s", exc)
        settings, problems = parse_settings(raw)
        self.server.warn_user(problems)
        return settings

    async def _begin(self, run: Run, kernel: str, settings: OptimizeSettings):
        """Work-done progress (when the client shows it) and the callback the agent's thread calls."""
        server, loop = self.server, asyncio.get_running_loop()
        run.shown = server.supports("window.work_done_progress")
        if run.shown:
            try:
                await server.work_done_progress.create_async(run.token)
            except Exception as exc:
                log.warning("workDoneProgress/create failed: %s", exc)
                run.shown = False
        if run.shown:
            server.work_done_progress.begin(
                run.token,
                types.WorkDoneProgressBegin(
                    title=f"Optimizing {kernel}",
                    message=f"policy {settings.policy}, budget {settings.budget}",
                    cancellable=True,
                    percentage=0,
                ),
            )
            future = server.work_done_progress.tokens.get(run.token)
            if future is not None:
                future.add_done_callback(lambda f: run.cancel.set() if f.cancelled() else None)

        def report(stage: str, candidates: int) -> None:  # on the message loop
            if run.shown:
                pct = min(99, int(100 * candidates / max(settings.budget, 1)))
                server.work_done_progress.report(
                    run.token,
                    types.WorkDoneProgressReport(
                        message=f"{stage}: {candidates} candidate{'s' * (candidates != 1)}",
                        percentage=pct,
                        cancellable=True,
                    ),
                )

        def from_worker(stage: str, candidates: int) -> None:  # on the agent's thread
            with contextlib.suppress(RuntimeError):  # the loop closed: shutting down
                loop.call_soon_threadsafe(report, stage, candidates)

        return from_worker

    def _end(self, run: Run, message: str) -> None:
        if run.shown:
            self.server.work_done_progress.end(run.token, types.WorkDoneProgressEnd(message=message[:200]))
        self.server.work_done_progress.tokens.pop(run.token, None)

    def _show(self, kind: types.MessageType, message: str) -> None:
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def _refresh_lenses(self) -> None:
        if self.server.supports("workspace.code_lens.refresh_support"):
            self.server.workspace_code_lens_refresh(None)


def outcome_json(kernel: str, result: OptimizeResult) -> dict[str, Any]:
    """What the client needs to preview and decide: the diff, the new text, whether it may apply."""
    best = result.best.summary() if result.best else None
    applicable = result.status == "improved" and result.new_source is not None
    why = (
        ""
        if applicable
        else {
            "unmeasured": "gates 1 and 2 passed but performance was not measured (no GPU): not applied",
            "no-better": "no candidate passed every gate",
        }.get(result.status, result.status)
    )
    return {
        "status": result.status,
        "kernel": kernel,
        "applicable": applicable,
        "reason": why,
        "patch": result.patch,
        "newText": result.new_source if result.best else None,
        "best": best,
        "candidates": len(result.attempts),
        "rejected": result.rejected_counts(),
        "stopReason": result.stop_reason,
        "notes": result.notes,
    }


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
