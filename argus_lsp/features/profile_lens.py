"""The "Profile" code lens: measure a kernel on request and show the numbers where it is written.

Opening or checking a file never runs it. A lens "▶ Profile" appears above each kernel that has a
task (`tasks_in`: a `<file>.argus.toml` sidecar or the KernelBench shape, read without importing
the file). Only the explicit `argus.profile` command runs code, through `agent.profile.api.profile`
(a subprocess worker with a timeout), on a worker thread so the message loop keeps serving, with
work-done progress that the user can cancel. A client that says the workspace is untrusted
(`initializationOptions: {"argus": {"trusted": false}}`) gets no lenses and a refusal: trust can
only come from the client at startup, never from workspace settings, which the workspace controls.

The result comes back three ways: the lens line (`ProfileResult.lens_text()`), a hover on the
kernel's name, and PF hints that cite the measured numbers. Which hint and which knowledge card a
measurement supports is decided in `agent.profile.hints`, which `argus profile` prints too; this
module only turns those findings into diagnostics, filtered and suppressed like the checker's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from argus.agent.profile.api import ProfileCancelled, ProfileError, profile, tasks_in
from argus.agent.profile.hints import format_ms, kernel_name_span, measured_findings
from argus.agent.profile.result import ProfileResult
from argus.agent.task import Task
from argus.analyzers import Finding
from argus.analyzers.registry import selected
from argus.analyzers.suppressions import apply_suppressions
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.uris import to_fs_path

from argus_lsp import convert
from argus_lsp.documents import Document
from argus_lsp.features.kernel_runs import KernelRuns, Key, target_args
from argus_lsp.settings import Settings

if TYPE_CHECKING:
    from argus_lsp.server import ArgusServer

log = logging.getLogger(__name__)

COMMAND = "argus.profile"
CANCEL_COMMAND = "argus.profile.cancel"
#: Phases the worker reports, and the share of the progress bar each one starts at.
PHASE_START = {
    "connect": 0, "copy": 5, "start": 10, "compile": 15, "check": 40,
    "timing": 45, "do_bench": 85, "counters": 88, "proton": 95,
}  # fmt: skip


def _pct(v: Any) -> str:
    return f"{v:.1f}%" if isinstance(v, int | float) else str(v)


#: Readable names (and units) for the counter summary's keys; others show as they are.
COUNTER_LABELS: dict[str, tuple[str, Any]] = {
    "duration_s": ("kernel time", lambda v: format_ms(v * 1e3)),
    "sm_pct": ("SM throughput", _pct),
    "dram_pct": ("DRAM throughput", _pct),
    "mem_pct": ("memory throughput", _pct),
    "tensor_pct": ("tensor pipe active", _pct),
    "occupancy_pct": ("occupancy", _pct),
    "dram_tbs": ("DRAM TB/s", lambda v: f"{v:.3g}"),
    "dram_bytes": ("DRAM bytes", lambda v: f"{v / 1e9:.3g} GB"),
    "sm_clock_hz": ("SM clock", lambda v: f"{v / 1e9:.2f} GHz"),
    "dram_pct_of_table_peak": ("DRAM % of table peak", _pct),
    "compute_pct_of_table_peak": ("compute % of table peak", _pct),
}


# -- pure helpers ---------------------------------------------------------------------------------
def percent(phase: str, done: int, total: int) -> int:
    """Where a worker progress event sits on a 0-100 bar (timing fills its band as it goes)."""
    start = PHASE_START.get(phase, 0)
    if phase == "timing" and total > 0:
        return int(start + (PHASE_START["do_bench"] - start) * min(done, total) / total)
    return start


def lens_anchor(source: bytes, name_start: int) -> int:
    """The offset of the first decorator line above a definition, so the lens sits above `@triton.jit`."""
    index = convert.LineIndex(source)
    line = index.line_of(name_start)
    while line > 0 and index.line_text(line - 1).lstrip().startswith(b"@"):
        line -= 1
    return index.starts[line]


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return ", ".join(map(str, v[:4]))
    return str(v)


def summary_markdown(r: ProfileResult, note: str | None = None) -> str:
    """The hover: time, rates, percent of peak, the bound class and the counters, as a table."""
    roof = r.roofline
    t = r.timing or {}
    rows = [("time (median)", format_ms(r.median_ms))]
    if t.get("p10_ms") is not None and t.get("p90_ms") is not None:
        spread = f"p10 {format_ms(t['p10_ms'])}, p90 {format_ms(t['p90_ms'])}, n={int(t.get('n', 0))}"
        rows[0] = ("time (median)", f"{format_ms(r.median_ms)} ({spread})")
    if roof.tflops is not None:
        peak = (
            f" — {roof.pct_compute:.0f}% of {roof.peak_tflops:.0f} ({r.peak} {r.dtype})"
            if roof.pct_compute is not None
            else ""
        )
        rows.append(("TFLOP/s", f"{roof.tflops:.4g}{peak}"))
    if roof.tbs is not None:
        peak = (
            f" — {roof.pct_memory:.0f}% of {roof.peak_tbs:.3g} ({r.peak} HBM)"
            if roof.pct_memory is not None
            else ""
        )
        rows.append(("TB/s", f"{roof.tbs:.4g}{peak}"))
    if roof.pct_of_roof is not None:
        at = (
            f" at {roof.intensity:.4g} FLOP/B (ridge {roof.ridge:.4g})"
            if roof.intensity and roof.ridge
            else ""
        )
        rows.append(("% of roof", f"{roof.pct_of_roof:.0f}%{at}"))
    rows.append(("bound", roof.bound))
    if r.do_bench_ms is not None:
        rows.append(("do_bench", format_ms(r.do_bench_ms)))
    if r.rel_error is not None:
        rows.append(("rel. error vs reference", f"{r.rel_error:.2g}"))
    if r.sizes:
        rows.append(("sizes", " ".join(f"{k}={v}" for k, v in r.sizes.items())))
    c = r.counters or {}
    if c.get("error"):
        rows.append((f"counters ({c.get('tool', '?')})", f"error: {c['error']}"))
    else:
        tool = c.get("tool", "counters")
        for k, v in c.items():
            if k not in ("tool", "names") and not isinstance(v, dict):
                label, fmt = COUNTER_LABELS.get(k, (k, _num))
                rows.append((f"{tool}: {label}", fmt(v)))
    lines = [
        f"**Profile of `{r.kernel}`** — {r.device} ({r.backend}) on {r.target}",
        "",
        "| | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in rows),
    ]
    for n in [*r.notes, *([note] if note else [])]:
        lines += ["", f"_{n}_"]
    return "\n".join(lines)


# -- state ------------------------------------------------------------------------------------------
@dataclass
class Run:
    """A profile in flight: its progress token, the event that stops it and the latest phase."""

    token: str
    cancel: threading.Event = field(default_factory=threading.Event)
    phase: str = "start"
    pct: int = 0
    shown: bool = False  # the client displays work-done progress for this run


@dataclass
class Outcome:
    """The last finished profile of one kernel: a result or the error the user should read."""

    result: ProfileResult | None
    error: str | None = None
    note: str | None = None  # e.g. "the saved file was profiled, not the unsaved edits"


class ProfileFeature(KernelRuns):
    """Lenses, the profile command, hover and measured PF hints for one server."""

    cancel_command = CANCEL_COMMAND

    def __init__(self, server: ArgusServer) -> None:
        self.server = server
        self.trusted = True
        super().__init__(4, "argus-profile")
        self.runs: dict[Key, Run] = {}
        self.outcomes: dict[Key, Outcome] = {}
        self.generation = 0  # bumped per finished profile: part of pull diagnostics' result id
        self._tokens = itertools.count(1)
        self._task_cache: dict[str, tuple[tuple, list[Task]]] = {}

    # -- configuration ----------------------------------------------------------------------
    def configure(self, init_options: Any) -> None:
        """Trust comes from initializationOptions only: `{"argus": {"trusted": false}}` or `{"trusted": false}`."""
        opts = init_options
        if isinstance(opts, dict) and isinstance(opts.get("argus"), dict):
            opts = opts["argus"]
        self.trusted = not (isinstance(opts, dict) and opts.get("trusted") is False)

    @property
    def settings(self) -> Settings:
        return self.server.diagnostics.settings

    # -- tasks --------------------------------------------------------------------------------
    def tasks(self, uri: str) -> list[Task]:
        """`tasks_in` the document's file, cached on the file's and sidecar's modification times."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if not path:
            return []
        p = Path(path)
        stamp = tuple(_mtime(q) for q in (p, p.with_name(p.name + ".argus.toml")))
        cached = self._task_cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = tasks_in(p) if stamp[0] is not None else []
        self._task_cache[path] = (stamp, found)
        return found

    # -- code lens ----------------------------------------------------------------------------
    def code_lenses(self, uri: str) -> list[types.CodeLens]:
        doc = self.server.store.get(uri)
        if doc is None or not self.trusted:
            return []
        index = doc.index()
        enc = self.server.encoding
        out = []
        for task in self.tasks(uri):
            span = kernel_name_span(doc.source, task.kernel, task.line)
            if span is None:
                continue
            at = index.position(lens_anchor(doc.source, span[0]), enc)
            out.append(
                types.CodeLens(
                    range=types.Range(start=at, end=at), command=self._lens_command(uri, task.kernel)
                )
            )
        return out

    def _lens_command(self, uri: str, kernel: str) -> types.Command:
        args = [{"uri": uri, "kernel": kernel}]
        run = self.runs.get((uri, kernel))
        if run is not None:
            title = f"Profiling {kernel}: {run.phase} {run.pct}% (cancel)"
            return types.Command(title=title, command=CANCEL_COMMAND, arguments=args)
        done = self.outcomes.get((uri, kernel))
        if done is not None and done.result is not None:
            tip = f"{done.result.target}, {done.result.device}: click to profile again"
            return types.Command(title=done.result.lens_text(), command=COMMAND, arguments=args, tooltip=tip)
        if done is not None and done.error:
            title = f"⚠ profile failed: {_first_line(done.error)} (retry)"
            return types.Command(title=title, command=COMMAND, arguments=args, tooltip=done.error)
        tip = f"Run {kernel}'s task and measure it (runs this file's code)"
        return types.Command(title="▶ Profile", command=COMMAND, arguments=args, tooltip=tip)

    def refresh_lenses(self) -> None:
        if self.server.supports("workspace.code_lens.refresh_support"):
            self.server.workspace_code_lens_refresh(None)

    # -- hover ----------------------------------------------------------------------------------
    def hover(self, doc: Document, offset: int, encoding: str) -> types.Hover | None:
        """The profile summary when the cursor is on the name of a kernel that has been profiled."""
        for (uri, kernel), done in self.outcomes.items():
            if uri != doc.uri or done.result is None:
                continue
            span = kernel_name_span(doc.source, kernel)
            if span is not None and span[0] <= offset <= span[1]:
                value = summary_markdown(done.result, done.note)
                return types.Hover(
                    contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
                    range=doc.index().range(*span, encoding),
                )
        return None

    # -- diagnostics ----------------------------------------------------------------------------
    def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """The measured PF hints for a document, filtered and re-levelled like every finding."""
        doc = self.server.store.get(uri)
        if doc is None:
            return []
        latest = self.server.diagnostics.latest(uri)
        static = list(latest.findings) if latest is not None else []
        findings: list[Finding] = []
        for (u, kernel), done in self.outcomes.items():
            if u == uri and done.result is not None:
                findings += measured_findings(done.result, kernel, doc.source, static)
        s = self.settings
        findings = [f for f in findings if selected(f.code, s.select, s.ignore or None)]
        findings = apply_suppressions(doc.source, findings)
        return convert.diagnostics(findings, doc.source, uri, self.server.encoding, doc.version, s.severity)

    def result_tag(self, uri: str) -> str:
        """Appended to pull result ids so a new profile makes the client's result id stale."""
        return f"~p{self.generation}" if any(u == uri for u, _ in self.outcomes) else ""

    def republish(self, uri: str) -> None:
        """A profile finished: the file's diagnostics now include (or drop) measured hints."""
        sched = self.server.diagnostics
        if sched.pull:
            if self.server.supports("workspace.diagnostics.refresh_support"):
                self.server.workspace_diagnostic_refresh(None)
            return
        latest = sched.latest(uri)
        if latest is not None and latest.error is None:
            self.server.publish(uri, latest.version, latest.diagnostics)

    # -- the commands ---------------------------------------------------------------------------
    async def execute(self, args: list[Any]) -> dict[str, Any]:
        """`argus.profile` with `{"uri", "kernel"}` (or `uri, kernel`): profile, report, store."""
        uri, kernel = target_args(args, COMMAND)
        if not self.trusted:
            msg = "argus.profile refused: the workspace is not trusted, and profiling runs its code"
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=msg)
            )
            raise JsonRpcInvalidRequest(message=msg)
        task = next((t for t in self.tasks(uri) if t.kernel == kernel), None)
        if task is None:
            raise JsonRpcInvalidParams(message=f"argus.profile: no task for {kernel!r} in {uri}")
        key = (uri, kernel)
        if key in self.runs:
            return {"status": "running", "kernel": kernel}
        run = self.runs[key] = Run(token=f"argus-profile-{next(self._tokens)}")
        s = self.settings
        note = self._unsaved_note(uri, task.path)
        try:
            progress = await self._begin(run, kernel, s.profile_target)
            self.refresh_lenses()
            call = functools.partial(
                profile,
                task,
                target=s.profile_target,
                python=s.profile_python,
                timeout=s.profile_timeout,
                counters=s.profile_counters,
                progress=progress,
                cancel=run.cancel,
            )
            result = await asyncio.get_running_loop().run_in_executor(self.executor, call)
        except ProfileCancelled:
            self._end(run, "cancelled")
            return {"status": "cancelled", "kernel": kernel}
        except Exception as exc:  # ProfileError says what went wrong; anything else is our bug
            if not isinstance(exc, ProfileError | OSError):
                log.exception("argus.profile %s failed", kernel)
            had_result = key in self.outcomes and self.outcomes[key].result is not None
            self.outcomes[key] = Outcome(None, error=str(exc))
            self._end(run, f"failed: {_first_line(str(exc))}")
            if had_result:  # its measured hints no longer stand
                self.generation += 1
                self.republish(uri)
            self.server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"argus: profiling {kernel} failed: {exc}"
                )
            )
            return {"status": "error", "kernel": kernel, "message": str(exc)}
        else:
            self.outcomes[key] = Outcome(result, note=note)
            self.generation += 1
            self._end(run, result.lens_text())
            self.republish(uri)
            return {
                "status": "ok",
                "kernel": kernel,
                "lens": result.lens_text(),
                "bound": result.roofline.bound,
            }
        finally:
            self.runs.pop(key, None)
            self.refresh_lenses()

    # -- progress -------------------------------------------------------------------------------
    async def _begin(self, run: Run, kernel: str, target: str):
        """Create the work-done progress (when the client supports it) and return the callback the
        worker thread calls; a cancel on the token sets the run's event."""
        server = self.server
        loop = asyncio.get_running_loop()
        shown = server.supports("window.work_done_progress")
        if shown:
            try:
                await server.work_done_progress.create_async(run.token)
            except Exception as exc:  # a client that refuses progress still gets the profile
                log.warning("workDoneProgress/create failed: %s", exc)
                shown = False
        if shown:
            server.work_done_progress.begin(
                run.token,
                types.WorkDoneProgressBegin(
                    title=f"Profiling {kernel}", message=f"on {target}", cancellable=True, percentage=0
                ),
            )
            token_future = server.work_done_progress.tokens.get(run.token)
            if token_future is not None:
                token_future.add_done_callback(lambda f: run.cancel.set() if f.cancelled() else None)

        def report(phase: str, done: int, total: int) -> None:  # on the message loop
            pct = max(run.pct, percent(phase, done, total))
            changed_phase = phase != run.phase
            if not changed_phase and pct == run.pct:
                return
            run.phase, run.pct = phase, pct
            if shown:
                detail = f"{phase} {done}/{total}" if total else phase
                server.work_done_progress.report(
                    run.token, types.WorkDoneProgressReport(message=detail, percentage=pct, cancellable=True)
                )
            if changed_phase:
                self.refresh_lenses()

        run.shown = shown

        def from_worker(phase: str, done: int, total: int) -> None:  # on the worker thread
            with contextlib.suppress(RuntimeError):  # the loop closed: shutting down, the run is cancelled
                loop.call_soon_threadsafe(report, phase, done, total)

        return from_worker

    def _end(self, run: Run, message: str) -> None:
        if run.shown:
            self.server.work_done_progress.end(run.token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(run.token, None)

    def _unsaved_note(self, uri: str, path: Path) -> str | None:
        doc = self.server.store.get(uri)
        try:
            on_disk = path.read_bytes()
        except OSError:
            return None
        if doc is not None and doc.source != on_disk:
            return "the file as saved on disk was profiled; the editor had unsaved changes"
        return None


def _mtime(p: Path) -> int | None:
    try:
        return p.stat().st_mtime_ns
    except OSError:
        return None


def _first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "error"
    return line if len(line) <= width else line[: width - 1] + "…"
