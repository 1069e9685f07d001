"""Issue 12, rule 1, kernel side (branch `fprec`): a value stored twice by one program, a
chunk-local axis nobody names, an accumulator reset every iteration, one loop over several
reduced axes, a fill of some other tensor taken as a sentinel, a range the kernel asserts.
Each correct form is clean; the seeded bug of the same shape stays found."""

from __future__ import annotations

from argus.analyzers import Severity, check_source
from argus.analyzers.rules.index_evidence import kernel_side


def _bad(text: str) -> list[tuple[str, int]]:
    findings = check_source(text, "t.py")
    return [(f.code, f.line) for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


_RESTORED = """
import torch
import triton
import triton.language as tl


@triton.jit
def gram_then_scale(k_ptr, a_ptr, T, K: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    rows = i_t * BT + tl.arange(0, BT)
    cols = tl.arange(0, K)
    m = rows < T
    k = tl.load(k_ptr + rows[:, None] * K + cols[None, :], mask=m[:, None], other=0.0)
    a = tl.dot(k, tl.trans(k))
    o = tl.arange(0, BT)
    p_a = a_ptr + rows[:, None] * BT + o[None, :]
    tl.store(p_a, a, mask=m[:, None])
    tl.debug_barrier()
    {again}
    tl.store(p_a, b, mask=m[:, None])


def gram(k):
    T, K = k.shape
    a = torch.empty((T, 16), device=k.device, dtype=torch.float32)
    gram_then_scale[(triton.cdiv(T, 16),)](k, a, T, K=K, BT=16)
    return a
"""


def test_a_program_storing_an_element_again_replaces_its_coverage() -> None:
    """The second store by the same program overwrites the first: K is not counted twice
    (fla's `*_intra_sub_chunk` kernels store `Akk`, then its solved form; DF003 KC2)."""
    assert _bad(_RESTORED.format(again="b = -a * 0.5")) == []


_LOCAL_AXIS = """
import torch
import triton
import triton.language as tl


@triton.jit
def chunk_apply(a_ptr, v_ptr, o_ptr, T, V: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    rows = i_t * BT + tl.arange(0, BT)
    j = tl.arange(0, BT)
    d = tl.arange(0, V)
    m = rows < T
    a = tl.load(a_ptr + rows[:, None] * BT + j[None, :], mask=m[:, None], other=0.0)
    v = tl.load(v_ptr + rows[:, None] * V + d[None, :], mask=m[:, None], other=0.0)
    o = tl.dot(a, v)
    tl.store(o_ptr + rows[:, None] * V + d[None, :], o, mask=m[:, None])


def apply(a_unused, v):
    T, V = v.shape
    a = torch.empty((T, 16), device=v.device, dtype=v.dtype)
    o = torch.empty_like(v)
    chunk_apply[(triton.cdiv(T, 16),)](a, v, o, T, V=V, BT=16)
    return o
"""


def test_a_chunk_local_axis_nobody_names_is_not_a_dot_mismatch() -> None:
    """`a`'s columns index positions of T inside the chunk; the launcher gives the axis only
    a literal extent (16), so contracting it with `v`'s rows along T is not judged (DF001,
    fla `gsa`, `precond_kda`)."""
    assert _bad(_LOCAL_AXIS) == []


_RESET = """
import torch
import triton
import triton.language as tl


@triton.jit
def per_chunk(k_ptr, h_ptr, o_ptr, T, K: tl.constexpr, BT: tl.constexpr):
    cols = tl.arange(0, K)
    h = tl.load(h_ptr + cols[:, None] * K + cols[None, :])
    acc = tl.zeros([BT, K], dtype=tl.float32)
    for i in range(0, tl.cdiv(T, BT)):
        rows = i * BT + tl.arange(0, BT)
        m = rows < T
        {reset}
        k = tl.load(k_ptr + {k_rows}[:, None] * K + cols[None, :], mask=m[:, None], other=0.0)
        acc = tl.dot(k, h, acc)
        tl.store(o_ptr + rows[:, None] * K + cols[None, :], acc, mask=m[:, None])


def run(k, h):
    T, K = k.shape
    o = torch.empty_like(k)
    per_chunk[(1,)](k, h, o, T, K=K, BT=16)
    return o
"""


def test_an_accumulator_reset_every_iteration_is_no_loop_reduction() -> None:
    """`acc = tl.zeros(...)` earlier in the same iteration: the dot sums one chunk's product,
    and `k` walking T is the loop's design (DF002, fla `based` fused_chunk)."""
    assert _bad(_RESET.format(reset="acc = tl.zeros([BT, K], dtype=tl.float32)", k_rows="rows")) == []


def test_a_carried_accumulator_still_needs_its_pointer_to_step() -> None:
    """Seeded bug: no reset, and `k` reads the first chunk every iteration."""
    text = _RESET.format(reset="pass", k_rows="tl.arange(0, BT)")
    assert any(code in ("DF002", "DF003") for code, _ in _bad(text))


_WINDOW = """
import torch
import triton
import triton.language as tl


@triton.jit
def conv1d(x_ptr, w_ptr, y_ptr, L, C, KW: tl.constexpr, BL: tl.constexpr, BC: tl.constexpr, CO: tl.constexpr):
    pid = tl.program_id(0)
    pos = pid * BL + tl.arange(0, BL)
    co = tl.arange(0, CO)
    acc = tl.zeros([BL, CO], dtype=tl.float32)
    n_c = (C + BC - 1) // BC
    for kc in range(KW * n_c):
        c = (kc % n_c) * BC + tl.arange(0, BC)
        kw = kc // n_c
        x = tl.load(x_ptr + (pos + kw)[:, None] * C + c[None, :], mask=((pos + kw) < L)[:, None] & (c < C)[None, :], other=0.0)
        w = tl.load(w_ptr + kw * C * CO + c[:, None] * CO + co[None, :], mask=(c < C)[:, None], other=0.0)
        acc += tl.dot(x, w)
    tl.store(y_ptr + pos[:, None] * CO + co[None, :], acc, mask=(pos < L)[:, None])


def run(x, w):
    L, C = x.shape
    KW, _, CO = w.shape
    y = torch.empty((L, CO), device=x.device, dtype=torch.float32)
    conv1d[(triton.cdiv(L, 16),)](x, w, y, L, C, KW=KW, BL=16, BC=16, CO=CO)
    return y
"""


def test_one_loop_over_window_and_channels_is_not_a_stale_pointer() -> None:
    """`kc` is split with `%` and `//` into a channel tile and a window offset: both are
    reduced, so moving along the window is the loop's step (DF002, flag-gems `conv3d`) and
    each channel entering once per offset is no double count (main: DF003 "C counted 2 times")."""
    assert _bad(_WINDOW) == []


_FILLS = '''
import torch

@triton.jit
def gather_rows(ids_ptr, table_ptr, out_ptr):
    pass

def launch(ids, table, out):
    gather_rows[(1,)](ids, table, out)

def caller(table, out):
    slots = torch.full((8,), -1)
    launch(slots, table, out)
    other = torch.full((8,), -1)
'''


def test_fill_evidence_follows_the_tensor_passed_as_the_index() -> None:
    """`slots` reaches `ids_ptr` through the launcher's caller: its -1 fill is evidence of a
    sentinel; a fill of an unrelated tensor is not (fla `nsa`, MB005 K18)."""
    assert any("ids_ptr" in e for e in kernel_side([], _FILLS.encode(), "gather_rows", "ids_ptr"))
    unrelated = _FILLS.replace("launch(slots, table, out)", "launch(ids0, table, out)")
    assert kernel_side([], unrelated.encode(), "gather_rows", "ids_ptr") == []


_ASSERTED = """
import torch
import triton
import triton.language as tl


@triton.jit
def pick(inp_ptr, tgt_ptr, out_ptr, N, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    tgt = tl.load(tgt_ptr + offs, mask=m, other=0)
    {check}
    x = tl.load(inp_ptr + offs * C + tgt, mask=m, other=0.0)
    tl.store(out_ptr + offs, x, mask=m)


def run(inp, tgt):
    N, C = inp.shape
    out = torch.empty((N,), device=inp.device, dtype=inp.dtype)
    pick[(triton.cdiv(N, 128),)](inp, tgt, out, N, C, BLOCK=128)
    return out
"""


def test_an_asserted_range_has_no_padding_sentinel() -> None:
    """`assert tgt >= 0 and tgt < C` states every target is a class: the probe's targets are
    valid ones, never `C` itself (flag-gems `nll_loss_forward_kernel`, MB001)."""
    assert _bad(_ASSERTED.format(check="assert tgt >= 0 and tgt < C")) == []


def test_a_range_checked_only_as_a_test_still_meets_its_sentinel() -> None:
    """Seeded bug: the kernel compares `tgt` with `C` but the comparison guards nothing."""
    text = _ASSERTED.format(check="bad = tgt >= C")
    assert any(code in ("MB001", "MB005") for code, _ in _bad(text))


_WRAPPED = """
import torch
import triton
import triton.language as tl


@triton.jit
def stretch(x_ptr, y_ptr, W_in, W_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)) % W_out
    src = tl.minimum(offs * W_in // W_out, W_in - 1)
    x = tl.load(x_ptr + row * W_in + src)
    tl.store(y_ptr + row * W_out + {dst}, x)


def run(x, W_out):
    R, W_in = x.shape
    y = torch.empty((R, W_out), device=x.device, dtype=x.dtype)
    stretch[(R, 1)](x, y, W_in, W_out, BLOCK=2 * triton.next_power_of_2(W_out))
    return y
"""


def test_lanes_storing_the_same_value_again_are_no_race() -> None:
    """The block is wider than the row and wraps (`% W_out`): its tail stores again what
    another lane stores, from the same source element (flag-gems `_kunlunxin`
    `upsample_linear1d`, GR002)."""
    assert _bad(_WRAPPED.format(dst="offs")) == []


def test_lanes_storing_different_values_to_one_element_are_a_race() -> None:
    """Seeded bug: every lane of a block writes element `offs // 2`, from different sources."""
    text = _WRAPPED.format(dst="offs // 2")
    assert ("GR002", _line_of(text, "tl.store(y_ptr")) in _bad(text)
