"""When to analyze and what to do with the result: debounce, off-loop work, cancellation, push or pull.

A change (re)arms a per-document timer; when it fires, the message loop re-parses the document
incrementally and hands a snapshot (bytes, tree copy, revision, settings) to a worker thread, so
typing never waits for the checker. Work is keyed on the document's *revision* (bumped by every
change, documents.py), not on the client's version number, so a repeated version is re-checked.

At most one check per document is live: starting a newer one cancels the older one
cooperatively: the job hands `check_source` its `should_stop` (the job's cancelled event), which the
checker asks between kernels and between the programs of each probe run, and raises `Cancelled`
once it is set; a superseded check stops within one program (under 60 ms on the real
kernels) instead of finishing a file nobody will see. The cache handed to a job
(`CheckpointCache`) also raises `Superseded` at each kernel's lookup once the job is stale. A job
that is already stale when a worker picks it up does not start.

A check goes kernel by kernel: the kernels its cache holds first, then the kernel where the text
changed (the first byte that differs from the last checked text), then the rest. When more than
one kernel needs analysis after an edit, each one finished is published at once (push clients
only), together with the last result's findings for the kernels still waiting, carried over the
edit (carry.py), so the kernel being typed in shows its diagnostics without waiting for the rest
of the file. A first check (nothing to carry) publishes once, complete.

Each open document has its own `KernelCache` (findings per kernel, keyed by what the kernel
reads), so an edit re-analyzes only the kernels it touched; closing the document drops the cache,
its last result and its timer, and when the last document closes the allocator is asked to give
freed memory back to the system.

While a hover is being computed (`InteractiveGate`), the checks pause at their next stopping
point (the interpreter's yield point, every 2 ms of interpretation, `budget.pausing`; at most
`MAX_PAUSE_S`, and not counted against the kernel's time budget): interpreting a kernel holds
the GIL nearly all the time, and a hover's own interpretation sharing it with two checks took
three times as long as alone.

Clients that pull (`textDocument/diagnostic`) get the kept result on request and are never pushed
to; the others get `publishDiagnostics` carrying the version the diagnostics were computed for.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from argus.analyzers import Finding, KernelCache
from argus.analyzers.interpretation import Cancelled
from lsprotocol import types

from argus_lsp import convert
from argus_lsp.documents import DocumentStore
from argus_lsp.features.check_jobs import (
    MAX_PAUSE_S,
    Analysis,
    CheckpointCache,
    InteractiveGate,
    Job,
    Key,
    Superseded,
    analysis_of,
    carried_from,
    job_payload,
    partial_analysis,
    path_of,
    run_job,
)
from argus_lsp.features.check_pool import CheckPool
from argus_lsp.features.launches import WorkspaceLaunches
from argus_lsp.memory import release_memory
from argus_lsp.project_files import WorkspaceSources
from argus_lsp.settings import Settings

log = logging.getLogger(__name__)

Publish = Callable[[str, int | None, list[types.Diagnostic]], None]
# (the job model and its thread-side work are check_jobs.py's; named here for the callers)
__all__ = [
    "MAX_PAUSE_S",
    "Analysis",
    "CheckpointCache",
    "DiagnosticsScheduler",
    "InteractiveGate",
    "Job",
    "Key",
    "Superseded",
    "carried_from",
    "run_job",
]


class DiagnosticsScheduler:
    def __init__(self, store: DocumentStore, publish: Publish, report: Callable[[str], None]) -> None:
        self.store = store
        self.publish = publish
        self.report = report  # tells the user (window/logMessage) when the checker itself failed
        self.settings = Settings()
        self.encoding = convert.UTF16
        self.pull = False
        self.generation = 0
        self.launches: WorkspaceLaunches | None = None  # the launch file kernels are bound from
        self.workspace: WorkspaceSources | None = None  # the folder imports and launches resolve in
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="argus-check")
        self.gate = InteractiveGate()  # hover holds it; the checks pause meanwhile
        self._caches: dict[str, KernelCache] = {}
        self._budget: float | None = None  # the kernel timeout the caches were filled under
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._live: dict[str, Job] = {}  # uri -> the newest job started for it, until it finishes
        self._results: dict[str, Analysis] = {}
        self._waiters: dict[str, list[asyncio.Future]] = {}
        self.pool: CheckPool | None = None  # the check workers, when settings.check_processes > 0
        self.on_trace: Callable[[str, Any], None] | None = None  # a hover trace a worker shipped

    # -- events ---------------------------------------------------------------------------------
    def opened(self, uri: str) -> None:
        self.start(uri)

    def changed(self, uri: str) -> None:
        if self.settings.run == "onType":
            self.schedule(uri, self.settings.debounce_ms)
        else:
            self._cancel(uri)  # an on-save user's running check is about text that is gone

    def saved(self, uri: str) -> None:
        if self.settings.run == "onSave":
            self.start(uri)
        if self.workspace is not None:
            self.workspace.invalidate()  # the save may have made or renamed a module
            if self.pool is not None:
                self.pool.broadcast(("invalidate",))
            self.recheck_others(uri)

    def recheck_others(self, uri: str) -> None:
        """A saved module may hold helpers or launches of kernels in other open documents: check
        those again (their kernels' cache keys hold the texts they read, so only the kernels
        that depend on the saved file are analyzed again)."""
        self.generation += 1
        for doc in self.store:
            if doc.uri != uri:
                self.start(doc.uri)

    def closed(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._cancel(uri)
        self._results.pop(uri, None)
        self._caches.pop(uri, None)
        if self.pool is not None:
            self.pool.drop(uri)
        for fut in self._waiters.pop(uri, []):
            if not fut.done():
                fut.set_result(None)
        if not self.pull:
            self.publish(uri, None, [])
        if len(self.store) == 0:
            release_memory()

    def recheck_all(self) -> None:
        """Settings changed: every open document's diagnostics are out of date."""
        self.generation += 1
        if self.settings.kernel_timeout != self._budget:
            # a kernel past the old time budget is cached as AR001 "budget exceeded"
            self._budget = self.settings.kernel_timeout
            self._caches.clear()
            if self.pool is not None:
                self.pool.broadcast(("clear",))
        for doc in self.store:
            self.start(doc.uri)

    def launches_maybe_changed(self) -> bool:
        """Re-read the launch file if it changed on disk; if its launches did, check everything
        again (and say so: a pulling client must be asked to pull again)."""
        if self.launches is not None and self.launches.refresh():
            self.recheck_all()
            return True
        return False

    # -- scheduling -----------------------------------------------------------------------------
    def schedule(self, uri: str, delay_ms: int) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._cancel(uri)  # the text it checks is already gone: free the worker now
        loop = asyncio.get_running_loop()
        if delay_ms <= 0:
            self._timers[uri] = loop.call_soon(self.start, uri)  # type: ignore[assignment]
        else:
            self._timers[uri] = loop.call_later(delay_ms / 1000, self.start, uri)

    def start(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        doc = self.store.get(uri)
        if doc is None:
            return
        self.launches_maybe_changed()  # a stat: a new recording re-binds this check and the others
        key = (uri, doc.revision, self.generation)
        live = self._live.get(uri)
        done = self._results.get(uri)
        if (live is not None and live.key == key) or (done is not None and done.key == key):
            return
        self._cancel(uri)
        job = Job(
            uri,
            doc.version,
            doc.revision,
            self.generation,
            doc.source,
            doc.parse(),
            self.settings,
            self.encoding,
            launches=self.launches.snapshot if self.launches is not None else None,
            previous=done,
            workspace=self.workspace,
            open_texts=self._open_texts() if self.workspace is not None else {},
        )
        self._live[uri] = job
        loop = asyncio.get_running_loop()
        if self.settings.check_processes > 0:
            self._submit(job, loop)
            return
        if self.pool is not None:  # switched to threads (`checkProcesses: 0`): no worker kept idle
            self.pool.shutdown()
            self.pool = None
        cache = self._caches.setdefault(uri, KernelCache())
        fut = loop.run_in_executor(self.executor, self._work, job, cache, loop)
        fut.add_done_callback(lambda f: self._finish(job, f))

    # -- checks in worker processes (check_pool.py) -----------------------------------------------
    def _submit(self, job: Job, loop: asyncio.AbstractEventLoop) -> None:
        if self.pool is None or len(self.pool.slots) != self.settings.check_processes:
            if self.pool is not None:
                self.pool.shutdown()
            self.pool = CheckPool(self.settings.check_processes, self)
        root = str(self.workspace.root) if self.workspace is not None else None
        self.pool.submit(job, job_payload(job, not self.pull), job.open_texts, root)

    def progress(self, job: Job, found: list[Finding], pending: list[str]) -> None:
        """A worker analyzed a kernel of `job` while others wait (CheckPool's sink)."""
        self._publish_partial(job, partial_analysis(job, found, pending))

    def finished(self, job: Job, findings: list[Finding] | None, error: str | None) -> None:
        """A worker's job ended: done (`findings`), failed (`error`) or cancelled (neither)."""
        if self._live.get(job.uri) is job:
            del self._live[job.uri]
        if error is not None:
            log.error("argus: checking %s failed: %s", job.uri, error)
            self.report(f"argus: checking {job.uri} failed: {error}")
            self._settle(
                job, Analysis(job.uri, job.version, job.revision, job.generation, (), [], error=error)
            )
        elif findings is not None:
            self._settle(job, analysis_of(job, findings))

    def trace(self, key: str, trace: Any) -> None:
        if self.on_trace is not None:
            self.on_trace(key, trace)

    def _open_texts(self) -> dict[str, bytes]:
        """The open documents' texts by absolute path (taken on the event loop's thread)."""
        return {os.path.abspath(path_of(d.uri)): d.source for d in self.store}

    def _cancel(self, uri: str) -> None:
        live = self._live.pop(uri, None)
        if live is not None:
            live.cancelled.set()
            if self.pool is not None:
                self.pool.cancel(live)

    def _is_current(self, job: Job) -> bool:
        doc = self.store.get(job.uri)
        return (
            not job.cancelled.is_set()
            and doc is not None
            and doc.revision == job.revision
            and self.generation == job.generation
        )

    def _work(
        self, job: Job, cache: KernelCache, loop: asyncio.AbstractEventLoop | None = None
    ) -> Analysis | None:
        if job.cancelled.is_set():
            return None  # superseded while queued: skip the work entirely

        def partial(analysis: Analysis) -> None:
            if loop is not None and not self.pull:
                loop.call_soon_threadsafe(self._publish_partial, job, analysis)

        try:
            return run_job(job, CheckpointCache(cache, job.cancelled), partial, self.gate)
        except (Superseded, Cancelled):
            return None

    def _publish_partial(self, job: Job, analysis: Analysis) -> None:
        """On the loop: a kernel of a still-running check finished; show it if still current."""
        if self._live.get(job.uri) is job and self._is_current(job):
            self.publish(job.uri, job.version, analysis.diagnostics)

    def _finish(self, job: Job, fut: asyncio.Future) -> None:
        if self._live.get(job.uri) is job:
            del self._live[job.uri]
        if fut.cancelled():
            return
        if (exc := fut.exception()) is not None:
            log.error("argus: checking %s failed", job.uri, exc_info=exc)
            self.report(f"argus: checking {job.uri} failed: {type(exc).__name__}: {exc}")
            result = Analysis(job.uri, job.version, job.revision, job.generation, (), [], error=str(exc))
        else:
            result = fut.result()
        if result is not None:
            self._settle(job, result)

    def _settle(self, job: Job, result: Analysis) -> None:
        if not self._is_current(job):
            return  # stale: a newer revision or newer settings will be (or were) analyzed
        self._results[job.uri] = result
        if not self.pull and result.error is None:
            self.publish(job.uri, job.version, result.diagnostics)
        for waiter in self._waiters.pop(job.uri, []):
            if not waiter.done():
                waiter.set_result(result)

    # -- pull -----------------------------------------------------------------------------------
    def latest(self, uri: str) -> Analysis | None:
        return self._results.get(uri)

    async def current(self, uri: str) -> Analysis | None:
        """The analysis of the document as it is now, waiting for it if needed (pull model)."""
        doc = self.store.get(uri)
        if doc is None:
            return None
        self.launches_maybe_changed()
        done = self._results.get(uri)
        if done is not None and done.key == (uri, doc.revision, self.generation):
            return done
        if done is not None and self.settings.run == "onSave":
            return done  # on-save users see the last saved state until they save again
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(uri, []).append(waiter)
        if uri not in self._timers:
            self.start(uri)  # nothing armed: start now (a no-op if this revision is running)
        return await waiter

    def shutdown(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        for uri in list(self._live):
            self._cancel(uri)
        self.executor.shutdown(wait=False, cancel_futures=True)
        if self.pool is not None:
            self.pool.shutdown()
