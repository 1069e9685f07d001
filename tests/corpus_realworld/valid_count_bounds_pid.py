# cause K15: `num_valid_tokens` bounds the program id (one program per routed slot), not the token ids loaded there.
import torch
import triton
import triton.language as tl


@triton.jit
def gather_routed_rows_kernel(
    x_ptr, token_ids_ptr, out_ptr, num_valid_tokens, n_cols, stride_x, stride_out, BLOCK: tl.constexpr
):
    """out[slot, :] = x[token_ids[slot], :] for each routed slot below `num_valid_tokens`."""
    slot = tl.program_id(0)
    if slot >= num_valid_tokens:
        return
    tok = tl.load(token_ids_ptr + slot).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    ok = cols < n_cols
    row = tl.load(x_ptr + tok * stride_x + cols, mask=ok, other=0.0)
    tl.store(out_ptr + slot.to(tl.int64) * stride_out + cols, row, mask=ok)


def gather_routed_rows(x, token_ids):
    num_valid_tokens = token_ids.numel()
    n_cols = x.shape[1]
    out = torch.empty((num_valid_tokens, n_cols), dtype=x.dtype, device=x.device)
    gather_routed_rows_kernel[(num_valid_tokens,)](
        x, token_ids, out, num_valid_tokens, n_cols, x.stride(0), out.stride(0),
        BLOCK=triton.next_power_of_2(n_cols),
    )  # fmt: skip
    return out


if __name__ == "__main__":
    x = torch.randn(11, 20)
    ids = torch.sort(torch.randint(0, 11, (14,))).values
    torch.testing.assert_close(gather_routed_rows(x, ids), x[ids])
    print("ok")
