"""The server's side of the check workers (`check_worker.py`): start, feed, cancel, restart.

A pool of one or two long-lived worker processes. Each document sticks to one worker (its
kernel cache and tree live there); each worker runs one job at a time, and the jobs waiting for
it are held here, at most one per document (a newer one replaces it), so a superseded job that
never started costs nothing. A running job that is superseded is cancelled through the worker's
cancel pipe (it stops within one program); one that has not stopped after `KILL_AFTER_S` gets
its worker killed and restarted.

Bounded: a worker whose resident memory, reported after each job, passes `MEMORY_CAP_MIB` is
restarted (its caches start again empty). A worker that dies (a crash, the OOM killer) is
restarted at once and the job it was running is given to the new one once more; if that one
dies on it too, the job is reported as failed and the others go on.

All methods run on the server's event loop; the pipes are read and written by threads of each
worker, which hand every message back to the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import argus_lsp
from argus_lsp import wire

log = logging.getLogger(__name__)

MEMORY_CAP_MIB = 1536  # a worker past this resident size is restarted after its job
# a cancelled job whose worker has used this much CPU since the cancel without stopping: kill it
# (CPU, not wall time: on a loaded machine a low-priority worker may wait long for the core)
KILL_AFTER_CPU_S = 2.0
WATCH_EVERY_S = 0.5
MAX_WORKERS = 2


class PoolSink(Protocol):
    """What the pool tells the scheduler (on the event loop)."""

    def progress(self, job: Any, found: list, pending: list[str]) -> None: ...
    def finished(self, job: Any, findings: list | None, error: str | None) -> None: ...
    def trace(self, key: str, trace: Any) -> None: ...


def worker_argv() -> list[str]:
    """How the worker starts: the server's interpreter, `-P` (Python 3.11+: neither the working
    directory nor a script's folder goes on sys.path), our module by name."""
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    return [sys.executable, *safe, "-m", "argus_lsp.check_worker"]


def worker_env() -> dict[str, str]:
    """The server's environment, with the folder this server's own `argus_lsp` was imported from
    first on PYTHONPATH: the worker runs the same code as the server, however it was started."""
    env = dict(os.environ)
    ours = str(Path(argus_lsp.__file__).resolve().parent.parent)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != ours]
    env["PYTHONPATH"] = os.pathsep.join([ours, *rest])
    return env


class WorkerProcess:
    """One worker process, with a thread writing its stdin and one reading its stdout."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, on_message: Callable[[WorkerProcess, Any], None]
    ) -> None:
        self.loop = loop
        self.on_message = on_message
        cancel_r, self.cancel_w = os.pipe()
        self.proc = subprocess.Popen(
            [*worker_argv(), str(cancel_r)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=(cancel_r,),
            cwd=tempfile.gettempdir(),  # outside any workspace
            env=worker_env(),
        )
        os.close(cancel_r)
        self._out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=self._write_loop, name="argus-worker-in", daemon=True).start()
        threading.Thread(target=self._read_loop, name="argus-worker-out", daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, msg: Any) -> None:
        self._out.put(msg)

    def cpu_s(self) -> float:
        """CPU seconds the worker has used (Linux /proc; 0 elsewhere, where no kill is timed)."""
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def cancel(self, job_id: int) -> None:
        with contextlib.suppress(OSError):  # the worker is gone: its exit is being handled
            os.write(self.cancel_w, struct.pack("<q", job_id))

    def kill(self) -> None:
        self._out.put(None)
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError):
            os.close(self.cancel_w)

    def _write_loop(self) -> None:
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        while (msg := self._out.get()) is not None:
            try:
                wire.write(fd, msg)
            except OSError:
                return  # the worker died; the reader reports it
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            try:
                msg = wire.read(fd)
            except Exception as exc:  # noqa: BLE001 - a torn frame: treat as the worker's death
                log.warning("argus check worker %s: unreadable message: %s", self.pid, exc)
                msg = None
            if msg is None:
                self.proc.wait()
            try:
                self.loop.call_soon_threadsafe(self.on_message, self, msg)
            except RuntimeError:  # the loop is closed: the server is shutting down
                return
            if msg is None:
                return


@dataclass
class Request:
    """A job as the pool holds it: the payload (what the worker's `check` reads but the id and
    open texts), the open documents' texts when it was made, and how often it was started."""

    job: Any
    payload: dict[str, Any]
    open_texts: dict[str, bytes]
    root: str | None
    tries: int = 0
    id: int = 0


@dataclass
class Slot:
    """One worker's place in the pool: its process, its job, the jobs waiting for it."""

    proc: WorkerProcess | None = None
    running: Request | None = None
    waiting: dict[str, Request] = field(default_factory=dict)  # uri -> the newest job for it
    sent_texts: dict[str, bytes] = field(default_factory=dict)  # the open texts this worker holds


class CheckPool:
    def __init__(self, size: int, sink: PoolSink, memory_cap_mib: float = MEMORY_CAP_MIB) -> None:
        self.sink = sink
        self.memory_cap_mib = memory_cap_mib
        self.slots = [Slot() for _ in range(max(1, min(size, MAX_WORKERS)))]
        self.affinity: dict[str, int] = {}  # uri -> slot
        self.restarts = 0
        self._next_id = 0
        self._closed = False

    # -- the scheduler's calls ----------------------------------------------------------------------
    def submit(
        self, job: Any, payload: dict[str, Any], open_texts: dict[str, bytes], root: str | None
    ) -> None:
        """Run `job` once its worker is free (replacing a job of the same document that waits)."""
        slot = self._slot_for(job.uri)
        slot.waiting.pop(job.uri, None)
        slot.waiting[job.uri] = Request(job, payload, open_texts, root)
        self._dispatch(slot)

    def cancel(self, job: Any) -> None:
        """`job` is superseded: drop it if it waits, stop it if it runs (killing a stuck worker)."""
        slot = self.slots[self.affinity.get(job.uri, 0)]
        waiting = slot.waiting.get(job.uri)
        if waiting is not None and waiting.job is job:
            del slot.waiting[job.uri]
            self.sink.finished(job, None, None)
        running = slot.running
        if running is not None and running.job is job and slot.proc is not None:
            slot.proc.cancel(running.id)
            since = slot.proc.cpu_s()
            asyncio.get_running_loop().call_later(WATCH_EVERY_S, self._kill_if_stuck, slot, running.id, since)

    def drop(self, uri: str) -> None:
        index = self.affinity.pop(uri, None)
        if index is not None and self.slots[index].proc is not None:
            self.slots[index].proc.send(("drop", uri))

    def broadcast(self, msg: tuple) -> None:
        for slot in self.slots:
            if slot.proc is not None:
                slot.proc.send(msg)

    def pids(self) -> list[int]:
        return [s.proc.pid for s in self.slots if s.proc is not None]

    def shutdown(self) -> None:
        self._closed = True
        for slot in self.slots:
            if slot.proc is not None:
                slot.proc.kill()
                slot.proc = None

    # -- inside -------------------------------------------------------------------------------------
    def _slot_for(self, uri: str) -> Slot:
        if uri not in self.affinity:
            load = [sum(1 for i in self.affinity.values() if i == n) for n in range(len(self.slots))]
            self.affinity[uri] = load.index(min(load))
        return self.slots[self.affinity[uri]]

    def _dispatch(self, slot: Slot) -> None:
        if self._closed or slot.running is not None or not slot.waiting:
            return
        if slot.proc is None:
            slot.proc = WorkerProcess(asyncio.get_running_loop(), self._on_message)
            slot.sent_texts = {}
        req = slot.waiting.pop(next(iter(slot.waiting)))
        texts: dict[str, bytes | None] = {
            p: t for p, t in req.open_texts.items() if slot.sent_texts.get(p) is not t
        }
        texts.update({p: None for p in slot.sent_texts if p not in req.open_texts})
        slot.sent_texts = dict(req.open_texts)
        self._next_id += 1
        req.id, req.tries = self._next_id, req.tries + 1
        slot.running = req
        slot.proc.send(("check", {**req.payload, "id": req.id, "root": req.root, "open_texts": texts}))

    def _on_message(self, proc: WorkerProcess, msg: Any) -> None:
        slot = next((s for s in self.slots if s.proc is proc), None)
        if slot is None:
            return  # from a worker already replaced (past its memory cap, or at shutdown)
        if msg is None:
            self._died(slot)
            return
        kind = msg[0]
        if kind == "trace":
            self.sink.trace(msg[1], msg[2])
            return
        running = slot.running
        if running is None or msg[1] != running.id:
            return  # about a job this side no longer waits for
        if kind == "progress":
            self.sink.progress(running.job, msg[2], msg[3])
            return
        slot.running = None
        if kind == "done":
            self.sink.finished(running.job, msg[2], None)
        elif kind == "failed":
            self.sink.finished(running.job, None, msg[2])
        else:  # cancelled
            self.sink.finished(running.job, None, None)
        if msg[-1] / 1024 > self.memory_cap_mib:
            log.warning("argus check worker %s: %.0f MiB resident, restarting it", proc.pid, msg[-1] / 1024)
            self._replace(slot)
        self._dispatch(slot)

    def _replace(self, slot: Slot) -> None:
        """Drop `slot`'s worker; the next job starts a fresh one (its documents' caches are lost)."""
        if slot.proc is not None:
            slot.proc.kill()
        slot.proc = None
        self.restarts += 1

    def _died(self, slot: Slot) -> None:
        code = slot.proc.proc.returncode if slot.proc is not None else None
        log.warning("argus check worker %s exited (%s)", slot.proc.pid if slot.proc else "?", code)
        running, slot.running = slot.running, None
        self._replace(slot)
        if self._closed:
            return
        if running is not None:
            if running.job.cancelled.is_set():
                self.sink.finished(running.job, None, None)
            elif running.tries < 2 and running.job.uri not in slot.waiting:
                slot.waiting = {running.job.uri: running, **slot.waiting}  # once more, on a fresh one
            else:
                self.sink.finished(
                    running.job, None, f"the check worker exited ({code}) while checking this text"
                )
        self._dispatch(slot)

    def _kill_if_stuck(self, slot: Slot, job_id: int, since: float) -> None:
        if slot.running is None or slot.running.id != job_id or slot.proc is None:
            return  # it stopped
        if slot.proc.cpu_s() - since < KILL_AFTER_CPU_S:
            asyncio.get_running_loop().call_later(WATCH_EVERY_S, self._kill_if_stuck, slot, job_id, since)
            return
        log.warning("argus check worker %s: a cancelled check did not stop, killing it", slot.proc.pid)
        slot.proc.proc.kill()  # its reader sees it exit, and the slot starts a fresh one
