"""A picked constexpr the kernel tests against a value (`if SPLIT_K == 1:`) is probed on both
sides of that test (model/pick_tests.py, fgprec6): what only one side does rests on the pick.

flag-gems' mm kernels store with `tl.store` when `SPLIT_K == 1` and with `tl.atomic_add`
otherwise, and `SPLIT_K` comes from autotune configs the checker cannot read. Both picks (4,
then 2) took the atomic side, so GR004 stood as a warning. Configs the checker can read still
decide: a config with SPLIT_K = 2 and no `reset_to_zero` keeps the warning.
"""

from __future__ import annotations

import ast

from argus.analyzers import Severity, check_source
from argus.analyzers.model.pick_tests import branch_values, second_pick

_SPLIT_K = """
import torch
import triton
import triton.language as tl
from flag_gems import runtime


@triton.autotune(configs={configs}, key=["M", "N"])
@triton.jit
def splitk_kernel(A, C, M, N, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_z = tl.program_id(1)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        kk = k * BLOCK_K * SPLIT_K + rk
        a = tl.load(A + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        acc += tl.sum(a, axis=1)
    if SPLIT_K == 1:
        tl.store(C + rm, acc, mask=rm < M)
    else:
        tl.atomic_add(C + rm, acc, mask=rm < M)


def row_sums(a):
    M, K = a.shape
    c = torch.zeros((M,), device=a.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), META["SPLIT_K"])
    splitk_kernel[grid](a, c, M, 1, K)
    return c
"""


def _gr004(configs: str) -> list[Severity]:
    return [f.severity for f in check_source(_SPLIT_K.format(configs=configs), "t.py") if f.code == "GR004"]


def test_the_atomic_side_of_a_picked_split_is_a_hint() -> None:
    assert _gr004('runtime.get_tuned_config("mm")') == [Severity.HINT]


def test_a_readable_config_that_splits_keeps_the_warning() -> None:
    configs = '[triton.Config({"BLOCK_M": 32, "BLOCK_K": 32, "SPLIT_K": 2})]'
    assert _gr004(configs) == [Severity.WARNING]


def test_the_second_pick_takes_the_value_the_test_names() -> None:
    func = next(n for n in ast.walk(ast.parse(_SPLIT_K)) if isinstance(n, ast.FunctionDef))
    tested = branch_values(func)
    assert tested == {"SPLIT_K": 1}
    assert second_pick("SPLIT_K", 4, 2, tested) == 1
    assert second_pick("BLOCK_M", 32, 16, tested) == 16
    assert second_pick("SPLIT_K", 1, 0, tested) == 0
