"""A size made of a tensor's unnamed dimensions bounds that tensor only (model/binder_values.py,
falsefix). fla's cyfa reduce kernel walks `partials` (S, H, C, M) in rows of `SIZE =
dtable.numel()`, `dtable = torch.empty_like(readout_table)` of a `readout_table` the launcher
never unpacks: the probe chose its numel freely, unrelated to `partials`' H * C * M, and the
kernel was said to read past `partials` (a false MB001). The code does not tie the two, so no
bound of `partials` rests on it; the output measured by its own numel is still judged."""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_REDUCE = """
import torch
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(partials, output, S, SIZE: tl.constexpr, BLOCK: tl.constexpr):
    o_x = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    o_s = tl.arange(0, 64)
    x = tl.load(partials + o_s[:, None] * SIZE + o_x[None, :], mask=(o_s[:, None] < S) & (o_x[None, :] < SIZE), other=0.0)
    tl.store(output + o_x, tl.sum(x, axis=0), mask=o_x < SIZE{bug})


def table_grad(left, right, table):
    heads = left.shape[-2]
    slots = left.shape[-1]
    cols = right.shape[-1]
    splits = 4
    partials = torch.empty((splits, heads, slots, cols), device=table.device, dtype=torch.float32)
    out = torch.empty_like(table, dtype=torch.float32)
    partial_sum_kernel[(triton.cdiv(out.numel(), 128),)](partials, out, S=splits, SIZE=out.numel(), BLOCK=128)
    return out
"""


def _errors(bug: str = "") -> list[str]:
    found = check_source(_REDUCE.format(bug=bug), "t.py")
    return [f.code for f in found if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def test_rows_of_another_tensors_numel_are_no_bound_of_partials() -> None:
    assert _errors() == []


def test_the_tensor_the_size_measures_is_still_judged() -> None:
    assert "MB002" in _errors(bug=" + 1")
