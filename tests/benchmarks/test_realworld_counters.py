"""The counters benchmark on a tiny fake package, run as a real subprocess (it wraps functions
of the checker in its own process, which must not leak into the test's): every probe kind it
reports ran programs and statements, and the phases it times took CPU. No figure is asserted
beyond what any run must show (a copy kernel runs a ragged probe with statements in it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def copy(x):
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out
"""


def _run(tmp_path: Path, *args: str) -> str:
    pkg = tmp_path / "src" / "fakepkg-1.0" / "fakepkg"
    pkg.mkdir(parents=True)
    for i in range(3):
        (pkg / f"k{i}.py").write_text(KERNEL)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "realworld_counters.py"), "--dir", str(tmp_path)]
    done = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_seeded_sample_is_counted_per_probe_kind_and_phase(tmp_path: Path) -> None:
    out = _run(tmp_path, "--packages", "fakepkg", "--files", "2")
    assert out.startswith("2 files, 2 kernels")
    ragged = re.search(r"^\s+ragged\s+(\d+)\s+(\d+)\s+(\d+)", out, re.M)
    assert ragged is not None, out
    probes, programs, stmts = map(int, ragged.groups())
    assert probes == 2 and programs >= probes and stmts >= 3 * programs  # 3 statements a program
    assert re.search(r"ProbeRun\._interpret\s+\d+\.\d+\s+\d+%\s+\d+", out)
    assert "restarted probe runs (Retype): 0" in out


def test_named_files_are_counted_and_a_file_outside_the_packages_is_refused(tmp_path: Path) -> None:
    out = _run(tmp_path, str(tmp_path / "src" / "fakepkg-1.0" / "fakepkg" / "k0.py"))
    assert out.startswith("1 files, 1 kernels")
    stray = tmp_path / "stray.py"
    stray.write_text(KERNEL)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "realworld_counters.py"),
        "--dir",
        str(tmp_path),
        str(stray),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode != 0 and "is not under a package root" in done.stderr
