"""`argus.record`: the editor's "Argus: Record launches" runs `argus record` in the workspace.

Recording runs the user's code (their tests), so it happens only when asked, only in a trusted
workspace (trust comes from the client's initializationOptions, exactly as for profiling: see
`server.client_trusts`), in a subprocess of its own session with a timeout, with work-done
progress the user can cancel (or `argus.record.cancel`). The recording lands in the launch file
the server binds kernels from (`features/launches.py`), so when it ends every open document is
checked again against it.

Arguments: `{"command": "pytest -x tests", "timeout": 900}` (both optional; a string alone is the
command; the default command is `pytest`). The command line is split like a POSIX shell would
(`shlex`) but no shell runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import shlex
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

if TYPE_CHECKING:
    from argus_lsp.server import ArgusServer

log = logging.getLogger(__name__)

COMMAND = "argus.record"
CANCEL_COMMAND = "argus.record.cancel"
DEFAULT_COMMAND = "pytest"
DEFAULT_TIMEOUT_S = 900.0
TAIL_LINES = 40  # of the command's output kept for the answer: enough to see why it failed
LINE_CHARS = 400
KILL_GRACE_S = 5.0
REPORT_EVERY_S = 0.2  # the latest output line as progress, at most this often


@dataclass
class RecordRun:
    token: str
    argv: list[str]
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    shown: bool = False
    reported: float = 0.0  # time.monotonic() of the last progress report
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))


def parse_args(args: list[Any]) -> tuple[list[str], float]:
    """(the command's argv, timeout in seconds) from the command's arguments; raises
    JsonRpcInvalidParams with the reason on anything else."""
    opts: Any = args[0] if args else {}
    if isinstance(opts, str):
        opts = {"command": opts}
    if not isinstance(opts, dict):
        raise JsonRpcInvalidParams(
            message=f"argus.record wants {{'command': str, 'timeout': s}}, got {opts!r}"
        )
    line = opts.get("command") or DEFAULT_COMMAND
    if not isinstance(line, str):
        raise JsonRpcInvalidParams(message=f"argus.record: command must be a string, got {line!r}")
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise JsonRpcInvalidParams(message=f"argus.record: cannot split {line!r}: {exc}") from exc
    if not argv:
        raise JsonRpcInvalidParams(message="argus.record: the command line is empty")
    timeout = opts.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise JsonRpcInvalidParams(message=f"argus.record: timeout must be seconds > 0, got {timeout!r}")
    return argv, float(timeout)


def record_argv(out: str, argv: list[str]) -> list[str]:
    """`argus record --out OUT -- CMD...` with the server's own interpreter (the one that has Argus)."""
    # -P: the workspace (the cwd) does not come first on sys.path, so no file of it can stand in
    # for Argus's own modules (the command the recorder then runs is the user's, on purpose)
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    return [sys.executable, *safe, "-m", "argus_lsp", "record", "--out", out, "--", *argv]


def _kill(proc: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # its own session: pytest's workers and subprocesses go too


class RecordFeature:
    def __init__(self, server: ArgusServer) -> None:
        self.server = server
        self.trusted = False
        self.run: RecordRun | None = None
        self._tokens = itertools.count(1)

    def _show(self, kind: types.MessageType, message: str) -> None:
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    async def execute(self, args: list[Any]) -> dict[str, Any]:
        if not self.trusted:
            msg = "argus.record refused: the workspace is not trusted, and recording runs its code"
            self._show(types.MessageType.Warning, msg)
            raise JsonRpcInvalidRequest(message=msg)
        argv, timeout = parse_args(args)
        launches = self.server.diagnostics.launches
        out = launches.path() if launches is not None else None
        folder = launches.folder if launches is not None else None
        if out is None or folder is None:
            raise JsonRpcInvalidRequest(message="argus.record needs a workspace folder to run in")
        if self.run is not None:
            return {"status": "running", "command": shlex.join(self.run.argv)}
        run = self.run = RecordRun(token=f"argus-record-{next(self._tokens)}", argv=argv)
        try:
            await self._begin(run)
            status, code = await self._spawn_and_wait(run, record_argv(out, argv), folder, timeout)
        finally:
            self.run = None
        return self._finish(run, status, code, out, timeout)

    def cancel(self) -> bool:
        if self.run is None:
            return False
        self.run.cancel.set()
        return True

    def shutdown(self) -> None:
        self.cancel()

    # -- the subprocess -------------------------------------------------------------------------
    async def _spawn_and_wait(
        self, run: RecordRun, cmd: list[str], folder: Path, timeout: float
    ) -> tuple[str, int | None]:
        """("done" | "cancelled" | "timeout" | "error", exit status)."""
        try:
            proc = await asyncio.create_subprocess_exec(
                *cmd,
                cwd=folder,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            run.tail.append(f"cannot start {cmd[0]}: {exc}")
            return "error", None
        reader = asyncio.ensure_future(self._read(run, proc))
        stopper = asyncio.ensure_future(run.cancel.wait())
        try:
            done, _ = await asyncio.wait(
                {reader, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stopper.cancel()
        if reader in done:
            return "done", await proc.wait()
        _kill(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
        except TimeoutError:
            _kill(proc, signal.SIGKILL)
            await proc.wait()
        reader.cancel()
        return ("cancelled" if run.cancel.is_set() else "timeout"), proc.returncode

    async def _read(self, run: RecordRun, proc: asyncio.subprocess.Process) -> None:
        """Keep the output's last lines and show the latest one as progress."""
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            text = line.decode("utf-8", "replace").rstrip()[:LINE_CHARS]
            if not text:
                continue
            run.tail.append(text)
            now = time.monotonic()
            if run.shown and now - run.reported >= REPORT_EVERY_S:  # `pytest -v` prints thousands
                run.reported = now
                self.server.work_done_progress.report(
                    run.token, types.WorkDoneProgressReport(message=text[:120], cancellable=True)
                )

    # -- progress and the answer ----------------------------------------------------------------
    async def _begin(self, run: RecordRun) -> None:
        server = self.server
        if not server.supports("window.work_done_progress"):
            return
        try:
            await server.work_done_progress.create_async(run.token)
        except Exception as exc:  # a client that refuses progress still gets the recording
            log.warning("workDoneProgress/create failed: %s", exc)
            return
        run.shown = True
        server.work_done_progress.begin(
            run.token,
            types.WorkDoneProgressBegin(
                title="Recording launches", message=shlex.join(run.argv), cancellable=True
            ),
        )
        token_future = server.work_done_progress.tokens.get(run.token)
        if token_future is not None:
            token_future.add_done_callback(lambda f: run.cancel.set() if f.cancelled() else None)

    def _finish(
        self, run: RecordRun, status: str, code: int | None, out: str, timeout: float
    ) -> dict[str, Any]:
        command = shlex.join(run.argv)
        last = run.tail[-1] if run.tail else ""
        if status == "cancelled":
            summary = "cancelled"
        elif status == "timeout":
            summary = f"timed out after {timeout:g} s"
        elif status == "error":
            summary = last
        elif code == 0:
            summary = last or f"recorded into {out}"
        else:
            summary = f"`{command}` exited with status {code}: {last}"
        if run.shown:
            self.server.work_done_progress.end(run.token, types.WorkDoneProgressEnd(message=summary[:200]))
        self.server.work_done_progress.tokens.pop(run.token, None)
        self.server.launches_maybe_changed()  # what was recorded, even after a failure
        if status == "done" and code == 0:
            self._show(types.MessageType.Info, f"argus: {summary}")
            answer = "ok"
        elif status == "cancelled":
            answer = "cancelled"
        else:
            self._show(types.MessageType.Error, f"argus: recording launches failed: {summary}")
            answer = "error" if status != "timeout" else "timeout"
        return {
            "status": answer,
            "exit_status": code,
            "out": out,
            "message": summary,
            "output": list(run.tail),
        }
