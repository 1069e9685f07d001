"""The SSH runner against a real sshd on localhost (the fixture of tests/profile/test_ssh.py): the
candidate's worker runs in a remote directory that is removed afterwards, under the interpreter."""

from __future__ import annotations

import glob
import shutil
import sys
from pathlib import Path

import pytest
from argus.agent.optimize.api import Evaluator
from argus.agent.optimize.rewrites import RewriteContext, proposals
from argus.agent.optimize.types import Candidate, OptimizeError, OptimizeRequest
from argus.agent.task import load_task

from tests.profile.test_ssh import pytestmark as ssh_marks
from tests.profile.test_ssh import sshd  # noqa: F401 (the fixture)

pytestmark = ssh_marks
ROOT = Path(__file__).resolve().parents[2]


def test_gates_run_over_ssh_and_leave_nothing_behind(tmp_path: Path, sshd) -> None:  # noqa: F811
    for name in ("naive_matmul.py", "naive_matmul.py.argus.toml"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    side = tmp_path / "naive_matmul.py.argus.toml"
    side.write_text(side.read_text().replace('reference = "reference"', f'reference = "reference"\npython = "{sys.executable}"'))
    target = f"{tmp_path}/naive_matmul.py::matmul_kernel"
    task = load_task(target)
    source = task.path.read_text()
    request = OptimizeRequest(target=target, backend="cpu", runner="ssh://argus-test", timeout_s=300,
                              ssh={"config": sshd["config"]})
    before = set(glob.glob("/tmp/argus-opt.*"))
    ev = Evaluator(task, source, request)
    baseline = ev.measure_baseline()
    assert baseline["correct"] and baseline["device"] == "CPU (Triton interpreter)"
    p = next(proposals(RewriteContext(source, task.kernel, task.launcher, "gemm", False), ("expert",)))
    attempt = ev.evaluate([Candidate("s", p.source, "knowledge:expert", uses=list(p.uses))], seed=2)[0]
    assert attempt.verified, attempt.summary()
    assert attempt.gates[1].details["runner"] == "ssh ssh://argus-test"
    assert set(glob.glob("/tmp/argus-opt.*")) == before  # remote directories removed


def test_bad_ssh_targets_are_configuration_errors() -> None:
    with pytest.raises(OptimizeError):
        from argus.agent.optimize.runners_ssh import SshRunner

        SshRunner("ssh://-oProxyCommand=x", 10)
