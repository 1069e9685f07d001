"""Issue 12, rule 1, for tensors the launcher never unpacks (cause L1 of docs/realworld.md).

A tensor whose extents the launcher does not state (`rstd` handed over from a forward pass,
`dy` beside an unpacked `x`, `torch.empty_like(dy)`) has a stand-in shape in the probes:
nothing that depends on it (MB001/MB002 bounds, GR001 coverage, GR002 races) is judged, and
hover says so. What the code does state is still used: an unpacked shape, an assert relating
two shapes, `empty_like` of a sized tensor, a size passed to the kernel. Each case runs a
correct launcher (clean) and the same launcher with one seeded bug the stated facts expose.
"""

from __future__ import annotations

import pytest
from argus.analyzers import Severity, check_source, describe_at

_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows(dy, x, rstd, dx, s_dy, s_x, s_dx, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols {bound} n_cols
    g = tl.load(dy + row * s_dy + cols, mask=mask, other=0.0)
    v = tl.load(x + row * s_x + cols, mask=mask, other=0.0)
    r = tl.load(rstd + row)
    tl.store(dx + row * s_dx + cols, g * v * r, mask=mask)


def scale(dy, x, rstd):
{launcher}
    block = triton.next_power_of_2(n_cols)
    scale_rows[(n_rows,)](dy, x, rstd, dx, dy.stride(0), x.stride(0), dx.stride(0), n_cols, BLOCK=block)
    return dx
"""

UNSTATED = """    n_rows, n_cols = x.shape
    dx = torch.empty_like(dy)"""
LIKE_X = """    n_rows, n_cols = x.shape
    dx = torch.empty_like(x)"""
ASSERTED = """    n_rows, n_cols = x.shape
    assert dy.shape == x.shape
    dx = torch.empty_like(dy)"""


def _judged(launcher: str, bound: str = "<") -> list[tuple[str, int, str]]:
    findings = check_source(_KERNEL.format(launcher=launcher, bound=bound), "rows.py")
    return [
        (f.code, f.line, f.message)
        for f in findings
        if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"
    ]


@pytest.mark.parametrize("launcher", [UNSTATED, LIKE_X, ASSERTED], ids=["unstated", "like-x", "asserted"])
def test_the_correct_launch_is_clean(launcher: str) -> None:
    assert _judged(launcher) == []


def test_an_off_by_one_on_tensors_of_unstated_extent_is_not_judged() -> None:
    """`dy` and `dx = empty_like(dy)` have no stated extent: the lane past `n_cols` reaches
    them, but their bounds stand on a guess, so they are not judged (nor crash the run: the
    store goes past the stand-in buffer). `x`'s extent is stated: its read is still found."""
    got = _judged(UNSTATED, bound="<=")
    tensors = {msg.split("`")[1] for _code, _line, msg in got}
    assert {"x"} == tensors, got
    assert {code for code, _line, _msg in got} == {"MB001"}


@pytest.mark.parametrize("launcher", [LIKE_X, ASSERTED], ids=["like-x", "asserted"])
def test_an_off_by_one_is_found_where_the_code_states_the_extent(launcher: str) -> None:
    """`empty_like(x)` of an unpacked `x`, or `assert dy.shape == x.shape`, states the extents:
    the write past the row is an MB002 on `dx`."""
    got = _judged(launcher, bound="<=")
    assert ("MB002", 15) in {(code, line) for code, line, _msg in got}, got
    written = {msg.split("`")[1] for code, _line, msg in got if code == "MB002"}
    assert written == {"dx"}


def test_a_size_passed_to_the_kernel_states_that_extent() -> None:
    """`rstd` unpacked nowhere, but its only dimension is passed as the kernel's row count:
    the grid that overruns it is judged."""
    src = """
import torch
import triton
import triton.language as tl


@triton.jit
def gather_rows(rstd, out, n_rows, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r = tl.load(rstd + rows, mask=rows <= n_rows)
    tl.store(out + rows, r, mask=rows <= n_rows)


def gather(rstd):
    out = torch.empty_like(rstd)
    gather_rows[(triton.cdiv(rstd.shape[0], 16),)](rstd, out, rstd.shape[0], BLOCK=16)
    return out
"""
    codes = {f.code for f in check_source(src, "gather.py") if f.severity is Severity.ERROR}
    assert {"MB001", "MB002"} <= codes


def test_hover_names_the_assumption_on_a_pointer_of_unstated_extent() -> None:
    text = _KERNEL.format(launcher=UNSTATED, bound="<")
    at = text.index("tl.load(dy") + len("tl.load(")
    hover = describe_at(text, len(text[:at].encode()))
    assert hover is not None and "does not state the extents of `dy`" in hover
    at_x = text.index("tl.load(x") + len("tl.load(")
    hover_x = describe_at(text, len(text[:at_x].encode()))
    assert hover_x is not None and "does not state" not in hover_x


_STATE_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def recurrent_rows(v, u, o, dh0, T, V: tl.constexpr, BV: tl.constexpr):
    i_n = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BV)
    mask = cols < V
    acc = tl.zeros([BV], dtype=tl.float32)
    for t in range(0, T):
        b = tl.load(v + (i_n * T + t) * V + cols, mask=mask, other=0.0).to(tl.float32)
        acc += b
        tl.store(u + (i_n * T + t) * V + cols, b, mask=mask)
        tl.store(o + (i_n * T + t) * V + cols, acc, mask=mask)
    tl.store(dh0 + i_n * V + cols, acc, mask=mask)


def recurrent(q, v, h0):
    B, T = q.shape[0], q.shape[1]
    V = v.shape[-1]
    u = torch.empty_like(v)
    o = q.new_empty(1, *v.shape)
    dh0 = torch.empty_like(h0, dtype=torch.float) if h0 is not None else None
    recurrent_rows[(B,)](v, u, o, dh0, T, V=V, BV=triton.next_power_of_2(V))
    return u, o, dh0
"""


def test_allocations_modelled_on_a_tensor_of_unknown_rank_are_unstated_too() -> None:
    """`v` is read only as `v.shape[-1]`: its rank is unknown, and so are the extents of
    `torch.empty_like(v)` and `q.new_empty(1, *v.shape)` (rank-1 guesses before, and the rows
    the kernel writes were out of bounds of them). `h0`, used only as the model of
    `empty_like`, is a tensor: the launch binds instead of stopping at an AR001."""
    findings = check_source(_STATE_KERNEL, "recurrent.py")
    judged = [(f.code, f.line) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert [c for c, _ in judged if c != "MB003"] == [], judged
    assert not [f.message for f in findings if f.code == "AR001"], [f.message for f in findings]
