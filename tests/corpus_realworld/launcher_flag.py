# cause L6: the launcher's flag `aligned` (tiles divide the rows, one tile spans the head) selects the unmasked path.
import torch
import triton
import triton.language as tl


@triton.jit
def rotate_half_kernel(
    x_ptr,
    cos_ptr,
    sin_ptr,
    stride_xs,
    seq_len,
    n_tiles,
    HALF: tl.constexpr,
    BLOCK_S: tl.constexpr,
    BLOCK_D: tl.constexpr,
    MASKED: tl.constexpr,
):
    """In place, rows s of x (seq_len, 2 * HALF): [a, b] -> [a cos - b sin, b cos + a sin]."""
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    d = tl.arange(0, BLOCK_D)
    for tile in tl.range(pid, n_tiles, step):
        s = (tile * BLOCK_S + tl.arange(0, BLOCK_S)).to(tl.int64)
        a_off = s[:, None] * stride_xs + d[None, :]
        cs_off = s[:, None] * HALF + d[None, :]
        if MASKED:
            m = (s[:, None] < seq_len) & (d[None, :] < HALF)
            a = tl.load(x_ptr + a_off, mask=m, other=0.0)
            b = tl.load(x_ptr + a_off + HALF, mask=m, other=0.0)
            c = tl.load(cos_ptr + cs_off, mask=m, other=0.0)
            sn = tl.load(sin_ptr + cs_off, mask=m, other=0.0)
            tl.store(x_ptr + a_off, a * c - b * sn, mask=m)
            tl.store(x_ptr + a_off + HALF, b * c + a * sn, mask=m)
        else:
            a = tl.load(x_ptr + a_off)
            b = tl.load(x_ptr + a_off + HALF)
            c = tl.load(cos_ptr + cs_off)
            sn = tl.load(sin_ptr + cs_off)
            tl.store(x_ptr + a_off, a * c - b * sn)
            tl.store(x_ptr + a_off + HALF, b * c + a * sn)


def rotate_half_(x, cos, sin, block_s, block_d, programs=4):
    seq_len, head_dim = x.shape
    half = head_dim // 2
    assert cos.shape == (seq_len, half) and sin.shape == (seq_len, half)
    n_tiles = triton.cdiv(seq_len, block_s)
    aligned = seq_len % block_s == 0 and block_d == half
    grid = (max(1, min(programs, n_tiles)),)
    rotate_half_kernel[grid](
        x,
        cos,
        sin,
        x.stride(0),
        seq_len,
        n_tiles,
        HALF=half,
        BLOCK_S=block_s,
        BLOCK_D=block_d,
        MASKED=not aligned,
    )
    return x


if __name__ == "__main__":
    for seq_len, block_s, block_d in ((32, 8, 8), (30, 8, 8), (32, 8, 16)):
        x = torch.randn(seq_len, 16)
        ang = torch.randn(seq_len, 8)
        a, b = x[:, :8].clone(), x[:, 8:].clone()
        want = torch.cat([a * ang.cos() - b * ang.sin(), b * ang.cos() + a * ang.sin()], -1)
        torch.testing.assert_close(rotate_half_(x, ang.cos(), ang.sin(), block_s, block_d), want)
    print("ok")
