"""When to analyze and what to do with the result: debounce, off-loop work, staleness, push or pull.

A change (re)arms a per-document timer; when it fires, the message loop re-parses the document
incrementally and hands a snapshot (bytes, tree copy, version, settings) to a worker thread, so
typing never waits for the checker. A result is kept only if it is still about the document's
current version and settings generation; anything older is dropped, and a queued job that is
already stale when a worker picks it up is skipped without running. Clients that pull
(`textDocument/diagnostic`) get the kept result on request and are never pushed to; the others get
`publishDiagnostics` carrying the version the diagnostics were computed for.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.uris import to_fs_path
from tree_sitter import Tree

from analyzers import Finding, KernelCache, check_source
from argus_lsp import convert
from argus_lsp.documents import DocumentStore
from argus_lsp.settings import Settings

log = logging.getLogger(__name__)

Publish = Callable[[str, int | None, list[types.Diagnostic]], None]


@dataclass(frozen=True)
class Job:
    uri: str
    version: int
    generation: int
    source: bytes
    tree: Tree
    settings: Settings
    encoding: str


@dataclass(frozen=True)
class Analysis:
    uri: str
    version: int
    generation: int
    findings: tuple[Finding, ...]
    diagnostics: list[types.Diagnostic]
    error: str | None = None

    @property
    def result_id(self) -> str:
        """`uri@version`, plus the settings generation once settings have changed."""
        base = f"{self.uri}@{self.version}"
        return base if self.generation == 0 else f"{base}+{self.generation}"


def path_of(uri: str) -> str:
    return to_fs_path(uri) or uri


def run_job(job: Job, cache: KernelCache) -> Analysis:
    """The worker's part: check the snapshot and convert it for the client (pure, thread-safe)."""
    findings = check_source(
        job.source,
        path_of(job.uri),
        select=job.settings.select,
        ignore=job.settings.ignore or None,
        cache=cache,
        tree=job.tree,
    )
    diags = convert.diagnostics(
        findings, job.source, job.uri, job.encoding, job.version, job.settings.severity
    )
    return Analysis(job.uri, job.version, job.generation, tuple(findings), diags)


class DiagnosticsScheduler:
    def __init__(self, store: DocumentStore, publish: Publish, report: Callable[[str], None]) -> None:
        self.store = store
        self.publish = publish
        self.report = report  # tells the user (window/logMessage) when the checker itself failed
        self.settings = Settings()
        self.encoding = convert.UTF16
        self.pull = False
        self.generation = 0
        self.cache = KernelCache()
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="argus-check")
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._in_flight: set[tuple[str, int, int]] = set()
        self._results: dict[str, Analysis] = {}
        self._waiters: dict[str, list[asyncio.Future]] = {}

    # -- events ---------------------------------------------------------------------------------
    def opened(self, uri: str) -> None:
        self.start(uri)

    def changed(self, uri: str) -> None:
        if self.settings.run == "onType":
            self.schedule(uri, self.settings.debounce_ms)

    def saved(self, uri: str) -> None:
        if self.settings.run == "onSave":
            self.start(uri)

    def closed(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._results.pop(uri, None)
        for fut in self._waiters.pop(uri, []):
            if not fut.done():
                fut.set_result(None)
        if not self.pull:
            self.publish(uri, None, [])

    def recheck_all(self) -> None:
        """Settings changed: every open document's diagnostics are out of date."""
        self.generation += 1
        for doc in self.store:
            self.start(doc.uri)

    # -- scheduling -----------------------------------------------------------------------------
    def schedule(self, uri: str, delay_ms: int) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
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
        key = (uri, doc.version, self.generation)
        done = self._results.get(uri)
        if key in self._in_flight or (done and (done.uri, done.version, done.generation) == key):
            return
        job = Job(uri, doc.version, self.generation, doc.source, doc.parse(), self.settings, self.encoding)
        self._in_flight.add(key)
        fut = asyncio.get_running_loop().run_in_executor(self.executor, self._work, job)
        fut.add_done_callback(lambda f: self._finish(job, key, f))

    def _is_current(self, job: Job) -> bool:
        doc = self.store.get(job.uri)
        return doc is not None and doc.version == job.version and self.generation == job.generation

    def _work(self, job: Job) -> Analysis | None:
        if not self._is_current(job):
            return None  # superseded while queued: skip the work entirely
        return run_job(job, self.cache)

    def _finish(self, job: Job, key: tuple[str, int, int], fut: asyncio.Future) -> None:
        self._in_flight.discard(key)
        if fut.cancelled():
            return
        if (exc := fut.exception()) is not None:
            log.error("argus: checking %s failed", job.uri, exc_info=exc)
            self.report(f"argus: checking {job.uri} failed: {type(exc).__name__}: {exc}")
            result = Analysis(job.uri, job.version, job.generation, (), [], error=str(exc))
        else:
            result = fut.result()
        if result is None or not self._is_current(job):
            return  # stale: a newer version or newer settings will be (or were) analyzed
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
        done = self._results.get(uri)
        if done is not None and (done.version, done.generation) == (doc.version, self.generation):
            return done
        if done is not None and self.settings.run == "onSave":
            return done  # on-save users see the last saved state until they save again
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(uri, []).append(waiter)
        if uri not in self._timers:  # nothing armed: start now (a pending timer will start it soon)
            self.start(uri)
        return await waiter

    def shutdown(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self.executor.shutdown(wait=False, cancel_futures=True)
