"""The SSH runner: each candidate's worker on a remote host, with profiling's `ssh://` targets.

Per request: a fresh remote directory (`mktemp -d`), into which scp copies worker.py, the request JSON,
both source files and the library's `knowledge` package (expert-kernel candidates import it); then one
ssh command runs `setsid timeout LIMIT python3 worker.py request.json` there, so the remote process
group dies even if the connection drops; a local timeout or cancel also kills it over a second
connection; the directory is removed in every case. Every remote word is quoted with shlex.quote.
Only the user's file travels: sibling modules it imports must already be on the host.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from argus.agent.optimize.runners import LIBRARY_ROOT, WORKER, RunOutcome, materialize, parse_events, watch
from argus.agent.optimize.types import OptimizeError
from argus.agent.profile.runner import ProfileError
from argus.agent.profile.targets import SshTarget, parse_target

_REMOTE_DIR = re.compile(r"^/[A-Za-z0-9_./-]*argus-opt\.[A-Za-z0-9]+$")


class SshRunner:
    """Runs requests one after another on `ssh://[user@]host[:port]` (one GPU there, timed alone)."""

    def __init__(self, target: str, timeout: float, python: str | None = None,
                 cancel: threading.Event | None = None, **ssh_settings) -> None:
        try:
            parsed = parse_target(target, **ssh_settings)
        except ProfileError as exc:
            raise OptimizeError(str(exc)) from None
        if parsed is None:
            raise OptimizeError(f"{target}: not an ssh:// target")
        self.target: SshTarget = parsed
        self.timeout, self.python, self.cancel = timeout, python or "python3", cancel

    def __call__(self, requests: list[dict]) -> list[RunOutcome]:
        return [self.run_one(r) for r in requests]

    def _ssh(self, command: str, timeout: float, check: bool = True) -> subprocess.CompletedProcess:
        try:
            proc = subprocess.run(self.target.ssh(command), capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise OptimizeError("the ssh client is not installed (apt-get install openssh-client)") from None
        except subprocess.TimeoutExpired:
            if not check:
                return subprocess.CompletedProcess([], 124, "", "")
            raise OptimizeError(f"{self.target}: no answer in {timeout:.0f} s") from None
        if check and proc.returncode != 0:
            raise OptimizeError(f"cannot use {self.target}: {proc.stderr.strip()[-300:] or proc.returncode}")
        return proc

    def run_one(self, request: dict) -> RunOutcome:
        remote_dir = self._ssh("mktemp -d /tmp/argus-opt.XXXXXXXX", timeout=60).stdout.strip()
        if not _REMOTE_DIR.match(remote_dir):
            raise OptimizeError(f"{self.target}: unexpected reply from mktemp: {remote_dir[:200]!r}")
        qdir = shlex.quote(remote_dir)
        try:
            return self._run_in(request, remote_dir, qdir)
        finally:
            self._ssh(f"rm -rf -- {qdir}", timeout=30, check=False)

    def _stage(self, request: dict, stage: Path, remote_dir: str) -> list[str]:
        materialize(request, str(stage), root=remote_dir)
        shutil.copy(WORKER, stage / "worker.py")
        lib = stage / "lib" / "knowledge"
        (lib / "kernels").mkdir(parents=True)
        src = Path(LIBRARY_ROOT, "knowledge")
        shutil.copy(src / "__init__.py", lib / "__init__.py")
        for f in (src / "kernels").glob("*.py"):
            shutil.copy(f, lib / "kernels" / f.name)
        return [str(p) for p in stage.iterdir()]

    def _run_in(self, request: dict, remote_dir: str, qdir: str) -> RunOutcome:
        out = RunOutcome(runner=f"ssh {self.target}")
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="argus-opt-stage.") as tmp:
            files = self._stage(request, Path(tmp), remote_dir)
            scp = ["scp", "-q", "-r", *self.target.common("-P"), *files, f"{self.target.destination}:{remote_dir}/"]
            copied = subprocess.run(scp, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            if copied.returncode != 0:
                out.error = f"copying to {self.target} failed: {copied.stderr.strip()[-300:]}"
                return out
        interp = "TRITON_INTERPRET=1 " if request.get("backend") == "cpu" else ""
        limit = max(1, int(self.timeout)) + 5
        remote = (f"cd {qdir} || exit 97; PYTHONPATH={qdir}/lib PYTHONUNBUFFERED=1 {interp}setsid timeout -k 5 "
                  f"{limit} {shlex.quote(self.python)} worker.py request.json </dev/null & echo $! > pid; wait $!")
        proc = subprocess.Popen(self.target.ssh(remote), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True, text=True)
        done = threading.Event()
        watcher = threading.Thread(target=watch, args=(proc, self.timeout, self.cancel, done, out), daemon=True)
        watcher.start()
        stdout, stderr = proc.communicate()
        done.set()
        watcher.join(timeout=5)
        if out.timed_out or out.cancelled:
            kill = (f'p=$(cat {qdir}/pid 2>/dev/null) && [ -n "$p" ] && '
                    f"{{ kill -TERM -- -$p 2>/dev/null; sleep 2; kill -KILL -- -$p 2>/dev/null; }}; true")
            self._ssh(kill, timeout=30, check=False)
        out.seconds = time.monotonic() - t0
        parse_events(stdout or "", stderr or "", out)
        if out.result is None and out.error is None and proc.returncode == 255:
            out.error = f"{self.target}: connection lost: {(stderr or '').strip()[-300:]}"
        return out
