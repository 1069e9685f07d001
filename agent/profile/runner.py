"""Run the worker in a subprocess and read its events: the part local and SSH targets share.

The events are decoded and checked against worker_schema; a marked line that does not fit the
schema ends up as the run's error, so a broken worker reads as one, not as a missing result.

Why a process group: the worker starts compilers, ncu and ncu's own child; a timeout or a cancel
must end all of them, so the worker runs in a new session and the whole group is signalled.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from argus.agent.profile.worker_schema import Progress, SchemaError, WorkerError, WorkerResult, decode_event

WORKER = Path(__file__).with_name("worker.py")
#: What a target stages next to the request: the worker script and the two modules it imports.
WORKER_FILES = (WORKER, *(Path(__file__).with_name(n) for n in ("worker_schema.py", "worker_counters.py")))

ProgressFn = Callable[[str, int, int], None]


class ProfileError(RuntimeError):
    """A profile that could not run: unreachable host, no GPU, timeout, a failing task."""


@dataclass
class WorkerRun:
    """What one worker run produced: its result event (or error) and the tails of its other output."""

    result: WorkerResult | None = None
    error: str | None = None
    traceback: str | None = None
    returncode: int | None = None
    stderr_tail: str = ""
    output_tail: str = ""
    timed_out: bool = False
    cancelled: bool = False


def stream(
    argv: Sequence[str],
    *,
    timeout: float,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    on_stop: Callable[[], None] | None = None,
) -> WorkerRun:
    """Run `argv` (a list: never a shell string), following its events until it ends or time runs out.

    On timeout or cancel the process group gets SIGTERM, then SIGKILL; `on_stop` then runs
    (the SSH target uses it to end the remote group, which a local signal cannot reach).
    """
    run = WorkerRun()
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        start_new_session=True,
        text=True,
        bufsize=1,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    err_lines: list[str] = []

    def pump_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def pump_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err_lines.append(line)
            del err_lines[:-200]

    threads = [threading.Thread(target=pump_out, daemon=True), threading.Thread(target=pump_err, daemon=True)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    other: list[str] = []
    while True:
        if cancel is not None and cancel.is_set():
            run.cancelled = True
            break
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            run.timed_out = True
            break
        try:
            line = lines.get(timeout=min(remaining, 0.2))
        except queue.Empty:
            continue
        if line is None:
            break
        _take(run, line, other, progress)
    if run.timed_out or run.cancelled:
        kill_group(proc)
        if on_stop is not None:
            on_stop()
    try:
        run.returncode = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        run.returncode = proc.wait()
    for t in threads:
        t.join(timeout=2)
    run.stderr_tail = "".join(err_lines)[-4000:]
    run.output_tail = "".join(other)[-4000:]
    return run


def _take(run: WorkerRun, line: str, other: list[str], progress: ProgressFn | None) -> None:
    """Record one stdout line: an event of the schema, or the user's own output (kept as a tail)."""
    try:
        event = decode_event(line.rstrip("\n"))
    except SchemaError as exc:
        run.error = run.error or f"the worker sent a message Argus cannot read: {exc}"
        return
    if event is None:
        other.append(line)
        del other[:-100]
    elif isinstance(event, Progress):
        if progress is not None:
            progress(event.phase, event.done, event.total)
    elif isinstance(event, WorkerResult):
        run.result = event
    elif isinstance(event, WorkerError):
        run.error, run.traceback = event.message, event.traceback


def kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """SIGTERM the process's group, then SIGKILL whatever is left after `grace` seconds."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
