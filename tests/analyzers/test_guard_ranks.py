"""Launch guards and refusals the probe now satisfies (model/guard_ranks.py, guard_pins.py's
computed pins, caller_literals.py, assert_search.py's joint moves), in flag-gems' styles: a
rank test on the launch's path (`if input.dim() == 1:`, `ndim = x.ndim; if ndim == 2:`), a
refusal bounding the rank below (`if x.dim() < 3: raise`) or several sizes (`if H < 2 or W <
2: raise` at the size-1 probe), an equality of shape slices (`assert q.shape[:-2] ==
k.shape[:-2]`), a parameter a test compares with a computed value (`elif dim == v.ndim - 1:`),
a flag every caller passes as one literal, and a sequence whose one accepted length a
refusal states (`len(padding) != 2: raise`); a test of a value against a function of itself
(`n == next_power_of_2(n)`) pins nothing. Each launch is judged (no AR001), a seeded
overrun is found at its line, and a correct kernel has no finding."""

from __future__ import annotations

import ast

from argus.analyzers import Severity, check_source
from argus.analyzers.model.guard_pins import computed_pins

KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x, mask=offs {op} n)
"""

DIAG = """

def diag_like(input, diagonal=0):
    if input.dim() == 1:
        N = input.numel()
        out = torch.empty((N,), device=input.device, dtype=input.dtype)
        copy_kernel[(triton.cdiv(N, 128),)](input, out, N, BLOCK=128)
        return out
    elif input.dim() == 2:
        M, K = input.shape
        return input.new_empty((min(M, K),))
    raise ValueError("1-d or 2-d only")
"""

ALIAS = """

def pad_like(self, pad):
    ndim = self.ndim
    out = torch.empty_like(self)
    if ndim == 1:
        return out
    if ndim == 2:
        n = self.shape[0] * self.shape[1]
        copy_kernel[(triton.cdiv(n, 128),)](self, out, n, BLOCK=128)
    return out
"""

LEAST_RANK = """

def reflect_like(input):
    if input.dim() < 3:
        raise ValueError("at least 3 dimensions")
    x = input.contiguous()
    H = int(x.shape[-2])
    W = int(x.shape[-1])
    if H < 2 or W < 2:
        raise ValueError("spatial dimensions of at least 2")
    out = torch.empty_like(x)
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
"""

SLICES = """

def rotary_like(q, k, position_ids=None):
    assert k.shape[-1] == q.shape[-1]
    assert q.shape[:-2] == k.shape[:-2]
    if position_ids is None:
        assert len(q.shape) == 4
        seq_len = q.shape[-3]
    q = q.reshape(-1, q.shape[-1])
    n = q.numel()
    out = torch.empty_like(q)
    copy_kernel[(triton.cdiv(n, 128),)](q, out, n, BLOCK=128)
    return out
"""

COMPUTED_PIN = """

def norm_like(v, dim):
    out = torch.empty_like(v)
    if dim == 0:
        return out
    elif dim == v.ndim - 1:
        M, N = v.shape
        copy_kernel[(triton.cdiv(M * N, 128),)](v, out, M * N, BLOCK=128)
    return out
"""

CALLERS = """

def _search(in0, in1, unique_in0):
    if unique_in0:
        flat = torch.unique(in0)
    else:
        flat = in0.contiguous().ravel()
    n = flat.numel()
    out = torch.empty_like(flat)
    copy_kernel[(triton.cdiv(n, 128),)](flat, out, n, BLOCK=128)
    return out


def isin_like(in0, in1):
    if in1.numel() <= 4096:
        return _search(in0, in1, unique_in0=False)
    return _search(in0, in1, False)
"""

SCALAR = """

def heaviside_like(input, values):
    if not isinstance(values, torch.Tensor):
        values = torch.as_tensor(values, device=input.device)
    x_b, v_b = torch.broadcast_tensors(input, values)
    x = x_b.contiguous()
    out = torch.empty_like(x)
    n = out.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
"""

PLAIN_ALIAS = """

def floor_like_(input):
    x = input
    if not x.is_contiguous():
        raise ValueError("contiguous only")
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, x, n, BLOCK=128)
    return x
"""

PADDING = """

def pad1d_like(input, padding):
    if not isinstance(padding, (list, tuple)) or len(padding) != 2:
        raise ValueError("padding of two")
    left, right = [int(p) for p in padding]
    W = input.shape[-1]
    out = torch.empty((W + left + right,), device=input.device, dtype=input.dtype)
    n = W + left + right
    copy_kernel[(triton.cdiv(n, 128),)](out, out, n, BLOCK=128)
    return out
"""

LAUNCHERS = {
    "diag": DIAG,
    "alias": ALIAS,
    "least_rank": LEAST_RANK,
    "slices": SLICES,
    "computed_pin": COMPUTED_PIN,
    "callers": CALLERS,
    "scalar": SCALAR,
    "plain_alias": PLAIN_ALIAS,
    "padding": PADDING,
}


def _findings(launcher: str, op: str = "<"):
    return check_source(KERNEL.format(op=op) + LAUNCHERS[launcher], path=f"{launcher}_like.py")


def _failing(fs):
    return [(f.code, f.line, f.message) for f in fs if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_each_guarded_launch_is_judged():
    for name in LAUNCHERS:
        fs = _findings(name)
        assert not [f for f in fs if f.code == "AR001"], (name, [f.message for f in fs])
        assert not _failing(fs), (name, _failing(fs))


def test_seeded_overrun_found_under_each_guard():
    # the store's mask one element too wide: past the end of `out` (line 11 of the kernel)
    for name in ("diag", "alias", "computed_pin", "callers", "scalar", "plain_alias", "padding"):
        fs = _findings(name, op="<=")
        bad = [f for f in fs if f.code == "MB002" and f.severity == Severity.ERROR and f.line == 11]
        assert bad, (name, [(f.code, f.severity, f.line, f.message) for f in fs])


def test_rank_only_bounded_below_leaves_extents_unjudged():
    # `if input.dim() < 3: raise` with only back indices: the rank is the least accepted, a
    # guess, so no bound stands on the tensor's extent (no error), and no AR001 either
    fs = _findings("least_rank", op="<=")
    assert not [f for f in fs if f.code == "AR001"], [f.message for f in fs]
    assert not [f for f in fs if f.code == "MB002" and f.severity == Severity.ERROR]


def test_contradicting_rank_tests_stay_unjudged():
    # the launcher unpacks two dimensions on the launch's own path and then tests for one:
    # no launch of the code reaches the kernel, so nothing about it is an error or warning
    src = KERNEL.format(op="<=") + """

def never(input):
    M, K = input.shape
    if input.dim() == 1:
        out = torch.empty((M,), device=input.device, dtype=input.dtype)
        copy_kernel[(triton.cdiv(M, 128),)](input, out, M, BLOCK=128)
        return out
    return input
"""
    fs = check_source(src, path="never_like.py")
    assert not _failing(fs), _failing(fs)


def test_a_test_of_a_value_against_itself_pins_nothing():
    # `if num_experts == triton.next_power_of_2(num_experts):` says num_experts is a power of
    # two, not which one: pinning it to the value at the recording's size made a later probe
    # no launch (flag-gems' tsingmicro moe_align_block_size); `dim == v.ndim - 1` pins dim
    def test(text: str) -> ast.expr:
        return ast.parse(text, mode="eval").body

    assert computed_pins(test("n == triton.next_power_of_2(n)"), lambda e: 8) == {}
    assert computed_pins(test("dim == v.ndim - 1"), lambda e: 1) == {"dim": 1}
