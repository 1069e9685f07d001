"""The kernel cache around an autograd class (issue 13): a backward's binding reads its
`forward` (what it saves on `ctx`), so the forward's text is part of the backward kernel's key.
It was keyed raw and with its row: a blank line opened anywhere in the forward, or any line
opened above the class, re-analyzed every kernel the class launches (on liger's grpo_loss.py,
four kernels and 0.5-0.75 s of CPU per such edit). Now it is keyed as a piece, normalized and
moved like the launchers; the binding key leaves it out (the fingerprint holds what the
backward's binding read of it).

Real checker, real kernels; observed through the real cache's counters and a cold check of the
same text, which every cached result must equal."""

from __future__ import annotations

from argus.analyzers import KernelCache, check_source

SOURCE = """import torch
import triton
import triton.language as tl


@triton.jit
def shift_fwd(src, dst, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(src + i, mask=i < n)
    tl.store(dst + i, v + 1.0, mask=i < n)


@triton.jit
def shift_bwd(saved, grad_in, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(saved + i)
    tl.store(grad_in + i, v * 0.0 + 1.0, mask=i < n)


class Shift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        n = x.numel()
        block = 256
        shift_fwd[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        ctx.save_for_backward(x)
        ctx.block = block
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dx = torch.empty_like(x)
        n = x.numel()
        shift_bwd[(triton.cdiv(n, ctx.block),)](x, dx, n, BLOCK=ctx.block)
        return dx
"""


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1
    return text.replace(old, new)


def checked(text: str, cache: KernelCache) -> tuple[list, int, int, int]:
    """Findings through `cache`, and the text-key misses, binding-key hits and binding-key
    misses (interpretations) the check added."""
    before = (cache.misses, cache.bound_hits, cache.bound_misses)
    found = check_source(text, "shift.py", cache=cache)
    after = (cache.misses, cache.bound_hits, cache.bound_misses)
    return found, *(a - b for a, b in zip(after, before, strict=True))


def warm() -> tuple[KernelCache, list]:
    cache = KernelCache()
    found, *_ = checked(SOURCE, cache)
    return cache, found


def test_the_backward_reads_past_its_block_so_the_cache_has_something_to_move() -> None:
    _, found = warm()
    assert {f.kernel for f in found if f.severity in ("error", "warning")} == {"shift_bwd"}


def test_a_blank_line_in_the_forward_analyzes_no_kernel_again() -> None:
    cache, _ = warm()
    for old, new in (
        ("        y = torch.empty_like(x)\n", "        y = torch.empty_like(x)\n        \n"),
        ("        block = 256\n", "        block = 256   \n"),
    ):
        edited = edit(SOURCE, old, new)
        found, misses, _, _ = checked(edited, cache)
        assert misses == 0
        assert found == check_source(edited, "shift.py")


def test_a_line_opened_above_the_class_moves_the_findings_without_analysis() -> None:
    cache, _ = warm()
    edited = edit(SOURCE, "class Shift(", "\n\nclass Shift(")
    found, misses, _, _ = checked(edited, cache)
    assert misses == 0
    assert found == check_source(edited, "shift.py")


def test_a_forward_edit_that_keeps_the_backward_binding_does_not_interpret_it() -> None:
    cache, _ = warm()
    edited = edit(SOURCE, "        ctx.block = block\n", "        ctx.block = block\n        ctx.note = 'shifted'\n")
    found, misses, hits, interpreted = checked(edited, cache)
    assert (misses, hits, interpreted) == (2, 2, 0)  # both kernels: text key missed, binding hit
    assert found == check_source(edited, "shift.py")


def test_a_forward_edit_that_changes_the_backward_binding_interprets_it_again() -> None:
    cache, _ = warm()
    edited = edit(SOURCE, "        ctx.block = block\n", "        ctx.block = 128\n")
    found, misses, hits, interpreted = checked(edited, cache)
    assert (misses, hits, interpreted) == (2, 1, 1)  # the forward kernel's binding is as it was
    assert found == check_source(edited, "shift.py")
