"""Kernel-side constructs behind the AR001 groups left after the first pass (branch `kcov2`):
each is modelled by its Triton semantics, so the kernel is analyzed through it (a seeded bug
past it is found, the correct kernel is clean)."""

from __future__ import annotations

import ast

import numpy as np
from argus.analyzers.interp.values import Val, scalar
from kernel_checks import failing_explained as failing
from kernel_checks import not_modelled

# fla-core's idiom: the launcher's `scale: float = None` and `beta: torch.Tensor | None = None`
# are defaults its public wrapper always overrides; the kernel multiplies by `scale` and offsets
# `beta`, which Triton could not compile with None, and reads `g` only under `USE_G`.
ABSENT = """
@triton.jit
def recurrent_kernel(q, beta, g, o, scale, T, D: tl.constexpr, BD: tl.constexpr, USE_G: tl.constexpr):
    i_n = tl.program_id(0)
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    p_q = q + i_n * T * D + o_d
    p_o = o + i_n * T * D + o_d
    p_beta = beta + i_n * T
    if USE_G:
        p_g = g + i_n * T
    for _ in range(0, T):
        b_q = tl.load(p_q, mask=m_d, other=0).to(tl.float32) * scale
        b_beta = tl.load(p_beta).to(tl.float32)
        if USE_G:
            b_q = b_q * tl.exp(tl.load(p_g).to(tl.float32))
            p_g += 1
        tl.store(p_o, (b_q * b_beta).to(p_o.dtype.element_ty), mask=m_d)
        p_q += D
        p_o += D
        p_beta += 1


def recurrent_fwd(q, beta=None, g=None, scale: float = None):
    B, T, D = q.shape
    o = torch.empty_like(q)
    recurrent_kernel[(B,)](q, beta, g, o, scale, T, D=D, BD=triton.next_power_of_2(D), USE_G=g is not None)
    return o
"""


def test_none_defaults_used_as_number_and_pointer_are_stand_ins() -> None:
    """`x * scale` and `beta + offset` with the launcher's None defaults: the kernel is
    analyzed (a scalar of unknown value, a pointer into a tensor of unknown extent), and the
    guarded `g` is never reached."""
    assert not_modelled(ABSENT) == []
    assert failing(ABSENT) == []
    wrong = ABSENT.replace("p_q = q + i_n * T * D", "p_q = q + (i_n + 1) * T * D")  # the next row
    assert {c for c, *_ in failing(wrong)} == {"MB001"}


def test_a_branch_on_the_absent_value_is_named() -> None:
    """A mask computed from the stand-in's value is not judged: an AR001 names the argument."""
    text = ABSENT.replace("mask=m_d)\n        p_q += D", "mask=m_d & (scale > 0))\n        p_q += D")
    msgs = not_modelled(text)
    assert len(msgs) == 1 and "`scale`, None in the launch as bound" in msgs[0]


# fla-core's backward recurrences walk the chunks from the last to the first
REVERSE = """
@triton.jit
def dh_kernel(q, do, dh, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
    i_b = tl.program_id(0)
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    b_dh = tl.zeros([K, V], dtype=tl.float32)
    NT = tl.cdiv(T, BT)
    for i_t in range(NT - 1, -1, -1):
        o_t = i_t * BT + tl.arange(0, BT)
        m_t = o_t < T
        b_q = tl.load(q + i_b * T * K + o_t[None, :] * K + o_k[:, None], mask=m_t[None, :], other=0)
        b_do = tl.load(do + i_b * T * V + o_t[:, None] * V + o_v[None, :], mask=m_t[:, None], other=0)
        b_dh += tl.dot(b_q, b_do)
    tl.store(dh + i_b * K * V + o_k[:, None] * V + o_v[None, :], b_dh)


def launch(q, do):
    B, T, K = q.shape
    V = do.shape[-1]
    assert do.shape == (B, T, V)
    dh = torch.empty(B, K, V, device=q.device, dtype=torch.float32)
    dh_kernel[(B,)](q, do, dh, T, K=K, V=V, BT=16)
"""


def test_a_loop_counting_down_steps_back_one_tile() -> None:
    """`range(NT - 1, -1, -1)`: each pointer moves one tile back per iteration, its step (no
    DF002); the kernel is still judged (q walked the other way than its mask: MB001)."""
    assert not_modelled(REVERSE) == []
    assert "DF002" not in {c for c, *_ in failing(REVERSE)}
    crossed = REVERSE.replace(
        "o_t[None, :] * K + o_k[:, None]",
        "((NT - 1 - i_t) * BT + tl.arange(0, BT))[None, :] * K + o_k[:, None]",
    )
    assert "MB001" in {c for c, *_ in failing(crossed)}


# flag-gems' cummax: a scan and a reduction of (value, index) pairs with a tie-breaking combine
CUMMAX = """
@triton.jit
def max_right(a_value, a_index, b_value, b_index):
    mask = a_value > b_value
    equal = a_value == b_value
    a_isnan = a_value != a_value
    b_isnan = b_value != b_value
    mask |= a_isnan and not b_isnan
    mask |= equal & (a_index > b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)


@triton.jit
def cummax_kernel(inp, out, out_idx, part, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(inp + offs, mask=mask, other=float("-inf")).to(tl.float32)
    vals, idx = tl.associative_scan((x, offs), 0, max_right)
    tl.store(out + offs, vals, mask=mask)
    tl.store(out_idx + offs, idx, mask=mask)
    best, best_idx = tl.reduce((x, offs), 0, max_right)
    tl.store(part + pid, best)


def cummax(x):
    n = x.numel()
    out = torch.empty_like(x)
    out_idx = torch.empty(n, device=x.device, dtype=torch.int32)
    part = torch.empty(triton.cdiv(n, 128), device=x.device, dtype=torch.float32)
    cummax_kernel[(triton.cdiv(n, 128),)](x, out, out_idx, part, n, BLOCK=128)
"""


def test_scan_and_reduce_of_pairs_run_the_combine_function() -> None:
    """`tl.associative_scan((x, offs), 0, fn)` and `tl.reduce((x, offs), 0, fn)` with a combine
    of four arguments: the helper itself is run (log2 steps), lanes keep their tags."""
    assert not_modelled(CUMMAX) == []
    assert failing(CUMMAX) == []
    wrong = CUMMAX.replace(
        "tl.store(out + offs, vals, mask=mask)", "tl.store(out + offs + 1, vals, mask=mask)"
    )
    assert "MB002" in {c for c, *_ in failing(wrong)}


def test_the_scan_computes_the_prefix_of_the_combine() -> None:
    """The values are the sequential scan's: a running max with its (rightmost) index."""
    from argus.analyzers.interp.ops_reduce import scan_with_helper

    class Ctx:
        def __init__(self) -> None:
            self.sink = None

        def call_helper(self, name, args, kwargs, node):  # noqa: ANN001, ANN201
            a, ai, b, bi = args
            keep = (a.data > b.data) | ((a.data == b.data) & (ai.data > bi.data))
            return (
                Val(np.where(keep, a.data, b.data), a.dtype),
                Val(np.where(keep, ai.data, bi.data), ai.dtype),
            )

    xs = np.array([3.0, 1.0, 4.0, 4.0, 2.0, 5.0, 0.0])
    v, i = scan_with_helper(Ctx(), "f", (Val(xs, "fp32"), Val(np.arange(7), "int32")), scalar(0), False, None)
    assert v.data.tolist() == [3.0, 3.0, 4.0, 4.0, 4.0, 5.0, 5.0]
    assert i.data.tolist() == [0, 0, 2, 3, 3, 5, 5]
    rv, _ = scan_with_helper(Ctx(), "f", (Val(xs, "fp32"), Val(np.arange(7), "int32")), scalar(0), True, None)
    assert rv.data.tolist() == [5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 0.0]


# fla-core's gsa gate: `tl.gather` of the previous row; flag-gems' `tl_extra_shim.pow` and a
# module constant `tl.constexpr(torch.finfo(torch.float16).min)`
GATHER = """
from flag_gems.utils import tl_extra_shim

_MIN_F16 = tl.constexpr(torch.finfo(torch.float16).min)


@triton.jit
def shift_kernel(x, y, T, S: tl.constexpr, BT: tl.constexpr):
    i_n = tl.program_id(0)
    o_i = tl.arange(0, BT)
    o_s = tl.arange(0, S)
    m = (o_i < T)[:, None]
    b_x = tl.load(x + i_n * T * S + o_i[:, None] * S + o_s[None, :], mask=m, other=_MIN_F16)
    prev = tl.broadcast_to(tl.maximum(o_i - 1, 0)[:, None], (BT, S))
    b_p = tl.gather(b_x, prev, axis=0)
    b_y = tl_extra_shim.pow(b_p.to(tl.float32), 2)
    tl.store(y + i_n * T * S + o_i[:, None] * S + o_s[None, :], b_y, mask=m)


def shift(x):
    B, T, S = x.shape
    y = torch.empty_like(x)
    shift_kernel[(B,)](x, y, T, S=S, BT=triton.next_power_of_2(T))
"""


def test_gather_finfo_constants_and_the_libdevice_shim() -> None:
    assert not_modelled(GATHER) == []
    assert failing(GATHER) == []
    # a gather whose value is stored one row down (its tags say the row it came from)
    wrong = GATHER.replace(
        "tl.store(y + i_n * T * S + o_i[:, None] * S", "tl.store(y + (i_n + 1) * T * S + o_i[:, None] * S"
    )
    assert "MB002" in {c for c, *_ in failing(wrong)}


def test_finfo_module_constants() -> None:
    from argus.analyzers.module_constants import _const_value

    def value(text: str) -> float:
        return _const_value(ast.parse(text).body[0].value).item()

    assert value("tl.constexpr(torch.finfo(torch.float16).min)") == -65504.0
    assert value("torch.finfo(torch.bfloat16).eps") == 0.0078125
    assert value("torch.iinfo(torch.int32).max") == 2**31 - 1
    assert _const_value(ast.parse("torch.finfo(torch.float8).max").body[0].value) is None
