"""Where a candidate's gate-2/3 work runs: a local subprocess, or one Ray task per candidate.

Every run is a fresh `python worker.py request.json` process with a timeout; its whole process group is
killed on timeout or cancel, so a hanging or forking candidate cannot outlive its budget. A request is
self-contained (both source texts travel inside it), so the same JSON runs on a Ray worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from argus import knowledge

WORKER = Path(__file__).with_name("worker.py")
EVENT_PREFIX = "@@ARGUS-OPT@@ "
LIBRARY_ROOT = str(Path(knowledge.__file__).resolve().parent.parent)  # so candidates can import knowledge.kernels


@dataclass
class RunOutcome:
    """What one worker run produced: its result event, or why there is none."""

    result: dict | None = None
    error: str | None = None
    env: dict = field(default_factory=dict)
    timed_out: bool = False
    cancelled: bool = False
    seconds: float = 0.0
    stderr_tail: str = ""
    runner: str = "local"  # "local" or "ray task <id>"

    def failure(self) -> str | None:
        if self.cancelled:
            return "cancelled"
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s (the process group was killed)"
        if self.error:
            return self.error
        if self.result is None:
            tail = self.stderr_tail.strip().splitlines()[-6:]
            return "the worker exited without a result: " + " | ".join(tail)
        return None


def materialize(request: dict, workdir: str, root: str | None = None) -> str:
    """Write the request's sources into `workdir` and return the path of the worker's JSON.

    `root`: where `workdir` will be when the worker runs (a remote directory); default `workdir`."""
    name = request["file_name"]
    where = root or workdir
    orig = Path(workdir, "original", name)
    orig.parent.mkdir(parents=True, exist_ok=True)
    orig.write_text(request["original_source"])
    req = {k: v for k, v in request.items() if not k.endswith("_source")}
    req["original"] = f"{where}/original/{name}"
    if request.get("candidate_source") is not None:
        cand = Path(workdir, "candidate", name)
        cand.parent.mkdir(parents=True, exist_ok=True)
        cand.write_text(request["candidate_source"])
        req["candidate"] = f"{where}/candidate/{name}"
    path = Path(workdir, "request.json")
    path.write_text(json.dumps(req))
    return str(path)


def run_request(
    request: dict,
    *,
    timeout: float,
    python: str | None = None,
    cancel: threading.Event | None = None,
) -> RunOutcome:
    """Run one worker request in a subprocess here; never raises for a failing candidate."""
    out = RunOutcome()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="argus-opt-") as work:
        req_path = materialize(request, work)
        env = dict(os.environ)
        extra = [LIBRARY_ROOT, *request.get("search_path", [])]
        env["PYTHONPATH"] = os.pathsep.join(extra + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        if request.get("backend") == "cpu":
            env["TRITON_INTERPRET"] = "1"
        proc = subprocess.Popen(
            [python or sys.executable, str(WORKER), req_path],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            cwd=work, env=env, start_new_session=True, text=True,
        )
        done = threading.Event()
        watcher = threading.Thread(target=watch, args=(proc, timeout, cancel, done, out), daemon=True)
        watcher.start()
        stdout, stderr = proc.communicate()
        done.set()
        watcher.join(timeout=5)
    out.seconds = time.monotonic() - t0
    return parse_events(stdout or "", stderr or "", out)


def parse_events(stdout: str, stderr: str, out: RunOutcome) -> RunOutcome:
    """Fill `out` from the worker's event lines (anything else it printed is ignored)."""
    out.stderr_tail = stderr[-4000:]
    for line in stdout.splitlines():
        if not line.startswith(EVENT_PREFIX):
            continue
        with contextlib.suppress(json.JSONDecodeError):
            event = json.loads(line[len(EVENT_PREFIX):])
            kind = event.pop("event", "")
            if kind == "result":
                out.result = event
            elif kind == "env":
                out.env = event
            elif kind == "error":
                out.error = event.get("message")
                out.stderr_tail = (event.get("traceback") or "") + out.stderr_tail
    return out


def watch(proc: subprocess.Popen, timeout: float, cancel: threading.Event | None, done: threading.Event,
           out: RunOutcome) -> None:
    deadline = time.monotonic() + timeout
    while not done.wait(0.2):
        if cancel is not None and cancel.is_set():
            out.cancelled = True
        elif time.monotonic() > deadline:
            out.timed_out = True
        else:
            continue
        kill_group(proc)
        return


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=3)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


Runner = Callable[[list[dict]], list[RunOutcome]]


class LocalRunner:
    """Runs requests one after another on this host (one GPU: candidates must not share it while timed)."""

    def __init__(self, timeout: float, python: str | None = None, cancel: threading.Event | None = None) -> None:
        self.timeout, self.python, self.cancel = timeout, python, cancel

    def __call__(self, requests: list[dict]) -> list[RunOutcome]:
        return [run_request(r, timeout=self.timeout, python=self.python, cancel=self.cancel) for r in requests]


class RayRunner:
    """One Ray task per candidate (`num_gpus=1` when the cluster has GPUs), each a fresh worker subprocess."""

    def __init__(self, address: str, timeout: float, python: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise RuntimeError("--ray needs the `ray` package: pip install 'ray[default]'") from None
        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False, ignore_reinit_error=True)
        gpus = ray.cluster_resources().get("GPU", 0)
        self.num_gpus = 1 if gpus >= 1 else 0
        self.timeout, self.python = timeout, python
        self.remote = ray.remote(num_gpus=self.num_gpus, num_cpus=1, max_retries=0)(_ray_task)

    def __call__(self, requests: list[dict]) -> list[RunOutcome]:
        refs = [self.remote.remote(r, self.timeout, self.python) for r in requests]
        outs = []
        for ref in refs:
            try:
                outs.append(self.ray.get(ref, timeout=self.timeout + 60))
            except Exception as exc:
                outs.append(RunOutcome(error=f"ray task failed: {type(exc).__name__}: {exc}"[:500]))
        return outs


def _ray_task(request: dict, timeout: float, python: str | None) -> RunOutcome:
    import ray

    out = run_request(request, timeout=timeout, python=python)
    out.runner = f"ray task {ray.get_runtime_context().get_task_id()}"
    return out
