"""Expressions: the abstract value of each expression node, one evaluator per `ast` node type.

Names resolve to locals, then module constants, then the modules, jit helpers and builtins a
kernel may name; attributes of `tl`/`triton`/`libdevice` are module attributes (ops.py); binary
operators and comparisons are the arithmetic family's (ops_arith.py); calls go through calls.py.
`evaluate` dispatches on the node's type through one table, built once at import.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage, ops
from argus.analyzers.interp.absent_args import replace_absent
from argus.analyzers.interp.calls import call
from argus.analyzers.interp.ops_arith import binop, compare
from argus.analyzers.interp.ops_dtype import dtype_attribute, guessed_dtype_read
from argus.analyzers.interp.ops_shapes import subscript, trans
from argus.analyzers.interp.values import (
    BlockPtr,
    Descriptor,
    DType,
    FullRun,
    Ptr,
    PtrDType,
    Val,
    is_float,
    scalar,
)
from argus.analyzers.model.host import dotted_name as _dotted

if TYPE_CHECKING:
    from argus.analyzers.interp.context import RunContext

MODULE_NAMES = ("tl", "triton", "math", "libdevice", "tlm")
BUILTIN_NAMES = (
    "unwrap_if_constexpr",  # the module's own copy of Triton's helper: a constexpr's value
    "_unwrap_if_constexpr",
    "float",
    "int",
    "min",
    "max",
    "range",
    "len",
    "abs",
    "bool",
    "print",
    "isinstance",
    "getattr",
)
_NAMED_CONSTANTS = {"None": None, "True": True, "False": False}


def evaluate(interp: RunContext, e: ast.expr, env: dict[str, Any]) -> Any:
    m = _EVALUATORS.get(type(e))
    if m is None:
        raise Unevaluable(f"the expression `{type(e).__name__}`", e)
    return m(interp, e, env)


def truth(interp: RunContext, c: Any, node: ast.AST) -> bool:
    """Which way a branch on `c` goes; a condition made of floating-point data is a reason to run
    an address-only program in full (FullRun), one the interpreter cannot know is Unevaluable."""
    if isinstance(c, Val):
        if interp.address_only and is_float(c.dtype):
            raise FullRun()
        if c.held:
            garbage.keep(interp, c)  # a branch decided by a spoiled value keeps it
        if c.unknown:
            raise Unevaluable(f"a branch on {c.unknown}", node)
        if not c.is_scalar:
            if c.data.size == 1:
                return bool(c.data.reshape(()).item())
            raise Unevaluable("a branch on a tensor condition", node)
        return bool(c.data.item())
    if c is None:
        return False
    return bool(c)


def constant(interp: RunContext, e: ast.Constant, env: dict[str, Any]) -> Any:
    v = e.value
    if type(v) is int and not -(1 << 63) <= v < 1 << 63:
        raise Unevaluable(f"the integer literal {v:#x} (outside int64)", e)
    if isinstance(v, bool | int | float):
        cached = getattr(e, "_argus_val", None)
        if cached is None:
            cached = e._argus_val = scalar(v, constexpr=True)  # type: ignore[attr-defined]
        return cached.with_()  # a copy: values are not shared between evaluations
    return v


def name_(interp: RunContext, e: ast.Name, env: dict[str, Any]) -> Any:
    if e.id in env:
        return env[e.id]
    if e.id in interp.module_consts:
        return interp.module_consts[e.id]
    if e.id in _NAMED_CONSTANTS:
        v = _NAMED_CONSTANTS[e.id]
        return None if v is None else scalar(v)
    if e.id in MODULE_NAMES:
        return ("module", e.id)
    if e.id in interp.helpers:
        return ("helper", e.id)
    if e.id in BUILTIN_NAMES:
        return ("builtin", e.id)
    alias = interp.module_consts.get(ops.IMPORTED + e.id)
    if alias is not None:  # an imported name that is a Triton math/random function (ops.py)
        return alias
    raise Unevaluable(f"the name `{e.id}` (not a parameter, local or module constant)", e)


def tuple_(interp: RunContext, e: ast.Tuple, env: dict[str, Any]) -> Any:
    return tuple(evaluate(interp, x, env) for x in e.elts)


def list_(interp: RunContext, e: ast.List, env: dict[str, Any]) -> Any:
    return [evaluate(interp, x, env) for x in e.elts]


def if_exp(interp: RunContext, e: ast.IfExp, env: dict[str, Any]) -> Any:
    if truth(interp, evaluate(interp, e.test, env), e.test):
        return evaluate(interp, e.body, env)
    return evaluate(interp, e.orelse, env)


def joined_str(interp: RunContext, e: ast.JoinedStr, env: dict[str, Any]) -> Any:
    return "<str>"


def attribute(interp: RunContext, e: ast.Attribute, env: dict[str, Any]) -> Any:
    dotted = getattr(e, "_argus_dotted", None)
    if dotted is None:
        dotted = e._argus_dotted = _dotted(e)  # type: ignore[attr-defined]  # parsed once, read per program
    if dotted:
        head = dotted.split(".")[0]
        if head in ("tl", "triton", "libdevice", "tlm") and head not in env:
            return ops.module_attribute(dotted, e)
        if dotted in interp.helpers and head not in env:  # `tle.program_id`: another module's helper
            return ("helper", dotted)
    base = evaluate(interp, e.value, env)
    if isinstance(base, tuple) and base and base[0] == "module":
        return ops.module_attribute(base[1] + "." + e.attr, e)
    if isinstance(base, Ptr | BlockPtr) and e.attr in ("dtype", "type"):
        if base.tensor.dtype.endswith("?"):
            guessed_dtype_read(interp, base.tensor.name)  # ops_dtype.raise_reached reads it
        return PtrDType(base.tensor.dtype.rstrip("?"))
    if isinstance(base, Descriptor) and e.attr == "dtype":  # a descriptor's dtype is its element type
        return DType(base.tensor.dtype.rstrip("?"))
    if isinstance(base, Descriptor) and e.attr == "block_shape":
        return tuple(scalar(s, constexpr=True) for s in base.block_shape)
    if isinstance(base, DType | PtrDType):
        return dtype_attribute(base, e.attr, e)
    if isinstance(base, Val):
        return _tile_attribute(interp, base, e)
    if isinstance(base, Ptr | BlockPtr | Descriptor):
        return ("method", base, e.attr)
    if e.attr == "value" and (base is None or isinstance(base, str | tuple)):
        return base  # `tl.constexpr(...).value` of a constexpr string, None or tuple: itself
    raise Unevaluable(f"the attribute `{ast.unparse(e)}`", e)


def _tile_attribute(interp: RunContext, base: Val, e: ast.Attribute) -> Any:
    """`x.dtype`, `x.T`, `x.shape` of a tile; any other attribute is a method to call."""
    if e.attr in ("dtype", "type"):  # a block's type read as its element type (ops_dtype.py)
        return DType(base.dtype)
    if e.attr == "value" and base.constexpr:  # a constexpr's `.value`: the number itself
        return base
    if e.attr == "T":
        return trans(interp, [base], {}, e)
    if e.attr == "shape":
        return tuple(scalar(s, constexpr=True) for s in base.shape)
    if e.attr == "numel":  # `tl.tensor.numel`: the tile's element count, a constexpr
        return scalar(int(np.prod(base.shape, dtype=np.int64)), constexpr=True)
    return ("method", base, e.attr)


def subscript_(interp: RunContext, e: ast.Subscript, env: dict[str, Any]) -> Any:
    base = evaluate(interp, e.value, env)
    if isinstance(base, tuple | list):
        idx = evaluate(interp, e.slice, env)
        i = int(idx.item()) if isinstance(idx, Val) else idx
        if isinstance(i, int) and not -len(base) <= i < len(base):
            # `x.shape[-1]` of what was bound as a scalar (a helper checked alone)
            raise Unevaluable(f"`{ast.unparse(e)}` past the end of a {len(base)}-element tuple", e)
        return base[i]
    return subscript(interp, base, e.slice, e, env)


def unary_op(interp: RunContext, e: ast.UnaryOp, env: dict[str, Any]) -> Any:
    v = evaluate(interp, e.operand, env)
    if isinstance(e.op, ast.Not):
        if isinstance(v, Val) and v.is_scalar:
            return v.with_(data=np.asarray(not bool(v.item())), dtype="int1")
        if isinstance(v, Val):  # `not mask` of a tile: Triton's logical not, lane by lane
            return v.with_(data=~v.data.astype(bool), dtype="int1")
        return scalar(not v)
    if not isinstance(v, Val):
        raise Unevaluable(f"`{ast.unparse(e)}`", e)
    if isinstance(e.op, ast.USub):
        r = v.with_(data=-v.data)
        if v.maxinfo is not None:
            r.maxinfo = None
        return r
    if isinstance(e.op, ast.UAdd):
        return v
    if isinstance(e.op, ast.Invert):
        if v.dtype == "int1":
            return v.with_(data=~v.data.astype(bool))
        return v.with_(data=~v.data)
    raise Unevaluable(f"`{ast.unparse(e)}`", e)


def bin_op(interp: RunContext, e: ast.BinOp, env: dict[str, Any]) -> Any:
    a, b = evaluate(interp, e.left, env), evaluate(interp, e.right, env)
    if a is None or b is None:  # an argument the launch as bound omits (absent_args.py)
        a, b = replace_absent(interp, e.op, a, b, e.left, e.right)
    return binop(interp, e.op, a, b, e)


def compare_(interp: RunContext, e: ast.Compare, env: dict[str, Any]) -> Any:
    """`a < b < c` is `(a < b) & (b < c)`, each operand evaluated once."""
    left = evaluate(interp, e.left, env)
    result = None
    left_node = e.left
    for op, comp in zip(e.ops, e.comparators, strict=True):
        right = evaluate(interp, comp, env)
        if left is None or right is None:  # an argument the launch as bound omits (absent_args.py)
            left, right = replace_absent(interp, op, left, right, left_node, comp)
        r = compare(interp, op, left, right, e)
        result = r if result is None else binop(interp, ast.BitAnd(), result, r, e)
        left, left_node = right, comp
    return result


def bool_op(interp: RunContext, e: ast.BoolOp, env: dict[str, Any]) -> Any:
    """`and`/`or` short-circuit on a known scalar, as Python does; on tiles they are `&`/`|`."""
    vals = []
    for x in e.values:
        v = evaluate(interp, x, env)
        vals.append(v)
        if isinstance(v, Val) and v.is_scalar and not v.unknown:
            if isinstance(e.op, ast.And) and not bool(v.item()):
                return v
            if isinstance(e.op, ast.Or) and bool(v.item()):
                return v
    out = vals[0]
    for v in vals[1:]:
        out = binop(interp, ast.BitAnd() if isinstance(e.op, ast.And) else ast.BitOr(), out, v, e)
    return out


def call_(interp: RunContext, e: ast.Call, env: dict[str, Any]) -> Any:
    fn = evaluate(interp, e.func, env)
    text_only = _UNREAD_ARGUMENTS.get(fn[1], {}) if isinstance(fn, tuple) and fn[:1] == ("tl",) else {}
    args = []
    for i, a in enumerate(e.args):
        if isinstance(a, ast.Starred):
            raise Unevaluable("a *args call", e)
        args.append(_text(interp, a, env) if i in text_only.values() else evaluate(interp, a, env))
    kwargs = {}
    for k in e.keywords:
        if k.arg is None:
            raise Unevaluable("a **kwargs call", e)
        kwargs[k.arg] = _text(interp, k.value, env) if k.arg in text_only else evaluate(interp, k.value, env)
    return call(interp, fn, args, kwargs, e)


# arguments of an op the checker never reads (name -> position): the assembly, its constraints
# and packing (module constants of another file, `asm=s_softplus`, need not be resolvable)
# and a dot's precision (fla-core's `input_precision=SOLVE_TRIL_DOT_PRECISION`, a constant set
# under an `if` at module level): it changes rounding only, never lanes, tags or shapes
_UNREAD_ARGUMENTS = {
    "inline_asm_elementwise": {"asm": 0, "constraints": 1, "is_pure": 4, "pack": 5},
    "dot": {"input_precision": 3, "allow_tf32": 4, "max_num_imprecise_acc": 5},
}


def _text(interp: RunContext, e: ast.expr, env: dict[str, Any]) -> Any:
    try:
        return evaluate(interp, e, env)
    except Unevaluable:
        return "<text>"


def lambda_(interp: RunContext, e: ast.Lambda, env: dict[str, Any]) -> Any:
    return ("lambda", e, env)


_EVALUATORS: dict[type, Callable[[Any, Any, dict[str, Any]], Any]] = {
    ast.Constant: constant,
    ast.Name: name_,
    ast.Tuple: tuple_,
    ast.List: list_,
    ast.IfExp: if_exp,
    ast.JoinedStr: joined_str,
    ast.Attribute: attribute,
    ast.Subscript: subscript_,
    ast.UnaryOp: unary_op,
    ast.BinOp: bin_op,
    ast.Compare: compare_,
    ast.BoolOp: bool_op,
    ast.Call: call_,
    ast.Lambda: lambda_,
}
