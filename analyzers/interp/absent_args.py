"""`None` used as a number or a pointer: the stand-in for an argument the launch as bound omits.

Triton specializes a `None` argument as a constexpr `None`; arithmetic on it (`x * scale`,
`beta + offset`) does not compile. So when the interpreter reaches such arithmetic, the launch
as bound is not one a caller makes: the `None` is the binder's, most often a launcher default
(`scale: float = None`, `beta: torch.Tensor | None = None`) that every caller overrides
(`scale = k.shape[-1] ** -0.5` in the public wrapper). A `None` only used under a false constexpr
guard (`if USE_G: p_g = g + ...`) is never reached and needs nothing.

What stands in keeps the rest of the kernel judged on facts alone: a kernel pointer parameter
offset by an integer becomes a pointer into a tensor of unknown extent and dtype (its bounds,
races and coverage are not judged, as for any tensor nobody sizes); any other `None` operand
becomes a scalar of unknown value, whose dtype follows the other operand (a branch, mask or
address computed from it is an AR001 that names it).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.interp.values import Ptr, TensorInfo, Val, is_float

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext

_INDEX_BASE = 1 << 20  # stand-in tensors' indices: apart from the launch's own tensors
_STAND_IN_EXTENT = 1 << 16


def replace_absent(
    interp: OpContext, op: ast.operator | ast.cmpop, a: Any, b: Any, left: ast.expr, right: ast.expr
) -> tuple[Any, Any]:
    """`a op b` with `None` on one side (the expression `left` or `right`) and a tile or number
    on the other: the operands with the `None` replaced by its stand-in; unchanged where no
    stand-in applies (the op then reports the `None` as before). Only arithmetic and ordering
    comparisons: `x is None` and `x == None` are decided on the `None` itself."""
    if isinstance(op, ast.cmpop) and not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
        return a, b
    if a is None and isinstance(b, Val | int | float):
        return stand_in(interp, op, _name(left), b, left_side=True), b
    if b is None and isinstance(a, Val | int | float):
        return a, stand_in(interp, op, _name(right), a, left_side=False)
    return a, b


def absent_pointer(interp: OpContext, node: ast.AST) -> Ptr | None:
    """`tl.load(total_weight)` / `tl.store(p, v)` straight through a kernel pointer parameter that
    is `None` in the launch as bound (a launcher default its callers override: a load from
    `None` does not compile): the stand-in pointer, as for `None + offset`. None otherwise."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    name = _name(node.args[0])
    if name is None or interp.smap is not interp.kernel.smap or name not in interp.scan.pointers:
        return None
    return Ptr(_absent_tensor(interp, name), np.zeros((), dtype=np.int64))


def _name(e: ast.expr) -> str | None:
    return e.id if isinstance(e, ast.Name) else None


def stand_in(
    interp: OpContext, op: ast.operator | ast.cmpop, name: str | None, other: Any, left_side: bool
) -> Any:
    other_dtype = other.dtype if isinstance(other, Val) else ("fp32" if isinstance(other, float) else "int32")
    if (
        left_side
        and name is not None
        and isinstance(op, ast.Add | ast.Sub)
        and not is_float(other_dtype)
        and interp.smap is interp.kernel.smap
        and name in interp.scan.pointers
    ):
        return Ptr(_absent_tensor(interp, name), np.zeros((), dtype=np.int64))
    what = f"`{name}`" if name else "a `None` operand"
    dtype = other_dtype if is_float(other_dtype) else ("int32" if other_dtype == "int1" else other_dtype)
    data = np.asarray(1.0 if is_float(dtype) else 1, dtype=np.float64 if is_float(dtype) else np.int64)
    return Val(
        data,
        dtype,
        runtime=True,
        unknown=f"{what}, None in the launch as bound (a value its callers pass)",
    )


def _absent_tensor(interp: OpContext, name: str) -> TensorInfo:
    """One stand-in tensor per parameter and dtype, the same for every program and probe (its
    contents are synthesized from its index)."""
    dtype = "int32" if name in interp.int_tensors else "fp32?"
    position = next(i for i, p in enumerate(interp.kernel.params) if p.name == name)
    return interp.kernel.cached(
        f"absent-tensor:{name}:{dtype}",
        lambda: TensorInfo(
            _INDEX_BASE + position, name, (_STAND_IN_EXTENT,), (1,), (f"{name}.0",), dtype, sized=False
        ),
    )
