"""What one check is (`Job`: a snapshot of a document and its settings) and the part of it that
runs off the message loop, on a thread of the server (`run_job`, with `checkProcesses: 0`) or
in a check worker process (`job_payload` is what the worker gets, check_worker.py); its result
(`Analysis`) converted for the client.

A job is cancelled cooperatively: `check_source` is handed its `should_stop` (the job's
cancelled event), and the cache it sees (`CheckpointCache`) raises `Superseded` at each kernel's
lookup once the job is stale. While a hover computes (`InteractiveGate`), a check on a thread
pauses at its next stopping point, for at most `MAX_PAUSE_S`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers import Finding, KernelCache, check_source, kernel_timeout
from argus.analyzers.interp.budget import pause_now, pausing
from lsprotocol import types
from pygls.uris import to_fs_path
from tree_sitter import Tree

from argus_lsp import convert
from argus_lsp.features.carry import carry_over, first_difference
from argus_lsp.features.launches import LaunchSnapshot
from argus_lsp.project_files import WorkspaceSources
from argus_lsp.settings import Settings

Key = tuple[str, int, int]  # (uri, revision, settings generation)


MAX_PAUSE_S = 1.0  # the longest one check waits for a hover before it goes on anyway


class InteractiveGate:
    """Checks pause while an interactive request (hover) computes: they ask `pause` between two
    programs, and it returns at once unless a request is in flight (then when it is done, or
    after `MAX_PAUSE_S`, so a hover that hangs cannot stall the checks)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy = 0
        self._quiet = threading.Event()
        self._quiet.set()

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        with self._lock:
            self._busy += 1
            self._quiet.clear()
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1
                if self._busy == 0:
                    self._quiet.set()

    def pause(self) -> None:
        if not self._quiet.is_set():
            self._quiet.wait(MAX_PAUSE_S)


class Superseded(Exception):
    """Raised inside a worker, between two kernels, when a newer check of the document exists."""


class CheckpointCache(KernelCache):
    """The document's cache as one job sees it: every lookup first asks whether the job is stale.

    `analyze_module` consults the cache once per kernel before analyzing it, which makes the
    lookup the natural cancellation point without any hook inside the analyzers."""

    def __init__(self, inner: KernelCache, cancelled: threading.Event) -> None:
        super().__init__(capacity=0)
        self.inner = inner
        self.cancelled = cancelled
        self.launch_texts = inner.launch_texts  # the document's, kept between its checks
        self.snippets = inner.snippets

    def get(self, key: str) -> Any:
        if self.cancelled.is_set():
            raise Superseded
        return self.inner.get(key)

    def get_bound(self, key: str) -> Any:
        if self.cancelled.is_set():
            raise Superseded
        return self.inner.get_bound(key)

    def put(self, key: str, findings: Any) -> None:
        self.inner.put(key, findings)


@dataclass(frozen=True)
class Job:
    uri: str
    version: int
    revision: int
    generation: int
    source: bytes
    tree: Tree
    settings: Settings
    encoding: str
    launches: LaunchSnapshot | None = field(default=None, compare=False)  # the workspace's recording
    # the workspace's other modules (helpers, launches), and the open documents' texts by path
    workspace: WorkspaceSources | None = field(default=None, compare=False, repr=False)
    open_texts: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)
    previous: Analysis | None = field(default=None, compare=False, repr=False)
    cancelled: threading.Event = field(default_factory=threading.Event, compare=False)

    @property
    def key(self) -> Key:
        return (self.uri, self.revision, self.generation)


@dataclass(frozen=True)
class Analysis:
    uri: str
    version: int
    revision: int
    generation: int
    findings: tuple[Finding, ...]
    diagnostics: list[types.Diagnostic]
    error: str | None = None
    source: bytes = field(default=b"", compare=False, repr=False)  # the text it was computed on

    @property
    def key(self) -> Key:
        return (self.uri, self.revision, self.generation)

    @property
    def result_id(self) -> str:
        """`uri@version#revision`: unique per text the server checked, even if a version repeats."""
        return f"{self.uri}@{self.version}#{self.revision}+{self.generation}"


def path_of(uri: str) -> str:
    return to_fs_path(uri) or uri


def run_job(
    job: Job,
    cache: KernelCache,
    partial: Callable[[Analysis], None] | None = None,
    gate: InteractiveGate | None = None,
) -> Analysis:
    """The worker's part: check the snapshot and convert it for the client (pure, thread-safe).

    `partial` gets an Analysis after each analyzed kernel while others still wait, when there is
    a previous result to carry the waiting kernels' findings from (see above); `gate` pauses
    the check while a hover computes."""
    prev = job.previous if job.previous is not None and job.previous.error is None else None
    focus = first_difference(prev.source, job.source) if prev is not None else None

    def progress(found: list[Finding], pending: list[str]) -> None:
        if partial is not None:
            partial(partial_analysis(job, found, pending))

    project = job.workspace.for_check(job.open_texts) if job.workspace is not None else None
    pause = gate.pause if gate is not None else None
    # the per-kernel budget (argus.kernelTimeout); hovers pause the check at its yield points
    with kernel_timeout(job.settings.kernel_timeout), pausing(pause):
        findings = check_source(
            job.source,
            path_of(job.uri),
            select=job.settings.select,
            ignore=job.settings.ignore or None,
            cache=cache,
            tree=job.tree,
            launches=job.launches.for_file(path_of(job.uri)) if job.launches is not None else None,
            should_stop=job.cancelled.is_set if gate is None else lambda: _pause(gate, job),
            focus=focus,
            progress=progress if partial is not None and prev is not None else None,
            project=project,
        )
    return analysis_of(job, findings)


def carried_from(job: Job) -> Analysis | None:
    """The last result, when its findings may stand in for kernels not re-checked yet: one of the
    same settings (a new `select` or time budget changes the findings of untouched kernels too)."""
    prev = job.previous
    ok = prev is not None and prev.error is None and prev.generation == job.generation
    return prev if ok else None


def job_payload(job: Job, want_progress: bool) -> dict[str, Any]:
    """What a check worker's `check` reads of a job (check_worker.py), but its id and the open
    texts (the pool adds those): the same inputs `run_job` hands `check_source`."""
    prev = carried_from(job)
    path = path_of(job.uri)
    return {
        "uri": job.uri,
        "path": path,
        "source": job.source,
        "select": job.settings.select,
        "ignore": job.settings.ignore or None,
        "kernel_timeout": job.settings.kernel_timeout,
        "launches": job.launches.for_file(path) if job.launches is not None else None,
        "focus": first_difference(prev.source, job.source) if prev is not None else None,
        "progress": want_progress and prev is not None,
    }


def partial_analysis(job: Job, found: list[Finding], pending: list[str]) -> Analysis:
    """The findings of the kernels done so far, and the last result's for those still waiting
    (`pending`), carried over the edit."""
    prev = carried_from(job)
    carried: list[Finding] = []
    if prev is not None:
        carried = carry_over(prev.findings, set(pending), prev.source, job.source)
    return analysis_of(job, sorted(found + carried, key=Finding.sort_key))


def _pause(gate: InteractiveGate, job: Job) -> bool:
    pause_now()  # gate.pause, with the wait kept off the kernel's time budget
    return job.cancelled.is_set()


def analysis_of(job: Job, findings: list[Finding]) -> Analysis:
    diags = convert.diagnostics(
        findings, job.source, job.uri, job.encoding, job.version, job.settings.severity
    )
    if job.launches is not None:
        say_recorded(diags, job.uri)
    return Analysis(
        job.uri, job.version, job.revision, job.generation, tuple(findings), diags, source=job.source
    )


def say_recorded(diags: list[types.Diagnostic], uri: str) -> None:
    """A finding bound from the launch file says so where the editor shows it (the related
    information), not only in its witness data: the sizes came from a recording, not the file."""
    for d in diags:
        witness = d.data.get("witness") if isinstance(d.data, dict) else None
        recorded = witness.get("recorded") if isinstance(witness, dict) else None
        if isinstance(recorded, str) and recorded:
            note = types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=d.range), message=f"recorded: {recorded}"
            )
            d.related_information = [*(d.related_information or []), note]
