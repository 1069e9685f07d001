"""The SSH target against a real sshd on localhost (Debian's openssh-server, scripts/setup.d/40-sshd.sh).

The test starts `sshd -D` on a free port with a throwaway host key and client key in a temporary
directory, then profiles a CPU run of a small Triton kernel through the interpreter over it, and
checks the error paths: an unreachable port, a timeout that must kill the remote process group,
a cancel, and a file name that would be a shell injection if anything built a shell string from it.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from argus.agent.profile.api import ProfileCancelled, ProfileError, profile
from argus.agent.profile.cli import main as cli_main

from tests.profile.conftest import TASKS

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
pytestmark = [
    pytest.mark.skipif(not os.path.exists(SSHD), reason="openssh-server not installed (40-sshd.sh)"),
    pytest.mark.skipif(shutil.which("ssh") is None, reason="ssh client not installed"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("sshd")
    for key in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True)
    (d / "authorized_keys").write_text((d / "client_key.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    port = _free_port()
    (d / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\nPidFile {d / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPubkeyAuthentication yes\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nStrictModes no\nUsePAM no\n"
        "PermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\nLogLevel ERROR\n"
    )
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(d / "sshd_config"), "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    user = getpass.getuser()
    (d / "ssh_config").write_text(
        f"Host argus-test\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n"
        f"  IdentityFile {d / 'client_key'}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    for _ in range(100):
        if proc.poll() is not None:
            pytest.skip(f"sshd did not start: {proc.stderr.read().decode()[-300:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield {"config": str(d / "ssh_config"), "port": port, "user": user, "key": str(d / "client_key")}
    proc.terminate()
    proc.wait(timeout=10)


def _remote_leftovers() -> list[str]:
    """Remote worker processes or remote staging directories still on the (local) host. Only the
    remote kind holds task.py and runs `worker.py request.json` by relative paths: local runs of
    other tests on this machine, at the same time, stage neither."""
    left = [str(p) for p in Path("/tmp").glob("argus-profile.*") if p.is_dir() and (p / "task.py").exists()]
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "worker.py request.json" in cmd:
            left.append(cmd)
    return left


def test_profile_over_ssh_cpu_interpreter(sshd: dict, tpy: str) -> None:
    before = set(_remote_leftovers())
    result = profile(
        str(TASKS / "vadd.py") + "::add_kernel",
        target="ssh://argus-test",
        ssh_config=sshd["config"],
        python=tpy,
        timeout=240,
    )
    assert result.backend == "cpu" and result.device == "CPU (Triton interpreter)"
    assert result.target == "ssh://argus-test"
    assert result.rel_error == 0.0 and result.median_ms > 0
    assert "CPU interpreter, no peaks" in result.lens_text()
    assert any("Triton interpreter" in n for n in result.notes)
    assert set(_remote_leftovers()) <= before


def test_cli_over_ssh_with_port_user_and_key(sshd: dict, tpy: str, capsys) -> None:
    target = f"ssh://{sshd['user']}@127.0.0.1:{sshd['port']}"
    rc = cli_main(
        [
            str(TASKS / "vadd.py") + "::add_kernel",
            "--target",
            target,
            "--python",
            tpy,
            "-i",
            sshd["key"],
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "--json",
            "--shape",
            "N=3000",
            "--timeout",
            "240",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["sizes"] == {"N": 3000} and doc["bytes"] == 36000 and doc["target"] == target


def test_unreachable_port_is_a_clear_error() -> None:
    port = _free_port()  # nothing listens there
    with pytest.raises(ProfileError, match="cannot reach ssh://127.0.0.1"):
        profile(
            str(TASKS / "vadd.py") + "::add_kernel",
            target=f"ssh://127.0.0.1:{port}",
            timeout=30,
            ssh_options=["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null"],
        )


def test_missing_python_on_host(sshd: dict) -> None:
    with pytest.raises(ProfileError, match="not found on the host"):
        profile(
            str(TASKS / "vadd.py") + "::add_kernel",
            target="ssh://argus-test",
            ssh_config=sshd["config"],
            python="/nonexistent/python3",
            timeout=60,
        )


def test_timeout_kills_the_remote_process_group(sshd: dict, tpy: str) -> None:
    before = set(_remote_leftovers())
    t0 = time.monotonic()
    with pytest.raises(ProfileError, match="timed out after 20 s"):
        profile(
            str(TASKS / "vadd.py") + "::slow",
            target="ssh://argus-test",
            ssh_config=sshd["config"],
            python=tpy,
            timeout=20,
        )
    assert time.monotonic() - t0 < 60
    time.sleep(1)
    assert set(_remote_leftovers()) <= before, "the remote worker or its directory survived the timeout"


def test_cancel_stops_the_remote_worker(sshd: dict, tpy: str) -> None:
    before = set(_remote_leftovers())
    cancel = threading.Event()
    phases: list[str] = []

    def progress(phase: str, done: int, total: int) -> None:
        phases.append(phase)
        if phase == "compile":  # the worker is running remotely: cancel it
            cancel.set()

    with pytest.raises(ProfileCancelled):
        profile(
            str(TASKS / "vadd.py") + "::slow",
            target="ssh://argus-test",
            ssh_config=sshd["config"],
            python=tpy,
            timeout=120,
            progress=progress,
            cancel=cancel,
        )
    assert "connect" in phases and "compile" in phases
    time.sleep(1)
    assert set(_remote_leftovers()) <= before


def test_hostile_file_name_is_not_a_shell_injection(sshd: dict, tpy: str, tmp_path: Path) -> None:
    name = "a b;touch argus_pwned;$(touch argus_pwned).py"  # a shell would create argus_pwned
    weird = tmp_path / "dir with 'quotes'"
    weird.mkdir()
    shutil.copy(TASKS / "vadd.py", weird / name)
    shutil.copy(TASKS / "vadd.py.argus.toml", weird / (name + ".argus.toml"))
    result = profile(
        str(weird / name) + "::add_kernel",
        target="ssh://argus-test",
        ssh_config=sshd["config"],
        python=tpy,
        timeout=240,
    )
    assert result.rel_error == 0.0
    for place in (Path.home(), Path.cwd(), Path("/tmp"), weird):
        assert not (place / "argus_pwned").exists()
