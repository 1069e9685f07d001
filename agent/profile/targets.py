"""Where a profile runs: this machine, or a host reached with the system's ssh and scp.

Both targets stage the same things (runner.WORKER_FILES: worker.py and the two modules it imports,
request.json, the task's file) and run
`python worker.py request.json`; runner.stream reads the events either way. The SSH target passes
argument lists to ssh/scp and quotes every word of the one remote command line with shlex.quote,
so no file name or setting can reach a shell unquoted.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from argus.agent.profile.runner import WORKER_FILES, ProfileError, ProgressFn, WorkerRun, stream
from argus.agent.profile.worker_schema import WorkerRequest

_HOST = re.compile(r"^[A-Za-z0-9_.:%\[\]-]+$")
_USER = re.compile(r"^[A-Za-z0-9_.-]+$")
_REMOTE_DIR = re.compile(r"^/[A-Za-z0-9_./-]*argus-profile\.[A-Za-z0-9]+$")


@dataclass(frozen=True)
class SshTarget:
    """ssh://[user@]host[:port], plus options passed through to ssh and scp."""

    host: str
    user: str | None = None
    port: int | None = None
    config: str | None = None  # ssh -F
    identity: str | None = None  # ssh -i
    options: tuple[str, ...] = field(default=())  # each becomes "-o OPTION"
    connect_timeout: int = 10

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def common(self, port_flag: str) -> list[str]:
        args = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={self.connect_timeout}"]
        if self.config:
            args += ["-F", self.config]
        if self.identity:
            args += ["-i", self.identity]
        if self.port:
            args += [port_flag, str(self.port)]
        for opt in self.options:
            args += ["-o", opt]
        return args

    def ssh(self, remote_command: str) -> list[str]:
        return ["ssh", *self.common("-p"), "--", self.destination, remote_command]

    def __str__(self) -> str:
        return f"ssh://{self.destination}" + (f":{self.port}" if self.port else "")


def parse_target(text: str, **ssh_settings) -> SshTarget | None:
    """None for "local"; an SshTarget for ssh://[user@]host[:port]. Rejects anything ssh could
    read as an option (a host starting with "-") or that is not a plain host name."""
    if text in ("", "local"):
        return None
    if not text.startswith("ssh://"):
        raise ProfileError(f"unknown target {text!r}: use local or ssh://[user@]host[:port]")
    rest = text.removeprefix("ssh://").rstrip("/")
    user, _, hostport = rest.rpartition("@")
    host, port = hostport, None
    if m := re.fullmatch(r"(\[[^\]]+\]|[^:]+):(\d+)", hostport):
        host, port = m.group(1), int(m.group(2))
    host = host.strip("[]")
    if not host or host.startswith("-") or not _HOST.match(host):
        raise ProfileError(f"bad host in target {text!r}")
    if user and (user.startswith("-") or not _USER.match(user)):
        raise ProfileError(f"bad user in target {text!r}")
    return SshTarget(host=host, user=user or None, port=port, **ssh_settings)


def _stage(request: WorkerRequest, task_file: Path, directory: Path, remote: bool) -> list[Path]:
    """Write the worker, its schema, request.json and (remote only) the task file; return them."""
    staged = []
    for source in WORKER_FILES:
        shutil.copy(source, directory / source.name)
        staged.append(directory / source.name)
    if remote:
        shutil.copy(task_file, directory / "task.py")
        staged.append(directory / "task.py")
        request = dataclasses.replace(request, file="task.py")
    else:
        request = dataclasses.replace(request, file=str(task_file.resolve()))
    (directory / "request.json").write_text(json.dumps(request.to_dict()))
    return [*staged, directory / "request.json"]


def run_local(
    request: WorkerRequest,
    task_file: Path,
    *,
    python: str | None,
    timeout: float,
    progress: ProgressFn | None,
    cancel: threading.Event | None,
) -> WorkerRun:
    """The worker in a subprocess on this machine (its own session, killed as a group on timeout)."""
    with tempfile.TemporaryDirectory(prefix="argus-profile.") as tmp:
        _stage(request, task_file, Path(tmp), remote=False)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("TRITON_INTERPRET", None)  # the worker decides, from the device it finds
        argv = [python or sys.executable, str(Path(tmp) / "worker.py"), str(Path(tmp) / "request.json")]
        try:
            return stream(argv, timeout=timeout, progress=progress, cancel=cancel, cwd=tmp, env=env)
        except FileNotFoundError:
            raise ProfileError(f"python interpreter not found: {argv[0]}") from None


def run_ssh(
    target: SshTarget,
    request: WorkerRequest,
    task_file: Path,
    *,
    python: str | None,
    timeout: float,
    progress: ProgressFn | None,
    cancel: threading.Event | None,
) -> WorkerRun:
    """Copy worker, request and task to a fresh remote directory, run, stream back, clean up.

    The remote worker runs under `setsid` (its own process group, id saved in `pid`) and under
    `timeout`, so it dies even if this connection drops; on a local timeout or cancel the group
    is killed over a second connection. The remote directory is removed in every case.
    """
    if progress:
        progress("connect", 0, 0)
    made = _ssh_run(target, "mktemp -d /tmp/argus-profile.XXXXXXXX", timeout=60)
    remote_dir = made.stdout.strip()
    if not _REMOTE_DIR.match(remote_dir):
        raise ProfileError(f"{target}: unexpected reply from mktemp: {remote_dir[:200]!r}")
    qdir = shlex.quote(remote_dir)
    try:
        with tempfile.TemporaryDirectory(prefix="argus-stage.") as tmp:
            files = [str(p) for p in _stage(request, task_file, Path(tmp), remote=True)]
            if progress:
                progress("copy", 0, 0)
            scp = ["scp", "-q", *target.common("-P"), *files, f"{target.destination}:{remote_dir}/"]
            copied = subprocess.run(
                scp, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
            )
            if copied.returncode != 0:
                raise ProfileError(f"{target}: copying the task failed: {_last(copied.stderr)}")
        py = shlex.quote(python or "python3")
        limit = max(1, int(timeout)) + 5
        remote = (
            f"cd {qdir} || exit 97; PYTHONUNBUFFERED=1 setsid timeout -k 5 {limit} {py} worker.py request.json"
            f" </dev/null & echo $! > pid; wait $!"
        )

        def stop_remote() -> None:
            kill = (
                f'p=$(cat {qdir}/pid 2>/dev/null) && [ -n "$p" ] && '
                f"{{ kill -TERM -- -$p 2>/dev/null; sleep 2; kill -KILL -- -$p 2>/dev/null; }}; true"
            )
            _ssh_run(target, kill, timeout=30, check=False)

        run = stream(
            target.ssh(remote), timeout=timeout, progress=progress, cancel=cancel, on_stop=stop_remote
        )
        if run.result is None and run.error is None and not (run.timed_out or run.cancelled):
            if run.returncode == 255:
                raise ProfileError(f"{target}: connection lost: {_last(run.stderr_tail)}")
            if run.returncode == 127 or "not found" in run.stderr_tail:
                raise ProfileError(
                    f"{target}: {python or 'python3'} not found on the host (use --python): "
                    f"{_last(run.stderr_tail)}"
                )
        return run
    finally:
        _ssh_run(target, f"rm -rf -- {qdir}", timeout=30, check=False)


def _ssh_run(
    target: SshTarget, command: str, *, timeout: float, check: bool = True
) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(
            target.ssh(command), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise ProfileError("the ssh client is not installed (apt-get install openssh-client)") from None
    except subprocess.TimeoutExpired:
        if not check:
            return subprocess.CompletedProcess([], 124, "", "")
        raise ProfileError(f"{target}: no answer in {timeout:.0f} s") from None
    if check and proc.returncode == 255:
        raise ProfileError(f"cannot reach {target}: {_last(proc.stderr)}")
    if check and proc.returncode != 0:
        raise ProfileError(f"{target}: `{command}` failed: {_last(proc.stderr)}")
    return proc


def _last(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "(no message)"
