import sys

import torch
import triton
import triton.language as tl


@triton.jit
def fused_moe_kernel(
    a_ptr, b_ptr, c_ptr, topk_weights_ptr,
    sorted_token_ids_ptr, expert_ids_ptr, num_tokens_post_padded_ptr,
    N, K, EM, num_valid_tokens,
    stride_am, stride_ak,
    stride_be, stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr, top_k: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return

    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id).to(tl.int64)
    token_mask = offs_token < num_valid_tokens

    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    c_mask = token_mask[:, None] & (offs_cn[None, :] < N)

    off_experts = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    if off_experts == -1:
        # expert not on this rank: its rows of the output are zero
        tl.store(c_ptrs, tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], dtype=c_ptr.dtype.element_ty), mask=c_mask)
        return

    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + off_experts * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float16)  # expect: NU001
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator += tl.dot(a, b, out_dtype=tl.float16)  # expect: NU001
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if MUL_ROUTED_WEIGHT:
        moe_weight = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        accumulator = accumulator * moe_weight[:, None]

    tl.store(c_ptrs, accumulator.to(c_ptr.dtype.element_ty), mask=c_mask)


def moe_align_block_size(topk_ids, block_size, num_experts, expert_map=None):
    """Sorted flat (token, slot) ids grouped by expert, each group padded to block_size with
    num_valid; one expert id per block (-1 if the expert is not local); used length."""
    flat = topk_ids.flatten()
    num_valid = flat.numel()
    ids, experts = [], []
    for e in range(num_experts):
        sel = torch.nonzero(flat == e).flatten().to(torch.int32)
        if sel.numel() == 0:
            continue
        padded = triton.cdiv(sel.numel(), block_size) * block_size
        ids.append(torch.cat([sel, torch.full((padded - sel.numel(),), num_valid, dtype=torch.int32)]))
        experts += [int(expert_map[e]) if expert_map is not None else e] * (padded // block_size)
    used = sum(x.numel() for x in ids)
    max_len = num_valid + num_experts * (block_size - 1)
    max_len = triton.cdiv(max_len, block_size) * block_size
    sorted_ids = torch.full((max_len,), num_valid, dtype=torch.int32)
    sorted_ids[:used] = torch.cat(ids)
    expert_ids = torch.full((max_len // block_size,), -1, dtype=torch.int32)
    expert_ids[: len(experts)] = torch.tensor(experts, dtype=torch.int32)
    return sorted_ids, expert_ids, torch.tensor([used], dtype=torch.int32)


def fused_moe(a, w, topk_weights, topk_ids, sorted_ids, expert_ids, num_post_padded,
              out=None, mul_routed_weight=True, BLOCK_SIZE_M=16):
    """out[t * top_k + j] = topk_weights[t, j] * (a[t] @ w[e]) with e = expert of (t, j).
    a: (T, K), w: (E_local, K, N), out: (T * top_k, N)."""
    T, K = a.shape
    E, K2, N = w.shape
    top_k = topk_ids.shape[1]
    if out is None:
        out = torch.empty((T * top_k, N), dtype=a.dtype, device=a.device)
    EM = sorted_ids.numel()
    BLOCK_SIZE_N, BLOCK_SIZE_K = 32, 32
    grid = lambda META: (triton.cdiv(EM, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    fused_moe_kernel[grid](
        a, w, out, topk_weights,
        sorted_ids, expert_ids, num_post_padded,
        N, K, EM, topk_ids.numel(),
        a.stride(0), a.stride(1),
        w.stride(0), w.stride(1), w.stride(2),
        out.stride(0), out.stride(1),
        BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=BLOCK_SIZE_K,
        MUL_ROUTED_WEIGHT=mul_routed_weight, top_k=top_k,
    )
    return out


def reference(a, w, topk_weights, topk_ids, expert_map, mul_routed_weight=True):
    T, top_k = topk_ids.shape
    out = torch.zeros(T * top_k, w.shape[2])
    for t in range(T):
        for j in range(top_k):
            e = int(expert_map[int(topk_ids[t, j])])
            if e >= 0:
                scale = float(topk_weights[t, j]) if mul_routed_weight else 1.0
                out[t * top_k + j] = scale * (a[t].float() @ w[e].float())
    return out.to(a.dtype)


if __name__ == "__main__":
    import _check as c

    def case(T, top_k, E, remote, N, K, mul):
        expert_map = torch.full((E,), -1, dtype=torch.int32)
        local = [e for e in range(E) if e not in remote]
        expert_map[local] = torch.arange(len(local), dtype=torch.int32)
        topk_ids = torch.stack([torch.randperm(E)[:top_k] for _ in range(T)]).to(torch.int32)
        topk_weights = torch.softmax(torch.randn(T, top_k), -1)
        sorted_ids, expert_ids, npp = moe_align_block_size(topk_ids, 16, E, expert_map)
        a = c.padded(torch.randn(T, K).half(), col_pad=8)
        w = c.padded(torch.randn(len(local), K, N).half() * 0.3, col_pad=8)
        out = c.poisoned((T * top_k, N), torch.float16)
        fused_moe(a, w, c.padded(topk_weights), topk_ids, c.padded(sorted_ids), c.padded(expert_ids),
                  c.padded(npp), out=out, mul_routed_weight=mul)
        return c.close("out", out, reference(a, w, topk_weights, topk_ids, expert_map, mul),
                       atol=2e-2, rtol=2e-2, rel_norm=1e-3)

    c.main(case, [(1, 1, 2, (), 8, 16, False), (10, 2, 4, (), 40, 48, True),
                  (21, 2, 6, (2,), 64, 70, True), (30, 3, 5, (0, 3), 50, 256, False), (8, 2, 3, (), 32, 1024, False)])
