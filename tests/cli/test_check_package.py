"""`argus check` reads the other modules of a checked file's package (a real CLI subprocess on a
package written to tmp_path): helpers imported from them are inlined, a launch made in one of
them binds the kernel and is named, `--single-file` checks each file alone, and files that are
not regular files (a FIFO named `x.py`) are never opened."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

EXT = """import triton
import triton.language as tl


@triton.jit
def program_id(axis: int):
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def load_row(ptr, offs, n):
    return tl.load(ptr + offs + 1, mask=offs < n)  # seeded: reads one past the end
"""

KERNELS = """import triton
import triton.language as tl

from pkg import ext as tle
from ..ext import load_row


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tle.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = load_row(x_ptr, offs, n)
    tl.store(y_ptr + offs, x, mask=offs < n)
"""

OPS = """import torch
import triton

from .kernels import copy_kernel


def copy(x):
    y = torch.empty_like(x)
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
"""


def write_package(root: Path) -> None:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "__init__.py").write_text("")
    (root / "pkg" / "ext.py").write_text(EXT)
    (root / "pkg" / "sub" / "kernels.py").write_text(KERNELS)
    (root / "pkg" / "sub" / "ops.py").write_text(OPS)


def test_helpers_and_launch_from_the_package(tmp_path: Path, argus) -> None:
    write_package(tmp_path)
    res = argus("check", "pkg/sub/kernels.py", "-v")
    assert res.rc == 1, res
    assert "pkg/sub/kernels.py:12:9: MB001" in res.out, res
    assert "inside `load_row` at pkg/ext.py:11" in res.out, res
    assert "launch=bound from the launch at pkg/sub/ops.py:10" in res.out, res
    assert "AR001 [info] not-analyzed in copy_kernel" not in res.out, res


def test_single_file_checks_each_file_alone(tmp_path: Path, argus) -> None:
    write_package(tmp_path)
    res = argus("check", "--single-file", "pkg/sub/kernels.py")
    assert "AR001 [info] not-analyzed in copy_kernel: the name `tle`" in res.out, res
    assert "MB001" not in res.out, res


def test_a_script_folder_without_init(tmp_path: Path, argus) -> None:
    (tmp_path / "helpers.py").write_text(EXT)
    (tmp_path / "main.py").write_text(
        KERNELS.replace("from pkg import ext as tle\n", "import helpers as tle\n").replace(
            "from ..ext import load_row", "from helpers import load_row"
        )
        + OPS[OPS.index("\n\ndef copy") :].replace("import torch", "")
    )
    res = argus("check", "main.py")
    assert "main.py:12:9: MB001" in res.out, res
    assert "inside `load_row` at helpers.py:11" in res.out, res


@pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="needs FIFOs")
def test_a_fifo_in_the_package_is_not_read(tmp_path: Path, argus) -> None:
    write_package(tmp_path)
    os.mkfifo(tmp_path / "pkg" / "sub" / "pipe.py")  # would block a plain open() for ever
    res = argus("check", "pkg/sub/kernels.py")
    assert "pkg/sub/kernels.py:12:9: MB001" in res.out, res
