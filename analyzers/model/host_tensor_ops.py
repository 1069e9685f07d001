"""Torch operations on host tensors whose result shape torch's documentation fixes: the launcher
reshapes, broadcasts, reduces, sorts, stacks or slices a tensor before passing it to a kernel.

Each model follows the documented shape rule of the operation and nothing else:
- `squeeze(d)` drops a dimension only where its size is 1 (`torch.squeeze`); `flatten(s, e)`
  merges dimensions `s..e`; `ravel()` is `flatten()`.
- `expand` / `broadcast_to` / `expand_as` give the target shape, with stride 0 on the
  dimensions that were broadcast (size 1 or new leading ones) and `-1` keeping a size.
- reductions with `dim` (`sum`, `mean`, `amax`, `max`, `argmax`, ...) drop that dimension, or
  keep it as 1 under `keepdim=True`; without `dim` the result is 0-d. `max(dim)` / `min(dim)`
  and `sort` / `topk` return (values, indices), the indices int64.
- `cumsum` / `cumprod` and the elementwise methods keep the shape (an integral `cumsum` is int64).
- `torch.stack` adds a dimension of the sequence's length; `torch.cat` sums the sizes along
  `dim` (both require the other sizes equal, which the first pass records as a relation).
- `x[:n]`, `x[:, :n]`, `x.narrow(d, 0, n)` keep the first element (no offset): the sliced
  dimension measures `min(n, size)`.
- `permute` of an order the evaluator cannot compute (`dim_compress(x, dims)` of a `dims` the
  launcher is given) is the same tensor with its extents unknown: a permutation keeps the rank
  and the element count, never which size is where.
Anything else stays opaque (model/host_calls.py falls back to `Opaque`).
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.host_broadcast import common_shape, shape_arguments
from argus.analyzers.model.host_core import HostCore
from argus.analyzers.model.host_values import HostTensor, SymInt, contiguous_strides

REDUCTIONS = {"sum", "mean", "amax", "amin", "prod", "argmax", "argmin", "max", "min", "all", "any", "logsumexp"}
SAME_SHAPE = {
    "cumsum",
    "cumprod",
    "abs",
    "neg",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "tanh",
    "relu",
    "sign",
    "clamp",
    "clamp_min",
    "clamp_max",
    "masked_fill",
    "exp_",
    "abs_",
    "neg_",
    "clamp_",
    "masked_fill_",
}
# `torch.f(x, ...)` spelled as the method `x.f(...)`: the same shape rules (in-place methods
# have no function form)
LAYOUT_FORMS = {
    "reshape",
    "transpose",
    "permute",
    "squeeze",
    "unsqueeze",
    "flatten",
    "ravel",
    "clone",
    "t",
    "movedim",
    "moveaxis",
}
TORCH_FUNCTION_FORMS = (
    LAYOUT_FORMS | {"broadcast_to", "narrow", "sort", "topk", "numel"} | REDUCTIONS | {n for n in SAME_SHAPE if not n.endswith("_")}
)
# products of a sequence of sizes (of an empty one only `math.prod`'s is the int 1)
PRODUCTS = {"math.prod", "np.prod", "numpy.prod"}
LINEAR_NAMES = {"F.linear", "torch.nn.functional.linear", "nn.functional.linear", "functional.linear"}
ELEMENT_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8, "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8}
INTEGRAL = {"int8", "int16", "int32", "int64", "uint8", "bool", "int1"}


class HostTensorOps(HostCore):
    """Shape rules of torch operations (see the module docstring); None means "not modelled"."""

    def shaped_method(self, t: HostTensor, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """The result of `t.name(*args, **kwargs)` when one of the rules above covers it."""
        if name == "ravel" or (name == "flatten" and (args or kwargs)):
            return self._flatten(t, *_dims_arg(args, kwargs, ("start_dim", "end_dim"), (0, -1)))
        if name == "squeeze":
            return self._squeeze(t, args[0] if args else kwargs.get("dim"))
        if name in ("expand", "broadcast_to"):
            shape = args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else args
            return self._broadcast(t, list(shape or kwargs.get("size", ())))
        if name in ("expand_as", "view_as", "reshape_as", "type_as") and args and isinstance(args[0], HostTensor):
            return self._as_other(t, name, args[0])
        if name == "view" and len(args) == 1 and isinstance(args[0], tuple) and args[0][:1] == ("dtype",):
            return self._reinterpreted(t, args[0][1])
        if name == "to" and args and isinstance(args[0], HostTensor):
            return self._retyped(t, args[0].dtype, args[0].dtype_known)
        if name == "narrow" and len(args) == 3 and args[1] == 0 and _is_int(args[0]):
            return self._first_n(t, int(args[0]), args[2])
        if name in REDUCTIONS:
            return self._reduce(t, name, args, kwargs)
        if name in ("sort", "topk"):
            return self._sorted(t, name, args, kwargs)
        if name in SAME_SHAPE:
            return self._same_shape(t, name, kwargs)
        if name == "permute":
            return self._unknown_permutation(t)
        if name in ("movedim", "moveaxis") and len(args) == 2:
            return self._moved(t, args[0], args[1])
        return None

    def shaped_call(self, fname: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """`torch.f(...)` under a rule above, or `math.prod` of known sizes; None otherwise."""
        if fname.startswith("torch."):
            return self.torch_function(fname.rpartition(".")[2], args, kwargs)
        if fname in LINEAR_NAMES and len(args) >= 2 and all(isinstance(a, HostTensor) for a in args[:2]):
            return self._product_of(args[0], args[1], transposed=fname.endswith("linear"))
        if fname in PRODUCTS and len(args) == 1 and isinstance(args[0], tuple | list):
            if not args[0] and fname != "math.prod":
                return None  # `np.prod([])` is the float 1.0
            if all(_is_int(s) for s in args[0]):
                return self._product(list(args[0]))  # `math.prod(x.shape[1:])`: classes kept
        return None

    def torch_function(self, last: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """`torch.squeeze(x, 0)`, `torch.stack([a, b])`, ...: None when not modelled."""
        if last in ("matmul", "mm", "bmm") and len(args) == 2 and all(isinstance(a, HostTensor) for a in args):
            return self._product_of(args[0], args[1], transposed=False)
        if last in ("stack", "cat", "concat", "concatenate") and args:
            return self._joined(last, args[0], args[1] if len(args) > 1 else kwargs.get("dim", 0))
        if last == "broadcast_tensors" and args and all(isinstance(a, HostTensor) for a in args) and not kwargs:
            return self._broadcast_all(args)
        if last == "broadcast_shapes" and not kwargs:
            shapes = shape_arguments(args)
            common = None if shapes is None else common_shape(shapes, self._same_size)
            return None if common is None else tuple(common)
        if last in TORCH_FUNCTION_FORMS and args and isinstance(args[0], HostTensor):
            return self.tensor_method(args[0], last, list(args[1:]), kwargs)  # type: ignore[attr-defined]
        return None

    # ---- one rule each -------------------------------------------------------------------
    def _product_of(self, a: HostTensor, w: HostTensor, transposed: bool) -> Any:
        """`F.linear(x, W)`: `x @ W.T`, shape `(*x.shape[:-1], W.shape[0])`; `a @ b` of 2-d
        (or batched 3-d) operands: `(..., a.shape[-2], b.shape[-1])`. The contracted sizes are
        equal (torch raises otherwise): the first pass records them as one class."""
        if transposed:
            if len(w.shape) != 2 or not a.shape:
                return None
            inner, outer = (w.shape[1], w.symbols[1]), (w.shape[0], w.symbols[0])
            lead = list(zip(a.shape[:-1], a.symbols[:-1], strict=True))
        else:
            if len(a.shape) not in (2, 3) or len(w.shape) != len(a.shape):
                return None
            inner, outer = (w.shape[-2], w.symbols[-2]), (w.shape[-1], w.symbols[-1])
            lead = list(zip(a.shape[:-1], a.symbols[:-1], strict=True))
        if inner[0] != a.shape[-1]:
            return None
        if self.recording:
            self.dims.union(a.symbols[-1], inner[1])
        shape = [SymInt(s, y) for s, y in [*lead, outer]]
        out = self.new_tensor(shape, a.dtype, f"t{self.storages + 1}", a.dtype_known)
        out.sized = a.sized and w.sized
        return out

    def _flatten(self, t: HostTensor, start: Any, end: Any) -> Any:
        rank = len(t.shape)
        if not (_is_int(start) and _is_int(end)) or rank == 0:
            return None
        s, e = _axis(start, rank), _axis(end, rank)
        if s is None or e is None or s > e:
            return None
        merged = t.symbols[s : e + 1]
        size = self._product([SymInt(x, y) for x, y in zip(t.shape[s : e + 1], merged, strict=True)])
        shape = [*t.shape[:s], int(size), *t.shape[e + 1 :]]
        syms = [*t.symbols[:s], size.sym if isinstance(size, SymInt) else f"_f{self.storages}", *t.symbols[e + 1 :]]
        out = t.view_of(shape, contiguous_strides(shape), syms)
        if list(t.strides) != contiguous_strides(t.shape):
            out.storage = self._fresh_storage()  # flattening a strided view copies it
        return out

    def _squeeze(self, t: HostTensor, dim: Any) -> Any:
        rank = len(t.shape)
        if dim is None:
            drop = {i for i, s in enumerate(t.shape) if s == 1}
        else:
            dims = list(dim) if isinstance(dim, tuple | list) else [dim]
            if not all(_is_int(d) for d in dims):
                return None
            axes = [_axis(d, rank) for d in dims]
            if any(a is None for a in axes):
                return None
            drop = {a for a in axes if a is not None and t.shape[a] == 1}
        keep = [i for i in range(rank) if i not in drop]
        return t.view_of([t.shape[i] for i in keep], [t.strides[i] for i in keep], [t.symbols[i] for i in keep])

    def _broadcast(self, t: HostTensor, target: list[Any]) -> Any:
        rank = len(t.shape)
        if len(target) < rank or not all(_is_int(s) for s in target):
            return None
        lead = len(target) - rank
        shape, strides, syms = [], [], []
        for i, s in enumerate(target):
            j = i - lead
            if j >= 0 and (s == -1 or int(s) == t.shape[j]):
                if self.recording and isinstance(s, SymInt) and t.shape[j] != 1:
                    self.dims.union(t.symbols[j], s.sym)  # torch requires the sizes equal
                shape.append(t.shape[j])
                strides.append(t.strides[j])
                syms.append(t.symbols[j])
                continue
            if s == -1 or (j >= 0 and t.shape[j] != 1) or int(s) < 0:
                return None  # `-1` on a new dimension, or a size other than 1 broadcast: torch raises
            shape.append(int(s))
            strides.append(0)
            syms.append(self._size_symbol(s, f"_b{self.storages}_{i}"))
        return t.view_of(shape, strides, syms)

    def _broadcast_all(self, tensors: list[HostTensor]) -> Any:
        """`torch.broadcast_tensors(a, b, ...)`: each expanded to the common shape (host_broadcast.py)."""
        shapes = [[SymInt(s, y) for s, y in zip(t.shape, t.symbols, strict=True)] for t in tensors]
        common = common_shape(shapes, self._same_size)
        if common is None:
            return None
        views = [self._broadcast(t, list(common)) for t in tensors]
        return None if any(v is None for v in views) else tuple(views)

    def _same_size(self, a: SymInt, b: SymInt) -> None:
        if self.recording:
            self.dims.union(a.sym, b.sym)  # torch requires sizes other than 1 equal

    def _as_other(self, t: HostTensor, name: str, other: HostTensor) -> Any:
        if name == "type_as":
            return self._retyped(t, other.dtype, other.dtype_known)
        if name == "expand_as":
            return self._broadcast(t, [SymInt(s, y) for s, y in zip(other.shape, other.symbols, strict=True)])
        if sum(t.shape) and _numel(t.shape) != _numel(other.shape):
            return None
        shape = list(other.shape)
        out = t.view_of(shape, contiguous_strides(shape), list(other.symbols))
        out.sized = t.sized and other.sized
        return out

    def _reinterpreted(self, t: HostTensor, dtype: str) -> Any:
        """`x.view(torch.float32)`: the same bytes as another dtype; of one element size the
        same shape and strides (a view), otherwise not modelled (the last size scales)."""
        if not t.dtype_known or ELEMENT_BYTES.get(t.dtype) is None or ELEMENT_BYTES.get(t.dtype) != ELEMENT_BYTES.get(dtype):
            return None
        out = t.view_of(list(t.shape), list(t.strides), list(t.symbols))
        out.dtype = dtype
        return out

    def _retyped(self, t: HostTensor, dtype: str, known: bool) -> HostTensor:
        out = self._copy(t, dtype)
        out.dtype_known = known
        return out

    def _first_n(self, t: HostTensor, dim: int, n: Any) -> Any:
        """`x.narrow(dim, 0, n)` / `x[:n]`: the first `min(n, size)` positions of `dim`."""
        axis = _axis(dim, len(t.shape))
        if axis is None or not _is_int(n):
            return None
        size = SymInt(t.shape[axis], t.symbols[axis])
        if int(n) < 0:
            n = self.binop(ast.Add(), size, n)
            if not _is_int(n):
                return None
        shape, syms = list(t.shape), list(t.symbols)
        if int(n) < int(size):
            shape[axis] = max(int(n), 0)
            syms[axis] = self._size_symbol(n, f"_s{self.storages}_{axis}")
        return t.view_of(shape, list(t.strides), syms)

    def _reduce(self, t: HostTensor, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        dim = kwargs.get("dim", args[0] if args else None)
        keep = kwargs.get("keepdim", args[1] if len(args) > 1 else False)
        if not isinstance(keep, bool) or isinstance(dim, HostTensor):
            return None
        dtype = t.dtype
        if name in ("argmax", "argmin") or (name in ("sum", "prod") and t.dtype in INTEGRAL):
            dtype = "int64"
        if name in ("all", "any"):
            dtype = "int1"
        if dim is None:
            if name in ("max", "min") and (args or kwargs):
                return None
            out = self.new_tensor([], dtype, f"t{self.storages + 1}", t.dtype_known)
            return out
        dims = list(dim) if isinstance(dim, tuple | list) else [dim]
        axes = [_axis(d, len(t.shape)) if _is_int(d) else None for d in dims]
        if not axes or any(a is None for a in axes):
            return None
        shape: list[Any] = []
        for i, (s, y) in enumerate(zip(t.shape, t.symbols, strict=True)):
            if i not in axes:
                shape.append(SymInt(s, y))
            elif keep:
                shape.append(1)
        out = self.new_tensor(shape, dtype, f"t{self.storages + 1}", t.dtype_known or dtype != t.dtype)
        out.sized = t.sized
        if name in ("max", "min"):
            idx = self._copy(out, "int64")
            idx.dtype_known = True
            return (out, idx)
        return out

    def _sorted(self, t: HostTensor, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        values = self._copy(t, t.dtype)
        if name == "topk":
            k = args[0] if args else kwargs.get("k")
            dim = kwargs.get("dim", args[1] if len(args) > 1 else -1)
            axis = _axis(dim, len(t.shape)) if _is_int(dim) else None
            if axis is None or not _is_int(k) or int(k) > t.shape[axis]:
                return None
            shape, syms = list(t.shape), list(t.symbols)
            shape[axis], syms[axis] = int(k), self._size_symbol(k, f"_k{self.storages}")
            values = self.new_tensor(
                [SymInt(s, y) for s, y in zip(shape, syms, strict=True)], t.dtype, values.name, t.dtype_known
            )
            values.sized = t.sized
        indices = self._copy(values, "int64")
        indices.dtype_known = True
        return (values, indices)

    def _same_shape(self, t: HostTensor, name: str, kwargs: dict[str, Any]) -> HostTensor:
        if name.endswith("_"):
            return t  # in place: the same tensor
        dtype = t.dtype
        given = kwargs.get("dtype")
        if isinstance(given, tuple) and given and given[0] == "dtype":
            return self._retyped(t, given[1], True)
        if name in ("cumsum", "cumprod") and dtype in INTEGRAL:
            return self._retyped(t, "int64", True)
        return self._copy(t, dtype)

    def _unknown_permutation(self, t: HostTensor) -> HostTensor:
        out = t.view_of(list(t.shape), list(t.strides), list(t.symbols))
        out.sized = False  # the rank and element count hold; which size is where does not
        return out

    def _moved(self, t: HostTensor, source: Any, destination: Any) -> Any:
        """`torch.movedim(x, src, dst)` of one axis each (`movedim(x, dim, -1)`, flag-gems'
        reductions): the axis taken out and put back at `dst`, a view (strides move along)."""
        rank = len(t.shape)
        src, dst = _axis(source, rank), _axis(destination, rank)
        if src is None or dst is None:
            return None
        order = list(range(rank))
        order.insert(dst, order.pop(src))
        return t.view_of([t.shape[i] for i in order], [t.strides[i] for i in order], [t.symbols[i] for i in order])

    def _joined(self, how: str, items: Any, dim: Any) -> Any:
        if not isinstance(items, tuple | list) or not items or not all(isinstance(x, HostTensor) for x in items):
            return None
        first = items[0]
        rank = len(first.shape)
        if not _is_int(dim) or any(len(x.shape) != rank for x in items):
            return None
        axis = _axis(dim, rank + 1 if how == "stack" else rank)
        if axis is None:
            return None
        shape: list[Any] = [SymInt(s, y) for s, y in zip(first.shape, first.symbols, strict=True)]
        for other in items[1:]:
            for i, (s, y) in enumerate(zip(other.shape, other.symbols, strict=True)):
                if how != "stack" and i == axis:
                    continue
                if s != first.shape[i]:
                    return None
                if self.recording:
                    self.dims.union(first.symbols[i], y)  # torch requires these sizes equal
        if how == "stack":
            shape.insert(axis, len(items))
        else:
            total: Any = shape[axis]
            for other in items[1:]:
                total = self.binop(ast.Add(), total, SymInt(other.shape[axis], other.symbols[axis]))
            shape[axis] = total
        out = self.new_tensor(shape, first.dtype, f"t{self.storages + 1}", first.dtype_known)
        out.sized = all(x.sized for x in items)
        return out

    # ---- shared pieces -------------------------------------------------------------------
    def _copy(self, t: HostTensor, dtype: str) -> HostTensor:
        """A new contiguous tensor of `t`'s shape (its dimension classes kept)."""
        out = self.new_tensor(
            [SymInt(s, y) for s, y in zip(t.shape, t.symbols, strict=True)], dtype, f"t{self.storages + 1}", t.dtype_known
        )
        out.sized = t.sized
        return out

    def _fresh_storage(self) -> int:
        self.storages += 1
        return self.storages

    def _product(self, sizes: list[Any]) -> Any:
        out: Any = 1
        for s in sizes:
            out = self.binop(ast.Mult(), out, s)
        return out

    def _size_symbol(self, s: Any, fresh: str) -> str:
        """The dimension class a size measures: its own, or a new one fixed at a literal."""
        if isinstance(s, SymInt):
            return s.sym
        self.dims.find(fresh)
        self.dims.allowed.setdefault(fresh, [int(s)])
        return fresh


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _axis(d: Any, rank: int) -> int | None:
    """A dimension index the code states (a literal, `x.ndim - 1`); a size class (`SymInt`,
    e.g. a launcher's `dim` argument bound as a size) is a probe's choice, never an axis."""
    if not _is_int(d) or isinstance(d, SymInt):
        return None
    i = int(d) + rank if int(d) < 0 else int(d)
    return i if 0 <= i < max(rank, 1) else None


def _numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _dims_arg(args: list[Any], kwargs: dict[str, Any], names: tuple[str, str], defaults: tuple[int, int]) -> list[Any]:
    return [kwargs.get(n, args[i] if len(args) > i else d) for i, (n, d) in enumerate(zip(names, defaults, strict=True))]
