import math
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def paged_decode_kernel(
    out_ptr, q_ptr, k_cache_ptr, v_cache_ptr,
    block_tables_ptr, seq_lens_ptr,
    scale,
    stride_qs, stride_qh,
    stride_kp, stride_kt, stride_kh,
    stride_vp, stride_vt, stride_vh,
    stride_bt,
    stride_os, stride_oh,
    QUERIES_PER_KV: tl.constexpr,
    PAGE_SIZE: tl.constexpr, HEAD_DIM: tl.constexpr,
):
    """One decode query per (sequence, head). Pages evicted by the sliding window are -1."""
    seq = tl.program_id(0)
    head = tl.program_id(1)
    kv_head = head // QUERIES_PER_KV
    seq_len = tl.load(seq_lens_ptr + seq)
    num_pages = tl.cdiv(seq_len, PAGE_SIZE)

    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, PAGE_SIZE)
    q = tl.load(q_ptr + seq.to(tl.int64) * stride_qs + head.to(tl.int64) * stride_qh + offs_d).to(tl.float32)

    m = tl.full([1], float("-inf"), tl.float32)
    l = tl.zeros([1], tl.float32)
    acc = tl.zeros([HEAD_DIM], tl.float32)
    bt_row = block_tables_ptr + seq.to(tl.int64) * stride_bt
    for i in range(0, num_pages):
        page = tl.load(bt_row + i)
        tokens = i * PAGE_SIZE + offs_t
        valid = tokens < seq_len  # expect: MB005
        kv_mask = valid[:, None] & (offs_d[None, :] < HEAD_DIM)
        kv_off = page.to(tl.int64) * stride_kp + kv_head.to(tl.int64) * stride_kh  # expect: MB005
        k = tl.load(k_cache_ptr + kv_off + offs_t[:, None] * stride_kt + offs_d[None, :],  # expect: MB005  # also: MB001
                    mask=kv_mask, other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1) * scale
        s = tl.where(valid, s, float("-inf"))

        m_new = tl.maximum(m, tl.max(s, axis=0))
        # a page can be fully evicted: keep exp() away from (-inf) - (-inf)
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp(s - m_use)
        alpha = tl.exp(m - m_use)
        v_off = page.to(tl.int64) * stride_vp + kv_head.to(tl.int64) * stride_vh
        v = tl.load(v_cache_ptr + v_off + offs_t[:, None] * stride_vt + offs_d[None, :],  # also: MB005, MB001
                    mask=kv_mask, other=0.0).to(tl.float32)
        l = l * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m = m_new

    out = acc / tl.where(l == 0.0, 1.0, l)
    tl.store(out_ptr + seq.to(tl.int64) * stride_os + head.to(tl.int64) * stride_oh + offs_d,
             out.to(out_ptr.dtype.element_ty))


def paged_decode(q, k_cache, v_cache, block_tables, seq_lens, out=None):
    """q: (S, H, D); k_cache, v_cache: (P, PAGE_SIZE, H_KV, D); block_tables: (S, max_pages) int32."""
    S, H, D = q.shape
    P, PAGE_SIZE, H_KV, _ = k_cache.shape
    assert q.stride(2) == 1 and k_cache.stride(3) == 1 and v_cache.stride(3) == 1
    if out is None:
        out = torch.empty_like(q)
    paged_decode_kernel[(S, H)](
        out, q, k_cache, v_cache, block_tables, seq_lens,
        1.0 / math.sqrt(D),
        q.stride(0), q.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        block_tables.stride(0),
        out.stride(0), out.stride(1),
        QUERIES_PER_KV=H // H_KV, PAGE_SIZE=PAGE_SIZE, HEAD_DIM=D,
    )
    return out


def reference(q, k_cache, v_cache, block_tables, seq_lens):
    S, H, D = q.shape
    P, PS, H_KV, _ = k_cache.shape
    out = torch.zeros(S, H, D)
    for s in range(S):
        n = int(seq_lens[s])
        keep = [(int(block_tables[s, t // PS]), t % PS) for t in range(n) if int(block_tables[s, t // PS]) >= 0]
        ks = torch.stack([k_cache[p, o].float() for p, o in keep])  # (T, H_KV, D)
        vs = torch.stack([v_cache[p, o].float() for p, o in keep])
        for h in range(H):
            g = h // (H // H_KV)
            w = torch.softmax(ks[:, g] @ q[s, h].float() / math.sqrt(D), 0)
            out[s, h] = w @ vs[:, g]
    return out.to(q.dtype)


if __name__ == "__main__":
    import _check as c

    def case(S, H, H_KV, D, PS, window):
        seq_lens = torch.randint(1, 90, (S,), dtype=torch.int32)
        seq_lens[0] = 89
        max_pages = triton.cdiv(int(seq_lens.max()), PS) + 1
        P = S * max_pages + 3
        perm = torch.randperm(P).tolist()
        bt = torch.full((S, max_pages), -1, dtype=torch.int32)
        for s in range(S):
            n = int(seq_lens[s])
            for i in range(triton.cdiv(n, PS)):
                if window is None or (i + 1) * PS > n - window:  # pages wholly outside the window are evicted
                    bt[s, i] = perm.pop()
        q = c.padded(torch.randn(S, H, D).half())
        k_cache = c.padded(torch.randn(P, PS, H_KV, D).half())
        v_cache = c.padded(torch.randn(P, PS, H_KV, D).half())
        out = c.poisoned((S, H, D), torch.float16, col_pad=4)
        paged_decode(q, k_cache, v_cache, c.padded(bt, col_pad=2), c.padded(seq_lens), out)
        return c.close("out", out, reference(q, k_cache, v_cache, bt, seq_lens), atol=1e-2, rtol=1e-2)

    c.main(case, [(1, 1, 1, 16, 16, None), (3, 4, 2, 32, 16, None), (4, 4, 1, 16, 8, 20), (3, 8, 2, 32, 16, 24)])
