"""Reference fused MoE layer (Mixtral- or DeepSeek-like): routing, expert SwiGLU MLPs, weighted combine.

    out[t] = sum over the top-k experts e of t:  w[t, e] * W2[e] @ (silu(W1g[e] @ x[t]) * (W1u[e] @ x[t]))

Stages:
1. `topk_softmax_kernel`: softmax over the router logits and top-k selection per token, renormalized
   or not (card fused-topk-weighting).
2. alignment: the (token, slot) pairs sorted by expert, each expert's run padded to a multiple of
   BLOCK_M so that every row block belongs to one expert (card moe-token-alignment). Two equal
   implementations: `moe_align_kernel` (one program, one launch; for few pairs) and `align_by_expert`
   (torch sort and scans, no host sync); `use_fused_align` times both once per shape.
3. `moe_gate_up_kernel`: gathers the tokens' rows, multiplies by the gate and up halves of W1 in the
   same K loop, and stores silu(gate) * up: the 2*I wide intermediate never reaches memory
   (card epilogue-fusion). Weight tiles come through pointers or, with W_TMA, one descriptor over all
   experts (card tma-descriptors).
4. `moe_down_kernel`: the down projection with the top-k weight applied in the epilogue.
5. `moe_combine_kernel`: sums each token's top-k rows in fp32.
Weights are stored like nn.Linear's, K contiguous: W1 (E, 2*I, H) with gate rows first, W2 (E, H, I).
"""

from __future__ import annotations

import time

import torch
import triton
import triton.language as tl
from argus.knowledge.kernels._common import install_allocator, interpreting, is_hopper


@triton.jit
def topk_softmax_kernel(
    logits_ptr, weights_ptr, ids_ptr,
    T, E, stride_lt,
    TOP_K: tl.constexpr, RENORM: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr,
):
    """One program routes BLOCK_T tokens: softmax over E experts, then TOP_K rounds of argmax."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    row_ok = rows < T
    ok = row_ok[:, None] & (cols[None, :] < E)
    logits = tl.load(logits_ptr + rows[:, None] * stride_lt + cols[None, :], mask=ok, other=float("-inf"))
    logits = logits.to(tl.float32)
    # Rows past T are all -inf: subtract 0 there instead of their max, so no -inf - -inf appears.
    row_max = tl.where(row_ok, tl.max(logits, 1), 0.0)
    z = tl.exp(logits - row_max[:, None])
    z = tl.where(ok, z, 0.0)
    probs = z / tl.maximum(tl.sum(z, 1), 1e-30)[:, None]
    probs = tl.where(ok, probs, -1.0)  # padded experts can never be picked
    picked_sum = tl.zeros((BLOCK_T,), dtype=tl.float32)
    for slot in tl.static_range(TOP_K):
        best = tl.argmax(probs, 1)
        best_p = tl.max(probs, 1)
        picked_sum += best_p
        tl.store(ids_ptr + rows * TOP_K + slot, best.to(tl.int32), mask=row_ok)
        tl.store(weights_ptr + rows * TOP_K + slot, best_p, mask=row_ok)
        probs = tl.where(cols[None, :] == best[:, None], -1.0, probs)
    if RENORM:
        denom = tl.maximum(picked_sum, 1e-30)
        for slot in tl.static_range(TOP_K):
            w = tl.load(weights_ptr + rows * TOP_K + slot, mask=row_ok, other=0.0)
            tl.store(weights_ptr + rows * TOP_K + slot, w / denom, mask=row_ok)


def route(logits: torch.Tensor, top_k: int, renormalize: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k softmax routing: returns fp32 weights (T, top_k) and int32 expert ids (T, top_k)."""
    t, e = logits.shape
    weights = torch.empty((t, top_k), dtype=torch.float32, device=logits.device)
    ids = torch.empty((t, top_k), dtype=torch.int32, device=logits.device)
    block_t = 16 if interpreting() else 64
    topk_softmax_kernel[(triton.cdiv(t, block_t),)](
        logits, weights, ids, t, e, logits.stride(0),
        TOP_K=top_k, RENORM=renormalize, BLOCK_T=block_t, BLOCK_E=triton.next_power_of_2(e),
    )
    return weights, ids


def align_by_expert(ids: torch.Tensor, num_experts: int, block_m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sorts the flat (token * top_k + slot) indices by expert and pads each expert to block_m rows.

    Returns sorted_ids (padding holds T * top_k, one past the last real index) and the expert of each
    row block (-1 for blocks past the padded total). Sizes are upper bounds, so nothing syncs the host:
    the counts come from scatter_add, not torch.bincount, which reads the largest id back to the host
    (measured on the H200: 0.33-0.56 ms per call under do_bench, more than the expert GEMMs at 16 tokens).
    """
    flat = ids.flatten().to(torch.int64)
    n = flat.numel()
    capacity = triton.cdiv(n + num_experts * (block_m - 1), block_m) * block_m
    counts = torch.zeros(num_experts, dtype=torch.int64, device=ids.device).scatter_add_(0, flat, torch.ones_like(flat))
    padded = (counts + block_m - 1) // block_m * block_m
    ends = torch.cumsum(padded, 0)
    starts = ends - padded
    order = torch.argsort(flat, stable=True)
    experts_sorted = flat[order]
    first_of_expert = torch.cumsum(counts, 0) - counts
    rank = torch.arange(n, device=ids.device) - first_of_expert[experts_sorted]
    sorted_ids = torch.full((capacity,), n, dtype=torch.int32, device=ids.device)
    sorted_ids[starts[experts_sorted] + rank] = order.to(torch.int32)
    block_start = torch.arange(0, capacity, block_m, device=ids.device)
    block_expert = torch.searchsorted(ends, block_start, right=True).to(torch.int32)
    block_expert = torch.where(block_expert < num_experts, block_expert, -1)
    return sorted_ids, block_expert


@triton.jit
def moe_align_kernel(
    ids_ptr, sorted_ids_ptr, block_expert_ptr,
    N, E, capacity,
    BLOCK_M: tl.constexpr, BLOCK_E: tl.constexpr, CHUNK: tl.constexpr,
):
    """align_by_expert in one program (few tokens): counts, padded offsets, block owners and the scatter.

    Same output as the torch path, with each expert's pairs in their original order (ranks come from a
    prefix count over the chunk); one launch instead of a dozen small ones (card launch-overhead).
    """
    experts = tl.arange(0, BLOCK_E)
    counts = tl.zeros((BLOCK_E,), dtype=tl.int32)
    for start in range(0, N, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        e = tl.load(ids_ptr + offs, mask=offs < N, other=BLOCK_E)  # BLOCK_E matches no expert
        counts += tl.sum((e[:, None] == experts[None, :]).to(tl.int32), 0)
    padded = (counts + BLOCK_M - 1) // BLOCK_M * BLOCK_M
    ends = tl.cumsum(padded, 0)
    starts = ends - padded
    # Every slot gets the fill value N and every block its expert (-1 past the padded total) ...
    for start in range(0, capacity, CHUNK):
        pos = start + tl.arange(0, CHUNK)
        owner = tl.sum((ends[None, :] <= pos[:, None]).to(tl.int32), 1)  # searchsorted(ends, pos, right)
        owner = tl.where(owner < E, owner, -1)
        is_first = pos % BLOCK_M == 0
        tl.store(block_expert_ptr + pos // BLOCK_M, owner, mask=is_first & (pos < capacity))
        tl.store(sorted_ids_ptr + pos, tl.full((CHUNK,), 0, tl.int32) + N, mask=pos < capacity)
    # ... then the real pairs overwrite theirs (after a barrier: one program, so the fill lands first):
    # slot = start of the expert + pairs of that expert before this one. An id outside [0, E) is
    # dropped rather than written to slot 0.
    tl.debug_barrier()
    running = starts
    for start in range(0, N, CHUNK):
        offs = start + tl.arange(0, CHUNK)
        e = tl.load(ids_ptr + offs, mask=offs < N, other=BLOCK_E)
        onehot = (e[:, None] == experts[None, :]).to(tl.int32)
        before = tl.cumsum(onehot, 0) - onehot  # same-expert pairs earlier in this chunk
        slot = tl.sum(onehot * (before + running[None, :]), 1)
        ok = (offs < N) & (e >= 0) & (e < E) & (slot < capacity)
        tl.store(sorted_ids_ptr + slot, offs.to(tl.int32), mask=ok)
        running += tl.sum(onehot, 0)


# Above this many (token, slot) pairs times experts the one-program align is never tried: measured on
# the H200 it took 0.43 ms for 6144 pairs over 64 experts (0.03 ms for 96 pairs, 0.10 ms for 8192 over 8).
FUSED_ALIGN_MAX_WORK = 2**17
_ALIGN_PICK: dict[tuple, bool] = {}


def _seconds_per_call(fn: object, reps: int = 5) -> float:
    """Wall time per call including the host's launches (what a small align costs a serving loop)."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps


def use_fused_align(ids: torch.Tensor, num_experts: int, block_m: int) -> bool:
    """One-program align or the torch path: timed once per (pairs, experts, block) on the GPU.

    Outside that (the interpreter, a CUDA graph being captured) a rule decides: fused for small work.
    """
    n = ids.numel()
    small = n * triton.next_power_of_2(num_experts) <= FUSED_ALIGN_MAX_WORK
    key = (n, num_experts, block_m, ids.device)
    if key in _ALIGN_PICK:
        return _ALIGN_PICK[key]
    if not small or ids.device.type != "cuda" or interpreting() or torch.cuda.is_current_stream_capturing():
        return small
    fused = _seconds_per_call(lambda: align_fused(ids, num_experts, block_m))
    unfused = _seconds_per_call(lambda: align_by_expert(ids, num_experts, block_m))
    _ALIGN_PICK[key] = fused <= unfused
    return _ALIGN_PICK[key]


def align_fused(ids: torch.Tensor, num_experts: int, block_m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """align_by_expert's result from one kernel launch (worth it for a few thousand pairs at most)."""
    flat = ids.flatten()
    n = flat.numel()
    capacity = triton.cdiv(n + num_experts * (block_m - 1), block_m) * block_m
    sorted_ids = torch.empty((capacity,), dtype=torch.int32, device=ids.device)
    block_expert = torch.empty((capacity // block_m,), dtype=torch.int32, device=ids.device)
    chunk = 32 if interpreting() else 128
    moe_align_kernel[(1,)](flat, sorted_ids, block_expert, n, num_experts, capacity,
                           BLOCK_M=block_m, BLOCK_E=triton.next_power_of_2(num_experts), CHUNK=chunk,
                           num_warps=4)
    return sorted_ids, block_expert


def gemm_config(bn: int, bk: int, warps: int, stages: int, w_tma: bool = False) -> triton.Config:
    """One config of the expert GEMMs; W_TMA reads the weight tiles through a tensor descriptor."""
    return triton.Config({"BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "W_TMA": w_tma}, num_warps=warps, num_stages=stages)


# (BLOCK_N, BLOCK_K, num_warps, num_stages, W_TMA): the autotuner's space on the GPU.
# The W_TMA entries won on the H200 sweep (kernels-explore-h200-moe.txt): down 128x64 w4 s4 with
# descriptors 7.30 ms against 7.59 without (Mixtral, 4096 tokens); gate/up 64x64 w4 s4 7.96 against 8.41.
GATE_UP_CONFIGS = [(64, 64, 4, 4, False), (64, 128, 4, 3, False), (128, 64, 8, 3, False), (128, 64, 4, 4, False),
                   (64, 64, 4, 4, True)]
DOWN_CONFIGS = [(64, 64, 4, 4, False), (64, 128, 4, 3, False), (128, 64, 8, 3, False), (128, 64, 4, 4, False),
                (128, 128, 8, 3, False), (128, 64, 4, 4, True), (128, 128, 8, 3, True)]


def _gemm_configs(gate_up: bool) -> list[triton.Config]:
    if interpreting():
        return [triton.Config({"BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "W_TMA": True}, num_warps=4, num_stages=1)]
    return [gemm_config(*c) for c in (GATE_UP_CONFIGS if gate_up else DOWN_CONFIGS)]


def _prune_w_tma(configs: list[triton.Config], named_args: dict, **kwargs: object) -> list[triton.Config]:
    """Weight descriptors only where the weights allow them (W_OK: contiguous, aligned, sm90)."""
    if kwargs.get("W_OK", named_args.get("W_OK")):
        return configs
    return [c for c in configs if not c.kwargs["W_TMA"]] or configs[:1]


@triton.jit
def _row_block(pid, num_row_blocks, N, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """GROUP_M swizzle over (row block, column block): a band of row blocks shares each weight tile in L2."""
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = min(num_row_blocks - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows
    return pid_m, pid_n


@triton.autotune(configs=_gemm_configs(True), key=["N", "K", "BLOCK_M", "W_OK"],
                 prune_configs_by={"early_config_prune": _prune_w_tma})
@triton.jit
def moe_gate_up_kernel(
    x_ptr, w_ptr, out_ptr, sorted_ids_ptr, block_expert_ptr,
    N, K, num_valid, num_row_blocks, top_k,
    stride_xm, stride_we, stride_wn, stride_om, num_experts,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    W_OK: tl.constexpr, W_TMA: tl.constexpr,
):
    """out[r, n] = silu(x[r // top_k] . W1[e, n]) * (x[r // top_k] . W1[e, N + n]) for the rows r of one expert e.

    W_TMA (contiguous W1): the weights as one [E * 2N, K] descriptor. A gate tile at the N edge reads
    rows of the up half (and an up tile the next expert's rows): only into columns >= N, which are
    never stored.
    """
    pid_m, pid_n = _row_block(tl.program_id(0), num_row_blocks, N, BLOCK_N, GROUP_M)
    expert = tl.load(block_expert_ptr + pid_m)
    if expert < 0:
        return  # past the padded total: no rows here
    slots = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    flat = tl.load(sorted_ids_ptr + slots)
    row_ok = flat < num_valid  # padding rows hold num_valid
    tokens = tl.where(row_ok, flat // top_k, 0).to(tl.int64)

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = offs_n < N
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + tokens[:, None] * stride_xm + offs_k[None, :]
    w_base = w_ptr + expert.to(tl.int64) * stride_we
    g_ptrs = w_base + offs_n[:, None].to(tl.int64) * stride_wn + offs_k[None, :]
    # The up half sits N rows below the gate half.
    u_ptrs = w_base + (offs_n + N)[:, None].to(tl.int64) * stride_wn + offs_k[None, :]

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if W_TMA:
        w_desc = tl.make_tensor_descriptor(w_ptr, shape=[num_experts * 2 * N, K], strides=[stride_wn, 1],
                                           block_shape=[BLOCK_N, BLOCK_K])
        g_row = expert * 2 * N + pid_n * BLOCK_N
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_ok = offs_k < K - k * BLOCK_K
            a = tl.load(x_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            g = w_desc.load([g_row, k * BLOCK_K])
            u = w_desc.load([g_row + N, k * BLOCK_K])
            acc_g = tl.dot(a, tl.trans(g), acc_g)
            acc_u = tl.dot(a, tl.trans(u), acc_u)
            x_ptrs += BLOCK_K
    else:
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_ok = offs_k < K - k * BLOCK_K
            a = tl.load(x_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            g = tl.load(g_ptrs, mask=n_ok[:, None] & k_ok[None, :], other=0.0)
            u = tl.load(u_ptrs, mask=n_ok[:, None] & k_ok[None, :], other=0.0)
            acc_g = tl.dot(a, tl.trans(g), acc_g)
            acc_u = tl.dot(a, tl.trans(u), acc_u)
            x_ptrs += BLOCK_K
            g_ptrs += BLOCK_K
            u_ptrs += BLOCK_K

    act = acc_g / (1.0 + tl.exp(-acc_g)) * acc_u  # SwiGLU in fp32, fused into the epilogue
    out_ptrs = out_ptr + flat[:, None].to(tl.int64) * stride_om + offs_n[None, :]
    tl.store(out_ptrs, act.to(out_ptr.dtype.element_ty), mask=row_ok[:, None] & n_ok[None, :])


@triton.autotune(configs=_gemm_configs(False), key=["N", "K", "BLOCK_M", "W_OK"],
                 prune_configs_by={"early_config_prune": _prune_w_tma})
@triton.jit
def moe_down_kernel(
    a_ptr, w_ptr, out_ptr, sorted_ids_ptr, block_expert_ptr, topk_weights_ptr,
    N, K, num_valid, num_row_blocks,
    stride_am, stride_we, stride_wn, stride_om, num_experts,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    W_OK: tl.constexpr, W_TMA: tl.constexpr,
):
    """out[r, n] = topk_weight[r] * (a[r] . W2[e, n]) for the rows r (flat token*top_k+slot) of expert e.

    W_TMA (contiguous W2): the weights as one [E * N, K] descriptor; a tile at the N edge reads the
    next expert's rows into columns that are never stored.
    """
    pid_m, pid_n = _row_block(tl.program_id(0), num_row_blocks, N, BLOCK_N, GROUP_M)
    expert = tl.load(block_expert_ptr + pid_m)
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
    w_ptrs = w_ptr + expert.to(tl.int64) * stride_we + offs_n[:, None].to(tl.int64) * stride_wn + offs_k[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if W_TMA:
        w_desc = tl.make_tensor_descriptor(w_ptr, shape=[num_experts * N, K], strides=[stride_wn, 1],
                                           block_shape=[BLOCK_N, BLOCK_K])
        w_row = expert * N + pid_n * BLOCK_N
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_ok = offs_k < K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            w = w_desc.load([w_row, k * BLOCK_K])
            acc = tl.dot(a, tl.trans(w), acc)
            a_ptrs += BLOCK_K
    else:
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_ok = offs_k < K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            w = tl.load(w_ptrs, mask=n_ok[:, None] & k_ok[None, :], other=0.0)
            acc = tl.dot(a, tl.trans(w), acc)
            a_ptrs += BLOCK_K
            w_ptrs += BLOCK_K

    weight = tl.load(topk_weights_ptr + rows, mask=row_ok, other=0.0)
    acc = acc * weight[:, None]  # top-k weighting in the epilogue: no extra pass over the rows
    out_ptrs = out_ptr + rows[:, None] * stride_om + offs_n[None, :]
    tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty), mask=row_ok[:, None] & n_ok[None, :])


@triton.jit
def moe_combine_kernel(y_ptr, out_ptr, H, TOP_K: tl.constexpr, BLOCK_H: tl.constexpr):
    """out[t] = sum of the TOP_K weighted expert rows y[t * TOP_K + slot], added in fp32."""
    token = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ok = offs < H
    total = tl.zeros((BLOCK_H,), dtype=tl.float32)
    for slot in tl.static_range(TOP_K):
        total += tl.load(y_ptr + (token * TOP_K + slot) * H + offs, mask=ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + token * H + offs, total.to(out_ptr.dtype.element_ty), mask=ok)


def choose_block_m(num_rows: int, num_experts: int) -> int:
    """Row block per expert: about the average rows per expert (16..128), so padding stays small."""
    avg = num_rows // max(num_experts, 1)
    if interpreting():
        return 16
    for bm in (16, 32, 64):
        if avg <= bm:
            return bm
    return 128


def fused_moe(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, logits: torch.Tensor, top_k: int,
              renormalize: bool = True, *, pinned: tuple[triton.Config, triton.Config] | None = None,
              block_m: int | None = None, fused_align: bool | None = None) -> torch.Tensor:
    """MoE layer for x (T, H), W1 (E, 2*I, H), W2 (E, H, I) and router logits (T, E); returns (T, H).

    pinned (gate/up config, down config), block_m and fused_align override the launcher's choices
    (the exploration sweep uses them); by default the autotuner, choose_block_m and the pair count decide.
    """
    t, h = x.shape
    e, two_i, h1 = w1.shape
    inter = two_i // 2
    assert h1 == h and w2.shape == (e, h, inter) and logits.shape == (t, e)
    assert x.stride(1) == 1 and w1.stride(2) == 1 and w2.stride(2) == 1
    weights, ids = route(logits, top_k, renormalize)
    num_valid = t * top_k
    if block_m is None:
        block_m = choose_block_m(num_valid, e)
    if fused_align is None:
        fused_align = use_fused_align(ids, e, block_m)
    align = align_fused if fused_align else align_by_expert
    sorted_ids, block_expert = align(ids, e, block_m)
    num_row_blocks = block_expert.numel()
    # Weight descriptors: contiguous weights with 16-byte rows, on sm90 (or the interpreter).
    w_ok = (w1.is_contiguous() and w2.is_contiguous() and h % 8 == 0 and inter % 8 == 0
            and (is_hopper(x.device) or interpreting()))
    if w_ok:
        install_allocator(x.device)
    up_cfg, down_cfg = pinned if pinned is not None else (None, None)

    act = torch.empty((num_valid, inter), dtype=x.dtype, device=x.device)

    def grid_up(meta: dict) -> tuple[int]:
        return (num_row_blocks * triton.cdiv(inter, meta["BLOCK_N"]),)

    up_kernel = moe_gate_up_kernel if up_cfg is None else moe_gate_up_kernel.fn
    up_meta = {} if up_cfg is None else up_cfg.all_kwargs()
    up_kernel[grid_up if up_cfg is None else grid_up(up_cfg.kwargs)](
        x, w1, act, sorted_ids, block_expert,
        inter, h, num_valid, num_row_blocks, top_k,
        x.stride(0), w1.stride(0), w1.stride(1), act.stride(0), e,
        BLOCK_M=block_m, W_OK=w_ok, **up_meta,
    )
    y = torch.empty((num_valid, h), dtype=x.dtype, device=x.device)

    def grid_down(meta: dict) -> tuple[int]:
        return (num_row_blocks * triton.cdiv(h, meta["BLOCK_N"]),)

    down_kernel = moe_down_kernel if down_cfg is None else moe_down_kernel.fn
    down_meta = {} if down_cfg is None else down_cfg.all_kwargs()
    down_kernel[grid_down if down_cfg is None else grid_down(down_cfg.kwargs)](
        act, w2, y, sorted_ids, block_expert, weights,
        h, inter, num_valid, num_row_blocks,
        act.stride(0), w2.stride(0), w2.stride(1), y.stride(0), e,
        BLOCK_M=block_m, W_OK=w_ok, **down_meta,
    )
    out = torch.empty((t, h), dtype=x.dtype, device=x.device)
    block_h = 256 if interpreting() else 1024
    moe_combine_kernel[(t, triton.cdiv(h, block_h))](y, out, h, TOP_K=top_k, BLOCK_H=block_h)
    return out


def reference(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, logits: torch.Tensor, top_k: int,
              renormalize: bool = True) -> torch.Tensor:
    """fp32 torch reference: a loop over experts."""
    probs = logits.float().softmax(-1)
    weights, ids = probs.topk(top_k, dim=-1)
    if renormalize:
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
        out.index_add_(0, tok, (act.to(x.dtype).float() @ w2[expert].float().t()) * weights[tok, slot, None])
    return out.to(x.dtype)
