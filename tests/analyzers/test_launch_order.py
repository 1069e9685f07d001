"""A kernel's launch sites come in the file's order, so the first one binds it in every process.

flag-gems' `experimental_ops/diag.py` launches `_diag_extract_kernel` in `diag` and again in
`diag_out`; the launchers were listed as tree-sitter's query produced its captures, which in
some processes put `diag_out` first. The kernel was then bound from `diag_out` there and from
`diag` elsewhere, and its AR001 came and went with what else the process had checked. Both the
query's answer and the launcher list are now sorted by position.
"""

from __future__ import annotations

from argus.analyzers.frontend.parse import parser
from argus.analyzers.frontend.queries import launch_calls
from argus.analyzers.module_view import build_module_view

MODULE = b'''
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def first(x):
    y = torch.empty_like(x)
    with torch.cuda.device(x.device):
        if x.numel() > 0:
            copy_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
    return y


def second(x, out):
    if out.numel() != x.numel():
        raise RuntimeError("size")
    if x.numel() > 0:
        grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
        copy_kernel[grid](x, out, x.numel(), BLOCK=64)
    return out


def third(x):
    fn = copy_kernel[(1,)]
    fn(x, x, x.numel(), BLOCK=32)
'''


def test_launch_calls_are_in_the_files_order() -> None:
    tree = parser().parse(MODULE)
    rows = [call.start_point[0] for _name, call in launch_calls(tree.root_node)]
    assert rows == sorted(rows) and len(rows) == 2


def test_a_kernels_launch_sites_are_in_the_files_order() -> None:
    tree = parser().parse(MODULE)
    view = build_module_view(MODULE, tree)
    owners = [site.host_func.name for site in view.launch_sites("copy_kernel") if site.host_func]
    assert owners == ["first", "second", "third"], owners
