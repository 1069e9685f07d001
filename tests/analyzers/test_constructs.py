"""Constructs real kernels use: modelled (so findings flow through them) or named as AR001."""

from __future__ import annotations

from pathlib import Path

from argus.analyzers import check_source

FIXTURES = Path(__file__).parents[1] / "fixtures"


def codes(text: str) -> set[str]:
    return {f.code for f in check_source(text)}


def test_reduce_with_a_max_combine_is_a_max() -> None:
    text = (FIXTURES / "reduce_combine.py").read_text()
    assert "MB004" in codes(text)  # the load has no `other=`: garbage reaches the max
    fixed = text.replace("mask=cols < n_cols)", 'mask=cols < n_cols, other=-float("inf"))')
    assert not codes(fixed) & {"MB004", "AR001"}


def test_reduce_with_an_unknown_combine_is_named_not_guessed() -> None:
    text = (FIXTURES / "reduce_combine.py").read_text().replace("return tl.maximum(a, b)", "return a * 2 + b")
    found = check_source(text)
    assert any(f.code == "AR001" and "tl.reduce" in f.message for f in found)


def test_string_constexpr_branches_are_decided_statically() -> None:
    text = (FIXTURES / "reduce_combine.py").read_text()
    text = text.replace("BLOCK: tl.constexpr):", 'BLOCK: tl.constexpr, MODE: tl.constexpr = "max"):')
    text = text.replace("    tl.store(out_ptr + row, tl.reduce(x, 0, _max))",
                        '    if MODE == "max":\n        tl.store(out_ptr + row, tl.reduce(x, 0, _max))')
    assert "AR001" not in codes(text) and "MB004" in codes(text)


def test_host_tensor_descriptors_are_bound_to_their_tensors() -> None:
    text = (FIXTURES / "host_descriptor.py").read_text()
    found = check_source(text)
    assert [f.code for f in found] == ["DF004"]  # the store's coordinates are swapped
    fixed = text.replace("dst_desc.store([pid_n * BN, pid_m * BM], tile)", "dst_desc.store([pid_m * BM, pid_n * BN], tile)")
    assert check_source(fixed) == []


def test_script_style_launch_reads_the_module_statements_before_it() -> None:
    found = check_source((FIXTURES / "script_style.py").read_text())
    assert [(f.code, f.line) for f in found] == [("MB002", 12)]
    assert found[0].witness and "n=98432" in found[0].witness["summary"]


CAST_METHOD = '''
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).cast(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x.cast(tl.float32), mask=offs < n)


def launch(x, y):
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
'''


def test_the_cast_method_is_a_cast() -> None:
    """`x.cast(dtype)` (liger-kernel's grpo_loss and geglu) is `tl.cast(x, dtype)`: the kernel is
    analyzed through it, so the unmasked load of the ragged last tile is found, not an AR001."""
    found = check_source(CAST_METHOD)
    assert [(f.code, f.line) for f in found] == [("MB001", 10)]
    assert check_source(CAST_METHOD.replace("tl.load(x_ptr + offs)", "tl.load(x_ptr + offs, mask=offs < n)")) == []
