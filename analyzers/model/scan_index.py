"""Names and call names under each node of a kernel, indexed once per scan, and the readings
of address expressions the scan's passes share (where a pointer can sit, casts around a load)."""

from __future__ import annotations

import ast
import threading

from argus.analyzers.interp.ops import op_names

# calls whose first argument is an address over pointer parameters (from the op registry)
MEMORY_CALLS = op_names(lambda op: op.takes_pointer)

_LOCAL = threading.local()  # per-thread subtree index: the language server checks off its loop


def tables() -> tuple[dict[int, frozenset[str]], dict[int, frozenset[str]], dict[int, ast.AST]]:
    """The index, keyed by `id()` of the node, and the nodes themselves: holding them keeps
    every indexed node alive while its entry exists, so no other node can be given its address
    and read its names (an expression built after the index, once a tree it indexed was
    dropped, did: what a kernel's scan found then depended on the files checked before it)."""
    if not hasattr(_LOCAL, "names"):
        _LOCAL.names, _LOCAL.calls, _LOCAL.nodes = {}, {}, {}
    return _LOCAL.names, _LOCAL.calls, _LOCAL.nodes


def index_subtrees(root: ast.AST) -> None:
    """Names and call names under every node of `root`, in one post-order pass (the scan asks
    these of the same subtrees many times). A node with one named child shares its set."""
    names_t, calls_t, nodes_t = tables()
    empty: frozenset[str] = frozenset()

    def visit(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
        names = calls = empty
        for fname in node._fields:
            v = getattr(node, fname, None)
            kids = v if isinstance(v, list) else (v,)
            for c in kids:
                if not isinstance(c, ast.AST):
                    continue
                n2, c2 = visit(c)
                if n2:
                    names = n2 if not names else names | n2
                if c2:
                    calls = c2 if not calls else calls | c2
        if isinstance(node, ast.Name):
            names = names | {node.id}
        elif isinstance(node, ast.Call):
            calls = calls | {call_name(node)}
        names_t[id(node)] = names
        calls_t[id(node)] = calls
        nodes_t[id(node)] = node
        return names, calls

    visit(root)


def names_of(node: ast.AST) -> set[str]:
    got = tables()[0].get(id(node))
    return set(got) if got is not None else {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def calls_of(node: ast.AST) -> frozenset[str]:
    got = tables()[1].get(id(node))
    return (
        got if got is not None else frozenset(call_name(c) for c in ast.walk(node) if isinstance(c, ast.Call))
    )


def call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


def unwrap_casts(e: ast.AST) -> ast.AST:
    """`tl.load(...).to(tl.int64)` -> the load call."""
    while (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr in ("to", "cast")
        and isinstance(e.func.value, ast.Call)
    ):
        e = e.func.value
    return e


def additive_names(e: ast.AST | None) -> set[str]:
    """Names in positions where a pointer can sit: operands of + and -, subscripted or
    method-called bases, branches of tl.where; not factors of a product."""
    if e is None:
        return set()
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
        return additive_names(e.left) | additive_names(e.right)
    if isinstance(e, ast.Subscript):
        return additive_names(e.value)
    if isinstance(e, ast.Call):
        name = call_name(e)
        if name in (
            "multiple_of",
            "max_contiguous",
            "max_constancy",
            "broadcast_to",
            "reshape",
            "view",
            "expand_dims",
            "trans",
        ):
            return additive_names(e.args[0]) if e.args else set()
        if name == "where" and len(e.args) == 3:
            return additive_names(e.args[1]) | additive_names(e.args[2])
        if name == "advance" and e.args:
            return additive_names(e.args[0])
        if name in ("make_block_ptr", "make_tensor_descriptor"):
            base = e.args[0] if e.args else next((k.value for k in e.keywords if k.arg == "base"), None)
            return additive_names(base)
    if isinstance(e, ast.IfExp):
        return additive_names(e.body) | additive_names(e.orelse)
    return set()
