"""An AR001 raised inside a `@triton.jit` helper points at the helper's statement, not at the
kernel's row of the same offset (the `--seed 1` divergence of `lsp_edit_costs.py --verify` on
liger's ascend rope.py:129: the interpreter's source map was the caller's again when the run
caught the error, so a blank line typed in the helper moved the kernel's AR001 on a cold check
while the cache, which ignores blank lines, kept it)."""

from __future__ import annotations

from argus.analyzers import Finding, KernelCache, check_source

SOURCE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _helper(x_ptr, offs, mask):
    x = tl.load(x_ptr + offs, mask=mask)
    if x_ptr is not None:
        y = tl.histogram(x, 8)
    return y


@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = _helper(x_ptr, offs, mask)
    tl.store(out_ptr + offs, y, mask=mask)


def launch(x):
    out = torch.empty_like(x)
    n = x.numel()
    kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
'''
UNMODELLED = "        y = tl.histogram(x, 8)\n"


def ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.sort_key(), f.kernel, f.message))


def _ar001(text: str) -> Finding:
    found = [f for f in check_source(text) if f.code == "AR001"]
    assert len(found) == 1, found
    return found[0]


def test_an_unmodelled_construct_in_a_helper_is_reported_at_its_line() -> None:
    f = _ar001(SOURCE)
    row = SOURCE.split("\n").index(UNMODELLED.rstrip("\n"))
    assert "histogram" in f.message
    assert f.span.start_point == (row, UNMODELLED.index("tl."))
    assert SOURCE.encode()[f.span.start_byte : f.span.end_byte] == b"tl.histogram(x, 8)"


def test_a_blank_line_in_the_helper_moves_the_finding_with_it_cached_as_cold() -> None:
    edited = SOURCE.replace("    if x_ptr is not None:\n", "    if x_ptr is not None:\n        \n")
    cache = KernelCache()
    check_source(SOURCE, cache=cache)
    warm = ordered(check_source(edited, cache=cache))
    cold = ordered(check_source(edited))
    assert warm == cold
    f = _ar001(edited)
    assert edited.encode()[f.span.start_byte : f.span.end_byte] == b"tl.histogram(x, 8)"
