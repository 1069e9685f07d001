"""What an autograd `forward` hands its `backward` through `ctx`, for a launch in `backward`.

`ctx.C = C`, `ctx.BT = BT`, `ctx.ignore_index = ignore_index` and `ctx.save_for_backward(inp,
tgt)` in `forward`, then `C = ctx.C` and `inp, tgt = ctx.saved_tensors` in `backward`: the
values the backward launch sees are the forward's. Before this each `ctx.X` was unknown (a
stand-in with an AR001), and the saved tensors had shapes of their own, unrelated to the sizes
the forward stored beside them.

The binder runs the forward's body first, in the same evaluator state (the same dimension
classes and probe sizes), over a copy in which `ctx.X = v` is an assignment of a name of its
own and `ctx.save_for_backward(a, b)` a tuple of those tensors; the names' values become the
`ctx` the backward reads (an `AttributeTable`, which host.py's attribute read looks into). An
attribute the forward does not set stays unknown, as before, and a forward the evaluator
cannot run leaves the backward as it was.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.node_memo import fresh_copy
from argus.analyzers.model.nodes import subtree

_PREFIX = "__argus_ctx__"
_SAVED = _PREFIX + "saved_tensors"
STORE_PREFIX = _PREFIX  # `ctx.X = v` in the forward copy is `STORE_PREFIX + "X" = v`


class AttributeTable(dict):  # type: ignore[type-arg]
    """A host object whose attributes are known by name (`ctx` after the forward ran):
    host.py's attribute read returns an entry, or an unknown value named as before."""


def forward_copy(forward: ast.FunctionDef, ctx_name: str) -> ast.FunctionDef:
    """The forward with `ctx.X = v` as `__argus_ctx__X = v` and `ctx.save_for_backward(...)` as
    an assignment of the saved tuple (the original tree is left alone: it is shared)."""
    stored = {
        n.attr
        for n in subtree(forward)  # (the forward is shared: its node list serves the other readers)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
        and n.value.id == ctx_name
    }
    return _Rewrite(ctx_name, stored).visit(fresh_copy(forward))  # type: ignore[no-any-return]


def table_from(env: dict[str, Any]) -> AttributeTable:
    """The `ctx` the backward sees: every `ctx.X` the forward assigned, by name."""
    table = AttributeTable()
    for k, v in env.items():
        if k.startswith(_PREFIX):
            table[k[len(_PREFIX) :]] = v
    return table


class _Rewrite(ast.NodeTransformer):
    def __init__(self, ctx_name: str, stored: set[str] | None = None) -> None:
        self.ctx = ctx_name
        self.stored = stored or set()  # the `ctx.X` the forward assigns

    def _is_ctx(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == self.ctx

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """`B, T, N = ctx.input_shape` after `ctx.input_shape = x.shape`: the forward reads back
        the name its store became (launcher_reads then sees x's extents unpacked)."""
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and self._is_ctx(node.value) and node.attr in self.stored:
            return ast.copy_location(ast.Name(id=_PREFIX + node.attr, ctx=ast.Load()), node)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        node.targets = [self._target(t) for t in node.targets]
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        self.generic_visit(node)
        target = self._target(node.target)
        if isinstance(target, ast.Name):
            node.target = target
        return node

    def _target(self, t: ast.expr) -> ast.expr:
        if isinstance(t, ast.Attribute) and self._is_ctx(t.value):
            return ast.copy_location(ast.Name(id=_PREFIX + t.attr, ctx=ast.Store()), t)
        if isinstance(t, ast.Tuple | ast.List):
            t.elts = [self._target(e) for e in t.elts]
        return t

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("save_for_backward", "save_for_forward")
            and self._is_ctx(call.func.value)
            and not call.keywords
        ):
            saved = ast.Tuple(elts=list(call.args), ctx=ast.Load())
            target = ast.Name(id=_SAVED, ctx=ast.Store())
            return ast.copy_location(ast.Assign(targets=[target], value=saved, lineno=node.lineno), node)
        return node


def ctx_param(func: ast.FunctionDef | None) -> str | None:
    """The name of a `backward`'s (or `forward`'s) first parameter when it is an autograd
    context (`ctx`), else None."""
    if func is None:
        return None
    args = func.args.posonlyargs + func.args.args
    return args[0].arg if args and args[0].arg == "ctx" else None


def forward_node(launcher: Any) -> Any:
    """The tree-sitter node of the `forward` beside the `backward` function node `launcher`
    (its decorated definition when it has one), or None: the class body's definitions."""
    node = launcher
    if node.parent is not None and node.parent.type == "decorated_definition":
        node = node.parent
    block = node.parent
    if block is None or block.type != "block" or block.parent is None or block.parent.type != "class_definition":
        return None
    for child in block.named_children:
        fn = child
        if child.type == "decorated_definition":
            fn = child.child_by_field_name("definition")
        if fn is not None and fn.type == "function_definition":
            name = fn.child_by_field_name("name")
            if name is not None and name.text == b"forward":
                return fn
    return None
