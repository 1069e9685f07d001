# cause K10: the accumulator takes the dtype of an integer count buffer; nothing here is fp16.
import torch
import triton
import triton.language as tl


@triton.jit
def count_true_kernel(mask_ptr, part_ptr, n, BLOCK: tl.constexpr, BLOCKS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=part_ptr.dtype.element_ty)
    for b in range(BLOCKS_PER_PROGRAM):
        offs = (pid * BLOCKS_PER_PROGRAM + b) * BLOCK + tl.arange(0, BLOCK)
        m = tl.load(mask_ptr + offs, mask=offs < n, other=0)
        acc += m.to(part_ptr.dtype.element_ty)
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


def count_true(mask, block=64, per_program=4):
    n = mask.numel()
    programs = triton.cdiv(n, block * per_program)
    parts = torch.empty(programs, dtype=torch.int64, device=mask.device)
    count_true_kernel[(programs,)](mask, parts, n, BLOCK=block, BLOCKS_PER_PROGRAM=per_program)
    return parts.sum()


if __name__ == "__main__":
    m = torch.rand(1000) > 0.3
    assert int(count_true(m)) == int(m.sum())
    print("ok")
