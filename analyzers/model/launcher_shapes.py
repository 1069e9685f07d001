"""Shapes a launcher reads by way of a name or a slice (launcher_reads.py's helpers): `x.shape`
itself and `list(x.shape)`, a shape stored under a name first (`shape = x.shape`,
`ctx.input_shape = x.shape`, read back in the forward or its backward), and a slice of a shape
unpacked (`H, D = u.shape[2:]`, `B, S = x.shape[:2]`, `*do.shape[-2:]`)."""

from __future__ import annotations

import ast

from argus.analyzers.model.host_values import dotted_name
from argus.analyzers.model.nodes import subtree


def param_shape(e: ast.AST, names: set[str]) -> str | None:
    """`x.shape` of a parameter `x`: its name."""
    if isinstance(e, ast.Attribute) and e.attr == "shape" and isinstance(e.value, ast.Name):
        return e.value.id if e.value.id in names else None
    return None


def whole_shape(e: ast.AST, names: set[str]) -> str | None:
    """`list(x.shape)` / `tuple(x.shape)` of a parameter `x`: its name (every extent named, as
    `x.shape` unpacked names them). `x.stride()` unpacked names no extent, so it gives no rank
    (the sizes would be the probe's guess); `x.size()` unpacked is left as it was (see
    docs/realworld.md, branch `hostv`: it bound a kernel whose probe then broke a size order
    the kernel assumes and the launcher does not state)."""
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id in ("list", "tuple")
        and len(e.args) == 1
        and not e.keywords
    ):
        return param_shape(e.args[0], names)
    return None


def shape_aliases(func: ast.FunctionDef, names: set[str]) -> dict[str, str]:
    """`shape = x.shape`, `shape = list(x.shape)`, `ctx.input_shape = x.shape` (each target
    assigned once in the launcher): the target's dotted name -> `x`. Unpacking the target
    later names x's extents as unpacking `x.shape` does (an item assigned, `shape[dim] = 1`,
    is no assignment of the name; a list resized, `shape.insert(0, 1)`, is no alias)."""
    stored: dict[str, list[ast.expr]] = {}
    for n in subtree(func):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if dotted_name(t):
                    stored.setdefault(dotted_name(t), []).append(n.value)
        elif isinstance(n, ast.AugAssign | ast.AnnAssign) and dotted_name(n.target):
            stored.setdefault(dotted_name(n.target), []).append(n.value or n.target)
    # `shape.insert(d, 1)`, `del shape[d]`: the list's length is no longer the tensor's rank
    resized = {
        n.func.value.id
        for n in subtree(func)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("append", "insert", "extend", "pop", "remove", "clear")
        and isinstance(n.func.value, ast.Name)
    } | {
        t.value.id
        for n in subtree(func)
        if isinstance(n, ast.Delete)
        for t in n.targets
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
    }
    out: dict[str, str] = {}
    for target, values in stored.items():
        if target in resized:
            continue
        base = (param_shape(values[0], names) or whole_shape(values[0], names)) if len(values) == 1 else None
        if base is not None and target not in names:
            out[target] = base
    return out


def ranks_unpacked_later(forward: ast.FunctionDef, backward: ast.FunctionDef, prefix: str) -> dict[str, int]:
    """A forward's parameters whose shape it stores on `ctx` (`ctx.input_shape = x.shape`, the
    forward copy's `<prefix>input_shape = x.shape`) and whose backward unpacks it (`B, L, N =
    ctx.input_shape`): the rank that unpacking writes out."""
    names = {a.arg for a in forward.args.args + forward.args.kwonlyargs}
    stored = {t[len(prefix) :]: p for t, p in shape_aliases(forward, names).items() if t.startswith(prefix)}
    out: dict[str, int] = {}
    for n in subtree(backward):
        if not (isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple)):
            continue
        v = n.value
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == "ctx" and v.attr in stored:
            param = stored[v.attr]
            out[param] = max(out.get(param, 0), len(n.targets[0].elts))
    return out


def shape_slice(e: ast.AST, names: set[str]) -> tuple[str, int | None, int | None] | None:
    """`x.shape[a:b]` of a parameter `x`, each bound a literal or absent, no step: (x, a, b)."""
    if not (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice) and e.slice.step is None):
        return None
    base = param_shape(e.value, names)
    lo = None if e.slice.lower is None else _literal_int(e.slice.lower)
    hi = None if e.slice.upper is None else _literal_int(e.slice.upper)
    if base is None or (lo is None) != (e.slice.lower is None) or (hi is None) != (e.slice.upper is None):
        return None
    return base, lo, hi


def rank_from_slice(
    sliced: tuple[str, int | None, int | None],
    count: int,
    ranks: dict[str, int],
    front: dict[str, int],
    back: dict[str, int],
) -> None:
    """`count` names unpacked from a slice of a shape: `u.shape[2:]` into two is a rank of
    exactly 4; `x.shape[-2:]` into two names the last two dimensions and `x.shape[:2]` into two
    the first two, with nothing said of the others (a rank bounded below: the tensor's extent
    is left unjudged, tensor_param_ranks); any other slice says nothing."""
    name, lo, hi = sliced
    if hi is None and lo is not None and lo >= 0:
        ranks[name] = max(ranks.get(name, 0), lo + count)
    elif hi is None and lo is not None and -lo == count:
        back[name] = max(back.get(name, 0), count)
    elif lo in (None, 0) and hi == count:
        front[name] = max(front.get(name, 0), count)


def _literal_int(e: ast.expr) -> int | None:
    """`2`, `-2`: the int; None for anything else."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _literal_int(e.operand)
        return None if inner is None else -inner
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    return None
