# cause L4: `assert M == HC * HC + 2 * HC` relates the sizes; without it `mix` looks too narrow for the read at 2 * HC.
import torch
import triton
import triton.language as tl


@triton.jit
def residual_logits_kernel(mix_ptr, bias_ptr, out_ptr, stride_mn, HC: tl.constexpr):
    """out[n] = mix[n, 2*HC:] + bias[2*HC:], viewed as an HC x HC matrix (the part after two vectors)."""
    n = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, HC)[:, None]
    cols = tl.arange(0, HC)[None, :]
    flat = rows * HC + cols
    m = tl.load(mix_ptr + n * stride_mn + 2 * HC + flat)
    b = tl.load(bias_ptr + 2 * HC + flat)
    tl.store(out_ptr + n * HC * HC + flat, m + b)


def residual_logits(mix, bias, hc):
    N, M = mix.shape
    assert M == hc * hc + 2 * hc  # noqa: SIM300 - written as the packages write it
    assert bias.shape == (M,)
    out = torch.empty((N, hc, hc), dtype=mix.dtype, device=mix.device)
    residual_logits_kernel[(N,)](mix, bias, out, mix.stride(0), HC=hc)
    return out


if __name__ == "__main__":
    hc = 4
    mix, bias = torch.randn(3, hc * hc + 2 * hc), torch.randn(hc * hc + 2 * hc)
    want = (mix[:, 2 * hc :] + bias[2 * hc :]).view(3, hc, hc)
    torch.testing.assert_close(residual_logits(mix, bias, hc), want)
    print("ok")
