"""Dtypes as values inside a kernel: `x.dtype`, `ptr.dtype.element_ty`, `x.type.scalar`, a
constexpr dtype's `.value`, and what `tl.dtype` answers about itself (`is_floating()`,
`is_int_signed()`, `int_bitwidth`, `primitive_bitwidth`, ...).

Triton decides all of these at compile time from the dtype alone, so each is a constexpr here:
a helper such as flag-gems' `get_dtype_min(dtype)` branches on `dtype.value.is_floating()` and
returns the matching extreme, and the kernel that calls it goes on being judged. The names and
meanings follow `triton.language.core.dtype` (Triton 3.x). A block's type (`x.type`) is read
as its element dtype: only `.scalar` / `.element_ty` / the predicates are asked of it in
practice, and those agree for a block and its element type.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp.opdecl import declare
from argus.analyzers.interp.ops_core import Retype
from argus.analyzers.interp.values import FLOAT_TYPES, DType, PtrDType, Val, scalar

_BITS = {
    "int1": 1,
    "int8": 8,
    "int16": 16,
    "int32": 32,
    "int64": 64,
    "uint8": 8,
    "uint16": 16,
    "uint32": 32,
    "uint64": 64,
    "fp16": 16,
    "bf16": 16,
    "fp32": 32,
    "fp64": 64,
}
_MANTISSA = {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52, "fp8e4nv": 3, "fp8e5": 2, "fp8e4b15": 3}
_EXPONENT_BIAS = {"fp16": 15, "bf16": 127, "fp32": 127, "fp64": 1023, "fp8e4nv": 7, "fp8e5": 15}
_FP8 = {"fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16"}
_SIGNED = {"int8", "int16", "int32", "int64"}
_UNSIGNED = {"int1", "uint8", "uint16", "uint32", "uint64"}  # tl.int1 counts as unsigned in Triton
_STANDARD_FLOAT = {"fp16", "bf16", "fp32", "fp64"}


def bitwidth(name: str) -> int:
    return _BITS.get(name, 8 if name in _FP8 else 32)


def _predicates(name: str) -> dict[str, bool]:
    """`dtype.is_*()` for one dtype name, as Triton's `tl.dtype` answers them."""
    out = {
        "is_floating": name in FLOAT_TYPES,
        "is_standard_floating": name in _STANDARD_FLOAT,
        "is_fp8": name in _FP8,
        "is_fp16": name == "fp16",
        "is_bf16": name == "bf16",
        "is_fp32": name == "fp32",
        "is_fp64": name == "fp64",
        "is_int": name in _SIGNED or name in _UNSIGNED,
        "is_int_signed": name in _SIGNED,
        "is_int_unsigned": name in _UNSIGNED,
        "is_bool": name == "int1",
        "is_ptr": False,
        "is_block": False,
        "is_void": False,
        "is_const": False,
    }
    for fp8 in _FP8:
        out["is_" + fp8] = name == fp8
    for i in _SIGNED | _UNSIGNED:
        out["is_" + i] = name == i
    return out


def guessed_dtype_read(interp: Any, tensor: str) -> None:
    """`ptr.dtype` of a tensor whose element type the launch does not give (the probe's `fp16?`):
    remembered, so that a compile-time error it leads to retypes that tensor (`raise_reached`)."""
    read = getattr(interp, "guessed_dtypes", None)
    if read is None:
        read = interp.guessed_dtypes = []
    if tensor not in read:
        read.append(tensor)


def raise_reached(interp: Any, node: ast.AST) -> None:
    """A `raise` the kernel reaches: Triton's code generator has no `raise`, so a reached one
    fails the compile (a dead constexpr branch is never generated). Where the way there read
    a guessed element type (flag-gems' randperm: `_get_iinfo_val(chunk_x.dtype.element_ty)`
    raises for anything but an integer), that guess is no launch the code can make: the run
    restarts with the tensor typed as integers (`Retype`, once per tensor). Otherwise the
    probe's sizes or picks lead there, and it stays unmodelled."""
    for tensor in getattr(interp, "guessed_dtypes", ()):
        if tensor not in interp.int_tensors:
            raise Retype(tensor)
    raise Unevaluable("the statement `Raise`", node)


def dtype_attribute(base: DType | PtrDType, attr: str, node: ast.AST) -> Any:
    """An attribute of a dtype value: a property's value, or a method to call."""
    if isinstance(base, PtrDType):
        if attr == "element_ty":
            return DType(base.element)
        if attr in ("scalar", "value"):
            return base
        if attr in ("is_ptr", "is_block", "is_floating", "is_int"):
            return ("method", base, attr)
        raise Unevaluable(f"the attribute `{ast.unparse(node)}`", node)
    name = base.name
    if attr in ("value", "scalar", "element_ty"):  # a constexpr's value; a block type's element type
        return base
    if attr in ("primitive_bitwidth", "int_bitwidth"):
        return scalar(bitwidth(name), constexpr=True)
    if attr == "fp_mantissa_width" and name in _MANTISSA:
        return scalar(_MANTISSA[name], constexpr=True)
    if attr == "exponent_bias" and name in _EXPONENT_BIAS:
        return scalar(_EXPONENT_BIAS[name], constexpr=True)
    if attr == "int_signedness":
        return "SIGNED" if name in _SIGNED else "UNSIGNED"
    if attr == "name":
        return name
    if attr in _predicates(name) or attr in ("get_int_max_value", "get_int_min_value"):
        return ("method", base, attr)
    raise Unevaluable(f"the attribute `{ast.unparse(node)}`", node)


def dtype_method(base: DType | PtrDType, name: str, node: ast.AST) -> Val:
    """`dtype.is_floating()`, `dtype.get_int_max_value()`, ...: constexpr answers."""
    if isinstance(base, PtrDType):
        return scalar(name == "is_ptr", constexpr=True)
    if name in ("get_int_max_value", "get_int_min_value"):
        bits = bitwidth(base.name)
        if base.name in _SIGNED:
            value = 2 ** (bits - 1) - 1 if name == "get_int_max_value" else -(2 ** (bits - 1))
        elif base.name in _UNSIGNED:
            value = 2**bits - 1 if name == "get_int_max_value" else 0
        else:
            raise Unevaluable(f"`{name}()` of the floating-point dtype {base.name}", node)
        return scalar(value, constexpr=True)
    answers = _predicates(base.name)
    if name not in answers:
        raise Unevaluable(f"the method `.{name}()` of a dtype", node)
    return scalar(answers[name], constexpr=True)


def same_dtype(a: Any, b: Any) -> bool | None:
    """`a == b` (or `a is b`) between dtype values; None when either is not a dtype. Triton's
    dtypes compare by name; `x.dtype is tl.bfloat16` means the same in the kernels that write it."""
    if not isinstance(a, DType | PtrDType) or not isinstance(b, DType | PtrDType):
        return None
    return a == b


def _get_int_dtype(interp: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> DType:
    """`tl.core.get_int_dtype(bitwidth, signed)`: the integer dtype of that width (flag-gems'
    radix sort, fla-core's bitonic argsort)."""
    bits = args[0] if args else kwargs.get("bitwidth")
    signed = args[1] if len(args) > 1 else kwargs.get("signed")
    if not isinstance(bits, Val) or not isinstance(signed, Val) or not bits.constexpr:
        raise Unevaluable("`get_int_dtype` of a value that is not a constexpr", node)
    width, is_signed = int(bits.item()), bool(signed.item())
    if width not in (8, 16, 32, 64) and not (width == 1 and not is_signed):
        raise Unevaluable(f"`get_int_dtype` of width {width}", node)
    return DType("int1" if width == 1 else ("int" if is_signed else "uint") + str(width))


OPS = declare("dtype", {"get_int_dtype": _get_int_dtype})
