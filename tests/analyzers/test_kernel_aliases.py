"""Kernels launched under another name are bound from that launch (model/kernel_aliases.py,
fgprec6): a module-level handle (`k2 = k1`, flag-gems' generated in-place ops), a local
`fn = kernel[grid]` called as `fn(...)`, a name picked in an `if BT == 16:` chain, a dict of
kernels. A seeded size bug only the launch shows is found through each; the correct
launchers stay clean."""

from __future__ import annotations

import pytest
from argus.analyzers import Severity, check_source
from argus.analyzers.frontend.parse import parse
from argus.analyzers.module_view import build_module_view

_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)

"""

_LAUNCHERS = {
    "module handle": """
double_handle = double_kernel


def double(x):
    n = x.numel()
    y = torch.empty({size}, device=x.device, dtype=x.dtype)
    double_handle[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
""",
    "bound grid": """
def double(x):
    n = x.numel()
    y = torch.empty({size}, device=x.device, dtype=x.dtype)
    launch = double_kernel[(triton.cdiv(n, 128),)]
    launch(x, y, n, BLOCK=128)
    return y
""",
    "table": """
def double(x, mode="plain"):
    n = x.numel()
    y = torch.empty({size}, device=x.device, dtype=x.dtype)
    kernels = {{"plain": double_kernel}}
    kernels[mode][(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
""",
}


def _errors(text: str) -> list[tuple[str, int]]:
    return [
        (f.code, f.line)
        for f in check_source(text, "t.py")
        if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"
    ]


@pytest.mark.parametrize("form", sorted(_LAUNCHERS))
def test_a_launch_under_another_name_is_the_kernels_launch(form: str) -> None:
    text = _KERNEL + _LAUNCHERS[form].format(size="n")
    src = text.encode()
    view = build_module_view(src, parse(src))
    sites = view.launch_sites("double_kernel")
    assert len(sites) == 1 and sites[0].host_func is not None and sites[0].host_func.name == "double"
    assert _errors(text) == []


@pytest.mark.parametrize("form", sorted(_LAUNCHERS))
def test_a_size_bug_only_the_aliased_launch_shows_is_found(form: str) -> None:
    """`y` holds half the elements the kernel writes: without the launch nothing says so."""
    text = _KERNEL + _LAUNCHERS[form].format(size="n // 2")
    store = next(i for i, line in enumerate(text.splitlines(), 1) if "tl.store" in line)
    assert ("MB002", store) in _errors(text)


_BY_SIZE = """
import torch
import triton
import triton.language as tl


@triton.jit
def tile16_kernel(a_ptr, o_ptr, BT: tl.constexpr):
    r = tl.arange(0, 16)
    base = tl.program_id(0) * 256
    tl.store(o_ptr + base + r[:, None] * 16 + r[None, :], tl.load(a_ptr + base + r[:, None] * 16 + r[None, :]))


@triton.jit
def tile32_kernel(a_ptr, o_ptr, BT: tl.constexpr):
    r = tl.arange(0, 32)
    base = tl.program_id(0) * 1024
    tl.store(o_ptr + base + r[:, None] * 32 + r[None, :], tl.load(a_ptr + base + r[:, None] * 32 + r[None, :]))


def invert(a):
    NT, BT, _ = a.shape
    assert a.shape[2] == BT
    o = torch.empty_like(a)
    if BT == 16:
        merge_fn = tile16_kernel
    elif BT == 32:
        merge_fn = tile32_kernel
    merge_fn[(NT,)](a, o, BT=BT)
    return o
"""


def test_a_kernel_picked_in_an_if_chain_is_probed_where_its_branch_is_taken() -> None:
    """`tile16_kernel` runs only where `BT == 16`: a probe at BT = 32 would read its 16x16
    tiles at the wrong base and report a bound it never crosses."""
    src = _BY_SIZE.encode()
    view = build_module_view(src, parse(src))
    assert [s.host_func.name for s in view.launch_sites("tile16_kernel") if s.host_func] == ["invert"]
    assert [s.host_func.name for s in view.launch_sites("tile32_kernel") if s.host_func] == ["invert"]
    assert _errors(_BY_SIZE) == []


def test_a_kernel_picked_by_a_conditional_expression_is_probed_where_its_test_holds() -> None:
    """`fn = tile16_kernel if BT == 16 else tile32_kernel` (fla's solve_tril on Ascend). The
    `else` side says only BT != 16, so what tile32_kernel shows is not asserted here."""
    chain = "    if BT == 16:\n        merge_fn = tile16_kernel\n    elif BT == 32:\n        merge_fn = tile32_kernel\n"
    text = _BY_SIZE.replace(chain, "    merge_fn = tile16_kernel if BT == 16 else tile32_kernel\n")
    assert text != _BY_SIZE
    tile16_store = next(i for i, line in enumerate(text.splitlines(), 1) if "tl.arange(0, 16)" in line) + 2
    assert [e for e in _errors(text) if e[1] == tile16_store] == []


_BY_FLAG = """
import torch
import triton
import triton.language as tl


@triton.jit
def full_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def part_kernel(x_ptr, y_ptr, n, BC: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(1) * BC + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def run(x, use_full):
    n = x.numel()
    y = torch.empty_like(x)
    if use_full:
        fn = full_kernel
    else:
        fn = part_kernel
    if use_full:
        fn[(1,)](x, y, n, BLOCK=triton.next_power_of_2(n))
    else:
        launch_in_tiles(fn, x, y, n)
    return y
"""


def test_a_launch_on_the_other_side_of_the_same_test_is_not_the_aliass() -> None:
    """fla's Ascend `chunk_o`: `if use_full: fn = ..._full` ... `if use_full: fn[grid](...)`
    launches the full kernel only; the other kernel's launch goes through a helper."""
    src = _BY_FLAG.encode()
    view = build_module_view(src, parse(src))
    assert len(view.launch_sites("full_kernel")) == 1
    assert view.launch_sites("part_kernel") == []
