# cause K12: every program stores the same value (a constant, a scalar argument) to one element: the order of the writes cannot change it.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_and_record_kernel(x_ptr, out_ptr, meta_ptr, n, scale, BLOCK: tl.constexpr):
    """out = x * scale; meta = (n, 1): the element count and a done flag, written by every
    program instead of only the first (idempotent: each writes the same values)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(x_ptr + offs, mask=ok, other=0.0)
    tl.store(out_ptr + offs, x * scale, mask=ok)
    tl.store(meta_ptr, n)
    tl.store(meta_ptr + 1, 1)


def scale_and_record(x, scale):
    n = x.numel()
    out = torch.empty_like(x)
    meta = torch.zeros(2, dtype=torch.int32, device=x.device)
    scale_and_record_kernel[(triton.cdiv(n, 64),)](x, out, meta, n, scale, BLOCK=64)
    return out, meta


if __name__ == "__main__":
    x = torch.randn(300)
    out, meta = scale_and_record(x, 0.5)
    torch.testing.assert_close(out, x * 0.5)
    assert meta.tolist() == [300, 1]
    print("ok")
