"""Tasks: the sidecar spec and the KernelBench format, read without running the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from argus.agent.task import TaskError, evaluate, load_task, tasks_for_file

from tests.profile.conftest import TASKS


def test_sidecar_spec_resolves_shapes_and_formulas() -> None:
    task = load_task(f"{TASKS / 'gemm.py'}::matmul_kernel")
    assert (task.kind, task.launcher, task.reference) == ("spec", "matmul", "torch.matmul")
    req = task.request("M=128,N=256 K=64")
    assert req["inputs"][0]["shape"] == [128, 64] and req["inputs"][1]["shape"] == [64, 256]
    assert req["flops"] == 2 * 128 * 256 * 64
    assert req["bytes"] == 2 * (128 * 64 + 64 * 256 + 128 * 256)
    assert req["dtype"] == "bfloat16"
    assert task.request("small")["sizes"] == {"M": 256, "N": 256, "K": 256}
    assert task.line is not None  # where the lens goes


def test_several_tasks_need_a_kernel_name() -> None:
    assert [t.kernel for t in tasks_for_file(TASKS / "vadd.py")] == ["add_kernel", "slow"]
    with pytest.raises(TaskError, match="several tasks"):
        load_task(str(TASKS / "vadd.py"))
    with pytest.raises(TaskError, match="no task for kernel 'nope'"):
        load_task(f"{TASKS / 'vadd.py'}::nope")


def test_kernelbench_detected_from_syntax_only(tmp_path: Path) -> None:
    task = load_task(f"{TASKS / 'kb_matmul.py'}::ModelNew")
    assert (task.kind, task.launcher, task.reference) == ("kernelbench", "ModelNew", "Model")
    # a file that would have a side effect on import is never imported to find its task
    evil = tmp_path / "kb.py"
    evil.write_text(
        "open('SIDE_EFFECT', 'w')\nclass Model: ...\ndef get_inputs(): ...\ndef get_init_inputs(): ...\n"
    )
    assert load_task(str(evil)).kind == "kernelbench"
    assert not (tmp_path / "SIDE_EFFECT").exists() and not Path("SIDE_EFFECT").exists()


def test_no_task_and_bad_specs(tmp_path: Path) -> None:
    plain = tmp_path / "k.py"
    plain.write_text("x = 1\n")
    with pytest.raises(TaskError, match="no task"):
        load_task(str(plain))
    (tmp_path / "k.py.argus.toml").write_text(
        '[[task]]\nkernel = "k"\nlauncher = "run"\nflops = "__import__(1)"\n'
    )
    with pytest.raises(TaskError, match="may be called"):
        load_task(str(plain))
    (tmp_path / "k.py.argus.toml").write_text('[[task]]\nkernel = "k"\nlauncher = "run"\nflop = "1"\n')
    with pytest.raises(TaskError, match="unknown keys"):
        load_task(str(plain))
    (tmp_path / "k.py.argus.toml").write_text(
        '[[task]]\nkernel = "k"\nlauncher = "run"\ninputs = [{name = "x", shape = ["N"], dtype = "complex"}]\n'
    )
    with pytest.raises(TaskError, match="unknown dtype"):
        load_task(str(plain))


def test_formulas_are_arithmetic_only() -> None:
    assert evaluate("2*M*N*K", {"M": 2, "N": 3, "K": 4}) == 48
    assert evaluate("cdiv(N, 128) * max(M, 1) - -1", {"N": 129, "M": 3}) == 7
    with pytest.raises(TaskError, match="not set"):
        evaluate("M*Q", {"M": 1})
    for bad in ("__import__('os').system('x')", "M.real", "[M]", "open('f')"):
        with pytest.raises(TaskError):
            evaluate(bad, {"M": 1})


def test_shape_errors() -> None:
    task = load_task(f"{TASKS / 'gemm.py'}::matmul_kernel")
    with pytest.raises(TaskError, match="unknown shape set"):
        task.sizes("huge")
    with pytest.raises(TaskError, match="integer"):
        task.sizes("M=big")
