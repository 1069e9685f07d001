"""Chunk-local `[BT, BT]` matrices (K29 of docs/realworld.md): a matrix of the positions inside
one chunk (`A[T, BT]`, its last axis a dimension the launcher never names) times the chunk's
rows of `v` reduces that chunk's positions, not the whole extent of T, so the product is judged
for double counts only, never for indices it "skips" (fla-core `abc/chunk.py`'s forward and
backward). A product of two direct loads over one named axis is still a GEMM and must see every
index once (its skipped tail stays found)."""

from __future__ import annotations

from argus.analyzers import check_source

CHUNK = b'''import torch
import triton
import triton.language as tl


@triton.jit
def chunk_out_kernel(a_ptr, v_ptr, o_ptr, T, D: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    o_t = i_t * BT + tl.arange(0, BT)
    o_a = tl.arange(0, BT)
    o_d = tl.arange(0, D)
    m_t = o_t < T
    b_a = tl.load(a_ptr + o_t[:, None] * BT + o_a[None, :], mask=m_t[:, None], other=0.0)
    b_v = tl.load(v_ptr + o_t[:, None] * D + o_d[None, :], mask=m_t[:, None], other=0.0)
    b_o = tl.dot(OPERAND, b_v)
    tl.store(o_ptr + o_t[:, None] * D + o_d[None, :], b_o, mask=m_t[:, None])


def chunk_out(v):
    T, D = v.shape
    BT = 16
    a = v.new_empty(T, BT)
    o = torch.empty_like(v)
    chunk_out_kernel[(triton.cdiv(T, BT),)](a, v, o, T, D, BT=BT)
    return o
'''

GEMM = b'''import torch
import triton
import triton.language as tl


@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM, 16], dtype=tl.float32)
    for k in range(0, K // BK):
        cols = k * BK + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * K + cols[None, :], mask=rows[:, None] < M, other=0.0)
        x = tl.load(x_ptr + cols[:, None] * 16 + tl.arange(0, 16)[None, :])
        acc += tl.dot(a, x)
    tl.store(y_ptr + rows[:, None] * 16 + tl.arange(0, 16)[None, :], acc, mask=rows[:, None] < M)


def matvec(a, x):
    M, K = a.shape
    y = torch.empty((M, 16), device=a.device, dtype=torch.float32)
    matvec_kernel[(triton.cdiv(M, 32),)](a, x, y, M, K, BM=32, BK=32)
    return y
'''


def _df003(text: bytes) -> list[str]:
    return [f.message for f in check_source(text, "chunk.py") if f.code == "DF003"]


def test_a_chunk_local_matrix_times_the_chunk_rows_skips_nothing() -> None:
    assert _df003(CHUNK.replace(b"OPERAND", b"b_a")) == []


def test_its_transpose_contracting_the_chunk_rows_skips_nothing_either() -> None:
    # `tl.trans(b_a) @ b_v` contracts T, the chunk's own positions (the backward's `dk`)
    assert _df003(CHUNK.replace(b"OPERAND", b"tl.trans(b_a)")) == []


def test_a_gemm_that_drops_the_k_tail_is_still_found() -> None:
    found = _df003(GEMM)
    assert found and "skips" in found[0], found
