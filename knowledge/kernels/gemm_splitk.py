"""The split-K path of the reference GEMM (knowledge/kernels/gemm.py's launcher `matmul` picks it).

For shapes whose M x N grid has too few tiles to fill the SMs (decode-like M, 1024^2 outputs) K is cut
into SPLIT_K slices, one program per (tile, slice). One launch: each slice stores its fp32 partial sum,
bumps the tile's arrival counter, and the last slice to arrive adds the partials in slice order
(deterministic) and writes the output, then re-arms the counter for the next call.
- `gemm_splitk_kernel`: A and B through pointers (any strides), or with USE_TMA through tensor
  descriptors built by each program on the device; SPLIT_K == 1 with pointers is the path for shapes
  that TMA cannot take.
- `gemm_splitk_host_kernel`: A and B through descriptors built on the host (kernel parameters): a program
  of a split runs only a few K steps, so a device-side descriptor set-up is a visible share of its time.
`choose_split_k` is the split for shapes that gemm.TUNED does not pin. Cards: split-k-stream-k,
tma-descriptors, pid-swizzle-l2.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from argus.knowledge.kernels._common import (
    FastLaunch,
    install_allocator,
    interpreting,
)
from argus.knowledge.kernels._desc_launch import DescLaunch


@triton.jit
def grouped_tile(tile, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of output tile number `tile` in the GROUP_M swizzled order (card pid-swizzle-l2).

    Consecutive tiles walk down a band of GROUP_M tile rows before moving right, so the programs that
    run at the same time share their B columns (and A rows) in L2. The last band may be shorter.
    Both split-K kernels order their tiles through it; gemm.py's persistent walk inlines the same order
    (a helper imported from another module is not followed by `argus check`).
    """
    per_group = GROUP_M * tiles_n
    first_m = (tile // per_group) * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (tile % per_group) % rows
    pid_n = (tile % per_group) // rows
    return pid_m, pid_n


def _splitk_configs() -> list[triton.Config]:
    if interpreting():
        return [triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2})]
    out = []
    for bm, bn, bk, stages, warps in [
        (64, 64, 128, 4, 4),
        (64, 128, 64, 4, 4),
        (64, 128, 128, 3, 4),
        (128, 128, 64, 4, 8),
        (128, 256, 64, 3, 8),
    ]:
        out.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_stages=stages, num_warps=warps))
    return out


# reset_to_zero: while a config is benchmarked the counters must start at zero (each launch re-arms them).
@triton.autotune(configs=_splitk_configs(), key=["M", "N", "K", "SPLIT_K", "USE_TMA"], reset_to_zero=["counts_ptr"])
@triton.jit
def gemm_splitk_kernel(
    a_ptr, b_ptr, c_ptr, ws_ptr, counts_ptr,
    M, N, K, K_PER_SPLIT,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    SPLIT_K: tl.constexpr, USE_TMA: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    split = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = grouped_tile(pid, tiles_m, tiles_n, GROUP_M)

    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    k_start = split.to(tl.int64) * K_PER_SPLIT
    k_stop = min(k_start + K_PER_SPLIT, K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if USE_TMA:
        # K_PER_SPLIT is a multiple of BLOCK_K, so a slice's blocks never reach into the next slice;
        # the descriptor zero-fills the last slice's blocks past K.
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        k0 = split * K_PER_SPLIT  # int32 offsets for the descriptors (K < 2**31)
        for k in tl.range(k0, min(k0 + K_PER_SPLIT, K), BLOCK_K):
            a = a_desc.load([off_m, k])
            b = b_desc.load([k, off_n])
            acc = tl.dot(a, b, acc)
    else:
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + (k_start + offs_k)[None, :].to(tl.int64) * stride_ak
        b_ptrs = b_ptr + (k_start + offs_k)[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn
        for k in tl.range(k_start, k_stop, BLOCK_K):
            k_ok = offs_k < k_stop - k
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & k_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=k_ok[:, None] & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk

    _splitk_epilogue(acc, c_ptr, ws_ptr, counts_ptr, pid, split, offs_m, offs_n, M, N, stride_cm, stride_cn,
                     SPLIT_K, BLOCK_M, BLOCK_N)


@triton.jit
def _splitk_epilogue(acc, c_ptr, ws_ptr, counts_ptr, pid, split, offs_m, offs_n, M, N, stride_cm, stride_cn,
                     SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Stores a tile (SPLIT_K == 1) or its slice's partial sum, which the last slice to arrive adds up."""
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    if SPLIT_K == 1:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)
    else:
        # Each split owns its fp32 slice of the workspace (SPLIT_K, M, N).
        tile_ws = offs_m[:, None] * N + offs_n[None, :]
        tl.store(ws_ptr + split.to(tl.int64) * M * N + tile_ws, acc, mask=mask)
        # Every thread's partial is stored before one thread announces it (release); the split that
        # arrives last (acquire) sums the slices in a fixed order, so the result is deterministic.
        tl.debug_barrier()
        arrived = tl.atomic_add(counts_ptr + pid, 1, sem="acq_rel", scope="gpu")
        if arrived == SPLIT_K - 1:
            total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for s in tl.static_range(SPLIT_K):
                total += tl.load(ws_ptr + s * M * N + tile_ws, mask=mask, other=0.0, cache_modifier=".cg")
            tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=mask)
            tl.atomic_xchg(counts_ptr + pid, 0, sem="relaxed", scope="gpu")  # re-armed for the next call


@triton.jit
def gemm_splitk_host_kernel(
    a_desc, b_desc, c_ptr, ws_ptr, counts_ptr,
    M, N, K, K_PER_SPLIT, stride_cm, stride_cn,
    SPLIT_K: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """gemm_splitk_kernel's descriptor path with host-built descriptors (kernel parameters): a program of
    a split runs only a few K steps, so the device-side descriptor set-up before its first load is a
    visible share of its time (card tma-descriptors). K_PER_SPLIT is a multiple of BLOCK_K."""
    pid = tl.program_id(0)
    split = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = grouped_tile(pid, tiles_m, tiles_n, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k0 = split * K_PER_SPLIT
    for k in tl.range(k0, min(k0 + K_PER_SPLIT, K), BLOCK_K):
        a = a_desc.load([off_m, k])
        b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    _splitk_epilogue(acc, c_ptr, ws_ptr, counts_ptr, pid, split, offs_m, offs_n, M, N, stride_cm, stride_cn,
                     SPLIT_K, BLOCK_M, BLOCK_N)


def choose_split_k(m: int, n: int, k: int, sms: int) -> int:
    """Split K only when even 64 x 128 output tiles fill less than half the SMs and K is long.

    The heuristic for shapes nobody tuned (served shapes are pinned in TUNED). Measured on the H200
    (benchmarks/results): splitting further than one program per SM was slower for M = 16, since each
    extra split adds fp32 workspace traffic.
    """
    tiles = triton.cdiv(m, 64) * triton.cdiv(n, 128)
    if tiles * 2 > sms or k < 1024:
        return 1
    split = 1
    while tiles * split * 2 <= sms and k // (split * 2) >= 512 and split < 16:
        split *= 2
    return split


def _plan_splitk(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, split_k: int, use_tma: bool,
                 config: triton.Config | None) -> object:
    """The split-K kernel (split_k == 1: one program per tile): workspace and counters live with the plan."""
    m, k = a.shape
    n = b.shape[1]
    assert b.shape == (k, n) and out.shape == (m, n)
    if use_tma:
        install_allocator(a.device)
    # Slices are multiples of 128 (every BLOCK_K divides it), so no K block straddles two slices.
    k_per_split = triton.cdiv(triton.cdiv(k, split_k), 128) * 128 if split_k > 1 else k
    split_k = triton.cdiv(k, k_per_split)
    # Counters cover the smallest tile of any config (16 x 32) and are zero between launches.
    ws = torch.empty((split_k, m, n) if split_k > 1 else (1,), dtype=torch.float32, device=a.device)
    counts = torch.zeros(triton.cdiv(m, 16) * triton.cdiv(n, 32), dtype=torch.int32, device=a.device)
    sam, sak, sbk, sbn, scm, scn = a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1)
    consts = {"SPLIT_K": split_k, "USE_TMA": use_tma}

    def grid(meta: dict) -> tuple[int, int]:
        return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), split_k)

    args = (m, n, k, k_per_split, sam, sak, sbk, sbn, scm, scn)
    if config is None:
        gemm_splitk_kernel[grid](a, b, out, ws, counts, m, n, k, k_per_split, sam, sak, sbk, sbn, scm, scn,
                                 SPLIT_K=split_k, USE_TMA=use_tma)
        fast = FastLaunch(gemm_splitk_kernel, grid(gemm_splitk_kernel.best_config.kwargs), 15, consts)
    else:
        fast = FastLaunch(gemm_splitk_kernel, grid(config.kwargs), 15, consts, config)
        fast(a, b, out, ws, counts, *args)

    def launch_splitk(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        fast(a, b, out, ws, counts, *args)

    return launch_splitk


def _plan_splitk_host(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, split_k: int,
                      config: triton.Config) -> object:
    """The split-K kernel reading A and B through host-built descriptors (pinned configs only)."""
    m, k = a.shape
    n = b.shape[1]
    assert b.shape == (k, n) and out.shape == (m, n)
    kw = config.kwargs
    bm, bn, bk = kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"]
    k_per_split = triton.cdiv(triton.cdiv(k, split_k), 128) * 128 if split_k > 1 else k
    split_k = triton.cdiv(k, k_per_split)
    ws = torch.empty((split_k, m, n) if split_k > 1 else (1,), dtype=torch.float32, device=a.device)
    counts = torch.zeros(triton.cdiv(m, bm) * triton.cdiv(n, bn), dtype=torch.int32, device=a.device)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn), split_k)
    fast = DescLaunch(gemm_splitk_host_kernel, grid, ([bm, bk], [bk, bn]), 11, {"SPLIT_K": split_k}, config)
    args = (m, n, k, k_per_split, out.stride(0), out.stride(1))

    def launch_splitk_host(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        fast((a, b), out, ws, counts, *args)

    launch_splitk_host(a, b, out)
    return launch_splitk_host
