"""The MoE alignment in one Triton launch: (token, slot) pairs sorted by expert, each expert padded.

knowledge/kernels/moe.py's launcher picks between this and its torch path (`align_by_expert`, a dozen
small launches); both give the same output: `sorted_ids` (each expert's pairs in their original order,
each expert's run padded to a multiple of BLOCK_M with the fill value N = T * top_k) and the expert of
each BLOCK_M row block (-1 past the padded total). Card moe-token-alignment.

Session 9 (gpu7): the one-program kernel became a grid of CHUNK-pair programs. Every program counts
all pairs (each reads the whole id list, a few KB to 100 KB, from L2) and the pairs of the chunks
before its own, so it knows each of its pairs' slots with no sync between programs and no atomics:
slot = the expert's padded start + that expert's pairs in earlier chunks + those earlier in this
chunk. The padding slots and the block owners are spread over the programs too; they are disjoint
from the real slots, so no write order is needed. One SM had taken 0.43 ms for 6144 pairs over 64
experts, which kept the DeepSeek-like 1024-token layer on the torch path and host-bound.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from argus.knowledge.kernels._common import interpreting


@triton.jit
def moe_align_kernel(
    ids_ptr, sorted_ids_ptr, block_expert_ptr,
    N, E, capacity,
    BLOCK_M: tl.constexpr, BLOCK_E: tl.constexpr, CHUNK: tl.constexpr, SCAN: tl.constexpr,
):
    """Program p places pairs [p * CHUNK, (p + 1) * CHUNK) and a strided share of the padding slots.

    Counts come from a pass over all N ids in SCAN-wide steps; ids outside [0, E) count for no
    expert and are dropped rather than written to a slot.
    """
    pid = tl.program_id(0)
    first = pid * CHUNK
    experts = tl.arange(0, BLOCK_E)
    real_expert = experts < E
    counts = tl.zeros((BLOCK_E,), dtype=tl.int32)
    before = tl.zeros((BLOCK_E,), dtype=tl.int32)  # pairs of each expert in the chunks before this one
    for start in range(0, N, SCAN):
        offs = start + tl.arange(0, SCAN)
        e = tl.load(ids_ptr + offs, mask=offs < N, other=BLOCK_E)  # BLOCK_E matches no expert
        hit = ((e[:, None] == experts[None, :]) & real_expert[None, :]).to(tl.int32)
        counts += tl.sum(hit, 0)
        before += tl.sum(hit * (offs < first).to(tl.int32)[:, None], 0)
    padded = (counts + BLOCK_M - 1) // BLOCK_M * BLOCK_M
    ends = tl.cumsum(padded, 0)
    starts = ends - padded
    filled = starts + counts  # each expert's first padding slot
    # Padding slots (fill value N) and block owners, CHUNK slots at a time, strided over the programs.
    for pos0 in range(first, capacity, tl.num_programs(0) * CHUNK):
        pos = pos0 + tl.arange(0, CHUNK)
        in_range = pos < capacity
        owner = tl.sum((ends[None, :] <= pos[:, None]).to(tl.int32), 1)  # searchsorted(ends, pos, right)
        in_pad = tl.sum(((filled[None, :] <= pos[:, None]) & (pos[:, None] < ends[None, :])).to(tl.int32), 1)
        pad = (in_pad > 0) | (owner >= E)
        tl.store(sorted_ids_ptr + pos, tl.full((CHUNK,), 0, tl.int32) + N, mask=pad & in_range)
        tl.store(block_expert_ptr + pos // BLOCK_M, tl.where(owner < E, owner, -1),
                 mask=(pos % BLOCK_M == 0) & in_range)
    # This program's pairs: slot = padded start + earlier pairs of the same expert.
    offs = first + tl.arange(0, CHUNK)
    e = tl.load(ids_ptr + offs, mask=offs < N, other=BLOCK_E)
    onehot = ((e[:, None] == experts[None, :]) & real_expert[None, :]).to(tl.int32)
    rank = tl.cumsum(onehot, 0) - onehot  # same-expert pairs earlier in this chunk
    slot = tl.sum(onehot * (rank + (starts + before)[None, :]), 1)
    ok = (offs < N) & (e >= 0) & (e < E) & (slot < capacity)
    tl.store(sorted_ids_ptr + slot, offs.to(tl.int32), mask=ok)


def align_capacity(num_pairs: int, num_experts: int, block_m: int) -> int:
    """Rows of the aligned layout: an upper bound on the padded total, so the host never reads counts."""
    return triton.cdiv(num_pairs + num_experts * (block_m - 1), block_m) * block_m


def align_meta(num_pairs: int, num_experts: int, block_m: int) -> tuple[tuple[int], dict]:
    """Grid and constexprs of moe_align_kernel: CHUNK pairs per program, a SCAN x BLOCK_E count tile
    of about 8K lanes (64 registers a thread at 4 warps)."""
    block_e = triton.next_power_of_2(num_experts)
    chunk = 32 if interpreting() else 128
    scan = 32 if interpreting() else max(32, min(1024, 8192 // block_e))
    grid = (max(1, triton.cdiv(num_pairs, chunk)),)
    return grid, {"BLOCK_M": block_m, "BLOCK_E": block_e, "CHUNK": chunk, "SCAN": scan}


def align_fused_into(ids: torch.Tensor, num_experts: int, sorted_ids: torch.Tensor,
                     block_expert: torch.Tensor, block_m: int) -> None:
    """moe_align_kernel into given buffers (the MoE plan's own, reused call after call)."""
    n = ids.numel()
    grid, meta = align_meta(n, num_experts, block_m)
    moe_align_kernel[grid](ids, sorted_ids, block_expert, n, num_experts, sorted_ids.numel(), **meta, num_warps=4)


def align_fused(ids: torch.Tensor, num_experts: int, block_m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """align_by_expert's result (moe.py) from one kernel launch; ids must be contiguous."""
    flat = ids.flatten()
    capacity = align_capacity(flat.numel(), num_experts, block_m)
    sorted_ids = torch.empty((capacity,), dtype=torch.int32, device=ids.device)
    block_expert = torch.empty((capacity // block_m,), dtype=torch.int32, device=ids.device)
    align_fused_into(flat, num_experts, sorted_ids, block_expert, block_m)
    return sorted_ids, block_expert
