"""The value of a kernel's constexpr test (`if HAS_BIAS:`, `if X is not None and N > 1:`) under
one launch's constexpr arguments, for the unbound-name rule (unbound_names.py): which arm of an
`if` Triton compiles for that launch. Only literals, the launch's constexprs, `not`, `and`/`or`,
comparisons and integer arithmetic are evaluated; anything else is UNKNOWN (and the caller then
treats the arms as not known to be compiled)."""

from __future__ import annotations

import ast
import operator
from typing import Any

#: the value of an expression this evaluator does not settle
UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
#: an argument that is a tensor: only `is None` / `is not None` are settled on it
NOT_NONE: Any = type("NotNone", (), {"__repr__": lambda self: "NOT_NONE"})()

_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_ARITH = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
}
_PLAIN = (bool, int, float, str, type(None))


def const_value(e: ast.expr, env: dict[str, Any]) -> Any:
    """`e`'s value with the names in `env` (parameter -> constexpr value, NOT_NONE for a tensor
    argument), or UNKNOWN."""
    try:
        return _value(e, env)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return UNKNOWN


def _value(e: ast.expr, env: dict[str, Any]) -> Any:
    if isinstance(e, ast.Constant):
        return e.value if isinstance(e.value, _PLAIN) else UNKNOWN
    if isinstance(e, ast.Name):
        return env.get(e.id, UNKNOWN)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not | ast.USub):
        v = _value(e.operand, env)
        if not isinstance(v, _PLAIN):
            return UNKNOWN
        return (not v) if isinstance(e.op, ast.Not) else -v
    if isinstance(e, ast.BoolOp):
        values = [_value(x, env) for x in e.values]
        if any(not isinstance(v, _PLAIN) for v in values):
            return UNKNOWN
        return all(values) if isinstance(e.op, ast.And) else any(values)
    if isinstance(e, ast.Compare):
        return _compare(e, env)
    if isinstance(e, ast.BinOp) and type(e.op) in _ARITH:
        a, b = _value(e.left, env), _value(e.right, env)
        if type(a) is not int or type(b) is not int:
            return UNKNOWN
        return _ARITH[type(e.op)](a, b)
    return UNKNOWN


def _compare(e: ast.Compare, env: dict[str, Any]) -> Any:
    left = _value(e.left, env)
    for op, right_node in zip(e.ops, e.comparators, strict=True):
        right = _value(right_node, env)
        if isinstance(op, ast.Is | ast.IsNot):
            if (left is UNKNOWN or right is UNKNOWN) or (left is not None and right is not None):
                return UNKNOWN  # only `x is None` / `x is not None` are settled
            same = left is right
            ok = same if isinstance(op, ast.Is) else not same
        elif type(op) in _COMPARE and isinstance(left, _PLAIN) and isinstance(right, _PLAIN):
            ok = _COMPARE[type(op)](left, right)
        else:
            return UNKNOWN
        if not ok:
            return False
        left = right
    return True
