"""Findings that rested on what the code does not establish (branch `preclf`, causes K26, K27, K30).

Each case pairs the idiom of a real kernel that was flagged falsely (liger-kernel's MoE router
and mhc backward, fla's stick-breaking attention) with a seeded bug of the same shape, which
must stay an error or warning. The based-attention idiom (K28, not fixed) keeps its recall test.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source


def _serious(src: str, code: str) -> list:
    return [f for f in check_source(src, "k.py") if f.code == code and f.severity.fails_check]


def _all(src: str, code: str) -> list:
    return [f for f in check_source(src, "k.py") if f.code == code]


_HISTOGRAM = """
import torch
import triton
import triton.language as tl


@triton.jit
def route_kernel(topk_ptr, counts_ptr, T, K, E, BLOCK_T: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_k = tl.arange(0, BLOCK_K)
    load_mask = (offs_t[:, None] < T) & (offs_k[None, :] < K)
    ids = tl.load(topk_ptr + offs_t[:, None] * K + offs_k[None, :], mask=load_mask, other=-1)
    flat = tl.reshape(ids, [BLOCK_T * BLOCK_K])
    flat_mask = tl.reshape(load_mask, [BLOCK_T * BLOCK_K])
    {use}
    tl.atomic_add(counts_ptr + safe, tl.full([BLOCK_T * BLOCK_K], 1, tl.int32), mask=flat_mask)


def route(topk, E):
    T, K = topk.shape
    counts = torch.zeros((E,), dtype=torch.int32, device=topk.device)
    route_kernel[(triton.cdiv(T, 16),)](topk, counts, T, K, E, BLOCK_T=16, BLOCK_K=triton.next_power_of_2(K))
    return counts
"""


def test_a_sentinel_the_kernel_takes_out_again_is_no_evidence() -> None:
    """K26: `other=-1` fills the masked-off lanes, `tl.where(flat_mask, flat, 0)` removes it
    again before the atomic: the caller's contract on the real ids is trusted (a hint)."""
    src = _HISTOGRAM.format(use="safe = tl.where(flat_mask, flat, 0)")
    found = _all(src, "MB005")
    assert found and all(f.severity is Severity.HINT for f in found)


def test_a_sentinel_that_reaches_the_address_stays_a_warning() -> None:
    src = _HISTOGRAM.format(use="safe = flat")
    assert _serious(src, "MB005")


_MIX = """
import torch
import triton
import triton.language as tl


@triton.jit
def mix_bwd_kernel(mix_ptr, out_ptr, N, {m_param}HC: tl.constexpr, stride_mn):
    pid = tl.program_id(0)
    rows = tl.arange(0, HC)[:, None]
    cols = tl.arange(0, HC)[None, :]
    flat = rows * HC + cols
    x = tl.load(mix_ptr + pid * stride_mn + (2 * HC + flat){mask})
    tl.store(out_ptr + pid * HC * HC + flat, x * 2.0)


def mix_bwd(mix, grad):
    N, M = mix.shape
    HC = grad.shape[1]
    out = torch.empty((N, HC, HC), device=mix.device, dtype=mix.dtype)
    mix_bwd_kernel[(N,)](mix, out, N, {m_arg}HC=HC, stride_mn=mix.stride(0))
    return out
"""


def test_an_extent_the_kernel_is_never_given_is_the_callers_relation() -> None:
    """K27: the kernel reads `mix`'s columns up to HC*HC + 2*HC and is never given M, which the
    caller sets to exactly that: the read is a hint naming M, not an error."""
    src = _MIX.format(m_param="", mask="", m_arg="")
    found = _all(src, "MB001")
    assert found and all(f.severity is Severity.HINT for f in found)
    assert "`M`" in found[0].message


def test_an_extent_the_kernel_is_given_and_ignores_stays_an_error() -> None:
    src = _MIX.format(m_param="M, ", mask="", m_arg="M, ")
    assert _serious(src, "MB001")


_SCRATCH = """
import torch
import triton
import triton.language as tl


@triton.jit
def produce_kernel(x_ptr, snap_ptr, T, NS: tl.constexpr, BLOCK: tl.constexpr):
    i_t = tl.program_id(0)
    offs = i_t * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < T, other=0.0)
    for i_k in range(0, i_t + 1):
        tl.store(snap_ptr + i_t * NS + i_k, tl.sum(x, axis=0))


@triton.jit
def consume_kernel(snap_ptr, y_ptr, NS: tl.constexpr):
    i_t = tl.program_id(0)
    acc = 0.0
    for i_k in range(0, i_t + 1):
        acc += tl.load(snap_ptr + i_t * NS + i_k)
    tl.store(y_ptr + i_t, acc)


def run(x):
    T = x.numel()
    NS = triton.cdiv(T, 16)
    snap = x.new_empty(NS, NS)
    y = torch.empty((NS,), device=x.device, dtype=x.dtype)
    produce_kernel[(NS,)](x, snap, T, NS=NS, BLOCK=16)
    consume_kernel[(NS,)](snap, y, NS=NS)
    return {returned}
"""


def test_a_scratch_buffer_passed_on_is_judged_by_its_reader() -> None:
    """K30: `snap` holds the causal triangle the second kernel reads back; the launcher returns
    only `y`. The unwritten upper triangle is a hint naming the consumer."""
    found = [f for f in _all(_SCRATCH.format(returned="y"), "GR001") if "snap" in f.message]
    assert found and all(f.severity is Severity.HINT for f in found)
    assert "consume_kernel" in found[0].message


def test_a_partly_written_buffer_the_launcher_returns_stays_an_error() -> None:
    found = [f for f in _serious(_SCRATCH.format(returned="y, snap"), "GR001") if "snap" in f.message]
    assert found


_TAYLOR = """
import torch
import triton
import triton.language as tl


@triton.jit
def taylor_kernel(q, k, z, T, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    i_bh = tl.program_id(0).to(tl.int64)
    o_i = tl.arange(0, BT)
    m_s = {causal}
    o_k = tl.arange(0, BK)
    for i in range(0, tl.cdiv(T, BT)):
        o_t = i * BT + tl.arange(0, BT)
        m_t = o_t < T
        b_q = tl.load(q + i_bh * T * K + o_t[:, None] * K + o_k[None, :], mask=m_t[:, None] & (o_k[None, :] < K), other=0.0)
        b_k = tl.load(k + i_bh * T * K + o_k[:, None] + o_t[None, :] * K, mask=(o_k[:, None] < K) & m_t[None, :], other=0.0)
        b_s = tl.dot(b_q, b_k, allow_tf32=False)
        b_s = 1 + b_s + 0.5 * b_s * b_s
        b_s = tl.where(m_s, b_s, 0)
        b_z = tl.sum(b_s, axis=1)
        tl.store(z + i_bh * T + o_t, b_z, mask=m_t)


def taylor(q, k):
    B, T, K = q.shape
    z = torch.empty((B, T), device=q.device, dtype=torch.float32)
    taylor_kernel[(B,)](q, k, z, T, K=K, BT=16, BK=triton.next_power_of_2(K))
    return z
"""


def test_padded_keys_in_real_rows_stay_a_coverage_error() -> None:
    """Without the causal mask real query rows sum the padded keys' 1s."""
    assert _serious(_TAYLOR.format(causal="o_i[:, None] >= 0"), "DF003")
