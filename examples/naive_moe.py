"""A deliberately naive fused MoE layer (SwiGLU experts, top-k routing), fp16, fixed 32x32x32 tiles.

Routing and the expert sort are plain torch in the launcher; one Triton kernel computes the gate/up
projection with SwiGLU for the rows of one expert, a second the down projection with the routing weight;
torch sums each token's top-k rows. No autotune, no swizzle. Weights are stored like nn.Linear's:
W1 (E, 2*I, H) with the gate rows first, W2 (E, H, I). The task is naive_moe.py.argus.toml.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def moe_gate_up_kernel(
    x_ptr, w_ptr, out_ptr, sorted_ids_ptr, block_expert_ptr,
    N, K, num_valid, top_k,
    stride_xm, stride_we, stride_wn, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
    if expert < 0:
        return
    slots = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    flat = tl.load(sorted_ids_ptr + slots)
    row_ok = flat < num_valid
    tokens = tl.where(row_ok, flat // top_k, 0).to(tl.int64)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = offs_n < N
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + tokens[:, None] * stride_xm + offs_k[None, :]
    g_ptrs = w_ptr + expert * stride_we + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None]
    u_ptrs = w_ptr + expert * stride_we + (offs_n + N)[None, :].to(tl.int64) * stride_wn + offs_k[:, None]
    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = offs_k < K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        g = tl.load(g_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        u = tl.load(u_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc_g += tl.dot(a, g)
        acc_u += tl.dot(a, u)
        x_ptrs += BLOCK_K
        g_ptrs += BLOCK_K
        u_ptrs += BLOCK_K
    act = acc_g / (1.0 + tl.exp(-acc_g)) * acc_u
    out_ptrs = out_ptr + flat[:, None].to(tl.int64) * stride_om + offs_n[None, :]
    tl.store(out_ptrs, act.to(tl.float16), mask=row_ok[:, None] & n_ok[None, :])


@triton.jit
def moe_down_kernel(
    a_ptr, w_ptr, out_ptr, sorted_ids_ptr, block_expert_ptr, weight_ptr,
    N, K, num_valid,
    stride_am, stride_we, stride_wn, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
    if expert < 0:
        return
    slots = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    flat = tl.load(sorted_ids_ptr + slots)
    row_ok = flat < num_valid
    rows = tl.where(row_ok, flat, 0).to(tl.int64)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = offs_n < N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :]
    w_ptrs = w_ptr + expert * stride_we + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = offs_k < K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc += tl.dot(a, w)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    weight = tl.load(weight_ptr + rows, mask=row_ok, other=0.0)
    out = acc * weight[:, None]
    out_ptrs = out_ptr + rows[:, None] * stride_om + offs_n[None, :]
    tl.store(out_ptrs, out.to(tl.float16), mask=row_ok[:, None] & n_ok[None, :])


def sort_by_expert(ids: torch.Tensor, num_experts: int, block_m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat (token * top_k + slot) indices grouped by expert, each expert padded to block_m rows."""
    flat = ids.flatten().to(torch.int64)
    n = flat.numel()
    counts = torch.bincount(flat, minlength=num_experts).tolist()
    order = torch.argsort(flat, stable=True)
    pieces, experts, start = [], [], 0
    for e, c in enumerate(counts):
        if c == 0:
            continue
        padded = triton.cdiv(c, block_m) * block_m
        piece = torch.full((padded,), n, dtype=torch.int64, device=ids.device)
        piece[:c] = order[start:start + c]
        pieces.append(piece)
        experts += [e] * (padded // block_m)
        start += c
    sorted_ids = torch.cat(pieces).to(torch.int32)
    return sorted_ids, torch.tensor(experts, dtype=torch.int32, device=ids.device)


def fused_moe(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, logits: torch.Tensor, top_k: int) -> torch.Tensor:
    T, H = x.shape
    E, two_i, _ = w1.shape
    inter = two_i // 2
    probs = torch.softmax(logits.float(), dim=-1)
    weights, ids = torch.topk(probs, top_k, dim=-1)
    weights = (weights / weights.sum(-1, keepdim=True)).flatten().contiguous()
    BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32
    sorted_ids, block_expert = sort_by_expert(ids, E, BLOCK_M)
    num_valid = T * top_k
    act = torch.empty((num_valid, inter), dtype=x.dtype, device=x.device)
    grid = (block_expert.numel(), triton.cdiv(inter, BLOCK_N))
    moe_gate_up_kernel[grid](
        x, w1, act, sorted_ids, block_expert, inter, H, num_valid, top_k,
        x.stride(0), w1.stride(0), w1.stride(1), act.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    y = torch.empty((num_valid, H), dtype=x.dtype, device=x.device)
    grid = (block_expert.numel(), triton.cdiv(H, BLOCK_N))
    moe_down_kernel[grid](
        act, w2, y, sorted_ids, block_expert, weights, H, inter, num_valid,
        act.stride(0), w2.stride(0), w2.stride(1), y.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y.view(T, top_k, H).float().sum(1).to(x.dtype)


def reference(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, logits: torch.Tensor, top_k: int) -> torch.Tensor:
    probs = logits.float().softmax(-1)
    weights, ids = probs.topk(top_k, dim=-1)
    weights = weights / weights.sum(-1, keepdim=True)
    xf = x.float()
    out = torch.zeros_like(xf)
    inter = w2.shape[2]
    for expert in range(w1.shape[0]):
        tok, slot = (ids == expert).nonzero(as_tuple=True)
        if tok.numel() == 0:
            continue
        hidden = xf[tok] @ w1[expert].float().t()
        act = torch.nn.functional.silu(hidden[:, :inter]) * hidden[:, inter:]
        out.index_add_(0, tok, (act @ w2[expert].float().t()) * weights[tok, slot, None])
    return out
