"""The program count a persistent kernel strides by, when the code leaves it to the device.

fla's Ascend kernels run one program per core and walk their tasks in a loop,
`for task_id in tl.range(core_id, task_num, num_core):`, launched as
`kernel[(num_core,)](..., task_num=NT * B * H, num_core=num_core)` with `num_core` read from
the device (`get_npu_properties()["num_aicore"]`). The grid axis and the stride are one pick
(binder_grid.py, `_passed_axes`); its stand-in of 3 programs gave each program hundreds of
iterations at the probe's sizes, past the interpreter's loop budget (an AR001 "a loop of 694
iterations"). Any count of programs covers every task once, so the probe picks the count to
give each program a few iterations: the tasks are the same, the loop fits the budget, and the
program sampling bounds the work as for any large grid.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.nodes import range_operands, subtree

ITERATIONS_PER_PROGRAM = 4  # a picked program count gives each program about this many tasks
MAX_PICKED_PROGRAMS = 1 << 12


def persistent_strides(func: ast.FunctionDef) -> dict[str, str]:
    """`for t in tl.range(start, stop, step)` (or `range`) with `step` and `stop` parameters of
    the kernel: step -> stop."""
    params = {a.arg for a in func.args.args}
    out: dict[str, str] = {}
    for n in subtree(func):
        if not (isinstance(n, ast.For) and isinstance(n.iter, ast.Call) and len(range_operands(n.iter)) == 3):
            continue
        if ast.unparse(n.iter.func).split(".")[-1] not in ("range", "static_range"):
            continue
        _, stop, step = range_operands(n.iter)
        if isinstance(step, ast.Name) and isinstance(stop, ast.Name) and {step.id, stop.id} <= params:
            out[step.id] = stop.id
    return out


def picked_program_count(stride: str, strides: dict[str, str], args: dict[str, Any], stand_in: int) -> int:
    """The stand-in for the program count `stride` when the kernel strides its tasks by it."""
    stop = args.get(strides.get(stride, ""))
    if not isinstance(stop, int) or isinstance(stop, bool) or stop <= 0:
        return stand_in
    return max(stand_in, min(-(-stop // ITERATIONS_PER_PROGRAM), MAX_PICKED_PROGRAMS))


def grid_counts(grid: ast.expr, pairs: list[tuple[str, ast.expr]], strides: dict[str, str]) -> set[str]:
    """Stride parameters the launch passes the very name it launches programs by
    (`k[(num_core,)](..., num_core=num_core)`): their stand-in is the program count, and the
    persistent loop covers every task whatever that count, so no bound rests on its value."""
    axes = {e.id for e in (grid.elts if isinstance(grid, ast.Tuple) else [grid]) if isinstance(e, ast.Name)}
    return {p for p, arg in pairs if p in strides and isinstance(arg, ast.Name) and arg.id in axes}


def size_divisions(func: ast.FunctionDef) -> list[tuple[str, str]]:
    """(dividend, divisor) of `A // B` in the kernel with both parameters of it (`HV // H`)."""
    params = {a.arg for a in func.args.args}
    out: list[tuple[str, str]] = []
    for n in subtree(func):
        if (
            isinstance(n, ast.BinOp)
            and isinstance(n.op, ast.FloorDiv)
            and isinstance(n.left, ast.Name)
            and isinstance(n.right, ast.Name)
            and {n.left.id, n.right.id} <= params
            and (n.left.id, n.right.id) not in out
        ):
            out.append((n.left.id, n.right.id))
    return out
