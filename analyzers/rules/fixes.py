"""Quick-fix builders shared by rules: each returns an edit only when it is unambiguous."""

from __future__ import annotations

import ast

from argus.analyzers.findings import Fix, TextEdit
from argus.analyzers.interp.facts import Fact, Int32Offset
from argus.analyzers.interp.ops import op_names
from argus.analyzers.rules.base import RuleContext

# memory ops a missing mask may be added to (from the op registry)
MEMORY_OPS = op_names(lambda op: op.mask_fix)


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
    return ""


def _kw(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def add_mask_fix(fact: Fact, ctx: RuleContext) -> Fix | None:
    """A memory op without a mask, in a kernel whose other memory ops on pointers built from
    the same offset variable all use one and the same mask expression: add that mask."""
    node = fact.node
    if not isinstance(node, ast.Call) or _call_name(node) not in MEMORY_OPS:
        return None
    op = _call_name(node)
    mask_pos = 1 if op == "load" else 2
    if _kw(node, "mask") is not None or len(node.args) > mask_pos:
        return None
    if not node.args:
        return None
    names = {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
    root = ctx.func
    if root is None:
        return None
    masks: set[str] = set()
    for other in ast.walk(root):
        if (
            other is node
            or _call_name(other) not in MEMORY_OPS
            or not isinstance(other, ast.Call)
            or not other.args
        ):
            continue
        onames = {n.id for n in ast.walk(other.args[0]) if isinstance(n, ast.Name)}
        if not (onames & names - _pointer_params(root)):
            continue
        opos = 1 if _call_name(other) == "load" else 2
        m = _kw(other, "mask") or (other.args[opos] if len(other.args) > opos else None)
        if m is not None:
            masks.add(ast.unparse(m))
    if len(masks) != 1:
        return None
    mask = masks.pop()
    end = fact.smap.span(node).end_byte - 1  # the closing parenthesis
    src = ctx.source
    insert_at = end
    while insert_at > 0 and src[insert_at - 1 : insert_at] in (b" ", b"\n", b","):
        insert_at -= 1
    text = f", mask={mask}"
    return Fix(f"Add `mask={mask}`", (TextEdit(insert_at, insert_at, text),))


def _pointer_params(func: ast.AST) -> set[str]:
    if isinstance(func, ast.FunctionDef):
        return {a.arg for a in func.args.args if a.arg.endswith("ptr")}
    return set()


def wrap_int64_fix(fact: Int32Offset, ctx: RuleContext) -> Fix | None:
    """`row * stride` -> `row.to(tl.int64) * stride` on the operand that grows."""
    node = fact.node
    side = fact.grows_side
    if not isinstance(node, ast.BinOp) or side not in ("left", "right"):
        return None
    operand = node.left if side == "left" else node.right
    span = fact.smap.span(operand)
    text = ctx.source[span.start_byte : span.end_byte].decode("utf-8")
    simple = isinstance(operand, ast.Name | ast.Attribute | ast.Subscript | ast.Call)
    new = f"{text}.to(tl.int64)" if simple else f"({text}).to(tl.int64)"
    return Fix(f"Compute `{text}` in 64-bit", (TextEdit(span.start_byte, span.end_byte, new),))


def fp32_accumulator_fix(fact: Fact, ctx: RuleContext) -> Fix | None:
    """`tl.zeros(..., dtype=tl.float16)` / `out_dtype=tl.float16` -> `tl.float32`."""
    node = fact.node
    if not isinstance(node, ast.Call):
        return None
    target = _kw(node, "dtype") if _call_name(node) in ("zeros", "full") else _kw(node, "out_dtype")
    if target is None and _call_name(node) == "zeros" and len(node.args) > 1:
        target = node.args[1]
    if target is None:
        return None
    span = fact.smap.span(target)
    return Fix("Accumulate in fp32", (TextEdit(span.start_byte, span.end_byte, "tl.float32"),))


def other_fix(load: ast.AST | None, smap: object, ctx: RuleContext, value: str) -> Fix | None:
    """Add `other=<neutral value>` to a masked load that has none."""
    if not isinstance(load, ast.Call) or _call_name(load) != "load":
        return None
    if _kw(load, "other") is not None or len(load.args) > 2:
        return None
    if _kw(load, "mask") is None and len(load.args) < 2:
        return None
    end = smap.span(load).end_byte - 1  # type: ignore[attr-defined]
    src = ctx.source
    insert_at = end
    while insert_at > 0 and src[insert_at - 1 : insert_at] in (b" ", b"\n", b","):
        insert_at -= 1
    return Fix(f"Add `other={value}`", (TextEdit(insert_at, insert_at, f", other={value}"),))
