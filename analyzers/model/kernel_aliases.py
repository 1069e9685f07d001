"""Kernels launched under another name: `k2 = k1`, `fn = kernel[grid]`, a dict of kernels.

flag-gems' generated ops keep a handle before a wrapper of the same name rebinds it
(`threshold__triton_kernel = threshold_` at module level, then
`threshold__triton_kernel[grid](...)`); `flash_api.py` binds `kernel = flash_fwd_kernel[grid]`
and calls `kernel(...)`; `solve_tril` picks `merge_fn = ..._kernel` in an `if BT == 16:` chain
and launches `merge_fn[NT, B * H](...)`. Each was a launch nobody found, so the kernel was judged
on assumed sizes (model/binder_assumed.py): its findings rested on guesses the launcher answers.

Here such a launch is found as the kernel's own. A module-level alias needs nothing more than
its name (the call is `alias[grid](...)`, which binds like `kernel[grid](...)`). A local alias is
resolved in a copy of the launcher, so the parse other kernels share is left alone: the call is
rewritten to `kernel[grid](...)`, and where the alias was bound to this kernel inside an
`if X == C:` branch, `assert X == C` is put before the launch: the kernel runs only where that
branch was taken, so the probe is made there (the host evaluator solves such asserts).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable

from argus.analyzers.model.launch_site import find_launch_calls
from argus.analyzers.model.node_memo import fresh_copy, on_node
from argus.analyzers.model.nodes import subtree


def module_aliases(const_nodes: dict[str, ast.expr], kernels: Iterable[str]) -> dict[str, list[str]]:
    """Kernel -> the module-level names bound to it (`k2 = k1`, and `k3 = k2` after it)."""
    out: dict[str, list[str]] = {k: [] for k in kernels}
    target = {k: k for k in out}
    for _ in range(3):  # chains of aliases, a few links deep
        for name, value in const_nodes.items():
            ref = _name_of(value)
            if ref in target and name not in target:
                target[name] = target[ref]
                out[target[ref]].append(name)
    return {k: v for k, v in out.items() if v}


def launches_of(mod: ast.Module, kernel: str, names: Iterable[str] = ()) -> tuple[ast.Module, list[ast.Call]]:
    """The launches of `kernel` in `mod`: `kernel[grid](...)`, the module-level `names` bound to
    it, and local aliases; with the module they sit in (a rewritten copy when a local alias was
    resolved, else `mod` itself)."""
    calls = [c for n in (kernel, *names) for c in find_launch_calls(mod, n)]
    if not _has_local_alias(mod, kernel):
        return mod, calls
    twin = fresh_copy(mod)
    calls = [c for n in (kernel, *names) for c in find_launch_calls(twin, n)]
    for scope in [twin, *(n for n in ast.walk(twin) if isinstance(n, ast.FunctionDef))]:
        calls.extend(_resolve(scope, kernel))
    return twin, sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def _name_of(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _kind(value: ast.expr, kernel: str) -> str | None:
    """How an assigned value refers to `kernel`: "launcher" (`kernel[grid]`), "name" (`kernel`,
    `a if c else kernel`), "table" (`{"x": kernel}`); None when it does not."""
    if isinstance(value, ast.Subscript) and _name_of(value.value) == kernel:
        return "launcher"
    if _name_of(value) == kernel:
        return "name"
    if isinstance(value, ast.IfExp) and kernel in (_name_of(value.body), _name_of(value.orelse)):
        return "name"
    if isinstance(value, ast.Dict) and any(_name_of(v) == kernel for v in value.values):
        return "table"
    return None


def _has_local_alias(mod: ast.Module, kernel: str) -> bool:
    # (the launcher's single assignments, listed once per tree for every kernel it launches)
    values = on_node(mod, "single_assignments", lambda: _single_assignments(mod))
    return any(_kind(v, kernel) is not None for v in values)


def _single_assignments(mod: ast.Module) -> list[ast.expr]:
    return [n.value for n in subtree(mod) if isinstance(n, ast.Assign) and len(n.targets) == 1]


def _own_statements(scope: ast.AST) -> list[ast.stmt]:
    """Statements of `scope` (a module or a function), nested functions left out."""
    out: list[ast.stmt] = []
    todo = list(getattr(scope, "body", []))
    while todo:
        st = todo.pop(0)
        if isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        out.append(st)
        for field in ("body", "orelse", "finalbody"):
            todo.extend(getattr(st, field, []) or [])
        for h in getattr(st, "handlers", []) or []:
            todo.extend(h.body)
    return out


def _resolve(scope: ast.AST, kernel: str) -> list[ast.Call]:
    """Rewrite the alias launches of `kernel` in `scope` (a copy) to `kernel[grid](...)`."""
    stmts = _own_statements(scope)
    bound: dict[str, tuple[str, ast.Assign]] = {}
    for st in stmts:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            kind = _kind(st.value, kernel)
            if kind is not None:
                bound[st.targets[0].id] = (kind, st)
    if not bound:
        return []
    innermost: dict[int, tuple[ast.Call, ast.stmt]] = {}
    for st in stmts:  # outer statements come first: the last one holding a call is its own
        innermost.update({id(n): (n, st) for n in ast.walk(st) if isinstance(n, ast.Call)})
    out = []
    for call, st in innermost.values():
        alias = _aliased(call, bound)
        if alias is not None:
            kind, assign = bound[alias]
            if not _opposite_branches(getattr(scope, "body", []), assign, st):
                # (`if use_full: fn = k_full` ... `if use_full: fn[grid](...)` is k_full's alone)
                _rewrite(call, kind, assign, kernel)
                _assert_branch(scope, assign, st, kernel)
                out.append(call)
    return out


def _rewrite(call: ast.Call, kind: str, assign: ast.Assign, kernel: str) -> None:
    """`fn(...)` of `fn = kernel[grid]`, or `fn[grid](...)` / `table[k][grid](...)`, made
    `kernel[grid](...)` in place (in the copy)."""
    target = ast.copy_location(ast.Name(kernel, ast.Load()), call.func)
    if kind == "launcher":
        grid = copy.deepcopy(assign.value.slice)  # type: ignore[attr-defined]
        call.func = ast.copy_location(ast.Subscript(target, grid, ast.Load()), call.func)
    else:
        call.func.value = target  # type: ignore[attr-defined]


def _aliased(call: ast.Call, bound: dict[str, tuple[str, ast.Assign]]) -> str | None:
    """The alias `call` launches through, if any: `fn(...)`, `fn[grid](...)`, `table[k][grid](...)`."""
    f = call.func
    if isinstance(f, ast.Name) and bound.get(f.id, ("",))[0] == "launcher":
        return f.id
    if not isinstance(f, ast.Subscript):
        return None
    if isinstance(f.value, ast.Name) and bound.get(f.value.id, ("",))[0] == "name":
        return f.value.id
    inner = f.value
    if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name):
        if bound.get(inner.value.id, ("",))[0] == "table":
            return inner.value.id
    return None


def _assert_branch(scope: ast.AST, assign: ast.Assign, launch: ast.stmt, kernel: str) -> None:
    """`if BT == 16: fn = kernel` ... `fn[grid](...)`, or `fn = kernel if BT == 32 else other`:
    put `assert BT == 16` (`BT == 32`) before the launch statement, when the test is an `==`
    and the launch is not inside that branch."""
    test = _branch_test(getattr(scope, "body", []), assign)
    value = assign.value
    if isinstance(value, ast.IfExp) and _name_of(value.body) == kernel != _name_of(value.orelse):
        test = value.test if _is_eq(value.test) else test
    if test is None or _holds(launch, test):
        return
    for block in _blocks(scope):
        if launch in block:
            i = block.index(launch)
            block.insert(i, ast.copy_location(ast.Assert(copy.deepcopy(test), None), launch))
            return


def _is_eq(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and all(isinstance(o, ast.Eq) for o in test.ops)


def _branch_test(stmts: list[ast.stmt], target: ast.stmt) -> ast.expr | None:
    """The `==` test of the innermost `if`/`elif` whose body holds `target`."""
    for st in stmts:
        if isinstance(st, ast.If):
            if target in st.body:
                return st.test if _is_eq(st.test) else None
            for block in (st.body, st.orelse):
                found = _branch_test(block, target)
                if found is not None:
                    return found
        elif hasattr(st, "body") and not isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found = _branch_test([*st.body, *(getattr(st, "orelse", []) or [])], target)  # type: ignore[attr-defined]
            if found is not None:
                return found
    return None


def _opposite_branches(stmts: list[ast.stmt], assign: ast.stmt, launch: ast.stmt) -> bool:
    """Are the alias's binding and the launch on opposite sides of two `if`s of one test (the
    same text)? Then the launch runs where the alias names another kernel."""
    a, b = _sides(stmts, assign), _sides(stmts, launch)
    return any(key in b and b[key] != side for key, side in a.items())


def _sides(stmts: list[ast.stmt], target: ast.stmt) -> dict[str, bool]:
    """Test text -> the side (True: body, False: else) of each `if` on the way to `target`."""
    for st in stmts:
        if st is target:
            return {}
        if not any(n is target for n in ast.walk(st)):
            continue
        if isinstance(st, ast.If):
            inside = any(n is target for s in st.body for n in ast.walk(s))
            return {ast.dump(st.test): inside, **_sides(st.body if inside else st.orelse, target)}
        for field in ("body", "orelse", "finalbody"):
            block = getattr(st, field, None)
            if isinstance(block, list) and any(n is target for s in block for n in ast.walk(s)):
                return _sides(block, target)
        return {}
    return {}


def _holds(st: ast.stmt, test: ast.expr) -> bool:
    return any(n is test for n in ast.walk(st))


def _blocks(scope: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list of `scope` (the block a launch statement sits in is among them)."""
    out = [scope.body] if hasattr(scope, "body") else []  # type: ignore[attr-defined]
    for st in _own_statements(scope):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(st, field, None)
            if isinstance(block, list) and block:
                out.append(block)
        out.extend(h.body for h in getattr(st, "handlers", []) or [])
    return out
