"""Launcher-side tensors and values the host evaluator follows (issue 12, item 3, branch
`hostfg`): torch operations with a documented result shape (`ravel`, `squeeze`, `broadcast_to`,
reductions, `sort`, `torch.stack`, leading slices), `self` as aten's tensor argument,
`ctx.saved_tensors`, comprehensions and `map`, and the launcher's own loops and undecided
branches.

Each idiom is checked through `check_source` twice: the correct kernel binds (no AR001, no
error), and the same kernel with a seeded off-by-one mask is found, which it can only be when
the launch was bound and the tensor's extent established. The cases where the code does not
establish a value (a loop over dimensions the launcher is given) check that it stays unknown."""

from __future__ import annotations

import ast

import pytest
from argus.analyzers import Severity, check_source
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import DimClasses, HostTensor, Opaque, SymInt

_FLAT_KERNEL = """
import math
import torch
import triton
import triton.language as tl


@triton.jit
def flat_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < {bound}
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2.0, mask=mask)
{launcher}
"""

LAUNCHERS = {
    "aten_self": """
def double(self):
    out = torch.empty_like(self)
    n = self.numel()
    flat_kernel[(triton.cdiv(n, 128),)](self, out, n, BLOCK=128)
    return out
""",
    "saved_tensors": """
class Double(torch.autograd.Function):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        M, N = x.shape
        dx = torch.empty_like(x)
        flat_kernel[(triton.cdiv(M * N, 128),)](x, dx, M * N, BLOCK=128)
        return dx
""",
    "ravel": """
def double(x):
    M, N = x.shape
    flat = x.contiguous().ravel()
    out = torch.empty_like(flat)
    n = flat.numel()
    flat_kernel[(triton.cdiv(n, 128),)](flat, out, n, BLOCK=128)
    return out
""",
    "leading_slice": """
def double(idx, n):
    assert idx.shape[0] >= n
    T = idx.shape[0]
    head = idx[:T]
    out = torch.empty(T, device=idx.device)
    flat_kernel[(triton.cdiv(T, 128),)](head, out, T, BLOCK=128)
    return out
""",
    "stack": """
def double(a, b):
    (n,) = a.shape
    assert b.shape == a.shape
    both = torch.stack([a, b])
    out = torch.empty_like(both)
    flat_kernel[(triton.cdiv(2 * n, 128),)](both, out, 2 * n, BLOCK=128)
    return out
""",
    "broadcast": """
def double(bias, M, N):
    (k,) = bias.shape
    assert k == N
    full = bias.broadcast_to((M, N)).contiguous()
    out = torch.empty((M, N), device=bias.device)
    flat_kernel[(triton.cdiv(M * N, 128),)](full, out, M * N, BLOCK=128)
    return out
""",
    "broadcast_tensors": """
def double(inp, mask):
    a, b = inp.shape
    (c,) = mask.shape
    inp, mask = torch.broadcast_tensors(inp, mask)
    inp = inp.contiguous()
    n = inp.numel()
    out = torch.empty_like(inp)
    flat_kernel[(triton.cdiv(n, 128),)](inp, out, n, BLOCK=128)
    return out
""",
    "broadcast_shapes": """
def double(x, y):
    a, b = x.shape
    shape = torch.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    full = x.expand(shape).contiguous()
    n = full.numel()
    out = torch.empty(shape, device=x.device)
    flat_kernel[(triton.cdiv(n, 128),)](full, out, n, BLOCK=128)
    return out
""",
    "reduction": """
def double(x):
    M, N = x.shape
    rowmax = x.amax(dim=-1).float()
    out = torch.empty(M, device=x.device)
    flat_kernel[(triton.cdiv(M, 128),)](rowmax, out, M, BLOCK=128)
    return out
""",
    "sort": """
def double(x):
    (n,) = x.shape
    values, _ = torch.sort(x.ravel())
    out = torch.empty_like(values)
    flat_kernel[(triton.cdiv(n, 128),)](values, out, n, BLOCK=128)
    return out
""",
    "generator_unpack": """
def double(x, y):
    (n,) = x.shape
    assert y.shape == x.shape
    x, y = (t.contiguous() for t in (x, y))
    flat_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
""",
    "map_lambda": """
def double(x, y):
    (n,) = x.shape
    assert y.shape == x.shape
    x, y = map(lambda t: t.contiguous(), [x, y])
    flat_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    return y
""",
    "known_loop": """
def double(x):
    a, b, c = x.shape
    n = 1
    for i in range(x.ndim):
        n *= x.shape[i]
    out = torch.empty_like(x)
    flat_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
""",
    "math_prod": """
def double(x):
    a, b, c = x.shape
    n = math.prod(x.shape)
    out = torch.empty_like(x)
    flat_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
""",
}


def _check(launcher: str, bound: str) -> list:
    return check_source(_FLAT_KERNEL.format(launcher=launcher, bound=bound), "flat.py")


def _errors(findings: list) -> list:
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING) and f.code != "MB003"]


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_the_launch_is_bound_and_a_correct_kernel_is_clean(name: str) -> None:
    findings = _check(LAUNCHERS[name], "n")
    assert [f.message for f in findings if f.code == "AR001"] == []
    assert _errors(findings) == []


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_an_off_by_one_mask_is_found_through_the_bound_launch(name: str) -> None:
    findings = _check(LAUNCHERS[name], "n + 1")
    assert {f.code for f in _errors(findings)} & {"MB001", "MB002"}, [f.message for f in findings]


def test_aten_self_handed_straight_to_the_kernel_is_a_tensor() -> None:
    # `uniform_(self, ...)`: `self` only passed to the kernel; a tensor, its extent unstated
    launcher = """
def double_(self, n):
    flat_kernel[(triton.cdiv(n, 128),)](self, self, n, BLOCK=128)
    return self
"""
    findings = _check(launcher, "n")
    assert [f.message for f in findings if f.code == "AR001"] == []
    assert _errors(findings) == []


def test_a_loop_over_dimensions_the_launcher_is_given_leaves_the_product_unknown() -> None:
    # `order` is the caller's: the product is not 1 (the value before the loop), it is unknown
    # (an axis argument named `dim`/`dims` is picked instead: test_launcher_inputs.py)
    launcher = """
def double(x, order):
    n = 1
    for d in order:
        n *= x.shape[d]
    out = torch.empty_like(x)
    flat_kernel[(4,)](x, out, n, BLOCK=128)
    return out
"""
    notes = [f.message for f in _check(launcher, "n") if f.code == "AR001"]
    assert any("`n` (loop)" in m for m in notes), notes


def _eval(src: str, **env: object) -> HostEval:
    ev = HostEval(DimClasses(), None, recording=True)
    ev.env.update(env)
    ev.run_block(ast.parse(src).body)
    return ev


def _tensor(*shape: int, name: str = "x") -> HostTensor:
    ev = HostEval(DimClasses(), None, recording=True)
    return ev.new_tensor([SymInt(s, f"{name}.{i}") for i, s in enumerate(shape)], "fp16", name, False)


def test_an_undecided_branch_keeps_only_what_both_sides_agree_on() -> None:
    ev = _eval(
        "a = 1\nb = 1\nif mode == 'fast':\n    a = 2\n    b = 3\nelse:\n    a = 2\n    b = 4\n",
        mode=Opaque("mode"),  # a value the launcher is given (a test of the machine picks a side)
    )
    assert ev.env["a"] == 2
    assert isinstance(ev.env["b"], Opaque)


def test_shapes_of_documented_torch_operations() -> None:
    x = _tensor(4, 1, 6)
    ev = _eval(
        "s = x.squeeze(1)\nf = x.flatten(1)\nm, i = x.max(dim=2)\nk = torch.sum(x, dim=(0, 2), keepdim=True)\n"
        "b = x.expand(3, 4, 5, 6)\nc = torch.cat([x, x], dim=2)\nh = x[:2]\n",
        x=x,
    )
    assert ev.env["s"].shape == [4, 6]
    assert ev.env["f"].shape == [4, 6]
    assert ev.env["m"].shape == [4, 1] and ev.env["i"].dtype == "int64"
    assert ev.env["k"].shape == [1, 1, 1]
    assert ev.env["b"].shape == [3, 4, 5, 6] and ev.env["b"].strides[0] == 0 and ev.env["b"].strides[2] == 0
    assert ev.env["c"].shape == [4, 1, 12]
    assert ev.env["h"].shape == [2, 1, 6] and ev.env["h"].strides == x.strides


def test_a_view_as_a_dtype_of_the_same_element_size_keeps_the_layout() -> None:
    x = _tensor(4, 6)
    x.dtype, x.dtype_known = "int32", True
    ev = _eval("f = x.view(torch.float32)\nh = x.view(torch.float16)\n", x=x)
    assert ev.env["f"].shape == [4, 6] and ev.env["f"].dtype == "fp32"
    assert isinstance(ev.env["h"], Opaque)  # half the element size: the last size doubles (not modelled)


def test_an_axis_that_is_a_probe_size_is_not_an_axis() -> None:
    # a launcher's `dim` argument is bound as a size: squeezing "dimension 7" would be a guess
    ev = _eval("s = torch.squeeze(x, dim)\n", x=_tensor(4, 1), dim=SymInt(1, "dim"))
    assert isinstance(ev.env["s"], Opaque)


def test_a_permutation_the_evaluator_cannot_compute_keeps_rank_and_count_not_extents() -> None:
    ev = _eval("p = x.permute(order).contiguous()\n", x=_tensor(4, 5, 6), order=Opaque("order"))
    p = ev.env["p"]
    assert isinstance(p, HostTensor) and len(p.shape) == 3 and not p.sized


def test_and_or_short_circuit_on_a_known_operand_after_an_unknown_one() -> None:
    ev = _eval("a = u and 0\nb = u or 3\nc = u and 5\nd = None is not None and w.shape[0] > 2\n", u=Opaque("u"))
    assert ev.env["d"] is False
    # `u or 3` is true but its value is `u` or 3: unknown as a value, known as a test
    assert isinstance(ev.env["a"], Opaque) and isinstance(ev.env["b"], Opaque) and isinstance(ev.env["c"], Opaque)
    tests = _eval("if u or 3:\n    t = 1\nelse:\n    t = 2\nif not (u and 0):\n    f = 1\nelse:\n    f = 2\n", u=Opaque("u"))
    assert tests.env["t"] == 1 and tests.env["f"] == 1


def test_a_type_test_of_a_value_the_binder_bound_as_a_size_is_an_int() -> None:
    ev = _eval("a = isinstance(mode, int)\nb = isinstance(x, torch.Tensor)\nc = isinstance(u, str)\n",
               mode=SymInt(3, "mode"), x=_tensor(4), u=Opaque("u"))
    assert ev.env["a"] is True and ev.env["b"] is True
    assert isinstance(ev.env["c"], Opaque)


def test_linear_and_matmul_shapes_relate_the_contracted_sizes() -> None:
    x, w, b = _tensor(3, 5, 8, name="x"), _tensor(16, 8, name="w"), _tensor(8, 4, name="b")
    ev = _eval("y = F.linear(x, w)\nz = x[0] @ b\n", x=x, w=w, b=b)
    assert ev.env["y"].shape == [3, 5, 16]
    assert ev.env["z"].shape == [5, 4]
    assert ev.dims.find("x.2") == ev.dims.find("w.1")


def test_two_sides_that_leave_tensors_of_one_shape_but_other_layouts_give_an_unsized_tensor() -> None:
    x = _tensor(4, 6)
    x.strides, x.storage = [12, 2], 99  # a strided view; its `empty_like` copy is contiguous
    ev = _eval("if mode == 'copy':\n    y = torch.empty_like(x)\nelse:\n    y = x\n", x=x, mode=Opaque("mode"))
    y = ev.env["y"]
    assert isinstance(y, HostTensor) and y.shape == [4, 6] and not y.sized
    assert y.storage != x.storage  # aliasing either side is not known


def test_a_launch_under_an_equality_with_a_literal_is_probed_at_that_value() -> None:
    # `if hc == 4:` before a kernel specialised for 4: the probe never picks another hc
    launcher = """
def double(x):
    n, hc = x.shape
    out = torch.empty_like(x)
    if hc == 4:
        flat_kernel[(triton.cdiv(n * 4, 128),)](x, out, n * 4, BLOCK=128)
    return out
"""
    findings = _check(launcher, "n")
    assert [f.message for f in findings if f.code == "AR001"] == []
    assert _errors(findings) == []
    assert {f.code for f in _errors(_check(launcher, "n + 1"))} & {"MB001", "MB002"}
