"""Shapes: subscripts, reshape, broadcast, transpose/permute, expand_dims, split and join.
Tags move with their lanes, so a transposed tile carries transposed coordinates.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage
from argus.analyzers.interp import tags as tagops
from argus.analyzers.interp.budget import check_elements
from argus.analyzers.interp.opdecl import declare
from argus.analyzers.interp.ops_core import bc, bshape, derive, map_ptr, promote, to_val, transform
from argus.analyzers.interp.values import (
    Ptr,
    Val,
)

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext


def subscript(interp: OpContext, base: Any, sl: ast.expr, node: ast.AST, env: dict[str, Any]) -> Any:
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    index: list[Any] = []
    for it in items:
        if isinstance(it, ast.Constant) and it.value is None:
            index.append(None)
        elif isinstance(it, ast.Slice) and it.lower is None and it.upper is None and it.step is None:
            index.append(slice(None))
        elif isinstance(it, ast.Name) and it.id == "None":
            index.append(None)
        elif isinstance(it, ast.Constant) and type(it.value) is int and _beside_a_slice(items):
            # `r[:, 0]`: one position of an axis, the axis dropped (Cambricon's Triton indexes a
            # `libdevice.philox` block so); only beside a `:`, a literal position
            index.append(it.value)
        else:
            raise Unevaluable(
                f"the subscript `{ast.unparse(sl)}` (only `:` and `None` are tile indexing)", node
            )
    idx = tuple(index)
    shape = getattr(base, "shape", None)
    if shape is not None and sum(1 for i in idx if i is not None) > len(shape):
        raise Unevaluable(f"the subscript `{ast.unparse(sl)}` of a {len(shape)}-d value", node)

    def fn(arr: np.ndarray) -> np.ndarray:
        # a lane mask or tag kept at a broadcastable lower rank (a row statistic's 0-d tag)
        # indexes as the tile does
        return (arr if arr.shape == shape else np.broadcast_to(arr, shape))[idx]

    try:
        if isinstance(base, Ptr):
            return map_ptr(base, fn)
        if isinstance(base, Val):
            return transform(base, fn)
    except IndexError as e:
        raise Unevaluable(f"the subscript `{ast.unparse(sl)}` past the tile's extent", node) from e
    raise Unevaluable(f"subscript of {type(base).__name__}", node)


def _beside_a_slice(items: list[ast.expr]) -> bool:
    return any(isinstance(i, ast.Slice) for i in items)


def reshape_val(v: Any, shape: tuple[int, ...], node: ast.AST) -> Any:
    if not isinstance(v, Val | Ptr):
        raise Unevaluable(f"a reshape of a {type(v).__name__}", node)

    def fn(a: np.ndarray) -> np.ndarray:
        return np.reshape(np.ascontiguousarray(a), shape)

    try:
        if isinstance(v, Ptr):
            return map_ptr(v, fn)
        return transform(v, fn)
    except ValueError as e:
        raise Unevaluable(f"a reshape to {shape}", node) from e


def broadcast_val(v: Any, shape: tuple[int, ...], node: ast.AST) -> Any:
    check_elements(shape, node)

    def fn(a: np.ndarray) -> np.ndarray:
        return np.broadcast_to(a, shape)

    try:
        if isinstance(v, Ptr):
            return map_ptr(v, fn)
        return transform(to_val(v, node), fn)
    except ValueError as e:
        raise Unevaluable(f"a broadcast to {shape}", node) from e


def trans(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    v = args[0]
    spec = kwargs.get("dims", args[1] if len(args) == 2 else (args[1:] if len(args) > 2 else None))
    if isinstance(spec, tuple | list):
        dims = [int(to_val(d, node).item()) for d in spec]
    elif spec is not None:
        dims = [int(to_val(spec, node).item())]
    else:
        dims = None

    def fn(a: np.ndarray) -> np.ndarray:
        return np.transpose(a, dims) if dims else np.swapaxes(a, -1, -2)

    if isinstance(v, Ptr):
        return map_ptr(v, fn)
    return transform(to_val(v, node), fn)


def shape_arg(x: Any, node: ast.AST) -> tuple[int, ...]:
    shape = (
        tuple(int(to_val(s, node).item()) for s in x)
        if isinstance(x, tuple | list)
        else (int(to_val(x, node).item()),)
    )
    check_elements(shape, node)
    return shape


def expand_dims_op(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    axis = args[1] if len(args) > 1 else kwargs["axis"]
    axes = [int(to_val(a, node).item()) for a in (axis if isinstance(axis, tuple | list) else [axis])]

    def fn(a: np.ndarray) -> np.ndarray:
        return np.expand_dims(a, tuple(axes))

    v = args[0]
    if isinstance(v, Ptr):
        return map_ptr(v, fn)
    return transform(to_val(v, node), fn)


def reshape_op(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    shape = args[1:] if len(args) > 2 else (args[1] if len(args) > 1 else kwargs["shape"])
    return reshape_val(args[0], shape_arg(shape, node), node)


def broadcast_to_op(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    shape = args[1:] if len(args) > 2 else (args[1] if len(args) > 1 else kwargs["shape"])
    return broadcast_val(args[0], shape_arg(shape, node), node)


def _broadcast(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    a, b = to_val(args[0], node), to_val(args[1], node)
    shape = bshape(a.shape, b.shape)
    return broadcast_val(a, shape, node), broadcast_val(b, shape, node)


def _split(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.split(x)`: the two halves of a last dimension of size 2."""
    x = to_val(args[0], node)
    if not x.shape or x.shape[-1] != 2:
        raise Unevaluable("tl.split of a tile whose last dimension is not 2", node)
    return transform(x, lambda a: a[..., 0]), transform(x, lambda a: a[..., 1])


def _join(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.join(a, b)`: stacked on a new last dimension of size 2."""
    a, b = to_val(args[0], node), to_val(args[1], node)
    shape = bshape(a.shape, b.shape)
    a, b = broadcast_val(a, shape, node), broadcast_val(b, shape, node)
    data = np.stack([a.data, b.data], axis=-1)
    out = derive([a, b], data[..., 0], promote(a, b))
    return transform(out, lambda arr: np.stack([arr, arr], axis=-1)).with_(data=data)


def gather(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    """`tl.gather(src, index, axis)`: out[i][j] = src[index[i][j]][j] for axis 0 (and so on),
    a tile of the index's shape. Each lane takes the gathered lane's value and flags, and the
    tags that do not vary along `axis` (the move along it is the kernel's explicit choice, such
    as the previous row of a scan, not a value misplaced); an index the interpreter does not
    know, or one outside the tile, is not modelled."""
    src = to_val(args[0] if args else kwargs.get("src"), node)
    index = to_val(args[1] if len(args) > 1 else kwargs.get("index"), node)
    axis = int(to_val(args[2] if len(args) > 2 else kwargs.get("axis"), node).item())
    if index.unknown or src.data.ndim != index.data.ndim or not src.shape:
        raise Unevaluable("`tl.gather` of this index", node)
    axis %= src.data.ndim
    idx = index.data.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= src.shape[axis]):
        raise Unevaluable("`tl.gather` with an index outside the tile", node)
    others = [d for d in range(src.data.ndim) if d != axis]
    if any(index.shape[d] > src.shape[d] for d in others):
        raise Unevaluable("`tl.gather` of an index wider than its source", node)

    def pick(a: np.ndarray) -> np.ndarray:
        full = bc(a, src.shape)
        full = full[tuple(slice(None) if d == axis else slice(0, index.shape[d]) for d in range(full.ndim))]
        return np.take_along_axis(full, idx, axis=axis)

    return src.with_(
        data=pick(src.data),
        tags={k: pick(t) for k, t in src.tags.items() if not tagops.varies(bc(t, src.shape), axis)},
        undef=pick(src.undef) if src.undef is not None else None,
        pad=pick(src.pad) if src.pad is not None else None,
        held=garbage.mapped(src, pick) if src.held else (),
        constexpr=False,
    )


OPS = [
    *declare("shapes", {"gather": gather}),
    *declare(
        "shapes",
        {
            "trans": trans,
            "permute": trans,
            "reshape": reshape_op,
            "view": reshape_op,
            "broadcast_to": broadcast_to_op,
            "expand_dims": expand_dims_op,
        },
        method=True,
    ),
    *declare("shapes", {"broadcast": _broadcast, "split": _split, "join": _join}),
]
