"""Numbers a launcher computes from sizes and dtypes that the evaluator holds.

- `torch.finfo(dtype)` / `torch.iinfo(dtype)`: the limits torch documents for that dtype
  (`eps`, `max`, `min`, `tiny`, `bits`), as an object whose attributes are known
  (`-0.5 * torch.finfo(dtype).eps`, a module table `{torch.float16: (tl.float16,
  torch.finfo(torch.float16).max), ...}`). The dtype is whatever the evaluator holds: a dtype
  the launcher names, or the probe's dtype of a tensor, as every `x.dtype` test already reads
  it. A dtype the table does not list (fp8) stays unknown.
- `int(a / b / c)` of non-negative sizes: `a // b // c` (the same number for non-negative
  ints and a positive divisor), so the result keeps the dimension class the sizes derive from
  (`batch = int(torch.numel(x) / M / N)` measures the tensor's leading dimensions); before, the
  float quotient lost it, or the whole value was unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.model.binder_ctx import AttributeTable

_FLOAT_INFO: dict[str, dict[str, float | int]] = {
    "fp16": {"eps": 2.0**-10, "max": 65504.0, "tiny": 2.0**-14, "bits": 16, "resolution": 0.001},
    "bf16": {"eps": 2.0**-7, "max": 3.3895313892515355e38, "tiny": 2.0**-126, "bits": 16, "resolution": 0.01},
    "fp32": {"eps": 2.0**-23, "max": 3.4028234663852886e38, "tiny": 2.0**-126, "bits": 32, "resolution": 1e-06},
    "fp64": {"eps": 2.0**-52, "max": 1.7976931348623157e308, "tiny": 2.0**-1022, "bits": 64, "resolution": 1e-15},
}
_INT_INFO: dict[str, tuple[int, bool]] = {  # bits, signed
    "int8": (8, True),
    "int16": (16, True),
    "int32": (32, True),
    "int64": (64, True),
    "uint8": (8, False),
}


def dtype_info(fname: str, args: list[Any], kwargs: dict[str, Any]) -> AttributeTable | None:
    """`torch.finfo(dtype)` / `torch.iinfo(dtype)` of a dtype value `("dtype", name)`: its
    limits; None for any other call or a dtype not listed."""
    if fname not in ("torch.finfo", "torch.iinfo") or len(args) != 1 or kwargs:
        return None
    dt = args[0]
    if not (isinstance(dt, tuple) and len(dt) == 2 and dt[0] == "dtype"):
        return None
    if fname == "torch.finfo" and dt[1] in _FLOAT_INFO:
        info = dict(_FLOAT_INFO[dt[1]])
        info["min"] = -info["max"]
        info["smallest_normal"] = info["tiny"]
        return AttributeTable(info)
    if fname == "torch.iinfo" and dt[1] in _INT_INFO:
        bits, signed = _INT_INFO[dt[1]]
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        return AttributeTable({"bits": bits, "min": low, "max": high})
    return None


def floor_quotient(e: ast.expr, expr: Callable[[ast.expr], Any], binop: Callable[..., Any]) -> Any:
    """`a / b / c` as `a // b // c` when every operand is a non-negative int and every divisor
    positive (what `int(...)` of the quotient is); None otherwise. `binop` keeps the
    operands' dimension classes."""
    if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Div)):
        return None
    left = floor_quotient(e.left, expr, binop) if _is_div(e.left) else expr(e.left)
    right = expr(e.right)
    if not (_whole(left) and _whole(right)) or left < 0 or right <= 0:
        return None
    return binop(ast.FloorDiv(), left, right)


def _is_div(e: ast.expr) -> bool:
    return isinstance(e, ast.BinOp) and isinstance(e.op, ast.Div)


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def cancelled_factor(a_sym: str, b_sym: str, same: Callable[[str, str], bool]) -> str | None:
    """The symbol of `a // b` where `a` measures a product of sizes (`(x.0*x.1*x.2)`, a
    tensor's `numel()`, or `((M*N)*K)`) and `b` one of its factors (the same dimension class):
    the other factors' product, `(x.0*x.2)`, or the one factor left, so `x.numel() // N` of a
    tensor `(B, N)` measures `B` again. The division is exact; None where `b` is no factor."""
    factors = _product_factors(a_sym)
    if factors is None or len(factors) < 2:
        return None
    for i, f in enumerate(factors):
        if same(f, b_sym):
            rest = factors[:i] + factors[i + 1 :]
            return rest[0] if len(rest) == 1 else "(" + "*".join(rest) + ")"
    return None


def _product_factors(sym: str) -> list[str] | None:
    """`((a*b)*c)` -> [a, b, c]; None for a symbol that is not a product of plain symbols."""
    if not (sym.startswith("(") and sym.endswith(")")):
        return [sym] if sym and not any(c in sym for c in "()+-/%?") else None
    inner, depth, parts, start = sym[1:-1], 0, [], 0
    for i, c in enumerate(inner):
        depth += c == "("
        depth -= c == ")"
        if depth < 0:
            return None  # `(a)*(b)`: the outer parentheses close early
        if c == "*" and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    if len(parts) == 1:
        return None
    out: list[str] = []
    for p in parts:
        sub = _product_factors(p)
        if sub is None:
            return None
        out += sub
    return out


# torch's own names of the dtypes (`str(torch.float16)` is "torch.float16")
_TORCH_NAMES = {
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "int1": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
}
# methods of a known string that give a string, a list of strings or a bool (no side effects)
STRING_METHODS = frozenset({"split", "rsplit", "lower", "upper", "strip", "replace", "startswith", "endswith"})


def dtype_text(fname: str, args: list[Any], kwargs: dict[str, Any]) -> str | None:
    """`str(a.dtype)` of a dtype the evaluator holds: torch's text for it ("torch.float16");
    None for anything else."""
    if fname != "str" or len(args) != 1 or kwargs:
        return None
    dt = args[0]
    if isinstance(dt, tuple) and len(dt) == 2 and dt[0] == "dtype" and dt[1] in _TORCH_NAMES:
        return "torch." + _TORCH_NAMES[dt[1]]
    return None


def string_method(s: str, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`"torch.float16".split(".")[-1]`: a side-effect-free method of a known string with known
    string arguments; None where it is not one."""
    if name not in STRING_METHODS or kwargs or not all(isinstance(a, str | int) and not isinstance(a, bool) for a in args):
        return None
    try:
        return getattr(s, name)(*args)
    except (TypeError, ValueError):
        return None
