"""The kernel cache's second level (issue 13): an edit in launcher code re-interprets a kernel
only when the binding it gives the kernel changed (the probe launches' arguments, sizes, grid,
constexprs), not whenever the launcher's text did.

Real checker, real kernels; what is observed is the real cache's counters (a first-level miss
followed by a second-level hit means nothing was interpreted) and a cold check of the same text,
which the cached result must equal."""

from __future__ import annotations

from argus.analyzers import Finding, KernelCache, Span, check_source

LAUNCHED = """import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.load(y_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + y, mask=offs < n)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    grid = (triton.cdiv(n, 128),)
    add_kernel[grid](x, y, out, n, BLOCK=128)
    return out
"""


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1
    return text.replace(old, new)


def checked(text: str, cache: KernelCache) -> tuple[list, int, int]:
    """The findings of a check through `cache`, and the misses by text and the hits by binding
    it added (a kernel missed by text and hit by binding is not interpreted)."""
    misses, hits = cache.misses, cache.bound_hits
    found = check_source(text, "k.py", cache=cache)
    return found, cache.misses - misses, cache.bound_hits - hits


def test_a_launcher_edit_that_keeps_the_binding_interprets_nothing() -> None:
    cache = KernelCache()
    checked(LAUNCHED, cache)
    edited = edit(LAUNCHED, "    n = out.numel()\n", "    n = out.numel()\n    scale = 1.0\n")
    found, misses, hits = checked(edited, cache)
    assert (misses, hits) == (1, 1)  # the text key misses, the binding key hits
    assert found == check_source(edited, "k.py")


def test_a_launcher_edit_that_changes_the_binding_interprets_again() -> None:
    cache = KernelCache()
    checked(LAUNCHED, cache)
    for old, new in (("BLOCK=128)", "BLOCK=64)"), ("n = out.numel()", "n = out.numel() // 2")):
        edited = edit(LAUNCHED, old, new)
        before = cache.bound_misses
        found, misses, hits = checked(edited, cache)
        assert (misses, hits, cache.bound_misses - before) == (1, 0, 1)  # interpreted again
        assert found == check_source(edited, "k.py")


def test_findings_pointing_into_the_launch_call_move_with_it() -> None:
    # half the output is never written: GR001, with the launch grid among its places
    short = edit(LAUNCHED, "n = out.numel()", "n = out.numel() // 2")
    cache = KernelCache()
    first, _, _ = checked(short, cache)
    (gr,) = [f for f in first if f.code == "GR001"]
    assert gr.related and gr.related[0].span.start_point[0] == short.split("\n").index(
        "    add_kernel[grid](x, y, out, n, BLOCK=128)"
    )
    edited = edit(
        short, "    out = torch.empty_like(x)\n", "    out = torch.empty_like(x)\n    scale = 1.0\n"
    )
    found, misses, hits = checked(edited, cache)
    assert (misses, hits) == (1, 1)
    assert found == check_source(edited, "k.py")
    (moved,) = [f for f in found if f.code == "GR001"]
    assert moved.related[0].span.start_point[0] == gr.related[0].span.start_point[0] + 1


def test_findings_pointing_elsewhere_in_a_launcher_are_not_reused_over_an_edit_there() -> None:
    """A cached finding placed in launcher code outside the launch call cannot be moved over an
    edit of that launcher (its bytes changed): the binding-level entry is not used."""
    cache = KernelCache()
    checked(LAUNCHED, cache)
    bound = [k for k, v in cache._data.items() if len(v) == 3]  # the binding-level entries
    assert len(bound) == 1
    findings, pieces, reads = cache._data[bound[0]]
    at = LAUNCHED.index("torch.empty_like")
    row = LAUNCHED.count("\n", 0, at)
    planted = Finding("AR001", "ar", "info", "add_kernel", Span(at, at + 5, (row, 10), (row, 15)), "m")
    cache._data[bound[0]] = ([*findings, planted], pieces, reads)
    edited = edit(
        LAUNCHED, "    out = torch.empty_like(x)\n", "    scale = 1.0\n    out = torch.empty_like(x)\n"
    )
    found, misses, hits = checked(edited, cache)
    assert (misses, hits) == (1, 1)  # found at the binding level ...
    assert found == check_source(edited, "k.py")  # ... and not used (the planted one is gone)
    assert all(f.message != "m" for f in found)
