"""Abstract evaluation of the host code around a launch `kernel[grid](...)`.

The launcher is never run: its statements are evaluated over *host values* (tensors with
symbolic-then-concrete shapes, ints, floats) just far enough to learn what the launch binds:
which argument is which tensor, with which shape and strides; which sizes are passed; the grid;
the constexpr values. Unknown calls give opaque values, never errors.

Evaluation happens twice. The first pass uses placeholder sizes and records how dimensions
relate (`M, K = a.shape`, `assert K == K2`, `assert D in (64, 128)`, `torch.empty((M, N))`); the
second pass, once per probe, uses concrete sizes chosen for each dimension class.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers.errors import HOST_ERRORS
from argus.analyzers.interp.budget import oversized_result
from argus.analyzers.interp.values import DTYPE_ALIASES
from argus.analyzers.model.nodes import subtree


class Opaque:
    """A host value the evaluator does not know (an unknown call, a device property...)."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<opaque {self.what}>"


class SymInt(int):
    """An int that remembers the dimension class it measures (for unification and tags)."""

    sym: str

    def __new__(cls, value: int, sym: str) -> SymInt:
        obj = super().__new__(cls, int(value))
        obj.sym = sym
        return obj


@dataclass
class HostTensor:
    shape: list[int]
    strides: list[int]
    dtype: str
    symbols: list[str]
    storage: int  # id of the storage it views
    name: str = ""
    dtype_known: bool = False
    created: bool = False
    sized: bool = True

    def view_of(self, shape: list[int], strides: list[int], symbols: list[str]) -> HostTensor:
        return HostTensor(
            shape,
            strides,
            self.dtype,
            symbols,
            self.storage,
            self.name,
            self.dtype_known,
            self.created,
            self.sized,
        )


@dataclass
class DimClasses:
    """Union-find over dimension symbols, with the constraints asserts put on them."""

    parent: dict[str, str] = field(default_factory=dict)
    allowed: dict[str, list[int]] = field(default_factory=dict)
    multiple_of: dict[str, int] = field(default_factory=dict)
    # `assert H % H_KV == 0`: H's symbol -> H_KV's symbol (resolve both with find)
    divisible_by: dict[str, str] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)  # symbol -> expression it was made from

    def find(self, s: str) -> str:
        self.parent.setdefault(s, s)
        while self.parent[s] != s:
            self.parent[s] = self.parent[self.parent[s]]
            s = self.parent[s]
        return s

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            keep, drop = sorted((ra, rb), key=lambda r: (r.startswith("_"), len(r), r))
            self.parent[drop] = keep
            if drop in self.allowed:
                self.allowed.setdefault(keep, self.allowed.pop(drop))
            if drop in self.multiple_of:
                self.multiple_of[keep] = max(self.multiple_of.pop(drop), self.multiple_of.get(keep, 1))


TORCH_DTYPES = DTYPE_ALIASES  # torch's dtype names are a subset of the interpreter's aliases
TENSOR_ATTRS = {
    "shape",
    "stride",
    "size",
    "numel",
    "dim",
    "ndim",
    "dtype",
    "device",
    "t",
    "T",
    "transpose",
    "permute",
    "contiguous",
    "view",
    "reshape",
    "is_contiguous",
    "element_size",
    "data_ptr",
    "to",
    "float",
    "half",
    "bfloat16",
    "zero_",
    "fill_",
    "unsqueeze",
    "squeeze",
    "expand",
    "flatten",
    "new_empty",
    "new_zeros",
    "mT",
    "storage_offset",
    "is_cuda",
}


class HostEval:
    """Evaluates host statements; `bind` maps names to host values."""

    def __init__(
        self,
        dims: DimClasses,
        sizes: dict[str, int] | None,
        recording: bool,
        contains_memo: dict[tuple[int, int], bool] | None = None,
    ) -> None:
        self.dims = dims
        self.contains_memo = contains_memo if contains_memo is not None else {}
        self.sizes = sizes  # root class -> concrete value (None while recording)
        self.recording = recording
        self.env: dict[str, Any] = {}
        self.storages = 0
        self.fresh = 0

    # ---- sizes -----------------------------------------------------------------------------
    def dim(self, sym: str) -> SymInt:
        root = self.dims.find(sym)
        if self.sizes is None:
            return SymInt(7, sym)
        return SymInt(self.sizes.get(root, 7), sym)

    def new_tensor(self, shape: list[Any], dtype: str, name: str, dtype_known: bool) -> HostTensor:
        self.storages += 1
        dims, syms = [], []
        for i, s in enumerate(shape):
            if isinstance(s, SymInt):
                dims.append(int(s))
                syms.append(s.sym)
            elif isinstance(s, int):
                sym = f"_{name}{i}"
                self.dims.find(sym)
                self.dims.allowed.setdefault(sym, [int(s)])
                dims.append(int(s))
                syms.append(sym)
            else:
                sym = f"_{name}{i}"
                dims.append(int(self.dim(sym)))
                syms.append(sym)
        return HostTensor(dims, contiguous_strides(dims), dtype, syms, self.storages, name, dtype_known)

    # ---- statements ------------------------------------------------------------------------
    def run_block(self, stmts: list[ast.stmt], stop_at: ast.AST | None = None) -> bool:
        """Run statements until `stop_at` (a node inside) is reached; True when it was reached."""
        for st in stmts:
            if stop_at is not None and self.contains(st, stop_at):
                if isinstance(st, ast.If | ast.With | ast.For | ast.Try):
                    if self._enter_containing(st, stop_at):
                        return True
                return True
            self.stmt(st)
        return False

    def contains(self, st: ast.AST, target: ast.AST) -> bool:
        key = (id(st), id(target))
        if key not in self.contains_memo:
            self.contains_memo[key] = _contains(st, target)
        return self.contains_memo[key]

    def _enter_containing(self, st: ast.stmt, target: ast.AST) -> bool:
        if isinstance(st, ast.If):
            branch = st.body if any(self.contains(s, target) for s in st.body) else st.orelse
            return self.run_block(branch, target)
        if isinstance(st, ast.With | ast.Try):
            return self.run_block(st.body, target)
        if isinstance(st, ast.For):
            return self.run_block(st.body, target)
        return True

    def stmt(self, st: ast.stmt) -> None:
        try:
            if isinstance(st, ast.Assign):
                v = self.expr(st.value)
                for t in st.targets:
                    self.assign(t, v)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                self.assign(st.target, self.expr(st.value))
            elif isinstance(st, ast.AugAssign):
                cur = self.expr(st.target)
                self.assign(st.target, self.binop(st.op, cur, self.expr(st.value)))
            elif isinstance(st, ast.Assert):
                self.record_assert(st.test)
            elif isinstance(st, ast.If):
                c = self.expr(st.test)
                if isinstance(c, Opaque):
                    return
                self.run_block(st.body if c else st.orelse)
            elif isinstance(st, ast.FunctionDef):
                self.env[st.name] = ("func", st)
            elif isinstance(st, ast.Expr):
                self.expr(st.value)
        except (*HOST_ERRORS, RecursionError):
            pass

    def assign(self, target: ast.expr, v: Any) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = v
        elif isinstance(target, ast.Tuple | ast.List):
            if isinstance(v, tuple | list) and len(v) == len(target.elts):
                for t, x in zip(target.elts, v, strict=True):
                    self.assign(t, x)
            else:
                for t in target.elts:
                    self.assign(t, Opaque("unpack"))

    def record_assert(self, test: ast.expr) -> None:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for v in test.values:
                self.record_assert(v)
            return
        if isinstance(test, ast.Compare) and len(test.ops) > 1:
            # `k.shape == v.shape == (b, h, s, d)`: each neighbouring pair
            operands = [test.left, *test.comparators]
            for op_, a_, b_ in zip(test.ops, operands, operands[1:], strict=False):
                self.record_assert(ast.Compare(left=a_, ops=[op_], comparators=[b_]))
            return
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return
        left, right, op = self.expr(test.left), self.expr(test.comparators[0]), test.ops[0]
        if isinstance(op, ast.Eq):
            self.unify(left, right)
            if isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Mod):
                a, b = self.expr(test.left.left), self.expr(test.left.right)
                if isinstance(a, SymInt) and isinstance(b, SymInt) and right == 0:
                    self.dims.divisible_by[a.sym] = b.sym
                elif isinstance(a, SymInt) and isinstance(b, int) and right == 0:
                    root = self.dims.find(a.sym)
                    self.dims.multiple_of[root] = max(self.dims.multiple_of.get(root, 1), int(b))
        elif isinstance(op, ast.In) and isinstance(left, SymInt) and isinstance(right, tuple | list):
            vals = [int(x) for x in right if isinstance(x, int)]
            if vals:
                self.dims.allowed[self.dims.find(left.sym)] = vals

    def unify(self, a: Any, b: Any) -> None:
        if isinstance(a, SymInt) and isinstance(b, SymInt):
            self.dims.union(a.sym, b.sym)
        elif isinstance(a, tuple | list) and isinstance(b, tuple | list) and len(a) == len(b):
            for x, y in zip(a, b, strict=True):
                self.unify(x, y)
        elif isinstance(a, SymInt) and isinstance(b, int) and not isinstance(b, bool):
            self.dims.allowed[self.dims.find(a.sym)] = [int(b)]

    # ---- expressions -----------------------------------------------------------------------
    def expr(self, e: ast.expr) -> Any:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            return Opaque(type(e).__name__)
        return m(e)

    def e_Constant(self, e: ast.Constant) -> Any:
        return e.value

    def e_Name(self, e: ast.Name) -> Any:
        if e.id in self.env:
            return self.env[e.id]
        return {"None": None, "True": True, "False": False}.get(e.id, Opaque(e.id))

    def e_Tuple(self, e: ast.Tuple) -> Any:
        return tuple(self.expr(x) for x in e.elts)

    def e_List(self, e: ast.List) -> Any:
        return [self.expr(x) for x in e.elts]

    def e_Dict(self, e: ast.Dict) -> Any:
        return {self.expr(k): self.expr(v) for k, v in zip(e.keys, e.values, strict=True) if k is not None}

    def e_IfExp(self, e: ast.IfExp) -> Any:
        c = self.expr(e.test)
        if isinstance(c, Opaque):
            return self.expr(e.body)
        return self.expr(e.body) if c else self.expr(e.orelse)

    def e_BoolOp(self, e: ast.BoolOp) -> Any:
        vals = [self.expr(v) for v in e.values]
        if any(isinstance(v, Opaque) for v in vals):
            return Opaque("boolop")
        if isinstance(e.op, ast.And):
            return all(vals)
        return next((v for v in vals if v), vals[-1])

    def e_UnaryOp(self, e: ast.UnaryOp) -> Any:
        v = self.expr(e.operand)
        if isinstance(v, Opaque):
            return v
        if isinstance(e.op, ast.USub):
            return -v
        if isinstance(e.op, ast.Not):
            return not v
        if isinstance(e.op, ast.UAdd):
            return v
        return ~v

    def e_BinOp(self, e: ast.BinOp) -> Any:
        return self.binop(e.op, self.expr(e.left), self.expr(e.right))

    def binop(self, op: ast.operator, a: Any, b: Any) -> Any:
        if isinstance(a, Opaque | HostTensor) or isinstance(b, Opaque | HostTensor) or a is None or b is None:
            return Opaque("binop")
        fn = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.FloorDiv: lambda: a // b,
            ast.Mod: lambda: a % b,
            ast.Div: lambda: a / b,
            ast.Pow: lambda: a**b,
            ast.LShift: lambda: a << b,
            ast.RShift: lambda: a >> b,
            ast.BitAnd: lambda: a & b,
            ast.BitOr: lambda: a | b,
        }.get(type(op))
        if fn is None or oversized_result(op, a, b):
            return Opaque("binop")
        r = fn()
        if (
            self.recording
            and isinstance(op, ast.FloorDiv | ast.Div)
            and isinstance(a, SymInt)
            and isinstance(b, int)
            and not isinstance(b, SymInt)
            and b in (2, 4)
        ):
            root = self.dims.find(a.sym)
            self.dims.multiple_of[root] = max(self.dims.multiple_of.get(root, 1), b)
        if (
            isinstance(r, int)
            and not isinstance(r, bool)
            and (isinstance(a, SymInt) or isinstance(b, SymInt))
        ):
            sym = f"({_symname(a)}{_opname(op)}{_symname(b)})"
            if self.recording:
                self.dims.derived.setdefault(sym, sym)
            return SymInt(r, sym)
        return r

    def e_Compare(self, e: ast.Compare) -> Any:
        left = self.expr(e.left)
        for op, comp in zip(e.ops, e.comparators, strict=True):
            right = self.expr(comp)
            if isinstance(op, ast.Is):
                ok = left is right or (left is None and right is None)
            elif isinstance(op, ast.IsNot):
                ok = not (left is right or (left is None and right is None))
            elif isinstance(left, Opaque) or isinstance(right, Opaque):
                return Opaque("compare")
            else:
                try:
                    ok = {
                        ast.Eq: lambda a, b: a == b,
                        ast.NotEq: lambda a, b: a != b,
                        ast.Lt: lambda a, b: a < b,
                        ast.LtE: lambda a, b: a <= b,
                        ast.Gt: lambda a, b: a > b,
                        ast.GtE: lambda a, b: a >= b,
                        ast.In: lambda a, b: a in b,
                        ast.NotIn: lambda a, b: a not in b,
                    }[type(op)](left, right)
                except (TypeError, KeyError):
                    return Opaque("compare")
            if not ok:
                return False
            left = right
        return True

    def e_Subscript(self, e: ast.Subscript) -> Any:
        v = self.expr(e.value)
        idx = self.expr(e.slice)
        if isinstance(v, tuple | list | dict) and not isinstance(idx, Opaque):
            try:
                return v[idx]
            except (IndexError, KeyError, TypeError):
                return Opaque("subscript")
        return Opaque("subscript")

    def e_Attribute(self, e: ast.Attribute) -> Any:
        dotted = dotted_name(e)
        if dotted and dotted.split(".")[0] == "torch":
            last = dotted.split(".")[-1]
            if last in TORCH_DTYPES:
                return ("dtype", TORCH_DTYPES[last])
        base = self.expr(e.value)
        if isinstance(base, HostTensor):
            if e.attr == "shape":
                return tuple(SymInt(s, y) for s, y in zip(base.shape, base.symbols, strict=True))
            if e.attr in ("T", "mT") and len(base.shape) >= 2:
                return transpose(base, -1, -2)
            if e.attr == "dtype":
                return ("dtype", base.dtype)
            if e.attr == "ndim":
                return len(base.shape)
            return ("method", base, e.attr)
        if isinstance(base, dict):
            return Opaque(e.attr)
        return Opaque(dotted or e.attr)

    def e_Lambda(self, e: ast.Lambda) -> Any:
        return ("lambda", e, dict(self.env))

    def e_Call(self, e: ast.Call) -> Any:
        fname = dotted_name(e.func)
        args = [self.expr(a) for a in e.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: self.expr(k.value) for k in e.keywords if k.arg}
        if isinstance(e.func, ast.Attribute):
            base = self.expr(e.func)
            if isinstance(base, tuple) and len(base) == 3 and base[0] == "method":
                return self.tensor_method(base[1], base[2], args, kwargs)
        return self.call(fname, args, kwargs, e)

    def call(self, fname: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        last = fname.split(".")[-1]
        try:
            if last == "cdiv" and len(args) == 2 and _ints(args):
                return self.binop(
                    ast.FloorDiv(), self.binop(ast.Sub(), self.binop(ast.Add(), args[0], args[1]), 1), args[1]
                )
            if last == "next_power_of_2" and _ints(args):
                n = int(args[0])
                return 1 if n <= 1 else 1 << (n - 1).bit_length()
            if fname in ("min", "max") and args and all(isinstance(a, int | float) for a in args):
                return (min if fname == "min" else max)(*args)
            if fname in ("min", "max") and len(args) >= 2 and any(isinstance(a, int | float) for a in args):
                # `min(sms, tiles)`: a device property is unknown here; take the known side
                known = [a for a in args if isinstance(a, int | float)]
                return (min if fname == "min" else max)(known)
            if fname in ("min", "max") and len(args) == 1 and isinstance(args[0], tuple | list):
                return (min if fname == "min" else max)(args[0])
            if (
                fname in ("int", "float", "abs", "bool", "round")
                and len(args) == 1
                and isinstance(args[0], int | float)
            ):
                return {"int": int, "float": float, "abs": abs, "bool": bool, "round": round}[fname](args[0])
            if fname == "len" and len(args) == 1 and isinstance(args[0], tuple | list):
                return len(args[0])
            if fname.startswith("math.") and all(isinstance(a, int | float) for a in args):
                return getattr(math, last)(*args)
            if fname in ("tuple", "list") and len(args) == 1 and isinstance(args[0], tuple | list):
                return tuple(args[0]) if fname == "tuple" else list(args[0])
            if fname.startswith("torch.") and last in (
                "empty",
                "zeros",
                "ones",
                "full",
                "randn",
                "rand",
                "empty_strided",
                "randint",
            ):
                return self.torch_new(last, args, kwargs)
            if fname.startswith("torch.") and last in (
                "empty_like",
                "zeros_like",
                "ones_like",
                "full_like",
                "randn_like",
            ):
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
                    return t
            if fname in ("triton.Config",):
                return Opaque("config")
            if (
                last == "from_tensor"
                and "TensorDescriptor" in fname
                and args
                and isinstance(args[0], HostTensor)
            ):
                block = args[1] if len(args) > 1 else kwargs.get("block_shape")
                return ("desc", args[0], list(block) if isinstance(block, tuple | list) else block)
            if last == "TensorDescriptor" and args and isinstance(args[0], HostTensor):
                block = kwargs.get("block_shape", args[3] if len(args) > 3 else None)
                return ("desc", args[0], list(block) if isinstance(block, tuple | list) else block)
            if fname in self.env and isinstance(self.env[fname], tuple) and self.env[fname][0] == "func":
                return Opaque("local function")
        except (ArithmeticError, TypeError, ValueError, OverflowError):
            return Opaque(fname)
        return Opaque(fname or "call")

    def torch_new(self, kind: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        shape: list[Any]
        if kind == "randint":
            shape = list(kwargs.get("size", args[-1] if args else ()))
        elif args and isinstance(args[0], tuple | list):
            shape = list(args[0])
        else:
            shape = [a for a in args if isinstance(a, int)]
        if "size" in kwargs and isinstance(kwargs["size"], tuple | list):
            shape = list(kwargs["size"])
        dt = kwargs.get("dtype")
        dtype = (
            dt[1]
            if isinstance(dt, tuple) and dt and dt[0] == "dtype"
            else ("int64" if kind == "randint" else "fp32")
        )
        t = self.new_tensor(shape, dtype, f"t{self.storages + 1}", isinstance(dt, tuple) or kind == "randint")
        t.created = kind in ("empty", "empty_strided")
        return t

    def tensor_method(self, t: HostTensor, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        rank = len(t.shape)
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
            return t
        if name in ("view", "reshape", "flatten"):
            shape = list(args[0]) if args and isinstance(args[0], tuple | list) else list(args)
            if name == "flatten":
                shape = [-1]
            if all(isinstance(s, int) for s in shape):
                total = math.prod(t.shape)
                known = math.prod(s for s in shape if s != -1) or 1
                shape = [total // known if s == -1 else s for s in shape]
                syms = [
                    x.sym if isinstance(x, SymInt) else f"_v{self.storages}_{i}" for i, x in enumerate(shape)
                ]
                if len(shape) == 1 and rank == 1:
                    syms = list(t.symbols)
                return t.view_of([int(s) for s in shape], contiguous_strides([int(s) for s in shape]), syms)
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
        return Opaque(f"tensor.{name}")


def contiguous_strides(shape: list[int] | tuple[int, ...]) -> list[int]:
    strides, acc = [], 1
    for s in reversed(list(shape)):
        strides.append(acc)
        acc *= max(int(s), 1)
    return list(reversed(strides))


def transpose(t: HostTensor, i: int, j: int) -> HostTensor:
    shape, strides, syms = list(t.shape), list(t.strides), list(t.symbols)
    shape[i], shape[j] = shape[j], shape[i]
    strides[i], strides[j] = strides[j], strides[i]
    syms[i], syms[j] = syms[j], syms[i]
    return t.view_of(shape, strides, syms)


def _ints(xs: list[Any]) -> bool:
    return all(isinstance(x, int) and not isinstance(x, bool) for x in xs)


def _symname(x: Any) -> str:
    return x.sym if isinstance(x, SymInt) else str(x)


def _opname(op: ast.operator) -> str:
    return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}.get(type(op), "?")


def dotted_name(e: ast.expr) -> str:
    """`a.b.c` -> "a.b.c"; anything but names and attributes -> ""."""
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if isinstance(e, ast.Name):
        parts.append(e.id)
        return ".".join(reversed(parts))
    return ""


def _contains(tree: ast.AST, target: ast.AST) -> bool:
    return any(n is target for n in subtree(tree))
