"""The kernel cache's first level holds which of the kernel's names the module binds (issue 13:
cached results must equal a cold check). Renaming a host function a kernel reads changes no text
the rest of the key holds, and the cached AR001 ("not modelled") outlived the rename, where a cold
check reports AR002 ("bound nowhere"). Real checker; each cached result is compared with a cold
check of the same text."""

from __future__ import annotations

from argus.analyzers import KernelCache, check_source

SOURCE = '''import torch
import triton
import triton.language as tl


def pick(x):
    return x


@triton.jit
def copy_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    x = pick(x)
    tl.store(x_ptr + offs, x, mask=offs < n)


def run(x):
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
'''


def codes(text: str, cache: KernelCache) -> list[tuple[str, str]]:
    return sorted((f.code, f.message) for f in check_source(text, "k.py", cache=cache))


def test_renaming_a_host_function_the_kernel_reads_is_seen_through_the_cache() -> None:
    cache = KernelCache()
    assert [c for c, _ in codes(SOURCE, cache)] == ["AR001"]
    renamed = SOURCE.replace("def pick(x):", "def pickq(x):")
    assert codes(renamed, cache) == codes(renamed, KernelCache())
    assert [c for c, _ in codes(renamed, cache)] == ["AR002"]
    assert codes(SOURCE, cache) == codes(SOURCE, KernelCache())  # and back


def test_a_half_typed_line_elsewhere_reuses_the_cached_kernel() -> None:
    """The names come from tree-sitter's tree, which a syntax error elsewhere leaves whole: the
    kernel is not analyzed again while a line is being typed."""
    cache = KernelCache()
    first = codes(SOURCE, cache)
    misses = cache.misses
    assert codes(SOURCE + "\ny = (\n", cache) == first
    assert cache.misses == misses
