"""A check worker tells the server of the kernels done so far only during a long check, and gives
the checker's memos back when its last document closes (check_worker.PROGRESS_EVERY_S; issue 13): each progress message is a publish of every diagnostic
of the file, and a short check's partial publishes cost the server CPU nobody could use.

The real worker loop's `check` runs in-process here on real pipes, with the real checker."""

from __future__ import annotations

import os

import pytest
from test_lsp_scheduling import many_kernels

from argus_lsp import check_worker, wire


def _messages(progress_every_s: float, monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    monkeypatch.setattr(check_worker, "PROGRESS_EVERY_S", progress_every_s)
    inp, _ = os.pipe()
    out_r, out_w = os.pipe()
    cancel_r, _ = os.pipe()
    os.set_blocking(cancel_r, False)
    worker = check_worker.Worker(inp, out_w, cancel_r)
    source = many_kernels(4).encode()
    job = {
        "id": 1,
        "uri": "file:///tmp/progress.py",
        "path": "/tmp/progress.py",
        "source": source,
        "select": None,
        "ignore": None,
        "kernel_timeout": None,
        "launches": None,
        "focus": None,
        "progress": True,
        "root": None,
        "open_texts": {},
    }
    worker.check(job)
    os.close(out_w)
    got = []
    while (msg := wire.read(out_r)) is not None:
        got.append(msg)
    return got


def test_every_kernel_but_the_last_is_told_when_the_interval_is_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _messages(0.0, monkeypatch)
    assert [m[0] for m in got] == ["progress", "progress", "progress", "done"]
    assert [len(m[3]) for m in got[:3]] == [3, 2, 1]  # (the kernels still to do)


def test_a_check_shorter_than_the_interval_tells_nothing_before_its_result(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _messages(3600.0, monkeypatch)
    assert [m[0] for m in got] == ["done"]
    assert {f.kernel for f in got[0][2]} == {f.kernel for f in _messages(0.0, monkeypatch)[-1][2]}


def test_closing_the_last_document_gives_the_checkers_memos_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The statements, splits and text answers the checker keeps across documents are dropped
    with the worker's last document (the memory goes back, as the server's does)."""
    from argus.analyzers import module_ast
    from argus.analyzers.frontend import text_memo

    inp, _ = os.pipe()
    _, out_w = os.pipe()
    cancel_r, _ = os.pipe()
    os.set_blocking(cancel_r, False)
    worker = check_worker.Worker(inp, out_w, cancel_r)
    for i in range(2):
        worker.check({
            "id": i + 1, "uri": f"file:///tmp/doc{i}.py", "path": f"/tmp/doc{i}.py",
            "source": many_kernels(2).encode(), "select": None, "ignore": None, "kernel_timeout": None,
            "launches": None, "focus": None, "progress": False, "root": None, "open_texts": {},
        })
    assert module_ast._SPLITS and text_memo._DATA
    worker.handle(("drop", "file:///tmp/doc0.py"))
    assert module_ast._SPLITS and text_memo._DATA  # (one document is still open)
    worker.handle(("drop", "file:///tmp/doc1.py"))
    assert not module_ast._SPLITS and not text_memo._DATA and not module_ast._PARTS._data
