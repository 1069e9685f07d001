# cause K4: token ids index the table; the caller guarantees 0 <= id < vocab, as nn.Embedding's contract does.
import torch
import triton
import triton.language as tl


@triton.jit
def embed_kernel(ids_ptr, table_ptr, out_ptr, n_tokens, dim, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    t_mask = offs_t < n_tokens
    d_mask = offs_d < dim
    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other=0).to(tl.int64)
    mask = t_mask[:, None] & d_mask[None, :]
    rows = tl.load(table_ptr + ids[:, None] * dim + offs_d[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + offs_t[:, None].to(tl.int64) * dim + offs_d[None, :], rows, mask=mask)


def embed(ids, table):
    n_tokens = ids.numel()
    vocab, dim = table.shape
    out = torch.empty((n_tokens, dim), dtype=table.dtype, device=table.device)
    grid = (triton.cdiv(n_tokens, 16), triton.cdiv(dim, 32))
    embed_kernel[grid](ids, table, out, n_tokens, dim, BLOCK_T=16, BLOCK_D=32)
    return out


if __name__ == "__main__":
    table = torch.randn(50, 40)
    ids = torch.randint(0, 50, (37,))
    torch.testing.assert_close(embed(ids, table), table[ids])
    print("ok")
