"""Binding work shared by the kernels of one launcher (issue 13, language-server latency).

An edit in an autograd class's code binds every kernel the class launches again; each kernel's
binder walked the same launcher for ranks and local values and copied the same `forward`.
Those answers are now kept on the launcher's tree (model/node_memo.py). These tests pin that
they are computed once per tree, that a caller's changes to an answer do not reach the memo,
that a rewritten copy of a tree does not answer from the original's memo, and that the
findings equal those of a check in which nothing is shared (a fresh tree for every kernel)."""

from __future__ import annotations

import ast

from argus.analyzers import check_source
from argus.analyzers.model import launch, launcher_reads
from argus.analyzers.model.node_memo import fresh_copy, on_node
from argus.analyzers.model.nodes import subtree

SOURCE = """import torch
import triton
import triton.language as tl


@triton.jit
def scale_fwd(src, dst, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(src + i, mask=i < n)
    tl.store(dst + i, v * 2.0, mask=i < n)


@triton.jit
def stat_fwd(src, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(src + i, mask=i < n)
    tl.store(out + tl.program_id(0), tl.sum(v, axis=0))


@triton.jit
def scale_bwd(grad_out, grad_in, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    g = tl.load(grad_out + i, mask=i < n)
    tl.store(grad_in + i, g * 2.0, mask=i < n)


@triton.jit
def stat_bwd(saved, grad_in, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(saved + i)
    tl.store(grad_in + i, v * 0.0 + 1.0, mask=i < n)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        B, N = x.shape
        y = torch.empty_like(x)
        s = torch.empty(triton.cdiv(x.numel(), 256), device=x.device)
        n = x.numel()
        block = 256
        scale_fwd[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        stat_fwd[(triton.cdiv(n, block),)](x, s, n, BLOCK=block)
        ctx.save_for_backward(x)
        ctx.block = block
        return y, s

    @staticmethod
    def backward(ctx, dy, ds):
        (x,) = ctx.saved_tensors
        dx = torch.empty_like(x)
        n = x.numel()
        scale_bwd[(triton.cdiv(n, ctx.block),)](dy, dx, n, BLOCK=ctx.block)
        stat_bwd[(triton.cdiv(n, ctx.block),)](x, dx, n, BLOCK=ctx.block)
        return dx
"""


def test_the_launcher_ranks_are_computed_once_for_all_its_kernels(monkeypatch) -> None:
    computed: list[str] = []
    real = launcher_reads._tensor_param_ranks

    def counted(func, back_only, bounded_below, rows_kept=None):  # type: ignore[no-untyped-def]
        computed.append(func.name)
        return real(func, back_only, bounded_below, rows_kept)

    monkeypatch.setattr(launcher_reads, "_tensor_param_ranks", counted)
    check_source(SOURCE, "scale.py")
    # the forward and the backward (two kernels each), and the forward's rewritten copy that
    # the backward's kernels replay: once each
    assert sorted(computed) == ["backward", "forward", "forward"]


def test_the_forward_is_copied_once_for_the_kernels_of_its_backward(monkeypatch) -> None:
    copies: list[str] = []
    real = launch.forward_copy

    def counted(fwd, ctx):  # type: ignore[no-untyped-def]
        copies.append(fwd.name)
        return real(fwd, ctx)

    monkeypatch.setattr(launch, "forward_copy", counted)
    check_source(SOURCE, "scale.py")
    assert copies == ["forward"]


def test_the_findings_equal_a_check_that_shares_nothing(monkeypatch) -> None:
    shared = check_source(SOURCE, "scale.py")

    def unshared(node, key, compute, *deps):  # type: ignore[no-untyped-def]
        return compute()

    for module in (launcher_reads, launch):
        monkeypatch.setattr(module, "on_node", unshared)
    assert check_source(SOURCE, "scale.py") == shared
    # (stat_bwd reads past `saved`, whose rank the replayed forward gives: `B, N = x.shape`)
    assert {(f.code, f.kernel) for f in shared if f.severity == "error"} == {("MB001", "stat_bwd")}


def test_a_caller_changing_an_answer_does_not_change_the_memo() -> None:
    func = ast.parse("def f(x, y):\n    B, N = x.shape\n    return y.shape[0]\n").body[0]
    assert isinstance(func, ast.FunctionDef)
    first = launcher_reads.tensor_param_ranks(func, set(), set())
    assert first == {"x": 2, "y": 1}
    first["x"] = 7
    back: set[str] = set()
    assert launcher_reads.tensor_param_ranks(func, back, set()) == {"x": 2, "y": 1}


def test_an_answer_is_kept_per_node_key_and_dependencies() -> None:
    tree = ast.parse("a = 1")
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    table, other = {}, {}
    assert on_node(tree, "k", compute, table) == 1
    assert on_node(tree, "k", compute, table) == 1  # the same tree, key and table: kept
    assert on_node(tree, "k", compute, other) == 2  # another table: asked again
    assert on_node(tree, "j", compute, other) == 3  # another question
    assert on_node(ast.parse("a = 1"), "k", compute, other) == 4  # another tree


def test_a_rewritten_copy_does_not_answer_from_the_original() -> None:
    tree = ast.parse("def f(x):\n    y = x\n")
    names = lambda t: sorted(n.id for n in subtree(t) if isinstance(n, ast.Name))  # noqa: E731
    assert on_node(tree, "names", lambda: names(tree)) == ["x", "y"]
    copied = fresh_copy(tree)
    assign = copied.body[0].body[0]  # type: ignore[attr-defined]
    assign.targets = [ast.Name(id="z", ctx=ast.Store())]
    assert on_node(copied, "names", lambda: names(copied)) == ["x", "z"]
    assert names(copied) == ["x", "z"]  # (nor from the node list copied along with it)
