"""Whether an output a kernel leaves partly unwritten is a scratch buffer of its launcher.

`delta_acc = q.new_empty(B, T, HQ, NS)` is passed to one kernel, which writes the snapshots of
the causal triangle, and then to a second kernel, which reads them there; the launcher never
returns it nor hands it to anything else. Which elements matter is then the second kernel's
reading, which GR001 does not see: what the first leaves unwritten is not shown to be read
(issue 12, rule 1; cause K30). Such a finding is a hint naming the buffer's consumer. An output
the launcher returns, saves or passes to any other call keeps its error.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from argus.analyzers.rule_reads import host_read
from argus.analyzers.rules.untold_extent import parsed_module

_ALLOCATORS = frozenset({"empty", "empty_like", "new_empty", "empty_strided"})
_HARMLESS_ATTRS = frozenset({"stride", "shape", "size", "dtype", "device", "numel", "dim", "ndim"})


@host_read  # (the kernel cache's second level re-asks it after a host edit)
def scratch_consumer(source: bytes, kernel: str, param: str, params: tuple[str, ...]) -> str | None:
    """The kernel a later launch passes the buffer behind `param` of `kernel` to, when that
    buffer is allocated uninitialized in the launcher and only ever launched with; else None."""
    return _scratch_consumer(source, kernel, param, params)


@lru_cache(maxsize=128)
def _scratch_consumer(source: bytes, kernel: str, param: str, params: tuple[str, ...]) -> str | None:
    tree = parsed_module(source)
    if tree is None:
        return None
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        launches = [n for n in ast.walk(func) if _launched(n) is not None]
        own = [c for c in launches if _launched(c) == kernel]
        if len(own) != 1:
            continue
        name = _argument_name(own[0], param, params)
        if name is None or not _allocated_empty(func, name):
            continue
        later = [
            c for c in launches
            if c is not own[0] and c.lineno > own[0].lineno and name in _launch_arg_names(c)
        ]
        if later and _only_launched(func, name, launches):
            return _launched(later[0])
    return None


def _launched(n: ast.AST) -> str | None:
    """`kernel[grid](...)` -> "kernel"."""
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
        v = n.func.value
        return v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None
    return None


def _argument_name(call: ast.Call, param: str, params: tuple[str, ...]) -> str | None:
    arg = next((k.value for k in call.keywords if k.arg == param), None)
    if arg is None and param in params and params.index(param) < len(call.args):
        arg = call.args[params.index(param)]
    return arg.id if isinstance(arg, ast.Name) else None


def _launch_arg_names(call: ast.Call) -> set[str]:
    return {a.id for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name)}


def _allocated_empty(func: ast.FunctionDef, name: str) -> bool:
    assigns = [
        n for n in ast.walk(func)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
    ]
    return len(assigns) == 1 and _is_allocation(assigns[0].value)


def _is_allocation(e: ast.expr) -> bool:
    return isinstance(e, ast.Call) and (
        (isinstance(e.func, ast.Attribute) and e.func.attr in _ALLOCATORS)
        or (isinstance(e.func, ast.Name) and e.func.id in _ALLOCATORS)
    )


def _only_launched(func: ast.FunctionDef, name: str, launches: list[ast.Call]) -> bool:
    """Every read of `name` is a launch argument or a size or stride query: it is not returned,
    saved, viewed or passed to anything else."""
    allowed: set[int] = set()
    for c in launches:
        allowed |= {id(a) for a in (*c.args, *(k.value for k in c.keywords)) if isinstance(a, ast.Name)}
    for n in ast.walk(func):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name:
            if n.attr in _HARMLESS_ATTRS:
                allowed.add(id(n.value))
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in allowed:
            return False
    return True
