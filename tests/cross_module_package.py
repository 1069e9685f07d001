"""The small package the cross-module tests share (analyzers, CLI and language server): a helper
module (`ext.py`), a kernel module importing from it two ways (`from pkg import ext as tle` and a
relative `from ..ext import load_row`), and a launcher module. One text for all three suites, so
a change to how packages are resolved is tested on the same code everywhere.

`nested` puts kernels and launcher in `pkg/sub/` (relative import `..ext`), flat puts them in
`pkg/` (`.ext`). `seeded` makes `load_row` read one element past the end (an MB001 inside the
helper, reported at the kernel's call)."""

from __future__ import annotations

from pathlib import Path

EXT = """import triton
import triton.language as tl


@triton.jit
def program_id(axis: int):
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def load_row(ptr, offs, n):
    return tl.load(ptr + offs, mask=offs < n)
"""

EXT_SEEDED = EXT.replace(
    "tl.load(ptr + offs, mask=offs < n)", "tl.load(ptr + offs + 1, mask=offs < n)  # seeded: reads one past the end"
)

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

KERNEL_CALL_LINE = 11  # 0-based line of `x = load_row(x_ptr, offs, n)` in KERNELS

OPS = """import torch
import triton

from .kernels import copy_kernel


def copy(x):
    y = torch.empty_like(x)
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
"""


def package_files(nested: bool = True, seeded: bool = False) -> dict[str, str]:
    """The package's files by path relative to its root folder."""
    inner = "pkg/sub/" if nested else "pkg/"
    kernels = KERNELS if nested else KERNELS.replace("from ..ext", "from .ext")
    files = {"pkg/__init__.py": "", "pkg/ext.py": EXT_SEEDED if seeded else EXT}
    if nested:
        files["pkg/sub/__init__.py"] = ""
    files[inner + "kernels.py"] = kernels
    files[inner + "ops.py"] = OPS
    return files


def write_package(root: Path, nested: bool = True, seeded: bool = False) -> None:
    """Write the package under `root` (a tmp_path)."""
    for rel, text in package_files(nested, seeded).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
