"""Loop headers as Triton reads them: `tl.range(0, n, step=BLOCK)` steps by BLOCK.

flag-gems' flash kernels walk their masked columns with `tl.range(0, masking_cols,
step=BLOCK_N)`. The interpreter read only the positional operands, so that loop ran once per
column with `col_shift` taking every value in between: the kernel was checked on addresses it
never forms (and interpreted BLOCK_N times over). A size that only counts iterations (`for p in
range(passes)`) is probed small; a bound computed from a size (`tl.cdiv(K, BLOCK_K)`) still
tiles that size, so a loop over blocks keeps running more than once.
"""

from __future__ import annotations

import ast
import re

from argus.analyzers.model.nodes import range_operands
from argus.analyzers.model.scan import scan_kernel

from tests.analyzers.kernel_checks import failing, findings

STEPPED = """
@triton.jit
def stepped_copy_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    for start in tl.range(0, N, step=BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def stepped_copy(x):
    n = x.numel()
    if n % 64 != 0:
        raise ValueError("whole tiles only")
    y = torch.empty_like(x)
    stepped_copy_kernel[(1,)](x, y, n, BLOCK=64)
    return y
"""


def test_a_step_given_by_keyword_is_the_loops_step() -> None:
    # read with step 1, `start` = 1 reads one element past the last tile: a false MB001/MB002
    assert failing(STEPPED) == []


def test_the_stepped_loop_that_runs_one_tile_too_far_is_still_found() -> None:
    mutant = STEPPED.replace("tl.range(0, N, step=BLOCK)", "tl.range(0, N + BLOCK, step=BLOCK)")
    found = failing(mutant)
    assert ("MB001", 11) in found and ("MB002", 11) in found, found


def test_range_operands_follow_tritons_signature() -> None:
    def operands(src: str) -> list[str]:
        call = ast.parse(src, mode="eval").body
        assert isinstance(call, ast.Call)
        return [ast.unparse(x) for x in range_operands(call)]

    assert operands("tl.range(0, n, step=B)") == ["0", "n", "B"]
    assert operands("tl.range(n, step=B)") == ["0", "n", "B"]
    assert operands("tl.range(a, arg2=n, num_stages=3)") == ["a", "n"]
    assert operands("range(a, b, 2)") == ["a", "b", "2"]


COUNTED = """
@triton.jit
def passes_kernel(out_ptr, key_ptr, n, passes, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    key = tl.load(key_ptr + offs, mask=mask)
    for p in range(passes):
        tl.store(out_ptr + p * n + offs, key >> p, mask=mask)


def passes_launch(key, bits):
    n = key.numel()
    passes = triton.cdiv(bits, 4)
    out = torch.empty((passes, n), dtype=key.dtype, device=key.device)
    passes_kernel[(triton.cdiv(n, 1024),)](out, key, n, passes, BLOCK=1024)
    return out
"""


def _parsed(text: str) -> ast.FunctionDef:
    func = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef))
    return func


def test_a_parameter_that_only_bounds_a_unit_step_loop_is_a_count() -> None:
    scan = scan_kernel(_parsed(COUNTED), ["out_ptr", "key_ptr", "n", "passes", "BLOCK"])
    assert scan.counted == {"passes"} and "passes" in scan.tiled


def test_a_bound_computed_from_a_size_still_tiles_it() -> None:
    text = """
def k(a_ptr, K, BLOCK_K: tl.constexpr):
    for i in range(0, tl.cdiv(K, BLOCK_K)):
        tl.load(a_ptr + i * BLOCK_K + tl.arange(0, BLOCK_K))
"""
    scan = scan_kernel(_parsed(text), ["a_ptr", "K", "BLOCK_K"])
    assert scan.counted == set() and "K" in scan.tiled


def test_a_count_is_probed_small_and_its_loop_still_checked() -> None:
    # `bits` came out past 1024 (tiled like the 1024-lane block): 257 passes per program
    assert failing(COUNTED) == []
    mutant = COUNTED.replace("out_ptr + p * n + offs", "out_ptr + (p + 1) * n + offs")
    past = [f for f in findings(mutant) if f.code == "MB002"]
    assert [f.span.line for f in past] == [13], [(f.code, f.line, f.message) for f in findings(mutant)]
    sizes = past[0].witness["sizes"]
    bits = int(re.search(r"\bbits=(\d+)", sizes).group(1))  # type: ignore[union-attr]
    assert bits <= 16, sizes
