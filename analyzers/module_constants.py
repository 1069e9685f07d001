"""Module-level constants, read from the text without running it.

`N_BLOCK = 128`, `MAX = tl.constexpr(2**31 - 1)`, `_MIN = torch.finfo(torch.float16).min`,
`exp = tl.exp` and the lists a `def get_configs(): return [...]` returns are what kernels and
autotune decorators of the file read. They are evaluated here from literals and number
arithmetic alone (no `eval`), with results too large to hold refused before they are computed
(`9**9**9**9`), so an odd module cannot stall the check. Split from module_view.py, which
holds what the kernels of one file share; this is the one part of it that evaluates text.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from argus.analyzers.errors import UNPARSABLE
from argus.analyzers.interp.budget import MAX_INT_BITS, oversized_result
from argus.analyzers.interp.ops import imported_op_aliases, math_alias
from argus.analyzers.interp.values import scalar
from tree_sitter import Node


def read_module_constants(source: bytes, root: Node) -> tuple[dict[str, Any], dict[str, ast.expr], list[bytes]]:
    """The constants' values (`consts`), every top-level assignment's and config function's
    expression (`const_nodes`, for what the values cannot say), and the texts they came from
    (`parts`: cache keys change when one of them does)."""
    consts: dict[str, Any] = {}
    const_nodes: dict[str, ast.expr] = {}
    parts: list[bytes] = []
    for child in _module_statements(root):
        if child.type == "function_definition":
            _record_returning_function(source, child, const_nodes, parts)
            continue
        if child.type == "import_from_statement":
            consts.update(imported_op_aliases(source[child.start_byte : child.end_byte]))
            continue
        if child.type != "expression_statement" or not child.named_children:
            continue
        stmt = child.named_children[0]
        if stmt.type != "assignment":
            continue
        text = source[child.start_byte : child.end_byte]
        try:
            mod = ast.parse(text.decode("utf-8"))
        except UNPARSABLE:
            continue
        st = mod.body[0] if mod.body else None
        if isinstance(st, ast.Assign | ast.AnnAssign):
            target = st.targets[0] if isinstance(st, ast.Assign) else st.target
            value = st.value
            if isinstance(target, ast.Name) and value is not None:
                const_nodes[target.id] = value
                v = _const_value(value)
                if v is None:
                    v = math_alias(value)
                if v is not None:
                    consts[target.id] = v
                    parts.append(text)
    return consts, const_nodes, parts


def _module_statements(root: Node) -> list[Node]:
    """The module's top-level statements, with those of a `try:` body in its place (flag-gems'
    `try: uint_to_uniform_float = tl.uint_to_uniform_float except AttributeError: ...`: the
    body is what runs on a Triton that has the name; the fallback is not read)."""
    out: list[Node] = []
    for child in root.children:
        block = child.child_by_field_name("body") if child.type == "try_statement" else None
        out.extend(block.named_children if block is not None else [child])
    return out


def _record_returning_function(
    source: bytes, node: Node, const_nodes: dict[str, ast.expr], parts: list[bytes]
) -> None:
    """`def get_configs(): return [...]`: remember the returned expression (autotune configs)."""
    params = node.child_by_field_name("parameters")
    positional = ("identifier", "typed_parameter", "default_parameter", "typed_default_parameter")
    if params is not None and any(c.type in positional for c in params.named_children):
        return  # takes arguments: not a config list (and not worth parsing)
    text = source[node.start_byte : node.end_byte]
    if len(text) > 20000:
        return
    try:
        mod = ast.parse(text.decode("utf-8"))
    except UNPARSABLE:
        return
    fn = mod.body[0] if mod.body and isinstance(mod.body[0], ast.FunctionDef) else None
    if fn is None or fn.args.args:
        return
    ret = next((st.value for st in fn.body if isinstance(st, ast.Return) and st.value is not None), None)
    if ret is not None:
        # literal locals the returned expression may iterate over (`shapes = [(128, 64, 8), ...]`)
        local = {
            t.id: st.value
            for st in fn.body
            if isinstance(st, ast.Assign)
            for t in st.targets
            if isinstance(t, ast.Name)
        }
        const_nodes[f"{fn.name}()"] = ret
        const_nodes[f"{fn.name}().locals"] = local  # type: ignore[assignment]
        # other returns (`if interpreting(): return [...]`) stand in when the main one is built
        # imperatively (a loop appending configs)
        const_nodes[f"{fn.name}().alternatives"] = [  # type: ignore[assignment]
            st.value
            for st in ast.walk(fn)
            if isinstance(st, ast.Return) and st.value is not None and st.value is not ret
        ]
        parts.append(text)


def _const_value(node: ast.expr) -> Any:
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("constexpr") and node.args:
        node = node.args[0]
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        try:
            v = _arith(node)
        except (ArithmeticError, ValueError, TypeError, RecursionError):
            v = None
    if isinstance(v, bool | int | float) and not (isinstance(v, int) and v.bit_length() > MAX_INT_BITS):
        try:
            return scalar(v, constexpr=True)
        except OverflowError:  # wider than 64 bits: no Triton constant (Python-only arithmetic)
            return None
    return None


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}


# `torch.finfo(dtype).attr` / `torch.iinfo(dtype).attr` (PyTorch's documented values), as module
# constants write them: `_MIN_FLOAT16_VAL = tl.constexpr(torch.finfo(torch.float16).min)`
_FINFO = {
    "float16": {"max": 65504.0, "eps": 0.0009765625, "tiny": 6.103515625e-05},
    "half": {"max": 65504.0, "eps": 0.0009765625, "tiny": 6.103515625e-05},
    "bfloat16": {"max": 3.3895313892515355e38, "eps": 0.0078125, "tiny": 1.1754943508222875e-38},
    "float32": {"max": 3.4028234663852886e38, "eps": 1.1920928955078125e-07, "tiny": 1.1754943508222875e-38},
    "float": {"max": 3.4028234663852886e38, "eps": 1.1920928955078125e-07, "tiny": 1.1754943508222875e-38},
    "float64": {"max": 1.7976931348623157e308, "eps": 2.220446049250313e-16, "tiny": 2.2250738585072014e-308},
}
_IINFO_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": -8}


def _type_info(node: ast.Attribute) -> int | float | None:
    call = node.value
    if not (isinstance(call, ast.Call) and len(call.args) == 1 and isinstance(call.func, ast.Attribute)):
        return None
    which, dtype = call.func.attr, ast.unparse(call.args[0]).split(".")[-1]
    if which == "finfo" and dtype in _FINFO:
        info = _FINFO[dtype]
        attr = "tiny" if node.attr == "smallest_normal" else node.attr
        return -info["max"] if attr == "min" else info.get(attr)
    if which == "iinfo" and dtype in _IINFO_BITS:
        bits = _IINFO_BITS[dtype]
        if bits < 0:
            return {"min": 0, "max": 2**-bits - 1}.get(node.attr)
        return {"min": -(2 ** (bits - 1)), "max": 2 ** (bits - 1) - 1}.get(node.attr)
    return None


def _arith(node: ast.expr) -> int | float | bool | None:
    """Literal number arithmetic (`2**31 - 1`, `1 << 20`, `torch.finfo(torch.float16).min`),
    evaluated without `eval`: a result that would be huge (`9**9**9**9`) is refused from its
    operands' sizes before it is computed, and anything but numbers (`"a" * 2**33`) is no
    constant at all."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, bool | int | float) else None
    if isinstance(node, ast.Attribute):
        return _type_info(node)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        v = _arith(node.operand)
        return None if v is None else _UNARY[type(node.op)](v)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _arith(node.left), _arith(node.right)
        if a is None or b is None or oversized_result(node.op, a, b):
            return None
        return _BINOPS[type(node.op)](a, b)
    return None
