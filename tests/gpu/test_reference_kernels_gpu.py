"""The reference kernels, compiled, in bf16, on an NVIDIA GPU (sm90 for the TMA paths).

Run through the device tool: `python3 -m pytest -m gpu tests/gpu/test_reference_kernels_gpu.py`
(scripts/gpu/kernels_h200.sh does this before the benchmark). Never collected in CI (marker gpu).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def _rel(x, y) -> float:
    x, y = x.float(), y.float()
    assert torch.isfinite(x).all(), "non-finite output (an unwritten element or NaN)"
    return float((x - y).norm() / y.norm())


@pytest.mark.parametrize("m,n,k", [(1, 8, 8), (16, 4096, 4096), (129, 264, 520), (1000, 1000, 1000), (4096, 4096, 4096), (77, 130, 45)])
def test_gemm(m: int, n: int, k: int) -> None:
    from argus.knowledge.kernels import gemm

    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm.matmul(a, b, out=out)
    assert _rel(out, gemm.reference(a, b)) < 1e-2


@pytest.mark.parametrize("m,n,k", [(16, 4096, 4096), (128, 4096, 14336), (1024, 1024, 1024), (77, 130, 45)])
def test_gemm_repeated_calls(m: int, n: int, k: int) -> None:
    """Later calls of a shape launch the cached compiled kernel (split-K: one launch, re-armed counters)."""
    from argus.knowledge.kernels import gemm

    for _ in range(4):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemm.matmul(a, b, out=out)
        assert _rel(out, gemm.reference(a, b)) < 1e-2
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        out = gemm.matmul(a, b)
    torch.cuda.synchronize()
    assert _rel(out, gemm.reference(a, b)) < 1e-2


@pytest.mark.parametrize("m,n,k", [(128, 4096, 4096), (16, 4096, 4096), (128, 4096, 14336), (4096, 14336, 4096)])
def test_gemm_direct_descriptor_launch(m: int, n: int, k: int) -> None:
    """The pinned host-descriptor paths (persistent, split-K, stream-K) after their first call launch
    through DescLaunch's direct path on Triton 3.6: every call right on fresh and on reused addresses
    (encoded maps cached per address), outputs equal to the first call's on the same inputs."""
    import triton
    from argus.knowledge.kernels import gemm
    from argus.knowledge.kernels._desc_launch import DescLaunch

    sets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
             torch.randn(k, n, device="cuda", dtype=torch.bfloat16)) for _ in range(3)]
    firsts = []
    for a, b in sets + sets:
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemm.matmul(a, b, out=out)
        assert _rel(out, gemm.reference(a, b)) < 1e-2
        firsts.append(out)
    assert all(torch.equal(firsts[i], firsts[i + 3]) for i in range(3))
    plans = [c.cell_contents for key, p in gemm._PLANS.items() if key[0] == (m, k) and key[1] == n
             for c in p.__closure__ or () if isinstance(c.cell_contents, DescLaunch)]
    if triton.__version__.startswith("3.6"):
        assert plans and all(d.direct for d in plans), "the direct launch path was not taken on Triton 3.6"


@pytest.mark.parametrize("h,h_kv,s,d", [(8, 8, 1000, 128), (8, 2, 517, 64), (4, 4, 2048, 128), (8, 1, 129, 128)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention(h: int, h_kv: int, s: int, d: int, causal: bool) -> None:
    from argus.knowledge.kernels import attention

    q = torch.randn(2, h, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(2, h_kv, s, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(2, h_kv, s, d, device="cuda", dtype=torch.bfloat16)
    out = attention.attention(q, k, v, causal=causal)
    assert _rel(out, attention.reference(q, k, v, causal=causal)) < 2e-2


@pytest.mark.parametrize("pipe", [False, True])
@pytest.mark.parametrize("s,d,causal", [(1000, 128, False), (1000, 128, True), (517, 64, True), (64, 128, False)])
def test_attention_pinned_configs(pipe: bool, s: int, d: int, causal: bool) -> None:
    """Both K-loop schedules (Q K^T issued one block ahead or not), whatever the autotuner would pick."""
    from argus.knowledge.kernels import attention

    q, k, v = (torch.randn(2, 4, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    out = attention.attention(q, k, v, causal=causal, pinned=attention.config(128, 64, 8, 3, pipe))
    assert _rel(out, attention.reference(q, k, v, causal=causal)) < 2e-2


@pytest.mark.parametrize("h_kv,s,d,causal", [(4, 1000, 128, False), (4, 1000, 128, True), (1, 8200, 128, True),
                                             (2, 517, 64, True), (4, 64, 128, False)])
def test_attention_one_warpgroup_tile(h_kv: int, s: int, d: int, causal: bool) -> None:
    """The regime tile of session 7 (128 query rows over one warpgroup of 4 warps, two stages, no register
    cap), host descriptors, ragged S, the causal diagonal split and GQA included."""
    from argus.knowledge.kernels import attention

    q = torch.randn(1, 4, s, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(1, h_kv, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out = attention.attention(q, k, v, causal=causal, pinned=attention.config(*attention.ONE_WARPGROUP_TILE),
                              host_desc=True)
    assert _rel(out, attention.reference(q, k, v, causal=causal)) < 2e-2


@pytest.mark.parametrize("bn,persistent", [(64, False), (64, True), (128, True)])
@pytest.mark.parametrize("s,d,causal", [(1000, 128, False), (1000, 128, True), (517, 64, True), (64, 128, False)])
def test_attention_register_capped(bn: int, persistent: bool, s: int, d: int, causal: bool) -> None:
    """The two-CTA configs (registers capped at 128 per thread, two stages), one program per tile or the
    persistent grid (here fewer tiles than its programs): same attention, ragged S too."""
    from argus.knowledge.kernels import attention

    q, k, v = (torch.randn(2, 4, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    out = attention.attention(q, k, v, causal=causal, pinned=attention.config(128, bn, 8, 2, False, 128),
                              persistent=persistent)
    assert _rel(out, attention.reference(q, k, v, causal=causal)) < 2e-2


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("h_kv", [32, 8])
def test_attention_persistent_many_tiles(causal: bool, h_kv: int) -> None:
    """2 x 32 heads x 8 query blocks = 512 tiles, more than the programs (two per SM: 264 on an H200)."""
    from argus.knowledge.kernels import attention

    q = torch.randn(2, 32, 1000, 128, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(2, h_kv, 1000, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out = attention.attention(q, k, v, causal=causal, pinned=attention.config(128, 64, 8, 2, False, 128),
                              persistent=True)
    assert _rel(out, attention.reference(q, k, v, causal=causal)) < 2e-2


@pytest.mark.parametrize("entry", [("tma_host", 1, 64, 128, 64, 4, 4, False), ("tma_host", 1, 128, 256, 64, 8, 4, True),
                                   ("splitk_host", 2, 128, 64, 64, 4, 5, False), ("splitk_host", 4, 64, 128, 128, 4, 3, False),
                                   ("tma_host", 1, 16, 128, 128, 4, 6, False), ("tma_host", 1, 64, 64, 128, 4, 6, False),
                                   ("tma_host", 1, 128, 128, 64, 4, 5, False)])
@pytest.mark.parametrize("m,n,k", [(128, 4096, 4096), (77, 136, 1032), (1000, 1000, 1000)])
def test_gemm_host_descriptor_paths(entry: tuple, m: int, n: int, k: int) -> None:
    """Host-built descriptors (kernel parameters), persistent or split-K, ragged edges too; a second call
    through the plan (cached descriptors for new tensors) computes its own product."""
    from argus.knowledge.kernels import gemm

    for _ in range(2):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        plan = gemm.make_plan(a, b, out, choice=gemm.pinned_config(entry))
        assert _rel(out, gemm.reference(a, b)) < 1e-2
        a2, b2 = torch.randn_like(a), torch.randn_like(b)
        plan(a2, b2, out)
        torch.cuda.synchronize()
        assert _rel(out, gemm.reference(a2, b2)) < 1e-2


@pytest.mark.parametrize("entry", [("streamk_host", 1, 128, 256, 64, 8, 3, True), ("streamk_host", 2, 128, 128, 64, 4, 4, False),
                                   ("streamk_host", 1, 16, 128, 128, 4, 6, False)])
@pytest.mark.parametrize("m,n,k", [(4096, 4096, 4096), (16, 14336, 4096), (1000, 1000, 1000), (77, 136, 1032)])
def test_gemm_streamk(entry: tuple, m: int, n: int, k: int) -> None:
    """Stream-K on 132 resident programs: tiles cut between programs add up (ragged edges too), and the
    next five calls through the plan see lowered flags (a flag left raised would hand an owner a stale
    partial, a lowered one too early a hang or a wrong sum)."""
    from argus.knowledge.kernels import gemm

    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    plan = gemm.make_plan(a, b, out, choice=gemm.pinned_config(entry))
    assert _rel(out, gemm.reference(a, b)) < 1e-2
    for _ in range(5):
        a2, b2 = torch.randn_like(a), torch.randn_like(b)
        out.fill_(float("nan"))
        plan(a2, b2, out)
        torch.cuda.synchronize()
        assert _rel(out, gemm.reference(a2, b2)) < 1e-2


@pytest.mark.parametrize("pinned", [False, True])
@pytest.mark.parametrize("h_kv,s,d,causal", [(4, 1000, 128, False), (4, 1000, 128, True), (1, 517, 64, True),
                                             (2, 64, 128, False)])
def test_attention_host_descriptors(pinned: bool, h_kv: int, s: int, d: int, causal: bool) -> None:
    """The one-tile kernel over host-built descriptors, autotuned (block shapes set by the pre-hook) or
    pinned: the same attention, GQA and ragged S too."""
    from argus.knowledge.kernels import attention

    q = torch.randn(2, 4, s, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(2, h_kv, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    cfg = attention.config(64, 64, 4, 3, False) if pinned else None
    out = attention.attention(q, k, v, causal=causal, pinned=cfg, persistent=False, host_desc=True)
    assert _rel(out, attention.reference(q, k, v, causal=causal)) < 2e-2


@pytest.mark.parametrize("w_tma", [False, True])
@pytest.mark.parametrize("fused_align", [False, True])
def test_moe_pinned_paths(w_tma: bool, fused_align: bool) -> None:
    """Weight tiles through descriptors or pointers, alignment in one kernel or in torch: same layer."""
    from argus.knowledge.kernels import moe

    t, e, top_k, h, inter = 300, 16, 4, 1024, 1000  # 1000: gate tiles at the N edge read up rows
    x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(e, 2 * inter, h, device="cuda", dtype=torch.bfloat16) / h**0.5
    w2 = torch.randn(e, h, inter, device="cuda", dtype=torch.bfloat16) / inter**0.5
    logits = torch.randn(t, e, device="cuda")
    cfg = moe.gemm_config(64, 64, 4, 3, w_tma)
    out = moe.fused_moe(x, w1, w2, logits, top_k, True, pinned=(cfg, cfg), fused_align=fused_align)
    assert _rel(out, moe.reference(x, w1, w2, logits, top_k, True)) < 3e-2


@pytest.mark.parametrize("t,top_k,e,block_m", [(5, 2, 8, 16), (1024, 6, 64, 128), (16384, 2, 8, 128), (777, 3, 40, 32)])
def test_fused_align_equals_torch_align(t: int, top_k: int, e: int, block_m: int) -> None:
    """The grid of 128-pair align programs gives the torch path's exact output on the benchmark's sizes."""
    from argus.knowledge.kernels import moe

    ids = torch.stack([torch.randperm(e, device="cuda")[:top_k] for _ in range(t)]).to(torch.int32)
    ref_ids, ref_blocks = moe.align_by_expert(ids, e, block_m)
    got_ids, got_blocks = moe.align_fused(ids, e, block_m)
    assert torch.equal(got_ids, ref_ids)
    assert torch.equal(got_blocks, ref_blocks)


@pytest.mark.parametrize("t,e,top_k,h,inter", [(16, 64, 6, 2048, 1408), (1024, 64, 6, 2048, 1408), (300, 8, 2, 1024, 768)])
def test_moe_plan_reused_on_fresh_data(t: int, e: int, top_k: int, h: int, inter: int) -> None:
    """Later calls launch the plan's compiled kernels directly into its buffers: fresh inputs, right layer."""
    from argus.knowledge.kernels import moe

    w1 = torch.randn(e, 2 * inter, h, device="cuda", dtype=torch.bfloat16) / h**0.5
    w2 = torch.randn(e, h, inter, device="cuda", dtype=torch.bfloat16) / inter**0.5
    for _ in range(4):
        x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
        logits = torch.randn(t, e, device="cuda")
        out = moe.fused_moe(x, w1, w2, logits, top_k, True)
        assert _rel(out, moe.reference(x, w1, w2, logits, top_k, True)) < 3e-2


@pytest.mark.parametrize("t,e,top_k,h,inter,renorm", [(16, 8, 2, 4096, 14336, True), (333, 64, 6, 2048, 1408, False), (2048, 8, 2, 1024, 768, True)])
def test_moe(t: int, e: int, top_k: int, h: int, inter: int, renorm: bool) -> None:
    from argus.knowledge.kernels import moe

    x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(e, 2 * inter, h, device="cuda", dtype=torch.bfloat16) / h**0.5
    w2 = torch.randn(e, h, inter, device="cuda", dtype=torch.bfloat16) / inter**0.5
    logits = torch.randn(t, e, device="cuda")
    out = moe.fused_moe(x, w1, w2, logits, top_k, renorm)
    assert _rel(out, moe.reference(x, w1, w2, logits, top_k, renorm)) < 3e-2
