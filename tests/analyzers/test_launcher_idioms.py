"""Launchers as real code writes them (issue 12, item 2): arguments gathered before the launch
(`kernel[grid](*args, **consts)`), shapes spread into tuples (`T, D, G = *x.shape, groups`),
shape slices (`x.shape[:-1] + (k,)`), `x.new_empty(...)`, and `shape[i]` beside `shape[-1]` of
a tensor whose rank the launcher never writes out.

Each case is checked twice through `check_source`: the correct kernel binds (no AR001, no
error), and the same kernel with a seeded off-by-one mask is found, which it can only be when
the launch was bound (without a launch bounds are not judged in this shape)."""

from __future__ import annotations

import ast

import pytest
from argus.analyzers import Severity, check_source
from argus.analyzers.model.launcher_reads import tensor_param_ranks

_ROWS_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, stride_x, stride_y, D, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < {bound}
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x * 2.0, mask=mask)
{launcher}
"""

_SPREAD_LAUNCH = """

def double_rows(x):
    T, D, G = *x.shape, 1
    y = x.new_empty(x.shape)
    args = (x, y, x.stride(0), y.stride(0), D)
    consts = dict(BLOCK_D=triton.next_power_of_2(D))
    rows_kernel[(T * G,)](*args, **consts)
    return y
"""

_SLICE_LAUNCH = """

def double_rows(x):
    out_shape = x.shape[:-1] + (x.shape[-1],)
    y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    T, D = x.shape
    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK_D=triton.next_power_of_2(D))
    return y
"""

_OPTIONS_LAUNCH = """

def double_rows(x, **options):
    T, D = x.shape
    y = torch.empty_like(x)
    rows_kernel[(T,)](x, y, x.stride(0), y.stride(0), D, BLOCK_D=triton.next_power_of_2(D), **options)
    return y
"""


def _check(launcher: str, bound: str) -> list:
    return check_source(_ROWS_KERNEL.format(launcher=launcher, bound=bound), "rows.py")


def _errors(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


@pytest.mark.parametrize(
    "launcher", [_SPREAD_LAUNCH, _SLICE_LAUNCH, _OPTIONS_LAUNCH], ids=["spread", "slice", "options"]
)
def test_the_launch_is_bound_and_a_correct_kernel_is_clean(launcher: str) -> None:
    findings = _check(launcher, "D")
    assert [f.message for f in findings if f.code == "AR001"] == []
    assert _errors(findings) == []


@pytest.mark.parametrize(
    "launcher", [_SPREAD_LAUNCH, _SLICE_LAUNCH, _OPTIONS_LAUNCH], ids=["spread", "slice", "options"]
)
def test_an_off_by_one_mask_is_found_through_the_bound_launch(launcher: str) -> None:
    findings = _check(launcher, "D + 1")
    assert {f.code for f in _errors(findings)} & {"MB001", "MB002"}, [f.message for f in findings]


def test_unknown_options_that_could_hold_a_kernel_argument_leave_the_launch_unevaluable() -> None:
    launcher = _OPTIONS_LAUNCH.replace(", BLOCK_D=triton.next_power_of_2(D)", "")
    notes = [f.message for f in _check(launcher, "D") if f.code == "AR001"]
    assert any("**kwargs launch" in m for m in notes), notes


def test_a_spread_of_unknown_length_leaves_the_launch_unevaluable() -> None:
    launcher = _SPREAD_LAUNCH.replace("args = (x, y, x.stride(0), y.stride(0), D)", "args = make_args(x, y)")
    launcher = "\nfrom elsewhere import make_args  # (bound: a name bound nowhere is AR002)\n" + launcher
    notes = [f.message for f in _check(launcher, "D") if f.code == "AR001"]
    assert any("*args launch" in m for m in notes), notes


def _ranks(src: str) -> dict[str, int]:
    func = ast.parse(src).body[0]
    assert isinstance(func, ast.FunctionDef)
    return tensor_param_ranks(func)


def test_front_and_back_indices_of_an_unwritten_shape_are_different_dimensions() -> None:
    # B, T, H, K from the spread; v's rank is never written out: v.shape[2] and v.shape[-1]
    # are two dimensions (heads and head size), not one
    src = "def f(q, v):\n    B, T, H, K, V, HV = *q.shape, v.shape[-1], v.shape[2]\n"
    assert _ranks(src) == {"q": 4, "v": 4}


def test_a_written_out_shape_fixes_the_rank_of_negative_indices() -> None:
    src = "def f(x):\n    a, b, c = x.shape\n    d = x.shape[-1]\n    e = x.shape[2]\n"
    assert _ranks(src) == {"x": 3}


def test_a_tensor_whose_rank_the_launcher_never_gives_is_collected_as_unknown() -> None:
    # k's rank comes from the spread; v is read only as v.shape[-1], q's shape only passed on
    src = "def f(k, v, q):\n    B, T, H, K, V = *k.shape, v.shape[-1]\n    dq = q.new_empty(2, *q.shape)\n"
    func = ast.parse(src).body[0]
    assert isinstance(func, ast.FunctionDef)
    unknown: set[str] = set()
    ranks = tensor_param_ranks(func, unknown)
    assert ranks["k"] == 4
    assert unknown == {"v", "q"}


def test_a_shape_compared_with_a_known_one_is_not_unknown() -> None:
    src = "def f(q, k):\n    B, H, S, D = q.shape\n    assert k.shape == q.shape\n    o = k.new_empty(k.shape)\n"
    func = ast.parse(src).body[0]
    assert isinstance(func, ast.FunctionDef)
    unknown: set[str] = set()
    assert tensor_param_ranks(func, unknown) == {"q": 4, "k": 4}
    assert unknown == set()
