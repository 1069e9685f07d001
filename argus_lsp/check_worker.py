"""The check worker: a process of its own that runs the language server's checks.

Interpreting a kernel holds the GIL nearly all the time, so checks that run on threads of the
server make every request (hover, code lens, code action, the message loop itself) wait for the
interpreter. Here they run in a separate process (`features/check_pool.py` starts and supervises
it), at a lower CPU priority (`NICE`): an interactive request in the server wins the core.

It is started like the server (`python -P -m argus_lsp.check_worker`, from a working directory
outside any workspace, `check_pool.worker_argv`), so nothing of the workspace can shadow a module;
it never runs workspace code either (the checker only parses and interprets abstractly).

Protocol (`wire.py`'s frames, pickles between the server and its own child): the server sends
("check", payload), ("drop", uri), ("clear",), ("invalidate",) and ("exit",) on stdin, and one
job at a time; the worker answers ("progress", id, findings, pending) after an analyzed kernel
when asked (at most every `PROGRESS_EVERY_S`, and not in a check's first), then exactly one of
("done", id, findings, rss), ("cancelled", id, rss) or
("failed", id, message, rss). A cancel is an 8-byte job id written on a pipe of its own (argv[1]),
which the check reads between kernels and programs (`should_stop`), so a superseded check stops
within one program without the worker ever reading its stdin mid-check.

Each document keeps, here, its kernel cache and its last tree (the next text is re-parsed
incrementally from it: a full parse of a 1,400-line file costs 15-50 ms). When no message has
come for `TRACE_QUIET_S`, the worker computes the hover traces of the kernels it checked last
(`traces.py`) and ships them as ("trace", key, ShippedTrace); a message arriving stops that within
one interpreter yield (2 ms), and the kernel is traced at the next quiet moment.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import sys
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argus.analyzers import KernelCache, check_source, kernel_timeout, module_ast
from argus.analyzers.frontend import text_memo
from argus.analyzers.frontend.parse import parse
from argus.analyzers.interp.budget import pausing
from argus.analyzers.interpretation import Cancelled
from tree_sitter import Tree

from argus_lsp import wire
from argus_lsp.features.carry import common_suffix, first_difference
from argus_lsp.gc_pause import freeze_start_up
from argus_lsp.memory import release_memory

NICE = 3  # checks are background work: the server's requests come first on a shared core
#: a check tells the server of its kernels done so far at most this often, and not before it has
#: run this long: each partial result is a publish of every diagnostic of the file, and a check
#: re-analyzing four kernels in 60 ms cost the server 15-20 ms of CPU in three partial publishes
#: nobody could read before the final one (a long check still shows its kernels as they finish)
PROGRESS_EVERY_S = 0.05
TRACE_QUIET_S = 1.0  # no message for this long: the user paused, trace the kernels checked last
SHIPPED_KEYS = 1024  # trace keys remembered as already shipped (the server keeps them)


@dataclass
class DocState:
    source: bytes
    tree: Tree
    cache: KernelCache


def point(text: bytes, byte: int) -> tuple[int, int]:
    """tree-sitter's (row, byte column) of a byte offset."""
    return text.count(b"\n", 0, byte), byte - (text.rfind(b"\n", 0, byte) + 1)


def reparse(old: DocState | None, source: bytes) -> Tree:
    """The tree of `source`, incrementally from the document's last one when there is one."""
    if old is None:
        return parse(source)
    if old.source == source:
        return old.tree
    start = first_difference(old.source, source)
    suffix = common_suffix(old.source, source, start)
    old_end, new_end = len(old.source) - suffix, len(source) - suffix
    old.tree.edit(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=point(old.source, start),
        old_end_point=point(old.source, old_end),
        new_end_point=point(source, new_end),
    )
    return parse(source, old.tree)


class MessageWaiting(BaseException):
    """Raised at an interpreter yield point while tracing, when the server sent a message (a
    BaseException: the trace's own `except Exception` must not swallow it)."""


class Worker:
    def __init__(self, inp: int, out: int, cancels: int) -> None:
        self.inp, self.out, self.cancels = inp, out, cancels
        os.set_blocking(cancels, False)
        self.docs: dict[str, DocState] = {}
        self.cancelled: set[int] = set()
        self.current = -1
        self.root: str | None = None
        self.workspace: Any = None  # project_files.WorkspaceSources of `root`
        self.open_texts: dict[str, bytes] = {}
        self.untraced: OrderedDict[str, None] = OrderedDict()  # uris checked since their trace
        self.shipped: OrderedDict[str, None] = OrderedDict()
        self.parent = os.getppid()

    # -- the loop ---------------------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            if self.untraced and not self._waiting(TRACE_QUIET_S):
                self._trace_next()
                continue
            msg = wire.read(self.inp)
            if msg is None or msg[0] == "exit":
                return
            self.handle(msg)

    def handle(self, msg: tuple) -> None:
        kind = msg[0]
        if kind == "check":
            self.check(msg[1])
        elif kind == "drop":
            self.docs.pop(msg[1], None)
            self.untraced.pop(msg[1], None)
            if not self.docs:  # the last document closed: what the checker keeps goes back too
                module_ast.forget()
                text_memo.forget()
                release_memory()
        elif kind == "clear":  # a new kernel time budget: cached "budget exceeded" may not hold
            for doc in self.docs.values():
                doc.cache = KernelCache()
        elif kind == "invalidate" and self.workspace is not None:
            self.workspace.invalidate()

    def _waiting(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.inp], [], [], timeout)
        return bool(ready)

    # -- checks -----------------------------------------------------------------------------------
    def should_stop(self) -> bool:
        if os.getppid() != self.parent:
            os._exit(0)  # the server is gone: nobody will read this check
        try:
            data = os.read(self.cancels, 8 * 64)
        except BlockingIOError:
            data = b""
        for i in range(0, len(data) - len(data) % 8, 8):
            self.cancelled.add(struct.unpack_from("<q", data, i)[0])
        return self.current in self.cancelled

    def check(self, job: dict[str, Any]) -> None:
        jid = self.current = job["id"]
        self._workspace_for(job)
        try:
            if self.should_stop():
                raise Cancelled
            uri, source = job["uri"], job["source"]
            old = self.docs.get(uri)
            tree = reparse(old, source)
            cache = old.cache if old is not None else KernelCache()
            self.docs[uri] = DocState(source, tree, cache)
            project = self.workspace.for_check(self.open_texts) if self.workspace is not None else None

            told = [time.monotonic()]  # (the job's start, then the last progress sent)

            def progress(found: list, pending: list[str]) -> None:
                now = time.monotonic()
                if now - told[0] < PROGRESS_EVERY_S:
                    return  # the check will end soon: the server would publish twice for nothing
                told[0] = now
                wire.write(self.out, ("progress", jid, found, pending))

            with kernel_timeout(job["kernel_timeout"]):
                findings = check_source(
                    source,
                    job["path"],
                    select=job["select"],
                    ignore=job["ignore"],
                    cache=cache,
                    tree=tree,
                    launches=job["launches"],
                    should_stop=self.should_stop,
                    focus=job["focus"],
                    progress=progress if job["progress"] else None,
                    project=project,
                )
        except Cancelled:
            wire.write(self.out, ("cancelled", jid, rss_kib()))
        except Exception as exc:  # noqa: BLE001 - reported to the user, the worker goes on
            traceback.print_exc(file=sys.stderr)
            wire.write(self.out, ("failed", jid, f"{type(exc).__name__}: {exc}", rss_kib()))
        else:
            wire.write(self.out, ("done", jid, findings, rss_kib()))
            self.untraced[job["uri"]] = None
            self.untraced.move_to_end(job["uri"])
        finally:
            self.cancelled.discard(jid)
            self.current = -1

    def _workspace_for(self, job: dict[str, Any]) -> None:
        """The folder imports and launches resolve in, and the open documents' texts (the server
        sends only those that changed since its last job to this worker; None: closed)."""
        if job["root"] != self.root:
            from argus_lsp.project_files import WorkspaceSources

            self.root = job["root"]
            self.workspace = WorkspaceSources(Path(self.root)) if self.root else None
        for path, text in job["open_texts"].items():
            if text is None:
                self.open_texts.pop(path, None)
            else:
                self.open_texts[path] = text

    # -- hover traces -----------------------------------------------------------------------------
    def _trace_next(self) -> None:
        uri, _ = self.untraced.popitem(last=True)  # the document checked last first
        doc = self.docs.get(uri)
        if doc is None:
            return
        from argus_lsp.features.traces import kernel_traces

        def interrupt() -> None:
            if self._waiting(0):
                raise MessageWaiting

        try:
            with pausing(interrupt):
                for key, trace in kernel_traces(doc.source, doc.tree, self.shipped):
                    wire.write(self.out, ("trace", key, trace))
                    self.shipped[key] = None
                    while len(self.shipped) > SHIPPED_KEYS:
                        self.shipped.popitem(last=False)
                    interrupt()
        except MessageWaiting:
            self.untraced[uri] = None  # the rest of its kernels at the next quiet moment
            self.untraced.move_to_end(uri, last=False)


def rss_kib() -> int:
    """Resident memory of this process (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return 0


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print("argus check worker: started by the language server only (argv: CANCEL_FD)", file=sys.stderr)
        return 2
    with contextlib.suppress(OSError):
        os.nice(NICE)
    out = os.dup(1)
    os.dup2(2, 1)  # a stray print must not corrupt the frames: stdout now goes to the log
    sys.stdout = sys.stderr
    from argus_lsp.features import traces  # noqa: F401  (imported by the first trace: frozen with the rest)

    freeze_start_up()  # gc_pause.py: full collections would rescan every imported module
    Worker(0, out, int(argv[0])).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
