"""`N = x.shape[0]` alone counts a tensor's rows, not its dimensions (model/launcher_reads.py,
falsefix). Taking such a tensor as 1-D gave fla's `compute_dh0_kernel` (a `dh0 =
torch.zeros_like(initial_state)` of an (N, D, W) state), the Ascend layernorm's `x` (T, D) and
flag-gems' Ascend `fused_qkvzba` input false MB001/MB002 errors: the kernel reads rows of D
elements of a tensor the probe made N elements long. Bounds on such a tensor are now not
judged as errors; a written-out shape or a `numel()` read keeps them judged."""

from __future__ import annotations

import ast

from argus.analyzers import Severity, check_source
from argus.analyzers.model.launcher_reads import tensor_param_ranks

_ROWS = """
import torch
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(x, y, D: tl.constexpr, BD: tl.constexpr):
    i_t = tl.program_id(0)
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x + i_t * D + o_d{bug}, mask=m_d, other=0.0)
    tl.store(y + i_t * D + o_d, b_x * 2, mask=m_d)


def row_scale(x, D):
    {measure}
    y = torch.empty_like(x)
    row_scale_kernel[(T,)](x, y, D=D, BD=triton.next_power_of_2(D))
    return y
"""


def _errors(measure: str, bug: str = "") -> list[str]:
    text = _ROWS.format(measure=measure, bug=bug)
    return [f.code for f in check_source(text, "t.py") if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _func(measure: str) -> ast.FunctionDef:
    tree = ast.parse(_ROWS.format(measure=measure, bug=""))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "row_scale")


def test_the_first_dimension_alone_bounds_the_rank_below() -> None:
    at_least: set[str] = set()
    tensor_param_ranks(_func("T = x.shape[0]"), set(), at_least)
    assert "x" in at_least


def test_rows_of_a_tensor_read_only_as_shape_0_are_not_read_past() -> None:
    assert _errors("T = x.shape[0]") == []


def test_a_written_out_shape_keeps_its_bounds_judged() -> None:
    assert _errors("T, D = x.shape") == []
    assert "MB001" in _errors("T, D = x.shape", bug=" + D")


def test_a_numel_read_keeps_the_extent() -> None:
    at_least: set[str] = set()
    tensor_param_ranks(_func("T = x.shape[0]; n = x.numel()"), set(), at_least)
    assert "x" not in at_least
