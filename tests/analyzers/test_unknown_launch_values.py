"""Launcher values the binder cannot evaluate are unknown, never an exception out of `check_source`.

A `@triton.heuristics` entry given as a named function is evaluated (binder_heuristics.py); a
lambda that reads the dtype of a tensor the launcher does not type is a flag the probes pick;
without a launch site the entries are stand-ins the AR001 note names. A real bug is still found.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source

_KERNEL = """
import torch
import triton
import triton.language as tl


def _block_for(args):
    return min(1024, triton.next_power_of_2(args["n"]))


@triton.heuristics(values={{"BLOCK": {block}, "IS_HALF": lambda args: args["x_ptr"].dtype == torch.float16}})
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, IS_HALF: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask={mask})
    if IS_HALF:
        x = x.to(tl.float32)
    tl.store(out_ptr + offs, x * 2.0, mask=offs < n)
{launcher}
"""

_LAUNCHER = """

def scale(x):
    n = x.numel()
    out = torch.empty_like(x)
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out
"""


def _check(block: str, mask: str = "offs < n", launcher: str = _LAUNCHER) -> list:
    src = _KERNEL.format(block=block, mask=mask, launcher=launcher)
    return check_source(src, "heuristics.py")


def test_a_named_heuristic_function_is_evaluated_not_a_crash() -> None:
    # (hostg: the function is followed, binder_heuristics.py; it was a stand-in before)
    findings = _check("_block_for")
    assert not [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]
    notes = [f.message for f in findings if f.code == "AR001"]
    assert not any("`BLOCK`" in m for m in notes), notes


def test_a_lambda_on_an_unstated_dtype_is_a_named_pick_not_a_crash() -> None:
    # the launcher does not state `x`'s dtype: `IS_HALF` is a flag the probes pick (both ways)
    findings = _check("lambda args: 128")
    notes = [f.message for f in findings if f.code == "AR001"]
    assert not any("`IS_HALF`" in m for m in notes), notes
    assert not [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_without_a_launch_site_the_heuristics_are_unknown_too() -> None:
    findings = _check("_block_for", launcher="")
    assert all(f.code != "AR001" or "internal" not in f.message for f in findings)
    assert any(f.code == "AR001" and "`BLOCK`" in f.message for f in findings)


def test_a_bug_in_a_kernel_with_an_unknown_heuristic_is_still_found() -> None:
    findings = _check("_block_for", mask="offs < n + 1")
    src = _KERNEL.format(block="_block_for", mask="offs < n + 1", launcher=_LAUNCHER)
    load_line = next(i for i, t in enumerate(src.splitlines(), 1) if "tl.load" in t)
    assert [f for f in findings if f.code == "MB001" and f.line == load_line], [
        (f.code, f.line) for f in findings
    ]
