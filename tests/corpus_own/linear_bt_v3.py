import sys

import torch
import triton
import triton.language as tl


@triton.heuristics({"HAS_BIAS": lambda args: args["bias_ptr"] is not None})
@triton.jit
def linear_fwd_kernel(
    x_ptr, w_ptr, bias_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """y = x @ w.T (+ bias), w stored (N, K) like nn.Linear.weight."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_mask = rm < M
    n_mask = rn < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + rk) < K
        x = tl.load(x_ptr + rm[:, None] * stride_xm + (k0 + rk)[None, :] * stride_xk,
                    mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        # (BLOCK_N, BLOCK_K) tile of w, rows = output features
        w = tl.load(w_ptr + rn[:, None] * stride_wn + (k0 + rk)[None, :] * stride_wk,  # expect: MB001
                    mask=k_mask[None, :], other=0.0)  # expect: MB001
        acc += tl.dot(x, tl.trans(w))

    if HAS_BIAS:
        bias = tl.load(bias_ptr + rn, mask=n_mask, other=0.0)
        acc += bias[None, :].to(tl.float32)

    y_ptrs = y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def linear(x, weight, bias=None, out=None):
    M, K = x.shape
    N, K2 = weight.shape
    assert K == K2
    if out is None:
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    BLOCK = 32
    grid = (triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))
    linear_fwd_kernel[grid](
        x, weight, bias, out,
        M, N, K,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_K=BLOCK,
    )
    return out


def reference(x, weight, bias=None):
    y = x.float() @ weight.float().t()
    if bias is not None:
        y += bias.float()
    return y.to(x.dtype)


if __name__ == "__main__":
    import _check as c

    def case(M, N, K, with_bias):
        x = c.padded(torch.randn(M, K).half(), col_pad=8)
        w = c.padded(torch.randn(N, K).half() * 0.2, col_pad=8)
        bias = c.padded(torch.randn(N).half()) if with_bias else None
        y = c.poisoned((M, N), torch.float16)
        linear(x, w, bias, out=y)
        return c.close("y", y, reference(x, w, bias), atol=2e-2, rtol=1e-2)

    c.main(case, [(1, 1, 1, True), (32, 32, 32, False), (50, 70, 90, True), (65, 40, 33, False)])
