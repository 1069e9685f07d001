"""Whether a store's address is picked by loaded data, lane by lane (a scatter), for DF004.

`tl.store(inverse_ptr + sorted_idx, rank)` (flag-gems' `unique`) or `tl.store(out_ptr +
prefix_count, x)` (a compaction) writes each lane where the data says: the value at
`out[j]` was computed for the lane that holds `j`, not for the lane numbered `j`. Comparing
the stored value's coordinates with the destination's is then a guess about the data, which
the synthesized contents of a probe cannot stand for. Such stores are judged by the scatter
facts instead (a row gathered through an index must go back through it; two ids to one row).

Read from the kernel's source: a name is a *lane index from data* when it is assigned from a
`tl.load` whose address varies by lane (it mentions `tl.arange` or a name derived from one),
or from an expression over such a name (`tl.cumsum(ne)`, `idx.to(tl.int64)`). A scalar load
(`bos = tl.load(cu_seqlens + i_n)`) is not one: it moves a whole tile, it does not scatter it.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any

from argus.analyzers.module_ast import module_tree


def store_scattered_by_data(func: ast.FunctionDef | None, store: ast.AST, smap: Any = None) -> bool:
    """The address of the `tl.store` / atomic call `store` mentions a lane index from data.
    The store may sit in a `@triton.jit` helper the kernel calls, parsed apart with its own
    source map (`smap`): the names are those of the function that holds it in that file."""
    if not isinstance(store, ast.Call) or not store.args:
        return False
    holder = func if func is not None and _holds(func, store) else _holder_in(smap, store)
    if holder is None:
        return False
    return bool(_lane_indices_from_data(holder) & _names(store.args[0]))


def _holds(func: ast.FunctionDef, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(func))


def _holder_in(smap: Any, node: ast.AST) -> ast.FunctionDef | None:
    """The function of the snippet's file with a call at `node`'s place in that file."""
    source, row0, indent = (getattr(smap, a, None) for a in ("source", "row0", "indent"))
    if not isinstance(source, bytes) or not isinstance(row0, int) or not isinstance(indent, int):
        return None
    tree = _parse(source)
    lineno, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
    if tree is None or lineno is None or col is None:
        return None
    place = (row0 + lineno, col + indent)
    holders = [
        f
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        and any(isinstance(n, ast.Call) and (n.lineno, n.col_offset) == place for n in ast.walk(f))
    ]
    return min(holders, key=lambda f: (f.end_lineno or 0) - f.lineno, default=None)


def _parse(source: bytes) -> ast.Module | None:
    return module_tree(source) if source else None  # (one tree per text: module_ast.py)


@lru_cache(maxsize=64)
def _lane_indices_from_data(func: ast.FunctionDef) -> frozenset[str]:
    assigns = [(n.targets, n.value) for n in ast.walk(func) if isinstance(n, ast.Assign)] + [
        ([n.target], n.value) for n in ast.walk(func) if isinstance(n, ast.AugAssign)
    ]
    lanes: set[str] = set()
    data: set[str] = set()
    for _ in range(8):  # a fixed point over the kernel's assignments (bounded)
        before = (len(lanes), len(data))
        for targets, value in assigns:
            names = _names(value)
            if _mentions_arange(value) or names & lanes:
                lanes |= _targets(targets)
            if _vector_load(value, lanes) or names & data:
                data |= _targets(targets)
        if (len(lanes), len(data)) == before:
            break
    return frozenset(data)


def _vector_load(e: ast.expr, lanes: set[str]) -> bool:
    for n in ast.walk(e):
        if isinstance(n, ast.Call) and _callee(n) == "load" and n.args:
            addr = n.args[0]
            if _mentions_arange(addr) or _names(addr) & lanes:
                return True
    return False


def _mentions_arange(e: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and _callee(n) == "arange" for n in ast.walk(e))


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _names(e: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


def _targets(targets: list[ast.expr]) -> set[str]:
    out: set[str] = set()
    for t in targets:
        out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out
