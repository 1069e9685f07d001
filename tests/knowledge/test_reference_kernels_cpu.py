"""The reference kernels under Triton's interpreter (TRITON_INTERPRET=1) on small, ragged shapes.

fp16 here: Triton 3.9's interpreter computes tl.dot on bf16 operands wrongly (it treats the bits as
integers); the kernels are dtype-generic and tests/gpu runs them in bf16. Skipped without torch/triton.
"""

from __future__ import annotations

import os

import pytest

os.environ["TRITON_INTERPRET"] = "1"  # must be set before triton is imported
torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from argus.knowledge.kernels import attention, gemm, moe  # noqa: E402
from argus.knowledge.kernels.gemm_splitk import grouped_tile  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="interpreter only")


def _rel(x, y) -> float:
    x, y = x.float(), y.float()
    assert torch.isfinite(x).all(), "non-finite output: an element was not written"
    return float((x - y).norm() / y.norm().clamp_min(1e-12))


@pytest.mark.parametrize("m,n,k,split", [(33, 40, 72, None), (70, 96, 136, None), (16, 40, 2048, 4), (5, 24, 40, 1), (17, 33, 65, None), (1, 16, 64, None)])
def test_gemm(m: int, n: int, k: int, split: int | None) -> None:
    a = torch.randn(m, k, dtype=torch.float16)
    b = torch.randn(k, n, dtype=torch.float16)
    out = torch.full((m, n), float("nan"), dtype=torch.float16)
    gemm.matmul(a, b, out=out, split_k=split)
    assert _rel(out, gemm.reference(a, b)) < 1e-2


@pytest.mark.parametrize("b,h,h_kv,s,d,causal", [(1, 2, 1, 37, 64, True), (1, 2, 2, 37, 64, False), (2, 4, 2, 50, 128, True), (1, 2, 1, 5, 64, False)])
def test_attention(b: int, h: int, h_kv: int, s: int, d: int, causal: bool) -> None:
    q = torch.randn(b, h, s, d, dtype=torch.float16)
    k = torch.randn(b, h_kv, s, d, dtype=torch.float16)
    v = torch.randn(b, h_kv, s, d, dtype=torch.float16)
    assert _rel(attention.attention(q, k, v, causal=causal), attention.reference(q, k, v, causal=causal)) < 1e-2


@pytest.mark.parametrize("t,e,top_k,h,inter,renorm", [(5, 8, 2, 64, 48, True), (37, 8, 2, 96, 80, True), (20, 6, 3, 64, 40, False)])
def test_moe(t: int, e: int, top_k: int, h: int, inter: int, renorm: bool) -> None:
    x = torch.randn(t, h, dtype=torch.float16)
    w1 = (torch.randn(e, 2 * inter, h) / h**0.5).half()
    w2 = (torch.randn(e, h, inter) / inter**0.5).half()
    logits = torch.randn(t, e)
    assert _rel(moe.fused_moe(x, w1, w2, logits, top_k, renorm), moe.reference(x, w1, w2, logits, top_k, renorm)) < 1e-2


def test_alignment_pads_each_expert() -> None:
    ids = torch.tensor([[0, 2], [2, 1], [0, 2]], dtype=torch.int32)
    sorted_ids, block_expert = moe.align_by_expert(ids, 4, 4)
    real = sorted_ids[sorted_ids < 6]
    assert sorted(real.tolist()) == list(range(6))
    blocks = sorted_ids.view(-1, 4)
    for blk, ex in zip(blocks, block_expert.tolist(), strict=True):
        rows = blk[blk < 6]
        if ex < 0:
            assert rows.numel() == 0
        else:
            assert (ids.flatten()[rows.long()] == ex).all()


@pytest.mark.parametrize("m,n,k,split", [(33, 40, 72, None), (16, 40, 2048, 4), (5, 24, 40, 1)])
def test_gemm_plan_reused_on_fresh_data(m: int, n: int, k: int, split: int | None) -> None:
    """The second and third calls of a shape go through the cached plan (and, for split-K, the re-armed
    arrival counters): each must compute the product of its own inputs."""
    for _ in range(3):
        a = torch.randn(m, k, dtype=torch.float16)
        b = torch.randn(k, n, dtype=torch.float16)
        out = torch.full((m, n), float("nan"), dtype=torch.float16)
        gemm.matmul(a, b, out=out, split_k=split)
        assert _rel(out, gemm.reference(a, b)) < 1e-2


@pytest.mark.parametrize("t,top_k,e,block_m", [(3, 2, 4, 4), (40, 2, 6, 16), (25, 3, 5, 8), (50, 6, 64, 16)])
def test_fused_align_equals_torch_align(t: int, top_k: int, e: int, block_m: int) -> None:
    """The Triton align gives the torch path's exact output (order kept within each expert);
    40 x 2 pairs span three of the interpreter's 32-pair programs, 50 x 6 over 64 experts ten (each
    program counts the pairs of the chunks before its own)."""
    gen = torch.Generator().manual_seed(t)
    ids = torch.stack([torch.randperm(e, generator=gen)[:top_k] for _ in range(t)]).to(torch.int32)
    ref_ids, ref_blocks = moe.align_by_expert(ids, e, block_m)
    got_ids, got_blocks = moe.align_fused(ids, e, block_m)
    assert torch.equal(got_ids, ref_ids)
    assert torch.equal(got_blocks, ref_blocks)


@pytest.mark.parametrize("fused_align", [False, True])
def test_moe_plan_reused_on_fresh_data(fused_align: bool) -> None:
    """The second and third calls of a shape reuse its plan (routing, alignment and intermediate
    buffers) and still compute the layer of their own inputs."""
    t, e, top_k, h, inter = 11, 4, 2, 64, 48
    w1 = (torch.randn(e, 2 * inter, h) / h**0.5).half()
    w2 = (torch.randn(e, h, inter) / inter**0.5).half()
    before = len(moe._MOE_PLANS)
    for _ in range(3):
        x, logits = torch.randn(t, h, dtype=torch.float16), torch.randn(t, e)
        out = moe.fused_moe(x, w1, w2, logits, top_k, True, fused_align=fused_align)
        assert _rel(out, moe.reference(x, w1, w2, logits, top_k, True)) < 1e-2
    assert len(moe._MOE_PLANS) == before + 1


@pytest.mark.parametrize("w_tma,fused_align", [(False, False), (True, True), (False, True)])
def test_moe_pinned_paths(w_tma: bool, fused_align: bool) -> None:
    """Weights through descriptors or pointers, alignment fused or in torch: the same layer. I = 40 is
    not a multiple of the 32-wide tile, so edge gate tiles read rows of the up half (never stored)."""
    t, e, top_k, h, inter = 9, 4, 2, 64, 40
    x = torch.randn(t, h, dtype=torch.float16)
    w1 = (torch.randn(e, 2 * inter, h) / h**0.5).half()
    w2 = (torch.randn(e, h, inter) / inter**0.5).half()
    logits = torch.randn(t, e)
    cfg = moe.gemm_config(32, 32, 4, 1, w_tma)
    out = moe.fused_moe(x, w1, w2, logits, top_k, True, pinned=(cfg, cfg), fused_align=fused_align)
    assert _rel(out, moe.reference(x, w1, w2, logits, top_k, True)) < 1e-2


@pytest.mark.parametrize("entry", [("tma", 1, 16, 32, 32, 4, 1, True), ("splitk", 3, 16, 32, 32, 4, 1, False),
                                   ("splitk_ptr", 2, 16, 32, 32, 4, 1, False), ("tma_host", 1, 16, 32, 32, 4, 1, True),
                                   ("tma_host", 1, 16, 32, 64, 4, 1, False), ("splitk_host", 3, 16, 32, 32, 4, 1, False),
                                   ("tma_host", 1, 16, 32, 32, 4, 1, True, 2, True), ("tma", 1, 16, 32, 32, 4, 1, False, 1, True),
                                   ("splitk_host", 1, 16, 32, 32, 4, 1, False, 4)])
def test_gemm_pinned_paths(entry: tuple) -> None:
    """Each path a TUNED entry can pin computes the product (split-K slices through descriptors too), with
    the optional GROUP_M band and the warp-specialized tile loop of the persistent paths."""
    m, n, k = 20, 48, 400
    a = torch.randn(m, k, dtype=torch.float16)
    b = torch.randn(k, n, dtype=torch.float16)
    out = torch.full((m, n), float("nan"), dtype=torch.float16)
    plan = gemm.make_plan(a, b, out, choice=gemm.pinned_config(entry))
    assert _rel(out, gemm.reference(a, b)) < 1e-2
    a2, b2 = torch.randn(m, k, dtype=torch.float16), torch.randn(k, n, dtype=torch.float16)
    plan(a2, b2, out)
    assert _rel(out, gemm.reference(a2, b2)) < 1e-2


@pytest.mark.parametrize("m,n,k", [(40, 48, 400), (70, 100, 130), (20, 48, 400)])
@pytest.mark.parametrize("entry", [("streamk_host", 1, 16, 32, 32, 4, 1, False), ("streamk_host", 2, 16, 32, 32, 4, 1, True),
                                   ("streamk_host", 3, 16, 32, 64, 4, 1, False, 2)])
def test_gemm_streamk(m: int, n: int, k: int, entry: tuple) -> None:
    """Stream-K over the partial last wave (and one or two full waves before it) on 4 interpreter
    programs: tiles cut between two or three programs add up, twice in a row (the owners lower the flags
    for the next call); 20x48 fills its waves and runs data-parallel only."""
    plan = None
    for _ in range(2):
        a, b = torch.randn(m, k, dtype=torch.float16), torch.randn(k, n, dtype=torch.float16)
        out = torch.full((m, n), float("nan"), dtype=torch.float16)
        if plan is None:
            plan = gemm.make_plan(a, b, out, choice=gemm.pinned_config(entry))
        else:
            plan(a, b, out)
        assert _rel(out, gemm.reference(a, b)) < 1e-2


def test_streamk_tiles() -> None:
    """The split part: the partial last wave plus the full waves asked for; none for full waves or for
    fewer K blocks than programs."""
    assert gemm.streamk_tiles(512, 132, 0, 64) == 116  # 4096^3 in 128x256 tiles on 132 SMs
    assert gemm.streamk_tiles(512, 132, 1, 64) == 248
    assert gemm.streamk_tiles(112, 132, 0, 32) == 112  # 16x14336 in 16x128 tiles: all of them
    assert gemm.streamk_tiles(528, 132, 0, 64) == 0
    assert gemm.streamk_tiles(3, 132, 0, 8) == 0


@pytest.mark.parametrize("h_kv", [4, 2])
def test_attention_persistent(h_kv: int) -> None:
    """The persistent grid (8 programs here for 2 x 4 x 3 = 24 tiles) covers every tile once, GQA too."""
    q = torch.randn(2, 4, 40, 64, dtype=torch.float16)
    k, v = (torch.randn(2, h_kv, 40, 64, dtype=torch.float16) for _ in range(2))
    for causal in (False, True):
        out = attention.attention(q, k, v, causal=causal, persistent=True)
        assert _rel(out, attention.reference(q, k, v, causal=causal)) < 1e-2


def test_launcher_policy_where_measured() -> None:
    """Host descriptors one tile per program everywhere (they beat the persistent grid on the H200)."""
    assert not any(attention.use_persistent(s, c) for s in (1024, 4096, 16384) for c in (False, True))
    assert all(attention.use_host_descriptors(s, c) for s in (1024, 4096, 16384) for c in (False, True))


def test_attention_rejects_causal_block_n_above_block_m() -> None:
    q = torch.randn(1, 1, 40, 64, dtype=torch.float16)
    with pytest.raises(ValueError, match="BLOCK_N to divide BLOCK_M"):
        attention.attention(q, q, q, causal=True, pinned=attention.config(16, 32, 4, 1, False))


@pytest.mark.parametrize("pipe", [False, True])
@pytest.mark.parametrize("lazy", [False, True])
def test_attention_pinned_schedules(pipe: bool, lazy: bool) -> None:
    """Q K^T issued one block ahead or not, the running output rescaled at every block or only when a
    row's maximum grew past LAZY_GROWTH: the same attention (S = 70 leaves a ragged last block; scores
    scaled up so that later blocks raise the maxima by more than 2^8 and lazy rescaling must act)."""
    q, k, v = (torch.randn(1, 2, 70, 64, dtype=torch.float16) for _ in range(3))
    q = q * torch.linspace(0.5, 4.0, 70).view(1, 1, 70, 1).half()
    k = k * torch.linspace(0.5, 4.0, 70).view(1, 1, 70, 1).half()
    cfg = attention.config(32, 16, 4, 1, pipe, lazy=lazy)
    for causal in (False, True):
        out = attention.attention(q, k, v, causal=causal, pinned=cfg)
        assert _rel(out, attention.reference(q, k, v, causal=causal)) < 1e-2


@pytest.mark.parametrize("pinned", [False, True])
@pytest.mark.parametrize("h_kv", [2, 1])
def test_attention_host_descriptors(pinned: bool, h_kv: int) -> None:
    """The one-tile kernel over host-built descriptors (block shapes set per config by the pre-hook when
    autotuned): the same attention, GQA and a ragged last block (S = 45) included."""
    q = torch.randn(2, 2, 45, 64, dtype=torch.float16)
    k, v = (torch.randn(2, h_kv, 45, 64, dtype=torch.float16) for _ in range(2))
    cfg = attention.config(32, 16, 4, 1, False) if pinned else None
    for causal in (False, True):
        out = attention.attention(q, k, v, causal=causal, pinned=cfg, persistent=False, host_desc=True)
        assert _rel(out, attention.reference(q, k, v, causal=causal)) < 1e-2


@triton.jit
def _tile_order_kernel(out_ptr, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Writes (pid_m, pid_n) of every tile number in grouped_tile's order."""
    tile = tl.program_id(0)
    pid_m, pid_n = grouped_tile(tile, tiles_m, tiles_n, GROUP_M)
    tl.store(out_ptr + 2 * tile, pid_m)
    tl.store(out_ptr + 2 * tile + 1, pid_n)


def test_grouped_tile_walks_bands_of_group_m_rows() -> None:
    """gemm_splitk.grouped_tile (both split-K kernels' tile order): tiles go down a band of GROUP_M tile
    rows, then right, band after band; the last band (5 rows in bands of 2) is shorter."""
    tiles_m, tiles_n, group = 5, 3, 2
    out = torch.full((tiles_m * tiles_n, 2), -1, dtype=torch.int32)
    _tile_order_kernel[(tiles_m * tiles_n,)](out, tiles_m, tiles_n, GROUP_M=group)
    expected = [(first + r, n) for first in range(0, tiles_m, group)
                for n in range(tiles_n) for r in range(min(group, tiles_m - first))]
    assert [tuple(row) for row in out.tolist()] == expected


def test_regime_tiles_where_measured() -> None:
    """REGIME_TILES: fixed tiles only for heads that do not share K/V and only in the measured regimes;
    every causal tile keeps BLOCK_N dividing BLOCK_M (the diagonal split needs it); the interpreter keeps
    its own small tile (regime_config None)."""
    one_warpgroup = (128, 64, 4, 2, False)  # 128 rows over 4 warps, no register cap (session 7)
    for s in (1024, 2048, 16384):
        assert attention.regime_tile(s, 128, False, False) == one_warpgroup
    assert attention.regime_tile(4096, 128, True, False) == (64, 64, 4, 3, False)
    assert attention.regime_tile(8192, 128, True, False) == one_warpgroup  # long causal rows
    assert attention.regime_tile(4096, 64, True, False) == (64, 64, 4, 3, False)
    assert attention.regime_tile(1024, 64, False, False) is None
    assert attention.regime_tile(4096, 128, False, True) == one_warpgroup  # GQA at D128 too
    assert attention.regime_tile(16384, 128, True, True) == one_warpgroup
    assert attention.regime_tile(4096, 64, True, True) is None  # GQA at D64: the autotuner
    for (_, causal), entries in attention.REGIME_TILES.items():
        for _, cfg in entries:
            assert not causal or cfg[0] % cfg[1] == 0
    assert attention.regime_config(2048, 128, False, False) is None


def test_host_descriptors_repointed_not_rebuilt() -> None:
    """A plan's host descriptors are built once; a later call with other tensors re-points them."""
    from argus.knowledge.kernels._common import host_descriptors

    get = host_descriptors(([16, 32], [32, 16]))
    a1, b1 = torch.randn(48, 64, dtype=torch.float16), torch.randn(64, 40, dtype=torch.float16)
    first = get(a1, b1)
    assert [d.block_shape for d in first] == [[16, 32], [32, 16]] and first[0].shape == [48, 64]
    a2, b2 = torch.randn(48, 64, dtype=torch.float16), torch.randn(64, 40, dtype=torch.float16)
    second = get(a2, b2)
    assert second is first and second[0].base is a2 and second[1].base is b2


def test_large_row_moe_configs_only_for_128_row_blocks() -> None:
    """The deeper and wider expert-GEMM configs (session 9) are offered to 128-row blocks only; weight
    descriptors only where W_OK allows them."""
    configs = [moe.gemm_config(*c) for c in moe.GATE_UP_CONFIGS + moe.DOWN_CONFIGS]
    large = {str(moe.gemm_config(*c)) for c in moe.LARGE_ROW_CONFIGS}
    assert large <= {str(c) for c in moe._prune_configs(configs, {}, BLOCK_M=128, W_OK=True)}
    small = moe._prune_configs(configs, {}, BLOCK_M=32, W_OK=True)
    assert small and not large & {str(c) for c in small}
    assert not any(c.kwargs["W_TMA"] for c in moe._prune_configs(configs, {}, BLOCK_M=128, W_OK=False))
