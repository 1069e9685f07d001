"""Reference GEMM: C = A @ B, bf16 in and out, fp32 accumulation, any M, N, K.

fp16 works too: the CPU tests use it because Triton 3.9's interpreter computes tl.dot on bf16
operands wrongly (it reads their bits as integers); the compiled kernels are exercised in bf16 on the GPU.

Three paths, picked by the launcher `matmul` (the split-K kernels live in gemm_splitk.py and are
re-exported here):
- `gemm_tma_kernel`: persistent grid (one program per SM walks the output tiles), GROUP_M program-id
  swizzle for L2 reuse, tensor descriptors (TMA on sm90) and a software-pipelined K loop. Used when
  the rows of A, B and C are 16-byte aligned (K % 8 == 0 and N % 8 == 0), which TMA requires.
- `gemm_splitk_kernel` with SPLIT_K > 1: shapes whose M x N grid has too few tiles to fill 132 SMs
  (decode-like M, or 1024^2 outputs); K is cut into SPLIT_K slices. One launch: each slice stores its
  fp32 partial sum, bumps the tile's arrival counter, and the last slice to arrive adds the partials in
  slice order (deterministic) and writes bf16, then re-arms the counter for the next call. With USE_TMA
  (aligned rows on sm90) the K loop reads A and B through tensor descriptors.
- `gemm_splitk_kernel` with SPLIT_K == 1 and USE_TMA off: masked plain pointers, for shapes that TMA
  cannot take.
- `gemm_tma_host_kernel` and `gemm_splitk_host_kernel`: the persistent and the split-K kernel reading
  through descriptors built on the host and passed as kernel parameters, so no program spends the
  latency of writing and fencing its own descriptors before its first load. Measured faster on the
  H200 on most shapes (1024^3 0.65 -> 0.78-1.03x of cuBLAS, 2048^3 0.93 -> 1.00x); the autotuned
  default path for aligned shapes without a TUNED entry is the host one.
Which path and config a shape gets: the served shapes measured on the H200 are pinned in `TUNED`
(picked from one timed sweep, scripts/gpu/kernels_explore_h200.sh); any other shape takes the tile
model of `choose_split_k` and the autotuner over a small pruned config list. The launcher keeps a plan
per shape (config, grid, workspace, compiled kernel): after the first call a launch is a dict lookup
and one compiled-kernel launch.
Cards: pid-swizzle-l2, persistent-kernels, tma-descriptors, software-pipelining, split-k-stream-k,
autotune-served-shapes, launch-overhead.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from argus.knowledge.kernels._common import (
    FastLaunch,
    host_descriptors,
    install_allocator,
    interpreting,
    is_hopper,
    num_sms,
    stream_key,
)
from argus.knowledge.kernels.gemm_splitk import (  # noqa: F401 (public names of the GEMM module)
    _plan_splitk,
    _plan_splitk_host,
    choose_split_k,
    gemm_splitk_host_kernel,
    gemm_splitk_kernel,
)


def _tma_configs() -> list[triton.Config]:
    if interpreting():
        return [triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "SUBTILE": True,
                               "WARP_SPEC": False})]
    out = []
    for bm, bn, bk, stages, warps, sub in [
        (128, 256, 64, 3, 8, True),
        (128, 256, 64, 4, 8, True),
        (256, 128, 64, 3, 8, True),
        (128, 128, 64, 4, 8, False),
        (128, 128, 64, 3, 4, False),
        (128, 64, 64, 4, 4, False),
        (64, 128, 64, 4, 4, False),
    ]:
        cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "SUBTILE": sub, "WARP_SPEC": False}
        out.append(triton.Config(cfg, num_stages=stages, num_warps=warps))
    return out


def _prune_tma(configs: list[triton.Config], named_args: dict, **kwargs: object) -> list[triton.Config]:
    """Drop tiles much taller than M (decode-sized M wastes most of a 256-row tile)."""
    m = named_args["M"]
    kept = [c for c in configs if c.kwargs["BLOCK_M"] <= max(64, triton.next_power_of_2(m))]
    return kept or configs[:1]


@triton.autotune(configs=_tma_configs(), key=["M", "N", "K"], prune_configs_by={"early_config_prune": _prune_tma})
@triton.jit
def gemm_tma_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_bk, stride_cm,
    NUM_PROGRAMS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SUBTILE: tl.constexpr, WARP_SPEC: tl.constexpr,
):
    # Descriptors carry the full shape: loads past an edge read zeros, stores past an edge are dropped.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    if SUBTILE:
        # The epilogue stores two half-width tiles: half the shared memory for C leaves room for a
        # deeper K pipeline.
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N // 2])
    else:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N])

    _persistent_tiles(a_desc, b_desc, c_desc, M, N, K, NUM_PROGRAMS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SUBTILE,
                      WARP_SPEC)


@triton.jit
def _persistent_tiles(a_desc, b_desc, c_desc, M, N, K, NUM_PROGRAMS: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, SUBTILE: tl.constexpr, WARP_SPEC: tl.constexpr):
    """The persistent tile walk shared by the device- and host-descriptor kernels.

    WARP_SPEC asks Triton to warp-specialize the tile loop (a producer warp group issuing the TMA loads,
    the others computing, card warp-specialization); on Hopper that pass does not take a flattened loop,
    so that variant walks the tiles with an unflattened one.
    """
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tiles_m * tiles_n
    if WARP_SPEC:
        for tile in tl.range(tl.program_id(0), num_tiles, NUM_PROGRAMS, warp_specialize=True):
            _one_tile(a_desc, b_desc, c_desc, tile, tiles_m, tiles_n, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SUBTILE)
    else:
        for tile in tl.range(tl.program_id(0), num_tiles, NUM_PROGRAMS, flatten=True):
            _one_tile(a_desc, b_desc, c_desc, tile, tiles_m, tiles_n, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SUBTILE)


@triton.jit
def _one_tile(a_desc, b_desc, c_desc, tile, tiles_m, tiles_n, K,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              GROUP_M: tl.constexpr, SUBTILE: tl.constexpr):
    """Output tile number `tile` of the persistent walk: its K loop and its epilogue."""
    # GROUP_M swizzle: consecutive tiles walk down a band of GROUP_M rows, so the programs that run
    # at the same time share their B columns (and A rows) in L2 (gemm_splitk.grouped_tile, inline).
    per_group = GROUP_M * tiles_n
    group = tile // per_group
    first_m = group * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (tile % per_group) % rows
    pid_n = (tile % per_group) // rows
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in range(tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, kt * BLOCK_K])
        b = b_desc.load([kt * BLOCK_K, off_n])
        acc = tl.dot(a, b, acc)

    if SUBTILE:
        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
        left, right = tl.split(halves)
        c_desc.store([off_m, off_n], left.to(c_desc.dtype))
        c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(c_desc.dtype))
    else:
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def _host_blocks(nargs: dict) -> None:
    """Autotuner pre-hook: a host descriptor's block shape must match the config being launched."""
    bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bk, bn]
    nargs["c_desc"].block_shape = [bm, bn // 2 if nargs["SUBTILE"] else bn]


def _tma_host_configs() -> list[triton.Config]:
    return [triton.Config(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages, pre_hook=_host_blocks)
            for c in _tma_configs()]


@triton.autotune(configs=_tma_host_configs(), key=["M", "N", "K"], prune_configs_by={"early_config_prune": _prune_tma})
@triton.jit
def gemm_tma_host_kernel(
    a_desc, b_desc, c_desc,
    M, N, K,
    NUM_PROGRAMS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SUBTILE: tl.constexpr, WARP_SPEC: tl.constexpr,
):
    """gemm_tma_kernel with descriptors built on the host and passed as kernel parameters.

    A device-built descriptor is written to global scratch and fenced by every program before its first
    TMA load; a host one (a __grid_constant__ parameter) costs the programs nothing. That latency matters
    where a program runs only a few K steps: small and skinny shapes (card tma-descriptors).
    """
    _persistent_tiles(a_desc, b_desc, c_desc, M, N, K, NUM_PROGRAMS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SUBTILE,
                      WARP_SPEC)


# Served shapes, tuned on the H200 by one timed sweep over paths, splits and configs
# (scripts/gpu/kernels_explore_h200.sh, benchmarks/results/kernels-explore-h200-gemm.txt), pinned only
# where the sweep's winner beat what the autotuner and choose_split_k had reached in the benchmark:
# (M, N, K) -> (path, split, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, SUBTILE).
# path "tma" is the persistent kernel, "splitk" the split-K kernel through descriptors, "splitk_ptr"
# the split-K kernel through pointers; "tma_host" and "splitk_host" the same kernels with descriptors
# built on the host. Shapes without an entry (4096^3, 4096x14336x4096, 8192^3, ...) take the autotuned
# persistent kernel with host descriptors: 4096^3 1.054x against 0.930x with device descriptors,
# 4096x14336x4096 0.886 against 0.851x, 8192^3 0.984 against 0.978x, 16384^3 0.974 against 1.008x
# (one timing each, -host2.txt).
TUNED: dict[tuple[int, int, int], tuple[str, int, int, int, int, int, int, bool]] = {
    # Host-built descriptors (kernels-explore-h200-host.txt, -host2.txt, -host3.txt, -pins.txt; ratio to
    # cuBLAS in that sweep, then what the path before had in the same call):
    (1024, 1024, 1024): ("tma_host", 1, 64, 128, 128, 4, 4, False),  # 1.014x (-pins), 0.925x (-host3); BLOCK_K 64 0.873x
    (2048, 2048, 2048): ("tma_host", 1, 128, 256, 64, 8, 4, True),  # 0.999x; device 0.927x
    # Session 7 (kernels-explore-h200-s7b.txt, all variants and cuBLAS in one interleaved measurement;
    # cuBLAS's own tiles from Nsight Compute, kernels-h200-s7a-gemm-ncu.txt): deeper pipelines on the skinny rows.
    (16, 14336, 4096): ("tma_host", 1, 16, 128, 128, 4, 6, False),  # 0.970x; 64-row tile s4 0.956x (mma.sync below 64 rows)
    (16, 4096, 14336): ("splitk_host", 4, 64, 128, 128, 4, 3, False),  # 1.003x; device 0.965x, default 0.994x
    (128, 4096, 4096): ("tma_host", 1, 64, 64, 128, 4, 6, False),  # 0.998x (s7b); split 2 of 128x64x64 s7 0.889x
    (128, 14336, 4096): ("tma_host", 1, 128, 128, 64, 4, 5, False),  # 0.991x (s7b); w8 s4 0.942x, w8 s5 0.984x
    (128, 4096, 14336): ("splitk_host", 2, 128, 64, 128, 4, 4, False),  # 0.966x (-pins), 0.967x (-host3); BLOCK_K 64 s5 0.912x
    (4096, 4096, 14336): ("tma_host", 1, 128, 256, 64, 8, 4, True),  # 0.969x; device 0.911x
}


def pinned_config(entry: tuple) -> tuple[str, int, triton.Config]:
    """A TUNED entry as (path, split, triton.Config).

    An entry may carry two more fields: GROUP_M (the swizzle band, 8 when absent) and, for the
    persistent paths, WARP_SPEC (the warp-specialized tile loop, off when absent)."""
    path, split, bm, bn, bk, warps, stages, sub = entry[:8]
    group_m = entry[8] if len(entry) > 8 else 8
    kwargs = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group_m}
    if path in ("tma", "tma_host"):
        kwargs["SUBTILE"] = sub
        kwargs["WARP_SPEC"] = bool(entry[9]) if len(entry) > 9 else False
    return path, split, triton.Config(kwargs, num_warps=warps, num_stages=stages)


# One plan per (shape, strides, pointer alignment, dtype, device, stream, split_k): a closure that
# launches the compiled kernel with the config picked on the first call.
_PLANS: dict[tuple, object] = {}


def _tma_ok(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> bool:
    """TMA needs unit inner strides, 16-byte aligned rows and base pointers (and gains only on sm90)."""
    return (
        a.stride(1) == 1 and b.stride(1) == 1 and out.stride(1) == 1
        and all(s % 8 == 0 for s in (a.stride(0), b.stride(0), out.stride(0)))
        and all(t.data_ptr() % 16 == 0 for t in (a, b, out))
        and (is_hopper(a.device) or interpreting())
    )


def _plan_tma(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, config: triton.Config | None) -> object:
    """The persistent TMA kernel: tunes (or takes the pinned config), launches once, returns the closure."""
    m, k = a.shape
    n = b.shape[1]
    assert b.shape == (k, n) and out.shape == (m, n)
    sms = num_sms(a.device)
    install_allocator(a.device)

    def grid(meta: dict) -> tuple[int]:
        return (min(sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)

    sa, sb, sc = a.stride(0), b.stride(0), out.stride(0)
    if config is None:
        gemm_tma_kernel[grid](a, b, out, m, n, k, sa, sb, sc, NUM_PROGRAMS=sms)
        fast = FastLaunch(gemm_tma_kernel, grid(gemm_tma_kernel.best_config.kwargs), 9, {"NUM_PROGRAMS": sms})
    else:
        fast = FastLaunch(gemm_tma_kernel, grid(config.kwargs), 9, {"NUM_PROGRAMS": sms}, config)
        fast(a, b, out, m, n, k, sa, sb, sc)

    def launch_tma(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        fast(a, b, out, m, n, k, sa, sb, sc)

    return launch_tma


def _plan_tma_host(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, config: triton.Config | None) -> object:
    """The persistent kernel with host-built descriptors: the pinned config, or the autotuner's pick (its
    pre-hook sets the descriptors' block shapes per config); later calls launch the pick directly."""
    m, k = a.shape
    n = b.shape[1]
    assert b.shape == (k, n) and out.shape == (m, n)
    if config is None:
        from triton.tools.tensor_descriptor import TensorDescriptor

        first = [TensorDescriptor(t, list(t.shape), [t.stride(0), 1], [16, 16]) for t in (a, b, out)]
        sms = num_sms(a.device)

        def tune_grid(meta: dict) -> tuple[int]:
            return (min(sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)

        gemm_tma_host_kernel[tune_grid](*first, m, n, k, NUM_PROGRAMS=sms)
        config = gemm_tma_host_kernel.best_config
    kw = config.kwargs
    bm, bn, bk = kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"]
    descs = host_descriptors(([bm, bk], [bk, bn], [bm, bn // 2 if kw["SUBTILE"] else bn]))
    sms = num_sms(a.device)
    grid = (min(sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
    fast = FastLaunch(gemm_tma_host_kernel, grid, 6, {"NUM_PROGRAMS": sms}, config)

    def launch_tma_host(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        fast(*descs(a, b, out), m, n, k)

    launch_tma_host(a, b, out)  # the autotuned first call computed it already; this compiles the direct launch
    return launch_tma_host


def make_plan(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, split_k: int | None = None,
              choice: tuple[str, int, triton.Config] | None = None) -> object:
    """Computes out = a @ b once and returns a closure that repeats it on new tensors of the same layout.

    choice pins (path, split, config), as a TUNED entry or a sweep does; without it a served shape takes
    its TUNED entry, and any other shape the split heuristic and the autotuner.
    """
    m, k = a.shape
    n = b.shape[1]
    tma_ok = _tma_ok(a, b, out)
    if choice is None and split_k is None and tma_ok and not interpreting() and (m, n, k) in TUNED:
        choice = pinned_config(TUNED[(m, n, k)])
    if choice is not None:
        path, split, config = choice
        if path == "tma" and tma_ok:
            return _plan_tma(a, b, out, config)
        if path == "tma_host" and tma_ok:
            return _plan_tma_host(a, b, out, config)
        if path == "splitk_host" and tma_ok:
            return _plan_splitk_host(a, b, out, split, config)
        return _plan_splitk(a, b, out, split, tma_ok and path == "splitk", config)
    if split_k is None:
        split_k = choose_split_k(m, n, k, num_sms(a.device))
    if split_k == 1 and tma_ok:
        return _plan_tma_host(a, b, out, None)
    # Split-K through pointers: in the H200 sweep descriptors won only at 128x4096x14336 (pinned above)
    # and lost at 16x4096x4096 (0.948x against 0.976x) and 16x4096x14336 (0.944x against 1.001x).
    return _plan_splitk(a, b, out, split_k, False, None)


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, split_k: int | None = None) -> torch.Tensor:
    """C = A @ B for bf16 (or fp16) A (M, K) and B (K, N), fp32 accumulation; returns C (M, N) in that dtype."""
    assert a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0], "shapes must be (M, K) @ (K, N)"
    assert a.dtype == b.dtype and a.dtype in (torch.bfloat16, torch.float16)
    m, k = a.shape
    n = b.shape[1]
    if out is None:
        out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    key = (m, n, k, a.dtype, a.device, stream_key(a.device), split_k, a.stride(0), a.stride(1), b.stride(0),
           b.stride(1), out.stride(0), out.stride(1), a.data_ptr() % 16, b.data_ptr() % 16, out.data_ptr() % 16)
    plan = _PLANS.get(key)
    if plan is None:
        _PLANS[key] = make_plan(a, b, out, split_k)
    else:
        plan(a, b, out)
    return out


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """fp32 torch reference, rounded to bf16 like the kernel's output."""
    return (a.float() @ b.float()).to(a.dtype)
