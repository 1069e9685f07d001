"""A launch inside a loop of the launcher: bound at the loop's first iteration.

Ascend launchers split a grid axis that may pass the device's limit into chunks and launch once
per chunk, `for off, n in iter_axis_launch_chunks(axis_size=T, ...): kernel[(n,)](..., T_OFFSET=off)`,
where `iter_axis_launch_chunks` is a generator of the package (`for offset in range(0, T, step):
yield offset, min(step, T - offset)`). Others loop over `range(0, n, step)` of a size or over
`zip` of lists they built. A launch reached in such a loop runs at least once, and its first run
is a fact of the code: the loop variable is the generator's first `yield` (or the range's
start), which the host evaluator computes like any helper's `return`. Before this the loop
variable was unknown and the kernel was checked on a stand-in offset (an AR001 "the value of
`T_OFFSET` (loop)").

What one iteration shows of the whole loop is less: each launch writes its own chunk of the
output, so an output element the first launch leaves unwritten (GR001) may be a later chunk's.
A loop whose items are not all known is named (`loop_texts`), and its launch's coverage
findings are at most a hint naming it (`ProbeLaunch.loops`); bounds seen in the first
iteration stay judged, as they are seen in a launch the code makes.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from argus.analyzers.errors import HOST_ERRORS
from argus.analyzers.model.host_invoke import Returned, UnknownResult
from argus.analyzers.model.host_values import Opaque

MAX_SHOWN = 60  # characters of a loop header quoted in a hint
# statements the path from a generator's body to its first `yield` may pass through: those
# run_block enters knowing which way it goes (a `while` is not one: its first test is unknown)
_ENTERED = (ast.If, ast.For, ast.With, ast.Try)
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign)  # the statement the `yield` is in


class _Evaluator(Protocol):
    env: dict[str, Any]
    call_depth: int
    calls_left: int
    launch_loops: list[str]

    def expr(self, node: ast.expr) -> Any: ...

    def callee(self, fname: str) -> Any: ...

    def run_block(self, stmts: list[ast.stmt], stop_at: ast.AST | None = None) -> bool: ...

    def _bind_call(
        self, fn: ast.FunctionDef, scope: dict[str, Any], args: list[Any], kwargs: dict[str, Any]
    ) -> dict[str, Any] | None: ...


def first_yield_of(ev: _Evaluator, call: ast.Call) -> Any:
    """The first item a generator function of the package (or of the launcher) gives for
    `call`; None when `call` calls no such generator, an `Opaque` when its first item is not
    known (it returns first, or the way to its `yield` passes a test the evaluator cannot
    decide, a `while`, or past the call bounds)."""
    fname = _called_name(call)
    fn = ev.callee(fname) if fname else None
    if fn is None:
        return None
    node_def, scope = (fn.node, dict(fn.globals)) if hasattr(fn, "node") else (fn[1], dict(ev.env))
    target = _first_yield(node_def)
    if target is None:
        return None
    path = _path_to(node_def.body, target)
    if path is None or not all(isinstance(s, _ENTERED) for s in path[:-1]) or not isinstance(path[-1], _SIMPLE):
        return Opaque("generator")
    if ev.calls_left <= 0:
        return Opaque("generator")
    ev.calls_left -= 1
    try:
        args = [ev.expr(a) for a in call.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: ev.expr(k.value) for k in call.keywords if k.arg}
    except (*HOST_ERRORS, RecursionError):
        return Opaque("generator")
    if len(args) != len(call.args) or len(kwargs) != len(call.keywords):
        return Opaque("generator")  # `*args` / `**kw` spread into the call: not followed here
    bound = ev._bind_call(node_def, scope, args, kwargs)
    if bound is None:
        return Opaque("generator")
    saved = ev.env
    ev.env = bound
    ev.call_depth += 1
    try:
        if not ev.run_block(node_def.body, target):
            return Opaque("generator")
        return None if target.value is None else ev.expr(target.value)
    except (Returned, UnknownResult, *HOST_ERRORS, RecursionError):
        return Opaque("generator")  # it returns (no item) or its way is not known
    finally:
        ev.env = saved
        ev.call_depth -= 1


def loop_text(st: ast.For) -> str:
    """The named pick of a loop's first iteration, for hints."""
    head = f"for {ast.unparse(st.target)} in {ast.unparse(st.iter)}"
    if len(head) > MAX_SHOWN:
        head = head[: MAX_SHOWN - 3] + "..."
    return f"the launch runs in the loop `{head}`, checked at its first iteration"


def _called_name(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return f"{f.value.id}.{f.attr}"
    return ""


def _first_yield(fn: ast.FunctionDef) -> ast.Yield | None:
    """The `yield` of `fn` (not of a nested function) written first; a `yield from` makes the
    first item another generator's: not followed."""
    found: list[ast.Yield] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.YieldFrom):
            return None
        if isinstance(n, ast.Yield):
            found.append(n)
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(n))
    return min(found, key=lambda y: (y.lineno, y.col_offset)) if found else None


def _path_to(stmts: list[ast.stmt], target: ast.AST) -> list[ast.stmt] | None:
    """The statements from `stmts` down to the one that holds `target` (outermost first)."""
    for st in stmts:
        if not any(n is target for n in ast.walk(st)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(st, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                rest = _path_to(inner, target)
                if rest is not None:
                    return [st, *rest]
        return [st]
    return None
