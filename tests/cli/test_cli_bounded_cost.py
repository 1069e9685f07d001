"""`argus check` on odd but legal input (issue 12 item 4): a FIFO named `x.py`, a tile over
Triton's cap, huge constants, a kernel past its time budget, a file of many kernels. Each run
ends with AR001 or a clear message; the subprocess timeout only guards the test run itself.

The odd files are tests/fixtures/bounded/ (see its README.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import GOOD_KERNEL, REPO

from argus_lsp.cli_progress import KERNEL_STEP

FIXTURES = REPO / "tests" / "fixtures" / "bounded"
fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


def place(folder: Path, name: str, fixture: str | None = None, text: str | None = None) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else (FIXTURES / f"{fixture}.py.txt").read_text())
    return path


@fifo_only
def test_a_fifo_named_on_the_command_line_is_skipped_with_a_message(argus, tmp_path):
    os.mkfifo(tmp_path / "x.py")  # no writer: opening it for reading the usual way blocks
    place(tmp_path, "fill.py", text=GOOD_KERNEL)
    r = argus("check", "x.py", "fill.py")
    assert r.rc == 2, r
    assert "skipping x.py: a FIFO, not a regular file (argus reads regular files only)" in r.err
    assert "All checks passed: 1 kernel in 1 file." in r.out


@fifo_only
def test_a_fifo_met_in_a_walked_folder_is_skipped_and_the_rest_checked(argus, tmp_path):
    place(tmp_path, "pkg/bug.py", "unmasked")
    os.mkfifo(tmp_path / "pkg" / "x.py")
    r = argus("check", "pkg")
    assert r.rc == 2, r
    assert f"skipping {os.path.join('pkg', 'x.py')}: a FIFO" in r.err
    assert "MB002" in r.out


def test_a_grid_of_two_to_the_31_programs_is_checked(argus, tmp_path):
    place(tmp_path, "grid.py", "grid")
    r = argus("check", "grid.py")
    assert r.rc == 0, r
    assert "1 kernel in 1 file" in r.out


def test_a_tile_over_tritons_cap_is_ar001_budget_exceeded(argus, tmp_path):
    place(tmp_path, "tile.py", "tile")
    r = argus("check", "tile.py")
    assert r.rc == 0, r  # AR001 is info: it never fails the gate
    assert "AR001" in r.out and "budget exceeded: a tile of 16384 x 16384" in r.out


@pytest.mark.parametrize("name", ["const_pow", "const_str"])
def test_a_huge_module_constant_does_not_stop_the_check(argus, tmp_path, name):
    place(tmp_path, "c.py", name)
    r = argus("check", "c.py")
    assert r.rc == 0, r
    assert "All checks passed: 1 kernel in 1 file." in r.out


def test_the_kernel_timeout_flag_gives_ar001_and_the_other_files_are_checked(argus, tmp_path):
    place(tmp_path, "nested.py", "nested")
    place(tmp_path, "bug.py", "unmasked")
    r = argus("check", "nested.py", "bug.py", "--kernel-timeout", "0.3")
    assert r.rc == 1, r
    assert "budget exceeded: this kernel past 0.3 s of analysis" in r.out
    assert "MB002" in r.out


def test_the_kernel_timeout_setting_of_the_project_applies(argus, tmp_path):
    place(tmp_path, "nested.py", "nested")
    (tmp_path / "pyproject.toml").write_text("[tool.argus]\nkernel-timeout = 0.25\n")
    r = argus("check", "nested.py")
    assert "budget exceeded: this kernel past 0.25 s of analysis" in r.out, r


@pytest.mark.parametrize("value", ["0", "-1", "inf"])
def test_a_bad_kernel_timeout_flag_is_a_usage_error(argus, tmp_path, value):
    place(tmp_path, "fill.py", text=GOOD_KERNEL)
    r = argus("check", "fill.py", f"--kernel-timeout={value}")
    assert r.rc == 2 and "--kernel-timeout must be a number of seconds > 0" in r.err, r


def test_a_bad_kernel_timeout_in_the_project_is_a_usage_error(argus, tmp_path):
    place(tmp_path, "fill.py", text=GOOD_KERNEL)
    (tmp_path / "pyproject.toml").write_text('[tool.argus]\nkernel-timeout = "soon"\n')
    r = argus("check", "fill.py")
    assert r.rc == 2 and "kernel-timeout) must be a number of seconds > 0, got 'soon'" in r.err, r


def many_kernels(n: int) -> str:
    body = GOOD_KERNEL.partition("@triton.jit")[2]
    head = "import triton\nimport triton.language as tl\n"
    return head + "".join(
        f"\n\n@triton.jit{body.replace('fill_kernel', f'fill{i}_kernel')}" for i in range(n)
    )


def test_progress_lines_go_to_stderr_per_file_and_inside_a_long_file(argus, tmp_path):
    place(tmp_path, "many.py", text=many_kernels(KERNEL_STEP + 1))
    place(tmp_path, "bug.py", "unmasked")
    r = argus("check", "many.py", "bug.py", "--progress")
    assert r.err.splitlines() == [
        f"argus: many.py: {KERNEL_STEP}/{KERNEL_STEP + 1} kernels",
        f"argus: [1/2] many.py: {KERNEL_STEP + 1} kernels",
        "argus: [2/2] bug.py: 1 kernel",
    ], r
    quiet = argus("check", "bug.py")  # not a terminal, no --progress: no progress lines
    assert quiet.err == "", quiet


@pytest.mark.parametrize("flags", [[], ["-v"]])
def test_streamed_output_is_what_the_whole_report_prints(argus, tmp_path, flags):
    place(tmp_path, "a.py", "unmasked")
    place(tmp_path, "b.py", "tile")
    streamed = argus("check", "a.py", "b.py", *flags)
    argus("check", "a.py", "b.py", *flags, "--output", "report.txt")
    assert streamed.out == (tmp_path / "report.txt").read_text()
    assert streamed.out.index("MB002") < streamed.out.index("AR001")


def test_a_files_findings_are_printed_before_the_next_file_is_done(tmp_path):
    place(tmp_path, "a.py", "unmasked")
    place(tmp_path, "b.py", "nested")  # takes its whole budget of 20 s
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "argus_lsp", "check", "a.py", "b.py", "--kernel-timeout", "20"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        still_running = proc.poll() is None
        assert "MB002" in first and still_running, first
    finally:
        proc.kill()
        proc.wait(timeout=60)


def test_the_editor_and_project_kernel_timeout_settings() -> None:
    from argus_lsp.settings import Settings, editor_over, from_project

    project, problems = from_project({"kernel-timeout": 3}, "pyproject.toml")
    assert project.kernel_timeout == 3.0 and problems == []
    over, problems = editor_over(project, {"argus": {"kernelTimeout": 1.5}})
    assert over.kernel_timeout == 1.5 and problems == []
    kept, problems = editor_over(project, {"argus": {"kernelTimeout": None}})  # unset: the project's
    assert kept.kernel_timeout == 3.0 and problems == []
    bad, problems = editor_over(Settings(), {"argus": {"kernelTimeout": True}})
    assert bad.kernel_timeout is None
    assert problems == ["argus.kernelTimeout must be a number of seconds > 0, got True"]
