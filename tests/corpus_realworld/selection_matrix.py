# cause K5: a one-hot shift matrix times a tile, summed along an axis: lanes past the data are multiplied by 0.
import torch
import triton
import triton.language as tl


@triton.jit
def exclusive_log_decay_kernel(g_ptr, out_ptr, T, CHUNK: tl.constexpr):
    """out[t] = sum(g[chunk start .. t - 1]) per chunk: the inclusive cumsum shifted by one row."""
    c = tl.program_id(0)
    t = c * CHUNK + tl.arange(0, CHUNK)
    mask = t < T
    g = tl.load(g_ptr + t, mask=mask, other=0.0)
    incl = tl.cumsum(g, 0)
    j = tl.arange(0, CHUNK)
    shift = (j[:, None] == (j[None, :] + 1)).to(tl.float32)
    excl = tl.sum(shift * incl[None, :], 1)
    tl.store(out_ptr + t, excl, mask=mask)


def exclusive_log_decay(g, chunk=16):
    (T,) = g.shape
    out = torch.empty_like(g)
    exclusive_log_decay_kernel[(triton.cdiv(T, chunk),)](g, out, T, CHUNK=chunk)
    return out


if __name__ == "__main__":
    g = -torch.rand(37)
    want = torch.cat([torch.cumsum(ch, 0) - ch for ch in g.split(16)])
    torch.testing.assert_close(exclusive_log_decay(g), want)
    print("ok")
