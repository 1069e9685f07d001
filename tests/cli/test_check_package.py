"""`argus check` reads the other modules of a checked file's package (a real CLI subprocess on a
package written to tmp_path): helpers imported from them are inlined, a launch made in one of
them binds the kernel and is named, `--single-file` checks each file alone, and files that are
not regular files (a FIFO named `x.py`) are never opened."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cross_module_package import EXT_SEEDED, KERNELS, OPS
from cross_module_package import write_package as _write


def write_package(root: Path) -> None:
    _write(root, nested=True, seeded=True)


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
    (tmp_path / "helpers.py").write_text(EXT_SEEDED)
    (tmp_path / "main.py").write_text(
        KERNELS.replace("from pkg import ext as tle\n", "import helpers as tle\n").replace(
            "from ..ext import load_row", "from helpers import load_row"
        )
        + "\nimport torch\n"  # the launcher's own import (after the kernel: its lines stay put)
        + OPS[OPS.index("\n\ndef copy") :]
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
