import sys

import torch
import triton
import triton.language as tl


@triton.jit
def vocab_parallel_embedding_kernel(
    ids_ptr, weight_ptr, out_ptr,
    n_tokens, vocab_start, vocab_size_local, dim,
    stride_wv, stride_wd, stride_ot, stride_od,
    BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):
    """This rank holds rows [vocab_start, vocab_start + vocab_size_local) of the table; tokens
    whose id lives on another rank get a zero row (the all-reduce adds the owner's row)."""
    pid_t = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    t_mask = offs_t < n_tokens
    d_mask = offs_d < dim

    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other=0)
    local = ids - vocab_start
    in_shard = local >= 0  # expect: MB005
    rows = tl.where(in_shard, local, 0).to(tl.int64)  # expect: MB005

    w_ptrs = weight_ptr + rows[:, None] * stride_wv + offs_d[None, :] * stride_wd  # expect: MB005
    vals = tl.load(w_ptrs, mask=(t_mask & in_shard)[:, None] & d_mask[None, :], other=0.0)  # also: MB001
    o_ptrs = out_ptr + offs_t[:, None].to(tl.int64) * stride_ot + offs_d[None, :] * stride_od
    tl.store(o_ptrs, vals, mask=t_mask[:, None] & d_mask[None, :])


def embedding_shard(ids, weight, vocab_start, out=None, BLOCK_T=16, BLOCK_D=64):
    n_tokens = ids.numel()
    V_local, dim = weight.shape
    if out is None:
        out = torch.empty((n_tokens, dim), dtype=weight.dtype, device=weight.device)
    grid = (triton.cdiv(n_tokens, BLOCK_T), triton.cdiv(dim, BLOCK_D))
    vocab_parallel_embedding_kernel[grid](
        ids, weight, out,
        n_tokens, vocab_start, V_local, dim,
        weight.stride(0), weight.stride(1), out.stride(0), out.stride(1),
        BLOCK_T=BLOCK_T, BLOCK_D=BLOCK_D,
    )
    return out


def reference(ids, weight, vocab_start):
    local = ids.long() - vocab_start
    ok = (local >= 0) & (local < weight.shape[0])
    out = weight[local.clamp(0, weight.shape[0] - 1)].clone()
    out[~ok] = 0
    return out


if __name__ == "__main__":
    import _check as c

    def case(n_tokens, V, shards, rank, dim):
        V_local = V // shards
        ids = c.padded(torch.randint(0, V, (n_tokens,), dtype=torch.int32))
        w = c.padded(torch.randn(V_local, dim), col_pad=3)
        out = c.poisoned((n_tokens, dim), col_pad=1)
        embedding_shard(ids, w, rank * V_local, out)
        return c.close("out", out, reference(ids, w, rank * V_local), atol=0, rtol=0)

    c.main(case, [(1, 4, 1, 0, 1), (40, 100, 2, 0, 70), (33, 120, 4, 2, 64), (100, 90, 3, 1, 130)])
