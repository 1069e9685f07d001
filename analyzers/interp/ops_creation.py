"""Creation and program queries: `tl.program_id`, `tl.arange`, `tl.zeros`, `tl.full`, `tl.cdiv`,
`tl.rand`, hints that return their argument (`tl.multiple_of`) and statements with no value
(`tl.static_assert`, `tl.device_assert`), `range` and `len`.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import softmax as sm
from argus.analyzers.interp.budget import TRITON_MAX_NUMEL
from argus.analyzers.interp.opdecl import declare
from argus.analyzers.interp.ops_arith import binop
from argus.analyzers.interp.ops_core import dtype_arg, np_dtype, to_val
from argus.analyzers.interp.ops_shapes import shape_arg
from argus.analyzers.interp.values import (
    DType,
    TensorInfo,
    Val,
    is_float,
    scalar,
)

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext


def _program_id(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    axis = int(to_val(args[0] if args else kwargs.get("axis"), node).item())
    if axis >= interp.launch.grid_axes and not interp.launch.assumed:
        interp.fact(
            "grid-axis",
            node,
            hold=True,
            axis=axis,
            grid_axes=interp.launch.grid_axes,
            grid=interp.launch.grid[: interp.launch.grid_axes],
        )
    return scalar(interp.pid[axis], "int32", grows=True, pid_axis=axis)


def _num_programs(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    axis = int(to_val(args[0] if args else kwargs.get("axis"), node).item())
    return scalar(interp.launch.grid[axis], "int32", runtime=True)


def _arange(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    lo, hi = (int(to_val(a, node).item()) for a in args[:2])
    # Triton's own cap (TRITON_MAX_TENSOR_NUMEL); a power of two is checked by Triton, not here
    if hi - lo > TRITON_MAX_NUMEL or hi < lo:
        raise Unevaluable(f"tl.arange({lo}, {hi})", node)
    return Val(np.arange(lo, hi, dtype=np.int64), "int32")


def _zeros(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    shape = shape_arg(args[0] if args else kwargs["shape"], node)
    dtype = dtype_arg(args[1] if len(args) > 1 else kwargs.get("dtype"))
    out = Val(np.zeros(shape, dtype=np_dtype(dtype)), dtype, scale=sm.ANY, init_site=(node, interp.smap))
    return out


def _full(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    shape = shape_arg(args[0] if args else kwargs["shape"], node)
    value = to_val(args[1] if len(args) > 1 else kwargs["value"], node)
    dtype = dtype_arg(args[2] if len(args) > 2 else kwargs.get("dtype"), value.dtype)
    data = np.full(shape, value.item(), dtype=np_dtype(dtype))
    out = Val(data, dtype, init_site=(node, interp.smap))
    if is_float(dtype) and np.isneginf(value.item()):
        out.maxinfo = sm.MaxToken(frozenset(), empty=True)
    elif is_float(dtype) and value.item() == 0:
        out.scale = sm.ANY
    out.grows, out.runtime, out.loaded_from = value.grows, value.runtime, value.loaded_from
    return out


def _zeros_like(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    x = to_val(args[0], node)
    dtype = dtype_arg(kwargs.get("dtype"), x.dtype)
    return Val(np.zeros(x.shape, dtype=np_dtype(dtype)), dtype, scale=sm.ANY, init_site=(node, interp.smap))


def _full_like(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    x = to_val(args[0], node)
    return _full(
        interp,
        [x.shape, args[1] if len(args) > 1 else kwargs["value"], kwargs.get("dtype", DType(x.dtype))],
        {},
        node,
    )


def _cdiv(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    a, b = to_val(args[0], node), to_val(args[1], node)
    s = binop(interp, ast.Add(), a, b, node)
    s = binop(interp, ast.Sub(), s, scalar(1, constexpr=True), node)
    return binop(interp, ast.FloorDiv(), s, b, node)


def _identity(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    return args[0]


def _nothing(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> None:
    return None


def _device_assert(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> None:
    c = args[0] if args else kwargs.get("cond")
    if isinstance(c, Val):
        interp.branch_checked |= set(c.checked) | set(c.loaded_from)
    return None


def _next_power_of_2(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    """`triton.next_power_of_2(n)` of a constexpr inside a kernel: the smallest power of two >= n."""
    n = to_val(args[0] if args else kwargs["n"], node)
    if not n.constexpr or not n.is_scalar:
        raise Unevaluable("`next_power_of_2` of a runtime value", node)
    v = int(n.item())
    return scalar(1 if v <= 1 else 1 << (v - 1).bit_length(), constexpr=True)


def _log2(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    """`_log2(n)` of `triton.language.standard` (a bitonic sort's stage count): the floor of
    log2 of a constexpr, 0 for n <= 1 (its loop shifts n right while it is above 1)."""
    n = to_val(args[0] if args else kwargs["i"], node)
    if not n.constexpr or not n.is_scalar:
        raise Unevaluable("`_log2` of a runtime value", node)
    return scalar(max(int(n.item()), 1).bit_length() - 1, constexpr=True)


def _range_call(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    raise Unevaluable("`range` outside a for loop header", node)


def _len(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    x = args[0]
    if isinstance(x, tuple | list):
        return scalar(len(x), constexpr=True)
    raise Unevaluable("len() of a tensor", node)


def dtype_read_off_unknown_tensor(init: ast.AST, args: dict[str, Any]) -> bool:
    """`tl.zeros(shape, dtype=out_ptr.dtype.element_ty)` (or `tl.full(shape, v, dtype)`) where
    the launch does not give that tensor's dtype: the accumulator may as well be an integer
    count buffer as fp16, so a precision finding on it would stand on a guess (NU001)."""
    if not isinstance(init, ast.Call):
        return False
    pos = 2 if ast.unparse(init.func).endswith("full") else 1
    arg = next(
        (k.value for k in init.keywords if k.arg == "dtype"), init.args[pos] if len(init.args) > pos else None
    )
    while isinstance(arg, ast.Attribute):
        arg = arg.value
    t = args.get(arg.id) if isinstance(arg, ast.Name) else None
    return isinstance(t, TensorInfo) and t.dtype.endswith("?")


OPS = declare(
    "creation",
    {
        "program_id": _program_id,
        "num_programs": _num_programs,
        "arange": _arange,
        "zeros": _zeros,
        "full": _full,
        "zeros_like": _zeros_like,
        "full_like": _full_like,
        "cdiv": _cdiv,
        "multiple_of": _identity,
        "max_contiguous": _identity,
        "max_constancy": _identity,
        "constexpr": _identity,
        "static_assert": _nothing,
        "static_print": _nothing,
        "device_print": _nothing,
        "debug_barrier": _nothing,
        "print": _nothing,
        "device_assert": _device_assert,
        "assume": _device_assert,
        "range": _range_call,
        "next_power_of_2": _next_power_of_2,
        "_log2": _log2,
        # Triton's `unwrap_if_constexpr` (and a module's copy of it): the interpreter holds a
        # constexpr as its value already
        "unwrap_if_constexpr": _identity,
        "_unwrap_if_constexpr": _identity,
        "len": _len,
    },
)
