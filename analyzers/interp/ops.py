"""The op registry: every modelled `tl.*` op by name, gathered from the op modules of each family,
and the dispatch of calls, methods and module attributes through it.

    ops_arith.py     + - * / // % ** & | ^ << >>, comparisons, casts
    ops_math.py      tl.exp, tl.sqrt, ..., tl.where, tl.maximum, tl.fma, tl.clamp
    ops_shapes.py    subscripts, reshape, broadcast, trans/permute, expand_dims, split, join
    ops_creation.py  tl.program_id, tl.arange, tl.zeros, tl.full, tl.cdiv, hints, asserts
    ops_reduce.py    tl.sum, tl.max, tl.argmax, tl.reduce, tl.cumsum, tl.associative_scan
    ops_memory.py    tl.load, tl.store, atomics, block pointers, tensor descriptors
    ops_random.py    tl.philox, tl.randint, tl.rand, tl.randn (and their 4x forms)
    ops_linalg.py    tl.dot

Each module lists its ops once (`OPS = declare(...)`, opdecl.py); the scan's and the quick
fixes' name lists come from `op_names`.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import (
    ops_arith,
    ops_creation,
    ops_dtype,
    ops_linalg,
    ops_math,
    ops_memory,
    ops_random,
    ops_reduce,
    ops_shapes,
)
from argus.analyzers.interp.opdecl import Op
from argus.analyzers.interp.ops_arith import cast
from argus.analyzers.interp.ops_core import dtype_arg, to_val
from argus.analyzers.interp.ops_dtype import dtype_method
from argus.analyzers.interp.ops_memory import descriptor_method
from argus.analyzers.interp.ops_random import MLU_PHILOX
from argus.analyzers.interp.values import BlockPtr, Descriptor, DType, Ptr, PtrDType, Val, norm_dtype, scalar

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext

FAMILIES = (
    ops_memory,
    ops_linalg,
    ops_reduce,
    ops_creation,
    ops_random,
    ops_dtype,
    ops_shapes,
    ops_arith,
    ops_math,
)


def _registry() -> dict[str, Op]:
    out: dict[str, Op] = {}
    for module in FAMILIES:
        for op in module.OPS:
            if op.name in out:
                raise RuntimeError(f"`{op.name}` is declared by {out[op.name].family} and {op.family}")
            out[op.name] = op
    return out


REGISTRY: dict[str, Op] = _registry()


def op_names(where: Callable[[Op], bool] = lambda op: True) -> frozenset[str]:
    """Names of the modelled ops for which `where` holds (all by default)."""
    return frozenset(name for name, op in REGISTRY.items() if where(op))


def call(interp: OpContext, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    op = REGISTRY.get(name)
    if op is None:
        raise Unevaluable(f"`{name}`", node)
    return op.compute(interp, args, kwargs, node)


def math_alias(node: ast.expr) -> tuple[str, str] | None:
    """`tanh = tl_extra_shim.tanh`, `pow = libdevice.pow`: a module-level name bound to a
    function of that name of a math library module (flag-gems picks libdevice per backend at
    import): the elementwise op of that name. Only names of the elementwise math family."""
    if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name | ast.Attribute):
        return None
    op = REGISTRY.get(node.attr)
    if op is None:
        return None
    if op.family == "random":  # `uint_to_uniform_float = tl.uint_to_uniform_float`: Triton's own only
        return ("tl", node.attr) if ast.unparse(node.value) in ("tl", "triton.language") else None
    return ("tl", node.attr) if op.family == "math" else None


IMPORTED = "<import>"  # module_consts key prefix of an imported name that stands for an op
_ALIAS_FAMILIES = ("math", "random")
# ops of other families that packages re-export under Triton's own name (fla-core's
# `fla.ops.utils.op.make_tensor_descriptor` binds `tl.make_tensor_descriptor` or its older
# `_experimental_` name, which takes the same arguments, by Triton version)
_ALIASED_OPS = ("make_tensor_descriptor",)
_TRITON_OWN = ("triton.language", "triton.language.random", "triton.language.math")
# a vendor's random function of another signature than Triton's own of that name: its own op
# (`from triton.language.extra.mlu.libdevice import philox as _philox`, flag-gems' Cambricon kernels)
VENDOR_RANDOM = {("triton.language.extra.mlu.libdevice", "philox"): MLU_PHILOX}


def imported_op_aliases(text: bytes) -> dict[str, tuple[str, str]]:
    """`from .helpers import exp` / `from ..random_utils import uint_to_uniform_float`: a name
    imported from another module of the package that is Triton's own elementwise math or
    random function name (fla-core's `exp` picks `tl.exp` or libdevice's fast one; flag-gems
    re-exports `tl.uint_to_uniform_float`). Used only when that module gives no jit helper of
    the name (expressions.name_ looks here last)."""
    try:
        mod = ast.parse(text.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    out: dict[str, tuple[str, str]] = {}
    for st in mod.body:
        if isinstance(st, ast.Import | ast.ImportFrom):
            out.update(_math_module_aliases(st))
        if not isinstance(st, ast.ImportFrom):
            continue
        vendor = (st.module or "").startswith("triton.") and st.module not in _TRITON_OWN
        for alias in st.names:
            op = REGISTRY.get(alias.name)
            if op is None or (op.family not in _ALIAS_FAMILIES and alias.name not in _ALIASED_OPS):
                continue
            if vendor and (st.module, alias.name) in VENDOR_RANDOM:
                out[IMPORTED + (alias.asname or alias.name)] = ("tl", VENDOR_RANDOM[(st.module, alias.name)])
                continue
            if op.family == "random" and (vendor or alias.asname not in (None, alias.name)):
                continue  # another vendor's `philox` under Triton's name: another signature
            out[IMPORTED + (alias.asname or alias.name)] = ("tl", alias.name)
    return out


# modules that are a math library chosen per backend: Triton's `libdevice` under any alias
# (`from triton.language.extra import libdevice as tldevice`) and flag-gems' `tl_extra_shim`
# (its utils re-export the backend's libdevice under that name)
_MATH_MODULES = ("libdevice", "tl_extra_shim")


def _math_module_aliases(st: ast.Import | ast.ImportFrom) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for alias in st.names:
        last = alias.name.split(".")[-1]
        if last not in _MATH_MODULES or (isinstance(st, ast.Import) and alias.asname is None):
            continue
        out[IMPORTED + (alias.asname or last)] = ("module", "libdevice")
    return out


# ---- module attributes --------------------------------------------------------------------------
DTYPE_NAMES = {
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int1",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float8e4nv",
    "float8e5",
    "float8e4b15",
    "float8e4b8",
    "float8e5b16",
}


def module_attribute(dotted: str, node: ast.AST) -> Any:
    last = dotted.split(".")[-1]
    if last in DTYPE_NAMES:
        return DType(norm_dtype(last))
    if last == "constexpr":
        return ("tl", "constexpr")
    if dotted in ("math.pi",):
        return scalar(math.pi, constexpr=True)
    if dotted in ("math.e",):
        return scalar(math.e, constexpr=True)
    if dotted in ("math.inf",):
        return scalar(math.inf, constexpr=True)
    return ("tl", last)


# ---- methods -------------------------------------------------------------------------------------
# a method name that is not an op's name: `x.T(...)` (the attribute `x.T` is the interpreter's)
METHOD_ALIASES = {"T": "trans"}


def method(
    interp: OpContext, base: Any, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
) -> Any:
    """`base.name(*args)`: memory methods of block pointers and descriptors, `x.to(dtype)`, and
    every op declared as a method, called with `base` first."""
    if isinstance(base, DType | PtrDType):
        return dtype_method(base, name, node)
    if isinstance(base, BlockPtr) and name == "advance":  # `p.advance(offsets)`: tl.advance(p, offsets)
        return REGISTRY["advance"].compute(interp, [base, *args], kwargs, node)
    if isinstance(base, BlockPtr | Descriptor | Ptr) and name in ("load", "store", "atomic_add"):
        return descriptor_method(interp, base, name, args, kwargs, node)
    if isinstance(base, Val):
        if name == "to":
            dtype = dtype_arg(args[0] if args else kwargs.get("dtype"))
            bitcast = bool(kwargs.get("bitcast") and to_val(kwargs["bitcast"], node).item())
            return cast(interp, base, dtype, node, bitcast)
        op = REGISTRY.get(METHOD_ALIASES.get(name, name))
        if op is not None and op.method:
            return op.compute(interp, [base, *args], kwargs, node)
    if isinstance(base, Ptr) and name in ("to",):
        raise Unevaluable("a pointer cast", node)
    raise Unevaluable(f"the method `.{name}()`", node)
