"""Arithmetic: binary operators, comparisons and casts, with the integer-provenance (MB003)
and float-semantics (online softmax, NU002/NU005) tracking they carry.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import garbage
from argus.analyzers.interp import softmax as sm
from argus.analyzers.interp.budget import check_combined
from argus.analyzers.interp.coverage import merge_cover
from argus.analyzers.interp.opdecl import declare
from argus.analyzers.interp.ops_core import (
    LIGHT_OPS,
    Retype,
    bc,
    bshape,
    derive,
    derive_with_constant,
    dtype_arg,
    light_float,
    np_dtype,
    probe_fact,
    promote,
    to_val,
    trunc_div,
    trunc_mod,
    unstable_normalizer,
)
from argus.analyzers.interp.ops_dtype import bitwidth, same_dtype
from argus.analyzers.interp.ops_memory import pointer_arith
from argus.analyzers.interp.values import (
    FullRun,
    Ptr,
    Val,
    is_float,
    scalar,
)

if TYPE_CHECKING:
    from argus.analyzers.interp.context import OpContext


def binop(interp: OpContext, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
    if isinstance(a, Ptr) or isinstance(b, Ptr):
        return pointer_arith(interp, op, a, b, node)
    if isinstance(a, tuple) and isinstance(b, tuple) and isinstance(op, ast.Add):
        return a + b
    a, b = to_val(a, node), to_val(b, node)
    check_combined(a.shape, b.shape, node)
    if isinstance(op, ast.Add | ast.Sub):
        for v, other in ((a, b), (b, a)):
            if v.src and is_float(v.dtype) and not is_float(other.dtype) and other.grows and not v.grows:
                # `start + pid_m * BLOCK_M`, `base + tl.arange(...)`: a loaded value offset by a
                # program or lane index is an index itself, so its tensor holds integers
                raise Retype(v.src)
    dtype = promote(a, b)
    if interp.address_only and (is_float(a.dtype) or is_float(b.dtype)) and isinstance(op, LIGHT_OPS):
        return light_float(bshape(a.shape, b.shape), dtype if is_float(dtype) else "fp32")
    x, y = a.data, b.data
    if isinstance(op, ast.Add):
        data = x + y
    elif isinstance(op, ast.Sub):
        data = x - y
    elif isinstance(op, ast.Mult):
        data = x * y
    elif isinstance(op, ast.Div):
        if not is_float(dtype):
            dtype = "fp32"
        data = np.true_divide(x.astype(np.float64), y.astype(np.float64))
    elif isinstance(op, ast.FloorDiv):
        for v, other in ((a, b), (b, a)):
            if v.src and is_float(v.dtype) and not is_float(other.dtype):
                raise Retype(v.src)  # `seq_len // PAGE`: integer division of loaded data
        data = np.floor_divide(x, y) if is_float(dtype) else trunc_div(x.astype(np.int64), y.astype(np.int64))
    elif isinstance(op, ast.Mod):
        data = np.fmod(x, y) if is_float(dtype) else trunc_mod(x.astype(np.int64), y.astype(np.int64))
    elif isinstance(op, ast.Pow):
        data = np.power(x, y)
    elif isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor):
        if is_float(a.dtype) or is_float(b.dtype):
            src = a.src if is_float(a.dtype) else b.src
            if src:
                raise Retype(src)
        fn = {ast.BitAnd: np.bitwise_and, ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor}[type(op)]
        if dtype == "int1":
            data = fn(x.astype(bool), y.astype(bool))
        else:
            data = fn(x.astype(np.int64), y.astype(np.int64))
    elif isinstance(op, ast.LShift | ast.RShift):
        data = (np.left_shift if isinstance(op, ast.LShift) else np.right_shift)(
            x.astype(np.int64), y.astype(np.int64)
        )
    else:
        raise Unevaluable(f"the operator {type(op).__name__}", node)
    data = np.asarray(data, dtype=np_dtype(dtype))
    out = derive_with_constant(a, b, data, dtype) or derive([a, b], data, dtype)
    if dtype == "int1":
        out.checked = a.checked | b.checked
        if out.undef is not None and isinstance(op, ast.BitAnd | ast.BitOr):
            _decided_by_one_side(op, a, b, out)
    _int_provenance(interp, op, a, b, out, node)
    _float_semantics(interp, op, a, b, out, node)
    out.pad_sign_from = _pad_sign_source(op, a, b)
    if isinstance(op, ast.Mult):
        _zeroed_by_selector(a, b, out)
        garbage.cancel_by_zero(out, a, b)
    elif isinstance(op, ast.Div):
        garbage.cancel_by_zero(out, a, b, divisor=True)
    if isinstance(op, ast.Add | ast.Sub) and (a.kcover is not None or b.kcover is not None):
        out.kcover = merge_cover(a.kcover, b.kcover)
    elif isinstance(op, ast.Mult | ast.Div) and (a.kcover is None) != (b.kcover is None):
        out.kcover = a.kcover if a.kcover is not None else b.kcover  # scaling keeps what was summed
    return out


def _pad_sign_source(op: ast.operator, a: Val, b: Val) -> str | None:
    """The loaded tensor a padded tile was multiplied or divided by (`x / t` of a loaded
    temperature): the padding's sign is then that data's, which the code does not state; kept
    through later arithmetic (reduce_garbage.padding_held reads it)."""
    if isinstance(op, ast.Mult | ast.Div):
        for v, other in ((a, b), (b, a)):
            if v.pad is not None and other.pad is None and other.src and is_float(other.dtype):
                return other.src
    return a.pad_sign_from or b.pad_sign_from


def _decided_by_one_side(op: ast.operator, a: Val, b: Val, out: Val) -> None:
    """`while_mask and (mid_val < x)` with `mid_val` loaded under `while_mask`: a defined False
    decides `&` (a defined True decides `|`) whatever the undefined lane of the other side holds,
    so that lane of the result is defined (flag-gems' `isin_by_search` binary search)."""
    decides = not isinstance(op, ast.BitAnd)  # the value that decides: False for &, True for |
    shape = out.shape
    decided = np.zeros(shape, dtype=bool)
    for v in (a, b):
        defined = ~bc(v.undef, shape) if v.undef is not None else np.ones(shape, dtype=bool)
        decided |= defined & (bc(v.data.astype(bool), shape) == decides)
    undef = bc(out.undef, shape) & ~decided
    out.undef = undef if undef.any() else None


def _zeroed_by_selector(a: Val, b: Val, out: Val) -> None:
    """`y * (1 - mask)` with `mask = tl.arange(0, 2)[None, :, None]`: a bitonic sort's
    compare-and-swap picks one lane of each pair this way and then `tl.sum`s the pair. A tile of
    constant 0s and 1s (built from literals and aranges alone) zeroes the lanes where it is 0;
    those lanes hold no data any more, so they count as padding holding 0, the sum's neutral
    element: the pair's sum is then the selected lane, padding only where that lane was (a
    sort's sentinel stays a sentinel instead of being taken for padding mixed into real data).
    Only lanes of a tile (not a scalar) whose value is finite change (inf * 0 is NaN), and only
    of a padded tile or an integer one (the indices sorted beside the keys)."""
    for sel, x in ((a, b), (b, a)):
        if x.is_scalar or (x.pad is None and is_float(x.dtype)) or _constant_selector(x):
            continue
        if not _constant_selector(sel):
            continue
        with np.errstate(all="ignore"):
            zeroed = bc(sel.data == 0, out.shape) & np.isfinite(bc(x.data, out.shape).astype(np.float64))
        if zeroed.any():
            out.pad = zeroed if x.pad is None else bc(x.pad, out.shape) | zeroed
        return


def _constant_selector(v: Val) -> bool:
    """A tile of 0s and 1s that depends on nothing but literals and aranges."""
    return (
        not v.is_scalar
        and not is_float(v.dtype)
        and not (v.tags or v.lineage or v.loaded_from or v.runtime or v.grows or v.unknown or v.src)
        and v.pad is None
        and v.undef is None
        and bool(((v.data == 0) | (v.data == 1)).all())  # (np.isin's own loop for a short list, without its overhead)
        and bool((v.data == 0).any())
    )


def _int_provenance(interp: OpContext, op: ast.operator, a: Val, b: Val, out: Val, node: ast.AST) -> None:
    if is_float(out.dtype):
        return
    if isinstance(op, ast.Mult) and out.dtype == "int32":
        if (a.runtime and not a.grows and (a.data == 1).all()) or (
            b.runtime and not b.grows and (b.data == 1).all()
        ):
            pass  # a unit (innermost) stride: the product is the index itself
        elif a.grows and b.runtime and b.param is not None and not b.grows:
            out.overflow_site = (node, interp.smap, "left", _operand_facts(a, b))
        elif b.grows and a.runtime and a.param is not None and not a.grows:
            out.overflow_site = (node, interp.smap, "right", _operand_facts(b, a))
    if isinstance(op, ast.Mod) and b.runtime and not b.loaded_from:
        out.loaded_from = frozenset()  # wrapped into [0, size): range-checked by construction
    if (
        isinstance(op, ast.FloorDiv | ast.Mod)
        and a.pid_axis is not None
        and b.param is not None
        and b.runtime
        and not interp.launch.assumed
        and b.param not in interp.launch.stand_ins  # a divisor the probe chose
        and not interp.sink.has("grid-decomposition")
    ):
        axis = a.pid_axis
        extent = interp.launch.grid[axis]
        d = int(b.item()) if b.is_scalar else 0
        if d > 0 and (extent % d != 0 or extent < d):
            interp.grid_problem = True
            interp.fact(
                "grid-decomposition",
                node,
                related=[],
                axis=axis,
                extent=extent,
                divisor=b.param,
                divisor_value=d,
                op="//" if isinstance(op, ast.FloorDiv) else "%",
            )


def _operand_facts(grows: Val, factor: Val) -> dict[str, Any]:
    """The growing index's largest value at this probe and the stride or size it multiplies."""
    g = np.asarray(grows.data)
    # (`x.max()` is what `np.max(x)` calls, without its dispatch: a 0-d program id times a stride
    # nearly always, once per such product)
    return {
        "grows_max": int(np.abs(g).max()) if g.size else 0,
        "factor": int(np.abs(np.asarray(factor.data)).max()),
        "factor_name": factor.param or "the stride",
    }


def _float_semantics(interp: OpContext, op: ast.operator, a: Val, b: Val, out: Val, node: ast.AST) -> None:
    if not is_float(out.dtype):
        return
    # max tokens travel through scaling by constants; subtraction makes a shift or a rescale exponent
    if isinstance(op, ast.Sub):
        if b.maxinfo is not None and a.maxinfo is not None:
            out.shift = ("rescale", a.maxinfo, b.maxinfo)
            out.lineage = frozenset()
        elif b.maxinfo is not None:
            out.shift = b.maxinfo
            out.lineage = a.lineage
            if sm.outside_logit(bshape(a.shape, b.shape), b.shape, a.lineage, b.maxinfo):
                out.lineage = frozenset()  # a sink's logit, relative to m (NU002 evidence, kprec)
        if out.nan_site is None:
            nan_new = np.isnan(out.data) & ~np.isnan(bc(a.data, out.shape)) & ~np.isnan(bc(b.data, out.shape))
            if nan_new.any():
                out.nan_site = (node, interp.smap, nan_new)
    elif isinstance(op, ast.Mult | ast.Div) and (a.maxinfo is not None or b.maxinfo is not None):
        other = b if a.maxinfo is not None else a
        if other.is_scalar or other.constexpr or not other.lineage:
            out.maxinfo = a.maxinfo if a.maxinfo is not None else b.maxinfo
    elif (
        isinstance(op, ast.Add)
        and b.maxinfo is None
        and a.maxinfo is None
        and a.shift is not None
        and not b.lineage
    ):
        out.shift = a.shift
    if isinstance(op, ast.Mult) and (a.shift is not None or b.shift is not None):
        s = a.shift if a.shift is not None else b.shift
        other = b if a.shift is not None else a
        if other.is_scalar or not other.lineage:
            out.shift = s
    if isinstance(op, ast.Div):
        unstable_normalizer(interp, b)
    if isinstance(op, ast.Div) and out.nan_site is None:
        nan_new = np.isnan(out.data) & ~np.isnan(bc(a.data, out.shape)) & ~np.isnan(bc(b.data, out.shape))
        if nan_new.any():
            out.nan_site = (node, interp.smap, nan_new)
    # scale tags
    sa, sb = a.scale, b.scale
    if sa is None and sb is None:
        return
    if isinstance(op, ast.Mult) and isinstance(sa, sm.Inverse) != isinstance(sb, sm.Inverse):
        value, recip = (b, a) if isinstance(sa, sm.Inverse) else (a, b)
        tile = value.terms is not None and value.terms == value.lineage
        res, problem, norm = _div_scales(
            value.scale, recip.scale.of, node, interp, value.terms, recip.terms, tile, by_reciprocal=True
        )
    elif isinstance(op, ast.Mult):
        res, problem, norm = sm.mul_scales(sa, sb)
    elif isinstance(op, ast.Add | ast.Sub):
        res, problem, norm = sm.add_scales(sa, sb)
    elif isinstance(op, ast.Div):
        tile = a.terms is not None and a.terms == a.lineage  # exp(x - m) itself, not an accumulator
        res, problem, norm = _div_scales(sa, sb, node, interp, a.terms, b.terms, tile)
    else:
        res, problem, norm = (sa if sa is not None else sb), None, None
    out.scale = res
    _scale_problem(interp, problem, norm, node)


def _div_scales(
    sa: Any,
    sb: Any,
    node: ast.AST,
    interp: OpContext,
    ta: Any = None,
    tb: Any = None,
    tile: bool = False,
    by_reciprocal: bool = False,
) -> tuple[Any, str | None, Any]:
    """The scale of `a / b` (or of `a * (1 / b)`, `by_reciprocal`). A plain number over a sum
    relative to a max is that sum's reciprocal (`sm.Inverse`), which normalizes what it scales."""
    # an accumulator must hold the score blocks its sum holds; one block's exp tile (a second
    # pass over the row: `exp(x - m) / l`) needs only to be among them
    if sa is None and sm.is_token(sb) and not by_reciprocal:
        return sm.Inverse(sb), None, None
    held = ta is None or tb is None or ta == tb or (tile and ta <= tb)
    if not held and sm.is_token(sa) and sm.is_token(sb):
        return sm.ANY, "division", None  # the sum holds other score blocks than the accumulator
    if sm.is_token(sa) and sm.is_token(sb):
        if sa is sb:
            return sm.Normalized(node, interp.smap), None, None
        return sm.ANY, "division", None
    if sm.is_token(sa) and sb in (sm.ANY,):
        return sm.Normalized(node, interp.smap), None, None
    return sa, None, None


def _scale_problem(interp: OpContext, problem: str | None, norm: Any, node: ast.AST) -> None:
    if problem is None:
        return
    if problem == "normalized":
        interp.sink.add(
            probe_fact(
                interp,
                "normalized-early",
                norm.node,
                norm.smap,
                related=[(node, interp.smap, "where the normalized value is rescaled or accumulated again")],
            )
        )
    elif problem == "division":
        interp.fact("division-scale", node)
    else:
        interp.fact("scale-mismatch", node)


def compare(interp: OpContext, op: ast.cmpop, a: Any, b: Any, node: ast.AST) -> Any:
    same_type = same_dtype(a, b)
    if same_type is not None and isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq):
        return scalar(same_type == isinstance(op, ast.Is | ast.Eq), constexpr=True)
    if isinstance(op, ast.Is | ast.IsNot):
        same = a is b or (a is None and b is None)
        return scalar(same if isinstance(op, ast.Is) else not same, constexpr=True)
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        # constexpr strings and None (`ACTIVATION == "relu"`, `bias_ptr is None`): decided statically
        py = {
            ast.Eq: lambda x, y: x == y,
            ast.NotEq: lambda x, y: x != y,
            ast.In: lambda x, y: x in y,
            ast.NotIn: lambda x, y: x not in y,
        }.get(type(op))
        if py is None:
            raise Unevaluable(f"comparing {type(a).__name__} with {type(b).__name__}", node)
        unwrap = lambda v: v.item() if isinstance(v, Val) else v  # noqa: E731
        return scalar(
            bool(py(unwrap(a), unwrap(b) if not isinstance(b, tuple | list) else [unwrap(x) for x in b])),
            constexpr=True,
        )
    if isinstance(op, ast.In | ast.NotIn):
        if isinstance(b, tuple | list):
            av = to_val(a, node).item()
            hit = any(av == to_val(x, node).item() for x in b)
            return scalar(hit if isinstance(op, ast.In) else not hit, constexpr=True)
        raise Unevaluable("`in` inside a kernel", node)
    a, b = to_val(a, node), to_val(b, node)
    check_combined(a.shape, b.shape, node)
    for v, other in ((a, b), (b, a)):
        if v.src and is_float(v.dtype) and not is_float(other.dtype) and not other.constexpr:
            raise Retype(v.src)
        if v.src and is_float(v.dtype) and other.constexpr and not is_float(other.dtype) and other.is_scalar:
            raise Retype(v.src)
    if interp.address_only and (is_float(a.dtype) or is_float(b.dtype)):
        # a condition on stand-in values: fine for picking between stand-ins (tl.where on
        # floats); as a mask, a branch or an index it raises Unevaluable, and the program reruns
        return Val(
            np.zeros(bshape(a.shape, b.shape), dtype=np.bool_),
            "int1",
            unknown="floating-point data in an address-only program",
        )
    fn = {
        ast.Eq: np.equal,
        ast.NotEq: np.not_equal,
        ast.Lt: np.less,
        ast.LtE: np.less_equal,
        ast.Gt: np.greater,
        ast.GtE: np.greater_equal,
    }[type(op)]
    data = np.asarray(fn(a.data, b.data), dtype=np.bool_)
    out = derive([a, b], data, "int1")
    examined = a.loaded_from | b.loaded_from
    if examined and interp.lower_only_tensors:
        # a lower bound on an id shifted into a window leaves the window's upper end open
        examined = frozenset(s for s in examined if interp.site_name.get(s) not in interp.lower_only_tensors)
    out.checked = a.checked | b.checked | examined
    if out.pad is None and data.ndim and any(v.lineage and v.data.shape == data.shape for v in (a, b)):
        # the comparison drops the lineage that marks per-lane data (ops_core._combine_pad): an
        # empty padding mask keeps `acc = acc & (x != 0)` a lane operand, so that padding of a
        # later `x` does not make lanes the accumulator filled from real data look outside it
        out.pad = np.zeros(data.shape, dtype=np.bool_)
    out.lineage = frozenset()
    out.scale = None
    return out


def cast(interp: OpContext, x: Any, dtype: str, node: ast.AST, bitcast: bool = False) -> Any:
    if isinstance(x, Ptr):
        raise Unevaluable("a pointer cast", node)
    x = to_val(x, node)
    if bitcast:
        return _bitcast(interp, x, dtype, node)
    if not is_float(dtype) and is_float(x.dtype) and x.src and x.load_node is not None:
        # `tl.load(ids).to(tl.int64)`: the tensor holds integers; `(x / scale).to(tl.int8)` is a
        # real float-to-int conversion (quantization) and says nothing about x
        raise Retype(x.src)
    if interp.address_only and is_float(x.dtype) and not is_float(dtype):
        raise FullRun()
    with np.errstate(all="ignore"):
        if is_float(dtype):
            data = x.data.astype(np.float64)
        elif dtype == "int1":
            data = x.data.astype(bool)
        else:
            data = (
                np.trunc(np.nan_to_num(x.data)).astype(np.int64)
                if is_float(x.dtype)
                else x.data.astype(np.int64)
            )
    out = x.with_(data=np.asarray(data), dtype=dtype, constexpr=x.constexpr)
    if is_float(dtype) and not is_float(x.dtype):
        # integers made floats (`tl.load(X).to(tl.float32)` of an integer tensor): a later
        # `a != 0` compares real floats and says nothing more about X's type (no Retype again)
        out.src = None
    return out


_VIEW = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}
_INT_VIEW = {16: np.int16, 32: np.int32, 64: np.int64}


def _bitcast(interp: OpContext, x: Val, dtype: str, node: ast.AST) -> Val:
    """`x.to(dtype, bitcast=True)`: the same bits read as another type of the same width. Between
    integers (uint32 -> int32 in `uint_to_uniform_float`) and between fp16/fp32/fp64 and the
    integers of their width the value is computed; otherwise (bf16, fp8) the lanes, tags and
    shape go on and only the value is unknown, so the rest of the kernel is still judged."""
    src_bits, dst_bits = bitwidth(x.dtype), bitwidth(dtype)
    if src_bits != dst_bits:
        raise Unevaluable(f"a bitcast from {x.dtype} to {dtype} (different widths)", node)
    if interp.address_only and (is_float(x.dtype) or is_float(dtype)):
        raise FullRun()
    data = _reinterpret(x.data, x.dtype, dtype, src_bits)
    if data is None:
        return x.with_(
            data=np.zeros(x.shape, dtype=np_dtype(dtype)), dtype=dtype, unknown=f"a bitcast to {dtype}"
        )
    return x.with_(data=data, dtype=dtype, lineage=frozenset() if not is_float(dtype) else x.lineage)


def _reinterpret(data: np.ndarray, src: str, dst: str, bits: int) -> np.ndarray | None:
    """The bits of `data` (held as int64 or float64) read as `dst`; None where numpy has no such
    type (bf16, fp8) or the width is not 16/32/64."""
    if bits not in _INT_VIEW or (is_float(src) and src not in _VIEW) or (is_float(dst) and dst not in _VIEW):
        return None
    signed = _INT_VIEW[bits]
    with np.errstate(all="ignore"):
        if is_float(src):
            raw = np.asarray(data).astype(_VIEW[src]).view(signed).astype(np.int64)
        elif bits == 64:  # int64 holds the 64 bits as they are (a mask of 2**64 - 1 overflows)
            raw = np.asarray(data).astype(np.int64)
        else:
            raw = np.asarray(data).astype(np.int64) & ((1 << bits) - 1)
            raw = np.where(raw >= 1 << (bits - 1), raw - (1 << bits), raw)
        if is_float(dst):
            return raw.astype(signed).view(_VIEW[dst]).astype(np.float64)
        if dst.startswith("uint"):
            return np.asarray(raw & ((1 << bits) - 1) if bits < 64 else raw)
        return np.asarray(raw)


def _cast_call(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
    dtype = dtype_arg(args[1] if len(args) > 1 else kwargs.get("dtype"))
    return cast(
        interp, args[0], dtype, node, bool(kwargs.get("bitcast") and to_val(kwargs["bitcast"], node).item())
    )


def _float_builtin(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    a = args[0]
    if isinstance(a, str):
        return scalar(float(a), "fp32", constexpr=True)
    return scalar(float(to_val(a, node).item()), "fp32", constexpr=True)


def _int_builtin(interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Val:
    v = to_val(args[0], node)
    return v.with_(data=np.asarray(int(v.item())), dtype="int32")


def _logical(
    interp: OpContext, args: list[Any], kwargs: dict[str, Any], node: ast.AST, op: ast.operator
) -> Any:
    """`x.logical_and(y)` / `x.logical_or(y)`: `&` / `|` of two boolean blocks."""
    a, b = to_val(args[0], node), to_val(args[1], node)
    if a.dtype != "int1" or b.dtype != "int1":
        raise Unevaluable("`logical_and`/`logical_or` of non-boolean values", node)
    return binop(interp, op, a, b, node)


OPS = [
    *declare(
        "arithmetic",
        {
            "logical_and": lambda i, a, k, n: _logical(i, a, k, n, ast.BitAnd()),
            "logical_or": lambda i, a, k, n: _logical(i, a, k, n, ast.BitOr()),
        },
        method=True,
    ),
    # `tl.cast(x, dtype)` and the tensor method `x.cast(dtype)` (liger-kernel's grpo_loss, geglu)
    *declare("arithmetic", {"cast": _cast_call}, method=True),
    *declare(
        "arithmetic",
        {
            "cast_to": lambda i, a, k, n: cast(i, a[0], a[1].name, n),
            "float": _float_builtin,
            "int": _int_builtin,
        },
    ),
]
