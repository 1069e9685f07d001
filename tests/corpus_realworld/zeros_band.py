# cause L7: the output is `torch.zeros` and only its band |i - j| <= WIDTH // 2 is written, by design.
import torch
import triton
import triton.language as tl


@triton.jit
def band_to_dense_kernel(
    band_ptr,
    dense_ptr,
    stride_bb,
    stride_bs,
    stride_db,
    stride_ds,
    seq_len,
    WIDTH: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """dense[b, i, i + k - WIDTH // 2] = band[b, i, k] for keys inside the sequence; the rest stays 0."""
    b = tl.program_id(0).to(tl.int64)
    rows = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    half = WIDTH // 2
    for k in range(WIDTH):
        keys = rows + (k - half)
        ok = (rows < seq_len) & (keys >= 0) & (keys < seq_len)
        v = tl.load(band_ptr + b * stride_bb + rows * stride_bs + k, mask=ok, other=0.0)
        tl.store(dense_ptr + b * stride_db + rows * stride_ds + keys, v, mask=ok)


def band_to_dense(band, width):
    batch, seq_len, w = band.shape
    assert w == width and band.stride(2) == 1
    dense = torch.zeros((batch, seq_len, seq_len), dtype=band.dtype, device=band.device)
    block = 16
    band_to_dense_kernel[(batch, triton.cdiv(seq_len, block))](
        band,
        dense,
        band.stride(0),
        band.stride(1),
        dense.stride(0),
        dense.stride(1),
        seq_len,
        WIDTH=width,
        BLOCK=block,
    )
    return dense


if __name__ == "__main__":
    band = torch.randn(2, 19, 3)
    dense = band_to_dense(band, 3)
    want = torch.zeros(2, 19, 19)
    for i in range(19):
        for k in range(3):
            j = i + k - 1
            if 0 <= j < 19:
                want[:, i, j] = band[:, i, k]
    torch.testing.assert_close(dense, want)
    print("ok")
