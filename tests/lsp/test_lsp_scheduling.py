"""Scheduling (issue 13): a superseded check stops between kernels, a repeated version number is
checked again, and closing a document gives back what was kept for it.

The first and last run the scheduler in-process on a real asyncio loop with the real checker (no
stand-ins: only the cache that the checker consults between kernels is observed); the repeated
version goes through a real server process.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

import pytest
from argus.analyzers import KernelCache, describe_at
from lsp_support import mutant, server_env
from lsprotocol import types
from rpc_client import RpcClient

from argus_lsp.documents import DocumentStore
from argus_lsp.features import check_jobs
from argus_lsp.features.diagnostics import CheckpointCache, DiagnosticsScheduler, Job, Superseded
from argus_lsp.settings import Settings


def many_kernels(n: int = 6) -> str:
    add, _, _ = mutant("vector_add_v2")
    head, _, body = add.partition("@triton.jit")
    out = [head]
    for i in range(n):
        out.append(
            ("@triton.jit" + body).replace("add_kernel", f"add{i}_kernel").replace("def add(", f"def add{i}(")
        )
    return "\n\n".join(out)


class CountingCache(KernelCache):
    """The real cache, counting lookups (one per kernel), calling `on_get` before each."""

    def __init__(self, on_get) -> None:
        super().__init__()
        self.gets = 0
        self.on_get = on_get

    def get(self, key: str) -> Any:
        self.gets += 1
        self.on_get(self.gets)
        return super().get(key)


def job_for(store: DocumentStore, uri: str) -> Job:
    doc = store.get(uri)
    assert doc is not None
    return Job(uri, doc.version, doc.revision, 0, doc.source, doc.parse(), Settings(), "utf-16")


def open_doc(store: DocumentStore, uri: str, text: str) -> None:
    store.open(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))


def test_a_superseded_check_stops_at_the_next_kernel() -> None:
    text = many_kernels(6)
    store = DocumentStore()
    open_doc(store, "file:///k.py", text)
    sched = DiagnosticsScheduler(store, lambda *a: None, lambda m: None)
    job = job_for(store, "file:///k.py")

    def cancel_after_two(n: int) -> None:
        if n == 2:
            job.cancelled.set()  # what a newer edit does (DiagnosticsScheduler._cancel)

    inner = CountingCache(cancel_after_two)
    assert sched._work(job, inner) is None
    assert inner.gets == 2  # two kernels looked up, the third lookup stopped the check

    fresh = job_for(store, "file:///k.py")
    full = CountingCache(lambda n: None)
    result = sched._work(fresh, full)
    assert result is not None and full.gets == 6
    sched.shutdown()


def test_checkpoint_raises_only_once_cancelled() -> None:
    flag = threading.Event()
    cache = CheckpointCache(KernelCache(), flag)
    cache.put("k", ["x"])
    assert cache.get("k") == ["x"]
    flag.set()
    try:
        cache.get("k")
    except Superseded:
        pass
    else:
        raise AssertionError("a cancelled job's lookup must raise Superseded")


@pytest.mark.parametrize("processes", [0, 1])
def test_closing_every_document_drops_results_caches_and_jobs(processes: int) -> None:
    async def scenario() -> DiagnosticsScheduler:
        store = DocumentStore()
        published: list[tuple[str, int | None, list]] = []
        sched = DiagnosticsScheduler(store, lambda u, v, d: published.append((u, v, d)), lambda m: None)
        sched.settings = Settings(check_processes=processes)
        uris = [f"file:///d{i}.py" for i in range(3)]
        for uri in uris:
            open_doc(store, uri, many_kernels(2))
            sched.opened(uri)
        for uri in uris:
            assert await asyncio.wait_for(sched.current(uri), 60) is not None
        held = set(sched._caches) if processes == 0 else set(sched.pool.affinity)
        assert held == set(uris) and set(sched._results) == set(uris)
        open_doc(store, "file:///late.py", many_kernels(2))
        sched.opened("file:///late.py")  # still running when it is closed
        for uri in [*uris, "file:///late.py"]:
            store.close(uri)
            sched.closed(uri)
        assert (uri, None, []) in [(u, v, d) for u, v, d in published]
        return sched

    sched = asyncio.run(scenario())
    assert sched._caches == {} and sched._results == {} and sched._live == {} and sched._timers == {}
    assert sched.pool is None if processes == 0 else sched.pool.affinity == {}
    sched.shutdown()


def test_a_repeated_version_number_is_checked_again(tmp_path) -> None:

    env = server_env()
    client = RpcClient([sys.executable, "-P", "-m", "argus_lsp.server"], cwd=tmp_path, env=env)
    try:
        client.initialize(tmp_path, ["utf-16"])
        text, expect, _ = mutant("vector_add_v2")
        uri = (tmp_path / "v.py").as_uri()
        client.open(uri, text)
        assert any(d["code"] == "MB002" for d in client.published(uri, 1))
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 10_000, "character": 0}}
        client.change(uri, 2, [{"range": whole, "text": "x = 1\n"}])
        assert client.published(uri, 2) == []
        client.change(uri, 2, [{"range": whole, "text": text}])  # the same version again
        assert any(d["code"] == "MB002" for d in client.published(uri, 2))
    finally:
        client.close()


def test_hover_does_not_queue_behind_checks(tmp_path) -> None:
    # Two long checks occupy both check workers; a hover on a third document is answered on its
    # own thread before either of them publishes (they used to share one pool: it waited).

    env = server_env()
    client = RpcClient([sys.executable, "-P", "-m", "argus_lsp.server"], cwd=tmp_path, env=env)
    try:
        # the hover waits for its trace however long it takes (not answered "being traced"): what
        # is tested is that the trace is not queued behind the checks
        client.initialize(tmp_path, ["utf-16"], {"argus": {"hoverWaitMs": 60_000}})
        small, _, _ = mutant("vector_add_v2")
        near = (tmp_path / "small.py").as_uri()
        client.open(near, small)
        per_kernel = len(client.published(near, 1))  # the long files repeat this kernel 40 times
        assert per_kernel > 0
        long_uris = [(tmp_path / f"long{i}.py").as_uri() for i in range(2)]
        for uri in long_uris:
            client.open(uri, many_kernels(40))
        row = small.split("\n").index("    mask = offsets < n_elements")
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": near}, "position": {"line": row, "character": 4}}
        )
        assert hover is not None and "mask" in hover["contents"]["value"]
        # a check publishes each kernel as it finishes: only the publish of all 40 ends it
        still_running = [
            uri
            for uri in long_uris
            if not any(
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and len(m["params"]["diagnostics"]) >= 40 * per_kernel
                for m in client.inbox()
            )
        ]
        assert still_running == long_uris, "a long check finished before the hover was answered"
    finally:
        client.close()


def test_a_hover_never_waits_for_a_trace_longer_than_it_may(tmp_path) -> None:
    # hoverWaitMs 0: a hover on a kernel without a trace is answered at once that the kernel is
    # being traced; the trace goes on, and a later hover on the name gets its description
    client = RpcClient([sys.executable, "-P", "-m", "argus_lsp.server"], cwd=tmp_path, env=server_env())
    try:
        client.initialize(tmp_path, ["utf-16"], {"argus": {"hoverWaitMs": 0, "checkProcesses": 0}})
        small, _, _ = mutant("vector_add_v2")
        uri = (tmp_path / "small.py").as_uri()
        client.open(uri, small)
        client.published(uri, 1)
        row = small.split("\n").index("    mask = offsets < n_elements")
        where = {"textDocument": {"uri": uri}, "position": {"line": row, "character": 4}}
        first = client.request("textDocument/hover", where)
        assert first is not None and "is being traced" in first["contents"]["value"], first
        assert "`mask`" in first["contents"]["value"]
        end = time.monotonic() + 60
        later = first
        while "is being traced" in later["contents"]["value"] and time.monotonic() < end:
            time.sleep(0.1)
            later = client.request("textDocument/hover", where)
        assert "is being traced" not in later["contents"]["value"]
        assert later["contents"]["value"] == describe_at(small, utf8_offset(small, row, 4))
        outside = small.split("\n").index(next(ln for ln in small.split("\n") if ln.startswith("import")))
        nothing = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": outside, "character": 8}},
        )
        assert nothing is None  # no kernel there: nothing to trace, so no "being traced" either
    finally:
        client.close()


def utf8_offset(text: str, row: int, col: int) -> int:
    lines = text.split("\n")
    return len("\n".join(lines[:row]).encode()) + (1 if row else 0) + len(lines[row][:col].encode())


def test_a_check_pauses_while_a_hover_computes_and_not_longer(monkeypatch) -> None:
    """The scheduler's gate (held by the server's hover thread): a check waits at its next
    stopping point while it is held, goes on when it is released, and never waits past
    MAX_PAUSE_S for a hover that does not come back."""
    store = DocumentStore()
    open_doc(store, "file:///k.py", many_kernels(2))
    sched = DiagnosticsScheduler(store, lambda *a: None, lambda m: None)
    looked_up = CountingCache(lambda n: None)
    results: list[object] = []

    def check() -> threading.Thread:
        job = job_for(store, "file:///k.py")
        worker = threading.Thread(target=lambda: results.append(sched._work(job, looked_up)))
        worker.start()
        return worker

    with sched.gate.busy():
        worker = check()
        worker.join(0.5)
        assert worker.is_alive() and looked_up.gets == 0, "the check went on while a hover computed"
    worker.join(60)
    assert not worker.is_alive() and looked_up.gets == 2 and results[0] is not None

    monkeypatch.setattr(check_jobs, "MAX_PAUSE_S", 0.05)
    with sched.gate.busy():  # a hover that never finishes: the check still ends
        worker = check()
        worker.join(60)
        assert not worker.is_alive() and results[1] is not None
    sched.shutdown()
