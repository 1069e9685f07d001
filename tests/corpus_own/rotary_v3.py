import sys

import torch
import triton
import triton.language as tl


@triton.jit
def rotary_kernel(
    x_ptr, cos_ptr, sin_ptr, out_ptr,
    n_heads, seq_offset,
    stride_xb, stride_xs, stride_xh,
    stride_ob, stride_os, stride_oh,
    stride_cos, stride_sin,
    HALF: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr,
):
    """Rotate-half (GPT-NeoX) rotary embedding for x (B, S, H, 2 * HALF)."""
    s = tl.program_id(0)
    b = tl.program_id(1)
    pid_h = tl.program_id(2)
    pos = s + seq_offset
    offs_h = pid_h.to(tl.int64) * BLOCK_H + tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, BLOCK_HALF)
    h_mask = offs_h < n_heads
    d_mask = offs_d < HALF

    cos = tl.load(cos_ptr + pos.to(tl.int64) * stride_cos + offs_d).to(tl.float32)  # expect: MB001
    sin = tl.load(sin_ptr + pos.to(tl.int64) * stride_sin + offs_d, mask=d_mask, other=0.0).to(tl.float32)

    x_row = x_ptr + b.to(tl.int64) * stride_xb + s.to(tl.int64) * stride_xs
    o_row = out_ptr + b.to(tl.int64) * stride_ob + s.to(tl.int64) * stride_os
    mask = h_mask[:, None] & d_mask[None, :]
    x1_ptrs = x_row + offs_h[:, None] * stride_xh + offs_d[None, :]
    x1 = tl.load(x1_ptrs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x1_ptrs + HALF, mask=mask, other=0.0).to(tl.float32)

    o1 = x1 * cos[None, :] - x2 * sin[None, :]
    o2 = x2 * cos[None, :] + x1 * sin[None, :]
    o1_ptrs = o_row + offs_h[:, None] * stride_oh + offs_d[None, :]
    tl.store(o1_ptrs, o1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(o1_ptrs + HALF, o2.to(out_ptr.dtype.element_ty), mask=mask)


def apply_rotary(x, cos, sin, seq_offset=0, out=None):
    """x: (B, S, H, D) with unit stride on D; cos, sin: (max_pos, D // 2)."""
    B, S, H, D = x.shape
    assert x.stride(3) == 1 and cos.stride(1) == 1 and sin.stride(1) == 1
    assert seq_offset + S <= cos.shape[0]
    if out is None:
        out = torch.empty_like(x)
    BLOCK_H = 4
    grid = (S, B, triton.cdiv(H, BLOCK_H))
    rotary_kernel[grid](
        x, cos, sin, out, H, seq_offset,
        x.stride(0), x.stride(1), x.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        cos.stride(0), sin.stride(0),
        HALF=D // 2, BLOCK_H=BLOCK_H, BLOCK_HALF=triton.next_power_of_2(D // 2),
    )
    return out


def reference(x, cos, sin, seq_offset=0):
    S, half = x.shape[1], x.shape[3] // 2
    c = cos[seq_offset:seq_offset + S].float()[None, :, None, :]
    s = sin[seq_offset:seq_offset + S].float()[None, :, None, :]
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(x.dtype)


if __name__ == "__main__":
    import _check as c

    def case(B, S, H, D, offset):
        max_pos = offset + S + 3
        ang = torch.arange(max_pos)[:, None] * (10000.0 ** (-torch.arange(D // 2) * 2.0 / D))[None, :]
        cos = c.padded(torch.cos(ang), col_pad=2)
        sin = c.padded(torch.sin(ang), col_pad=2)
        x = c.padded(torch.randn(B, S, H, D).half(), col_pad=4)
        out = c.poisoned((B, S, H, D), torch.float16)
        apply_rotary(x, cos, sin, offset, out)
        return c.close("out", out, reference(x, cos, sin, offset), atol=2e-3, rtol=2e-3)

    c.main(case, [(1, 1, 1, 2, 0), (2, 5, 6, 24, 3), (1, 7, 8, 64, 10), (3, 4, 3, 80, 0)])
