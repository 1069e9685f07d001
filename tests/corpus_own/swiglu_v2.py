import sys

import torch
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid.to(tl.int64) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    offsets = tl.max_contiguous(tl.multiple_of(offsets, BLOCK_SIZE), BLOCK_SIZE)
    mask = offsets < n_elements
    gate = tl.load(gate_ptr + offsets, mask=mask)
    up = tl.load(up_ptr + offsets, mask=mask)
    g = gate.to(tl.float32)
    out = g * tl.sigmoid(g) * up.to(tl.float32)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty))  # expect: MB002  # also: MB004


def swiglu(gate: torch.Tensor, up: torch.Tensor, out: torch.Tensor = None):
    assert gate.shape == up.shape and gate.is_contiguous() and up.is_contiguous()
    if out is None:
        out = torch.empty_like(gate)
    n_elements = gate.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    swiglu_kernel[grid](gate, up, out, n_elements, BLOCK_SIZE=1024)
    return out


def reference(gate, up):
    return (torch.nn.functional.silu(gate.float()) * up.float()).to(gate.dtype)


if __name__ == "__main__":
    import _check as c

    def case(n, dtype):
        gate = c.padded(torch.randn(n).to(dtype))
        up = c.padded(torch.randn(n).to(dtype))
        out = c.poisoned((n,), dtype)
        swiglu(gate, up, out)
        return c.close("out", out, reference(gate, up), atol=1e-2, rtol=1e-2)

    c.main(case, [(1, torch.float32), (1000, torch.float16), (1024, torch.float32), (5000, torch.float16)])
