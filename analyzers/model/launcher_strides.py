"""Which strides of which launcher tensors a launch passes to the kernel, and which tensors
the launcher states contiguous: the probes give a tensor whose strides the kernel receives a
padded layout, gapped after the innermost dimension whose stride it receives (launch_site's
`padded_strides`), since a kernel handed strides claims to take any layout there."""

from __future__ import annotations

import ast

from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.nodes import subtree


def strides_read(site: LaunchSite) -> dict[str, frozenset[int] | None]:
    """Host names whose `.stride(...)` the launch passes (their layout is communicated, so the
    probes give them padded strides), each with the dimensions it reads (`x.stride(0)`: {0};
    negative ones as written; None for `x.stride()` or an index the text does not fix); less
    those the launcher asserts contiguous (`assert q.is_contiguous() and k.is_contiguous()`):
    a padded `q` is a launch the launcher refuses, and the kernel may rightly address a fresh
    output with q's strides."""
    out: dict[str, frozenset[int] | None] = {}
    nodes = list(subtree(site.host_func) if site.host_func else site.body_nodes)
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "stride":
            if isinstance(n.func.value, ast.Name):
                name = n.func.value.id
                dim = _literal_dim(n.args[0]) if len(n.args) == 1 and not n.keywords else None
                seen = out.get(name, frozenset())
                out[name] = None if dim is None or seen is None else seen | {dim}
    for name in asserted_contiguous(nodes):
        out.pop(name, None)
    return out


def _literal_dim(e: ast.expr) -> int | None:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
        return -e.operand.value if type(e.operand.value) is int else None
    return None


def asserted_contiguous(nodes: list[ast.AST]) -> set[str]:
    """Names an `assert` states contiguous: `x.is_contiguous()`, alone or in an `and`."""
    out: set[str] = set()
    for n in nodes:
        if not isinstance(n, ast.Assert):
            continue
        tests = n.test.values if isinstance(n.test, ast.BoolOp) and isinstance(n.test.op, ast.And) else [n.test]
        out.update(name for name in map(contiguity_tested, tests) if name is not None)
    return out


def contiguity_tested(e: ast.expr) -> str | None:
    """`x.is_contiguous()`: x."""
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "is_contiguous"
        and isinstance(e.func.value, ast.Name)
        and not e.args
    ):
        return e.func.value.id
    return None
