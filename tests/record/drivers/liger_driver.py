"""Launch kernels of the public liger-kernel package with realistic (small) LLM shapes on
Triton's CPU interpreter, forward and backward, so `argus record` can record them.

Not a test (nothing asserts here): run it under `argus record` with the unpacked wheel on the
path (docs/record.md, "Real-world packages"):

    PYTHONPATH=/tmp/argus-liger/site TRITON_INTERPRET=1 argus record --out /tmp/liger.json -- \
        python tests/record/drivers/liger_driver.py
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable

import liger_kernel.ops as ops
import torch

torch.manual_seed(0)
B, T, H, HKV, D, HIDDEN, INTER, V = 2, 24, 4, 2, 64, 96, 160, 500  # a tiny LLM: ragged sizes
BT = B * T


def _grad(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, requires_grad=True)


def rms_norm() -> None:
    x, w = _grad(BT, HIDDEN), _grad(HIDDEN)
    ops.LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False).sum().backward()


def layer_norm() -> None:
    x, w, b = _grad(BT, HIDDEN), _grad(HIDDEN), _grad(HIDDEN)
    ops.LigerLayerNormFunction.apply(x, w, b, 1e-6).sum().backward()


def swiglu() -> None:
    a, b = _grad(B, T, INTER), _grad(B, T, INTER)
    ops.LigerSiLUMulFunction.apply(a, b).sum().backward()


def geglu() -> None:
    a, b = _grad(B, T, INTER), _grad(B, T, INTER)
    ops.LigerGELUMulFunction.apply(a, b).sum().backward()


def rope() -> None:
    q, k = _grad(B, H, T, D), _grad(B, HKV, T, D)
    cos, sin = torch.randn(1, T, D), torch.randn(1, T, D)
    qo, ko = ops.LigerRopeFunction.apply(q, k, cos, sin)
    (qo.sum() + ko.sum()).backward()


def cross_entropy() -> None:
    logits = _grad(BT, V)
    target = torch.randint(0, V, (BT,))
    target[3] = -100
    loss = ops.LigerCrossEntropyFunction.apply(logits, target, None)
    (loss[0] if isinstance(loss, tuple) else loss).backward()


def kl_div() -> None:
    p = torch.randn(BT, V).log_softmax(-1).requires_grad_()
    q = torch.randn(BT, V).softmax(-1)
    ops.LigerKLDivLossFunction.apply(p, q).backward()


def jsd() -> None:
    p = torch.randn(BT, V).log_softmax(-1).requires_grad_()
    q = torch.randn(BT, V).log_softmax(-1)
    ops.LigerJSDFunction.apply(p, q).backward()


def softmax() -> None:
    x = _grad(BT, V)
    ops.LigerSoftmaxFunction.apply(x).sum().backward()


def dyt() -> None:
    x, alpha, gamma, beta = _grad(BT, HIDDEN), _grad(1), _grad(HIDDEN), _grad(HIDDEN)
    ops.LigerDyTFunction.apply(x, alpha, gamma, beta).sum().backward()


def group_norm() -> None:
    x = _grad(B, 8, 40)
    w, b = _grad(8), _grad(8)
    ops.LigerGroupNormFunction.apply(x, w, b, 8, 4, 1e-6).sum().backward()


def tvd() -> None:
    p, q = torch.randn(BT, V).softmax(-1).requires_grad_(), torch.randn(BT, V).softmax(-1)
    ops.LigerTVDLossFunction.apply(p, q).backward()


def sparsemax() -> None:
    x = _grad(BT, 40)
    ops.LigerSparsemaxFunction.apply(x, -1).sum().backward()


def fused_add_rms_norm() -> None:
    x, r, w = _grad(BT, HIDDEN), _grad(BT, HIDDEN), _grad(HIDDEN)
    out = ops.LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6)
    (out[0].sum() + out[1].sum()).backward()


def poly_norm() -> None:
    x, w, b = _grad(BT, HIDDEN), _grad(3), _grad(1)
    ops.LigerPolyNormFunction.apply(x, w, b, 1e-6, False).sum().backward()


def relu_squared() -> None:
    x = _grad(BT, INTER)
    ops.LigerReLUSquaredFunction.apply(x).sum().backward()


def fused_linear_cross_entropy() -> None:
    x, w = _grad(BT, HIDDEN), _grad(V, HIDDEN)
    target = torch.randint(0, V, (BT,))
    loss = ops.LigerFusedLinearCrossEntropyFunction.apply(x, w, target)
    (loss[0] if isinstance(loss, tuple) else loss).backward()


def embedding() -> None:
    table = _grad(V, HIDDEN)
    ids = torch.randint(0, V, (B, T))
    ops.LigerEmbeddingFunction.apply(table, ids).sum().backward()


def fused_linear_jsd() -> None:
    xs, ws = _grad(BT, HIDDEN), _grad(V, HIDDEN)
    xt, wt = torch.randn(BT, HIDDEN), torch.randn(V, HIDDEN)
    (2.0 * ops.LigerFusedLinearJSDFunction.apply(xs, ws, xt, wt)).backward()  # scaled: element_mul runs


def fused_linear_kl_div() -> None:
    xs, ws = _grad(BT, HIDDEN), _grad(V, HIDDEN)
    target = torch.randn(BT, V).softmax(-1)
    (2.0 * ops.LigerFusedLinearKLDivFunction.apply(xs, ws, target)).backward()


def attn_res() -> None:
    v = _grad(4, BT, HIDDEN)
    q, n = _grad(HIDDEN), _grad(HIDDEN)
    ops.LigerAttnResFunction.apply(v, q, n, 1e-6).sum().backward()


OPS: list[Callable[[], None]] = [
    rms_norm,
    layer_norm,
    swiglu,
    geglu,
    rope,
    cross_entropy,
    kl_div,
    jsd,
    softmax,
    dyt,
    group_norm,
    tvd,
    sparsemax,
    fused_add_rms_norm,
    poly_norm,
    relu_squared,
    fused_linear_cross_entropy,
    embedding,
    fused_linear_jsd,
    fused_linear_kl_div,
    attn_res,
]


def main() -> int:
    failed = 0
    for op in OPS:
        try:
            op()
            print(f"ok      {op.__name__}")
        except Exception as exc:  # noqa: BLE001 - report every op, keep going
            failed += 1
            print(f"failed  {op.__name__}: {type(exc).__name__}: {str(exc)[:160]}")
            if "-v" in sys.argv:
                traceback.print_exc()
    print(f"{len(OPS) - failed} of {len(OPS)} ops ran")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
