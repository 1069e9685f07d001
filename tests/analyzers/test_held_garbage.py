"""Held garbage (interp/garbage.py): undefined lanes (MB004) and non-neutral padding (DF003)
mixed into a reduction or a dot are reported only where a lane they spoil is kept: stored with
the store's mask on, or deciding a branch, an address or a mask. Lanes a store masks away (the
query rows past the end of a chunk) or `tl.where` replaces are never seen (fla-core's
`rebased`/`based` backward `dq` and forward `z`). Each case has the counterpart that keeps the
garbage and stays found."""

from __future__ import annotations

from argus.analyzers import check_source

HEAD = '''import torch
import triton
import triton.language as tl


'''

# the rebased/based backward's dq: `s` (no `other=`) is undefined on rows past T; the causal
# `where` mixes them with zeros, so the dot spoils only those rows, which the store masks
ROWS = HEAD + '''@triton.jit
def chunk_rows_kernel(s_ptr, v_ptr, out_ptr, T, D: tl.constexpr, BT: tl.constexpr):
    pid = tl.program_id(0)
    o_i = tl.arange(0, BT)
    o_t = pid * BT + o_i
    o_d = tl.arange(0, D)
    m_t = o_t < T
    s = tl.load(s_ptr + o_t, mask=m_t)
    v = tl.load(v_ptr + o_t[:, None] * D + o_d[None, :], mask=m_t[:, None], other=0.0)
    m_s = o_i[:, None] >= o_i[None, :]
    b_ds = tl.where(m_s, SPREAD + tl.zeros([BT, BT], dtype=tl.float32), 0.0)
    acc = tl.dot(b_ds, v)
    tl.store(out_ptr + o_t[:, None] * D + o_d[None, :], acc, mask=m_t[:, None])


def chunk_rows(s, v):
    T, D = v.shape
    out = torch.empty_like(v)
    chunk_rows_kernel[(triton.cdiv(T, 16),)](s, v, out, T, D, BT=16)
    return out
'''

# the based forward's normaliser: keys past T are padded with 0, so `1 + q.k` holds 1 there;
# under the causal mask only query rows past T meet them, and the store drops those rows
NORMALISER = HEAD + '''@triton.jit
def chunk_z_kernel(q_ptr, k_ptr, z_ptr, T, D: tl.constexpr, BT: tl.constexpr):
    pid = tl.program_id(0)
    o_i = tl.arange(0, BT)
    o_t = pid * BT + o_i
    o_d = tl.arange(0, D)
    m_t = o_t < T
    q = tl.load(q_ptr + o_t[:, None] * D + o_d[None, :], mask=m_t[:, None], other=0.0)
    k = tl.load(k_ptr + o_d[:, None] + o_t[None, :] * D, mask=m_t[None, :], other=0.0)
    b_s = 1 + tl.dot(q, k)
    m_s = o_i[:, None] >= o_i[None, :]
    MASKED
    z = tl.sum(b_s, axis=1)
    tl.store(z_ptr + o_t, z, mask=m_t)


def chunk_z(q, k):
    T, D = q.shape
    z = torch.empty(T, device=q.device, dtype=torch.float32)
    chunk_z_kernel[(triton.cdiv(T, 16),)](q, k, z, T, D, BT=16)
    return z
'''


def _findings(text: str, code: str) -> list[int]:
    return sorted(f.line for f in check_source(text.encode(), "chunk.py") if f.code == code)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_undefined_rows_the_store_masks_away_are_not_reported() -> None:
    text = ROWS.replace("SPREAD", "s[:, None]")
    assert _findings(text, "MB004") == []


def test_undefined_lanes_on_the_contraction_axis_are_still_reported_at_the_dot() -> None:
    # `s[None, :]` unmasked: a column past T spoils every row of the product, real rows too
    # (the rebased/based backward's dk, whose b_dz lies on the contraction axis)
    text = ROWS.replace("SPREAD", "s[None, :]").replace("o_i[:, None] >= o_i[None, :]", "o_i[:, None] >= 0")
    assert _findings(text, "MB004") == [_line_of(text, "acc = tl.dot(b_ds, v)")]


def test_padding_that_only_rows_past_the_end_reduce_is_not_reported() -> None:
    text = NORMALISER.replace("MASKED", "b_s = tl.where(m_s, b_s, 0)")
    assert _findings(text, "DF003") == []


def test_padding_that_real_rows_reduce_is_still_reported_at_the_sum() -> None:
    # without the causal mask every real row sums the padded keys' 1s
    text = NORMALISER.replace("MASKED", "b_s = b_s")
    assert _findings(text, "DF003") == [_line_of(text, "z = tl.sum(b_s, axis=1)")]


def test_padding_spoiled_lanes_kept_only_through_a_mask_are_still_reported() -> None:
    # the spoiled sum decides which lanes are stored: a mask computed from it keeps it
    text = NORMALISER.replace("MASKED", "b_s = b_s").replace(
        "tl.store(z_ptr + o_t, z, mask=m_t)", "tl.store(z_ptr + o_t, o_t.to(tl.float32), mask=m_t & (z > 0))"
    )
    assert _findings(text, "DF003") == [_line_of(text, "z = tl.sum(b_s, axis=1)")]


def test_spoiled_lanes_stored_into_a_tensor_of_unstated_extent_are_still_reported() -> None:
    # `out` copies a tensor the launcher never measures: its bounds are not judged, but the
    # lanes the store writes with its mask on keep the garbage all the same (fla dplr `v_new`)
    text = (
        ROWS.replace("SPREAD", "s[None, :]")
        .replace("o_i[:, None] >= o_i[None, :]", "o_i[:, None] >= 0")
        .replace("def chunk_rows(s, v):", "def chunk_rows(s, v, like):")
        .replace("out = torch.empty_like(v)", "out = torch.empty_like(like)")
    )
    assert _findings(text, "MB004") == [_line_of(text, "acc = tl.dot(b_ds, v)")]


# atk's backward: a one-step shift of a cumsum carries the padded lanes' total into rows past
# the data; those rows meet only gradients padded with 0, so nothing of them is kept, even
# where the probe's random inputs make the spoiled lanes NaN (`log` of a negative)
SHIFT = HEAD + '''@triton.jit
def shift_grad_kernel(g_ptr, x_ptr, dy_ptr, out_ptr, T, BT: tl.constexpr):
    o = tl.arange(0, BT)
    m = o < T
    g = tl.load(g_ptr + o, mask=m, other=0.0)
    x = tl.load(x_ptr + o, mask=m, other=0.0)
    dy = tl.load(dy_ptr + o, mask=m, other=0.0)
    c = tl.cumsum(g, 0)
    shift = (o[:, None] == (o[None, :] + 1)).to(tl.float32)
    rolled = tl.sum(shift * c[None, :], 1)
    a = tl.log(rolled + x)
    TERM
    tl.store(out_ptr + tl.program_id(0), tl.sum(t, 0))


def shift_grad(g, x, dy):
    T = g.shape[0]
    out = torch.empty(1, device=g.device, dtype=torch.float32)
    shift_grad_kernel[(1,)](g, x, dy, out, T, BT=triton.next_power_of_2(T))
    return out
'''


def test_spoiled_lanes_times_a_padded_zero_are_not_kept() -> None:
    # (a chain of products, as atk's `gs * ds_dr`: the first product's zero cancels the next)
    assert _findings(SHIFT.replace("TERM", "t = (dy * a) * tl.exp(a)"), "DF003") == []


def test_spoiled_lanes_summed_as_they_are_still_are() -> None:
    text = SHIFT.replace("TERM", "t = a")
    assert _findings(text, "DF003") == [_line_of(text, "rolled = tl.sum(")]
