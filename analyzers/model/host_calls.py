"""Calls in host code: `torch.*` allocations, `triton.cdiv` and friends, builtins on known
values, tensor descriptors, and the methods of host tensors (views, strides, sizes, casts)."""

from __future__ import annotations

import ast
import math
from typing import Any

from argus.analyzers.model.device_picks import DeviceCount, caller_itemsize, itemsize_choice
from argus.analyzers.model.host_einops import flatten_ranges
from argus.analyzers.model.host_numbers import dtype_info, dtype_text, floor_quotient
from argus.analyzers.model.host_tensor_ops import HostTensorOps
from argus.analyzers.model.host_values import (
    NEGATED,
    HostTensor,
    Opaque,
    SymInt,
    contiguous_strides,
    dotted_name,
    transpose,
)
from argus.analyzers.model.runtime_values import RunTimeValue

# tensor methods that allocate a new tensor (shape given) with the receiver's dtype and device
NEW_TENSOR_METHODS = {"new_empty": "empty", "new_zeros": "zeros", "new_ones": "ones", "new_full": "full"}


# torch functions that allocate a tensor of a given shape, and of the shape of another
_NEW_FUNCTIONS = frozenset({"empty", "zeros", "ones", "full", "randn", "rand", "empty_strided", "randint"})
_AS_TENSOR = frozenset({"as_tensor", "tensor", "scalar_tensor"})  # (torch_new hands them to as_tensor)
_LIKE_FUNCTIONS = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "randn_like"})


class HostCalls(HostTensorOps):
    """The calls and tensor methods the host evaluator models; anything else is opaque."""

    def _rearranged(self, t: Any, pattern: Any) -> Any:
        """`rearrange(x, 'b t ... -> b t (...)')`: the flattens the pattern is made of."""
        ranges = flatten_ranges(pattern, len(t.shape)) if isinstance(t, HostTensor) and isinstance(pattern, str) else None
        if ranges is None:
            return Opaque("rearrange")
        for first, last in reversed(ranges):  # from the right: the axes to their left stay put
            t = self._flatten(t, first, last)
            if t is None:
                return Opaque("rearrange")
        return t

    def _device_min(self, args: list[Any]) -> Any:
        """`min(count, x)` of a device's picked count and known numbers: the device may have as
        many cores as rows, so the known side (device_picks.py); the count it drops is not
        used (`device_uses`). None for any other `min`."""
        if len(args) < 2 or not _known_beside_device(args):
            return None
        for a in args:
            if isinstance(a, DeviceCount):
                self.device_uses[a.query] -= 1  # type: ignore[attr-defined]
        return min(a for a in args if not isinstance(a, DeviceCount))

    def call(self, fname: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        if fname.startswith("builtins."):
            fname = fname.removeprefix("builtins.")  # `builtins.min(...)` where `min` is shadowed
        last = fname.split(".")[-1]
        try:
            if fname == "torch.prod" and (sizes := self._sizes_of_new_tensor(node)) is not None:
                product = self.shaped_call("math.prod", [sizes], {})  # `torch.prod(torch.tensor(batch))`
                return Opaque(fname) if product is None else product
            shaped = self.shaped_call(fname, args, kwargs)
            if shaped is not None:
                return shaped
            if fname in ("rearrange", "einops.rearrange") and len(args) == 2 and not kwargs:
                return self._rearranged(args[0], args[1])  # host_einops.py
            if last == "cdiv" and len(args) == 2 and _ints(args):
                return self.binop(
                    ast.FloorDiv(), self.binop(ast.Sub(), self.binop(ast.Add(), args[0], args[1]), 1), args[1]
                )
            if last == "next_power_of_2" and _ints(args):
                n = int(args[0])
                return 0 if n <= 0 else 1 << (n - 1).bit_length()  # Triton's: 0 for n <= 0
            if fname == "min" and (kept := self._device_min(args)) is not None:
                return kept  # `min(sms, rows)`: the rows (device_picks.py)
            if fname in ("min", "max") and args and all(isinstance(a, int | float) for a in args):
                return (min if fname == "min" else max)(*args)
            if fname == "min" and len(args) >= 2 and any(isinstance(a, int | float) for a in args):
                # `min(sms, tiles)`: a device property is unknown here; the known side bounds it
                # above, as the largest the launch can be
                return min(a for a in args if isinstance(a, int | float))
            if fname == "max" and len(args) >= 2 and not all(isinstance(a, int | float) for a in args):
                # `max(min_block, block)` with `block` unknown: the known side is only a floor,
                # never the value (a block of 1 would refuse a correct launch or hide a finding)
                return Opaque("max")
            if fname in ("min", "max") and len(args) == 1 and isinstance(args[0], tuple | list):
                return (min if fname == "min" else max)(args[0])
            if fname in ("int", "operator.index") and len(args) == 1 and isinstance(args[0], SymInt):
                return args[0]  # `int(x.numel())`: the same size, its dimension class kept
            if (number := self.number_call(fname, args, kwargs, node)) is not None:
                return number  # `int(n / m)`, `torch.finfo(dtype)`, `str(dtype)` (host_numbers.py)
            if (
                fname in ("int", "float", "abs", "bool", "round")
                and len(args) == 1
                and isinstance(args[0], int | float)
            ):
                return {"int": int, "float": float, "abs": abs, "bool": bool, "round": round}[fname](args[0])
            if fname == "len" and len(args) == 1 and isinstance(args[0], HostTensor) and args[0].shape:
                return SymInt(args[0].shape[0], args[0].symbols[0])  # `len(q)`: its first extent
            if len(args) == 1 and isinstance(args[0], tuple | list) and fname in ("len", "tuple", "list"):
                return {"len": len, "tuple": tuple, "list": list}[fname](args[0])
            if fname.startswith("math.") and all(isinstance(a, int | float) for a in args):
                return getattr(math, last)(*args)
            if fname.startswith("torch.") and last in _NEW_FUNCTIONS | _AS_TENSOR:
                return self.torch_new(last, args, kwargs)
            if fname.startswith("torch.") and last in _LIKE_FUNCTIONS:
                if args and isinstance(args[0], HostTensor):
                    src = args[0]
                    dt = kwargs.get("dtype")
                    t = self.new_tensor(
                        [SymInt(s, y) for s, y in zip(src.shape, src.symbols, strict=True)],
                        dt[1] if isinstance(dt, tuple) else src.dtype,
                        f"t{self.storages + 1}",
                        isinstance(dt, tuple) or src.dtype_known,
                    )
                    t.created = last == "empty_like"
                    if last in ("zeros_like", "ones_like", "full_like"):
                        self.initialized.add(t.storage)
                    t.sized = src.sized  # the model's extents, stated or not
                    return t
            if fname == "dict" and not args and all(k.arg for k in node.keywords):
                return dict(kwargs)  # `dict(BLOCK=b, n=n)`, spread into a launch as `**consts`
            if fname in ("tl.constexpr", "triton.language.constexpr", "triton.Config"):
                # `tl.constexpr(0)`: the number it wraps
                return args[0] if len(args) == 1 and last == "constexpr" else Opaque(fname)
            desc = _descriptor(fname, args, kwargs)
            if desc is not None:
                return desc
            if fname in self.env and isinstance(self.env[fname], tuple) and self.env[fname][0] == "func":
                return Opaque("local function")
        except (ArithmeticError, TypeError, ValueError, OverflowError):
            return Opaque(fname)
        return Opaque(fname or "call")

    def _sizes_of_new_tensor(self, node: ast.Call) -> list[Any] | None:
        """The sizes `torch.tensor(batch)` is made of, in `torch.prod(torch.tensor(batch))`
        (liger's `N = int(torch.prod(torch.tensor(batch)))` after `*batch, L, _ = x.shape`);
        None for any other argument. The tensor itself stays unknown (it may be passed on)."""
        inner = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if not (isinstance(inner, ast.Call) and dotted_name(inner.func) == "torch.tensor" and len(inner.args) == 1):
            return None
        items = self.expr(inner.args[0])  # type: ignore[attr-defined]
        return list(items) if isinstance(items, list | tuple) else None

    def as_tensor(self, value: Any, kwargs: dict[str, Any]) -> Any:
        """`torch.as_tensor(values)` / `torch.tensor(values)`: a host tensor stays itself (its
        shape; `torch.tensor` copies it, the shape is the same); a number becomes a 0-d tensor
        holding it (flag-gems' `heaviside(input, values)` broadcasts a scalar `values` so). None
        for anything else (a list: its nesting is not modelled)."""
        if isinstance(value, HostTensor):
            return value
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        dt = kwargs.get("dtype")
        given = isinstance(dt, tuple) and bool(dt) and dt[0] == "dtype"
        dtype = dt[1] if given else ("int64" if isinstance(value, int) else "fp32")
        # (a number's dtype is torch's default only where the number is the caller's; the
        # probe's stand-in for a value it does not know leaves it unknown)
        t = self.new_tensor([], dtype, f"t{self.storages + 1}", given)
        self.initialized.add(t.storage)  # it holds the number
        return t

    def number_call(self, fname: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """`int(a / b)` of sizes, `torch.finfo(dtype)`, `str(dtype)`: host_numbers.py's value,
        or None."""
        if fname == "int" and len(args) == 1 and isinstance(args[0], float) and len(node.args) == 1:
            return floor_quotient(node.args[0], self.expr, self.binop)  # type: ignore[attr-defined]
        info = dtype_info(fname, args, kwargs)
        return info if info is not None else dtype_text(fname, args, kwargs)

    def new_like_receiver(self, t: HostTensor, kind: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """`x.new_empty(shape)`: `torch.empty(shape)` with the receiver's dtype unless one is given."""
        given = isinstance(kwargs.get("dtype"), tuple)
        out = self.torch_new(kind, args, kwargs if given else {**kwargs, "dtype": ("dtype", t.dtype)})
        if isinstance(out, HostTensor) and not given:
            out.dtype_known = t.dtype_known
        return out

    def torch_new(self, kind: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if kind in _AS_TENSOR:
            made = self.as_tensor(args[0], kwargs) if len(args) == 1 else None
            return Opaque(f"torch.{kind}") if made is None else made
        shape: list[Any]
        if kind == "randint":
            shape = list(kwargs.get("size", args[-1] if args else ()))
        elif args and isinstance(args[0], tuple | list):
            shape = list(args[0])
        elif kind in ("full", "empty_strided"):
            shape = list(args[:1])  # (size, fill value) and (size, strides): the size comes first
        else:
            shape = list(args)
        if "size" in kwargs and isinstance(kwargs["size"], tuple | list):
            shape = list(kwargs["size"])
        # `torch.empty(shape)` of a shape the evaluator does not know, or a size in it that it
        # does not: a tensor all the same, but its extent is a stand-in (bounds not judged)
        stated = all(isinstance(s, int) and not isinstance(s, bool) for s in shape)
        dt = kwargs.get("dtype")
        dtype = (
            dt[1]
            if isinstance(dt, tuple) and dt and dt[0] == "dtype"
            else ("int64" if kind == "randint" else "fp32")
        )
        t = self.new_tensor(shape, dtype, f"t{self.storages + 1}", isinstance(dt, tuple) or kind == "randint")
        t.created = kind in ("empty", "empty_strided")
        if kind in ("zeros", "ones", "full"):
            self.initialized.add(t.storage)  # every element holds a value before any kernel runs
        if not stated:
            t.sized = False
        return t

    def tensor_method(self, t: HostTensor, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        rank = len(t.shape)
        if name != "permute":
            shaped = self.shaped_method(t, name, args, kwargs)
            if shaped is not None:
                return shaped
        if name in NEW_TENSOR_METHODS:
            return self.new_like_receiver(t, NEW_TENSOR_METHODS[name], args, kwargs)
        if name == "stride":
            if args and isinstance(args[0], int):
                return t.strides[args[0]]
            return tuple(t.strides)
        if name == "size":
            if args and isinstance(args[0], int):
                i = args[0]
                return SymInt(t.shape[i], t.symbols[i])
            return tuple(SymInt(s, y) for s, y in zip(t.shape, t.symbols, strict=True))
        if name == "numel":
            n = math.prod(t.shape)
            if rank == 1:
                return SymInt(n, t.symbols[0])
            sym = "(" + "*".join(t.symbols) + ")"
            if self.recording:
                self.dims.derived.setdefault(sym, sym)
            return SymInt(n, sym)
        if name == "dim":
            return rank
        if name in ("contiguous", "zero_", "fill_", "detach", "clone", "cuda", "cpu", "requires_grad_"):
            if name == "contiguous" or name == "clone":
                return t.view_of(list(t.shape), contiguous_strides(t.shape), list(t.symbols))
            return t
        if name in ("t",) and rank == 2:
            return transpose(t, 0, 1)
        if name == "transpose" and len(args) == 2 and _ints(args):
            return transpose(t, args[0], args[1])
        if name == "permute":
            order = list(args[0]) if args and isinstance(args[0], tuple | list) else list(args)
            if len(order) == rank and _ints(order):
                return t.view_of(
                    [t.shape[i] for i in order], [t.strides[i] for i in order], [t.symbols[i] for i in order]
                )
        if name in ("to", "float", "half", "bfloat16", "int", "long"):
            dt = {"float": "fp32", "half": "fp16", "bfloat16": "bf16", "int": "int32", "long": "int64"}.get(
                name
            )
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, tuple) and a and a[0] == "dtype":
                    dt = a[1]
            if dt:
                return HostTensor(
                    list(t.shape), contiguous_strides(t.shape), dt, list(t.symbols), t.storage, t.name, True
                )
            if name == "to" and any(isinstance(a, Opaque) for a in [*args, kwargs.get("dtype")]):
                # `v.to(dtype=torch.result_type(x, v))`: a dtype not known, maybe not t's
                out = t.view_of(list(t.shape), list(t.strides), list(t.symbols))
                out.dtype_known = False
                return out
            return t
        if name in ("view", "reshape", "flatten"):
            shaped = self._view(t, name, args)
            if shaped is not None:
                return shaped
        if name == "unsqueeze" and args and isinstance(args[0], int):
            i = args[0] if args[0] >= 0 else rank + 1 + args[0]
            shape = list(t.shape)
            strides = list(t.strides)
            syms = list(t.symbols)
            shape.insert(i, 1)
            strides.insert(i, strides[i] * shape[i + 1] if i < rank else 1)
            syms.insert(i, f"_u{self.storages}_{i}")
            return t.view_of(shape, strides, syms)
        if name == "element_size":
            return {"fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8, "int32": 4, "int64": 8}.get(t.dtype, 2)
        if name == "is_contiguous":
            return list(t.strides) == contiguous_strides(t.shape)
        if name == "storage_offset":
            return 0
        if name == "permute" and any(isinstance(a, Opaque) for a in args):
            return self.shaped_method(t, name, args, kwargs)  # an order the evaluator cannot compute
        return Opaque(f"tensor.{name}")


    def caller_itemsize(self, text: str) -> int:
        """`arr.itemsize` of a tensor whose dtype the caller chooses: picked, named and varied
        by the second probe (device_picks.caller_itemsize)."""
        text = text or "x.itemsize"
        out = caller_itemsize(self.second_pick)  # type: ignore[attr-defined]
        self.device_choices[text] = itemsize_choice(text, out)  # type: ignore[attr-defined]
        self.device_uses[text] = self.device_uses.get(text, 0) + 1  # type: ignore[attr-defined]
        return out

    def tensor_index(self, t: HostTensor, idx: Any) -> Any:
        """`o[..., 0]`, `x[:, 0]`, `x[None]`, `x[0]`: the view (shape, strides, classes) of an
        index that starts at the tensor's own first element; any other index (a nonzero
        position, a slice with bounds, a tensor) is opaque: its offset or extent is unknown."""
        items = list(idx) if isinstance(idx, tuple) else [idx]
        if sum(1 for x in items if x is Ellipsis) > 1:
            return Opaque("tensor index")
        named = sum(1 for x in items if x is not None and x is not Ellipsis)
        if named > len(t.shape):
            return Opaque("tensor index")
        if Ellipsis in items:
            at = items.index(Ellipsis)
            items[at : at + 1] = [slice(None)] * (len(t.shape) - named)
        items += [slice(None)] * (len(t.shape) - sum(1 for x in items if x is not None))
        shape, strides, syms, dim, fresh, unsized = [], [], [], 0, False, False
        for x in items:
            if x is None:
                shape.append(1)
                strides.append(1)
                syms.append(f"_u{self.storages}_{len(shape)}")
            elif isinstance(x, slice) and x.start in (None, 0) and x.stop is None and x.step in (None, 1):
                shape.append(t.shape[dim])
                strides.append(t.strides[dim])
                syms.append(t.symbols[dim])
                dim += 1
            elif isinstance(x, int) and not isinstance(x, bool) and x == 0 and t.shape[dim] > 0:
                dim += 1  # the first position: no offset
            elif _leading_slice(x):
                # `idx[:n]`: the first min(n, size) positions, from the first element (no offset)
                part = self._first_n(t.view_of([t.shape[dim]], [t.strides[dim]], [t.symbols[dim]]), 0, x.stop)
                if part is None:
                    return Opaque("tensor index")
                shape.append(part.shape[0])
                strides.append(t.strides[dim])
                syms.append(part.symbols[0])
                dim += 1
            elif isinstance(x, slice) and isinstance(x.stop, RunTimeValue):
                # `idx[:out_size]` of a count only the run knows: an extent of its own class,
                # which nothing states, so the view's bounds are not judged (runtime_values.py)
                part = self.dim(f"{t.name or 'tensor'}.{dim}:{self.storages}")
                shape.append(int(part))
                strides.append(t.strides[dim])
                syms.append(part.sym)
                unsized = True
                dim += 1
            elif _trailing_slice(x):
                # `ids[:, -L:]`: the last min(L, size) positions; it starts past the first
                # element, so it is a storage of its own (how it overlaps `t` is not followed)
                part = self._last_n(t.view_of([t.shape[dim]], [t.strides[dim]], [t.symbols[dim]]), x.start)
                if part is None:
                    return Opaque("tensor index")
                shape.append(part.shape[0])
                strides.append(t.strides[dim])
                syms.append(part.symbols[0])
                fresh = True
                dim += 1
            else:
                return Opaque("tensor index")
        out = t.view_of(shape, strides, syms)
        if fresh:
            out.storage = self._fresh_storage()
        if unsized:
            out.sized = False
        return out

    def _last_n(self, t: HostTensor, start: int) -> HostTensor | None:
        """The positions `t[start:]` of a 1-d view: `t[-n:]` is the last min(n, size) of them,
        `t[k:]` the last max(size - k, 0)."""
        if start >= 0:
            size = SymInt(t.shape[0], t.symbols[0])
            n = self.binop(ast.Sub(), size, start)  # type: ignore[attr-defined]
            if not isinstance(n, int) or int(n) <= 0:
                return None  # an empty view: nothing the kernel reads is in it
            return self._first_n(t, 0, n)
        if isinstance(start, SymInt) and start.sym.startswith(NEGATED):
            return self._first_n(t, 0, SymInt(-int(start), start.sym[len(NEGATED) :]))
        return self._first_n(t, 0, -int(start))

    def _view(self, t: HostTensor, name: str, args: list[Any]) -> HostTensor | None:
        """`view` / `reshape` / `flatten` to sizes all known (None otherwise). A `-1` takes the
        total over the other sizes; where that total includes a dimension nothing in the
        launcher names or relates, the size is a guess, so the view's extent is unknown."""
        rank = len(t.shape)
        shape = list(args[0]) if args and isinstance(args[0], tuple | list) else list(args)
        if name == "flatten":
            shape = [-1]
        if not all(isinstance(s, int) for s in shape):
            return None
        inferred = -1 in shape
        total = math.prod(t.shape)
        known = math.prod(s for s in shape if s != -1) or 1
        shape = [total // known if s == -1 else s for s in shape]
        syms = [x.sym if isinstance(x, SymInt) else f"_v{self.storages}_{i}" for i, x in enumerate(shape)]
        if len(shape) == 1 and rank == 1:
            syms = list(t.symbols)
        out = t.view_of([int(s) for s in shape], contiguous_strides([int(s) for s in shape]), syms)
        if inferred and any(self.dims.find(s) in self.free_roots for s in t.symbols):
            out.sized = False  # `-1` from a total nothing established: its extent is unknown
        return out

def _descriptor(fname: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A host-side TensorDescriptor: `TensorDescriptor.from_tensor(x, block)` (or its keywords
    `tensor=`, `block_shape=`) and `TensorDescriptor(x, shape, strides, block_shape)`."""
    last = fname.rpartition(".")[2]
    covered = args[0] if args else kwargs.get("tensor")
    if "TensorDescriptor" not in fname or not isinstance(covered, HostTensor):
        return None
    if last == "from_tensor":
        block = args[1] if len(args) > 1 else kwargs.get("block_shape")
    elif last == "TensorDescriptor" and args:
        block = kwargs.get("block_shape", args[3] if len(args) > 3 else None)
    else:
        return None
    return ("desc", covered, list(block) if isinstance(block, tuple | list) else block)


def _trailing_slice(x: Any) -> bool:
    """`[-n:]` or `[k:]` (step 1, k > 0): a slice that runs to the last position."""
    return (
        isinstance(x, slice)
        and x.stop is None
        and x.step in (None, 1)
        and isinstance(x.start, int)
        and not isinstance(x.start, bool)
        and x.start != 0
    )


def _leading_slice(x: Any) -> bool:
    """`[:n]` or `[0:n]` (step 1): a slice that starts at the first position."""
    return (
        isinstance(x, slice)
        and x.start in (None, 0)
        and x.step in (None, 1)
        and isinstance(x.stop, int)
        and not isinstance(x.stop, bool)
    )


def _ints(xs: list[Any]) -> bool:
    return all(isinstance(x, int) and not isinstance(x, bool) for x in xs)


def _known_beside_device(args: list[Any]) -> bool:
    """`min(count, x)` with a device's picked count and every other side a known number."""
    rest = [a for a in args if not isinstance(a, DeviceCount)]
    return len(rest) < len(args) and bool(rest) and all(isinstance(a, int | float) for a in rest)
