"""Whether a tensor the launcher allocates may be written in part before this launch.

`Aqk = torch.empty(...)`, then `intra_token_parallel(q, k, Aqk=Aqk)` (which launches a kernel
writing the diagonal blocks), then `inter_solve_fused[grid](..., Aqk=Aqk)`, which writes the
off-diagonal ones. Coverage is judged one kernel at a time, so the second kernel alone leaves
most of `Aqk` "never written" (GR001). The code does not establish that this kernel must write
the whole tensor once an earlier call of the launcher received it: its coverage is not judged
(issue 12, rule 1). A tensor allocated and then only handed to this launch is judged as
before, and so is one whose earlier use is a `torch.*` call or a method of its own (those do
not write a kernel's part of it)."""

from __future__ import annotations

import ast

from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.nodes import subtree

# call roots that are libraries, not the package's own launchers
_LIBRARIES = frozenset({"torch", "triton", "tl", "math", "np", "numpy", "F", "logger", "logging", "warnings"})
_BUILTINS = frozenset(
    {"len", "int", "float", "bool", "str", "print", "isinstance", "max", "min", "tuple", "list", "dict", "range",
     "getattr", "hasattr", "type", "id", "abs", "sum", "any", "all", "zip", "enumerate", "sorted", "repr"}
)


def passed_before(site: LaunchSite | None, host_name: str) -> bool:
    """Whether the launcher passes `host_name`, before this launch and without rebinding it
    in between, to another kernel launch or to a function of its package."""
    if site is None or site.host_func is None:
        return False
    # asked for every tensor argument by every probe: answered once per launch call and name,
    # kept on the launcher's tree (a rewritten copy of it starts without the answers)
    return on_node(site.host_func, ("passed_before", site.call, host_name), lambda: _passed_before(site, host_name))


def _passed_before(site: LaunchSite, host_name: str) -> bool:
    assert site.host_func is not None
    launch_line = site.call.lineno
    func = site.host_func
    local_names, stores, calls = launcher_index(func)
    rebound = stores.get(host_name, [])
    for n in calls:
        if n is site.call or n.lineno >= launch_line:
            continue
        if not _may_write(n, local_names) or not _receives(n, host_name):
            continue
        end = n.end_lineno or n.lineno
        if not any(end < line < launch_line for line in rebound):
            return True
    return False


def launcher_index(func: ast.FunctionDef) -> tuple[set[str], dict[str, list[int]], list[ast.Call]]:
    """The launcher's local names (parameters and every name it stores), the rows where each is
    stored, and its calls in node order: the same for every launch of every kernel it makes, so
    indexed once per launcher tree (node_memo.py; launch_later.py reads it too)."""
    return on_node(func, "launcher_index", lambda: _launcher_index(func))


def _launcher_index(func: ast.FunctionDef) -> tuple[set[str], dict[str, list[int]], list[ast.Call]]:
    local_names = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    stores: dict[str, list[int]] = {}
    calls: list[ast.Call] = []
    for n in subtree(func):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            local_names.add(n.id)
            stores.setdefault(n.id, []).append(n.lineno)
        elif isinstance(n, ast.Call):
            calls.append(n)
    return local_names, stores, calls


def _may_write(call: ast.Call, local_names: set[str]) -> bool:
    """A kernel launch (`k[grid](...)`) or a call of a function that is not a library's."""
    f = call.func
    if isinstance(f, ast.Subscript):
        return True
    if isinstance(f, ast.Name):
        return f.id not in _BUILTINS
    if isinstance(f, ast.Attribute):
        root = f
        while isinstance(root, ast.Attribute):
            root = root.value  # type: ignore[assignment]
        # a module's function (`ops.solve(...)`), not a method of a local value (`x.copy_(out)`)
        return isinstance(root, ast.Name) and root.id not in _LIBRARIES and root.id not in local_names
    return False


def _receives(call: ast.Call, name: str) -> bool:
    values = [*call.args, *(k.value for k in call.keywords)]
    return any(isinstance(v, ast.Name) and v.id == name for v in values)
