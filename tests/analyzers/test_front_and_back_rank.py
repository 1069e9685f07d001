"""`x.shape[1]` and `x.shape[-1]` with the shape never written out: the rank is only bounded
below (model/launcher_reads.py, fgprec6). Counting them as two dimensions gave flag-gems'
`per_token_group_quant_fp8` a 3-D `x` its 2-D kernel reads past; bounds on `x` are now not
judged as errors, while a tensor whose shape is written out keeps its rank and its bounds."""

from __future__ import annotations

import ast

from argus.analyzers import Severity, check_source
from argus.analyzers.model.launcher_reads import tensor_param_ranks

_QUANT = """
import torch
import triton
import triton.language as tl


@triton.jit
def group_quant_kernel(y_ptr, q_ptr, group_size, n_cols, row_stride, M, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    groups_per_row = n_cols // group_size
    row = g // groups_per_row
    col = g % groups_per_row
    cols = tl.arange(0, BLOCK)
    mask = cols < group_size
    y = tl.load(y_ptr + row * row_stride + col * group_size + cols, mask=mask, other=0.0)
    tl.store(q_ptr + g * group_size + cols, y / tl.max(tl.abs(y)), mask=mask)


def group_quant(x, group_size):
    assert x.shape[-1] % group_size == 0
    {unpack}
    q = torch.empty((x.numel(),), device=x.device, dtype=x.dtype)
    M = x.numel() // group_size
    group_quant_kernel[(M,)](x, q, group_size, x.shape[1], x.stride(0), M, BLOCK=triton.next_power_of_2(group_size))
    return q
"""


def _errors(unpack: str) -> list[str]:
    text = _QUANT.format(unpack=unpack)
    return [f.code for f in check_source(text, "t.py") if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def test_front_and_back_indices_alone_leave_the_rank_unknown() -> None:
    func = next(n for n in ast.walk(ast.parse(_QUANT.format(unpack="pass"))) if isinstance(n, ast.FunctionDef) and n.name == "group_quant")
    at_least: set[str] = set()
    tensor_param_ranks(func, set(), at_least)
    assert "x" in at_least


def test_the_2d_kernel_is_not_read_past_a_guessed_third_dimension() -> None:
    assert _errors("pass") == []


def test_a_written_out_shape_keeps_its_rank() -> None:
    func = next(n for n in ast.walk(ast.parse(_QUANT.format(unpack="R, C = x.shape"))) if isinstance(n, ast.FunctionDef) and n.name == "group_quant")
    at_least: set[str] = set()
    assert tensor_param_ranks(func, set(), at_least)["x"] == 2
    assert "x" not in at_least
