"""What the per-kernel commands that run code (Profile, Optimize) share: how a client names the
kernel, and the runs in flight, which a cancel command or the server's shutdown stops.

Both features run their work on a thread pool and key each run by (uri, kernel); a run carries a
`cancel` event that the worker polls (the profile and optimize workers kill their subprocesses
when it is set)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from pygls.exceptions import JsonRpcInvalidParams

Key = tuple[str, str]  # (uri, kernel)


class CancellableRun(Protocol):
    cancel: threading.Event


def target_args(args: list[Any], command: str) -> tuple[str, str]:
    """`[{"uri": ..., "kernel": ...}]` (what a lens or a code action sends) or `[uri, kernel]`.

    One parser for every per-kernel command (profile, optimize, their cancel and apply), so a
    client calls them all the same way; anything else is invalid params naming `command`."""
    if len(args) == 1 and isinstance(args[0], dict):
        uri, kernel = args[0].get("uri"), args[0].get("kernel")
    elif len(args) == 2:
        uri, kernel = args
    else:
        uri = kernel = None
    if not isinstance(uri, str) or not isinstance(kernel, str):
        raise JsonRpcInvalidParams(message=f"{command} wants [{{'uri': ..., 'kernel': ...}}], got {args!r}")
    return uri, kernel


class KernelRuns:
    """The runs in flight of one feature, on its own thread pool."""

    cancel_command: str  # the feature's cancel command, named in its errors

    def __init__(self, workers: int, thread_name_prefix: str) -> None:
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=thread_name_prefix)
        self.runs: dict[Key, CancellableRun] = {}

    def cancel(self, args: list[Any]) -> bool:
        """The cancel command (the running lens's command, for clients without a cancel button)."""
        run = self.runs.get(target_args(args, self.cancel_command))
        if run is None:
            return False
        run.cancel.set()
        return True

    def shutdown(self) -> None:
        for run in self.runs.values():
            run.cancel.set()  # the workers kill their subprocesses (and remote process groups)
        self.executor.shutdown(wait=False, cancel_futures=True)
