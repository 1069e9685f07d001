"""Whether a later launch of the same launcher writes into a tensor this launch writes.

gcu300's `masked_select`: `part_sums = torch.empty(np + 1)`, then `mask_part_sum_kernel[(np,)]`
writes `part_sums[:np]` and `mask_part_sum_atomic_add_kernel[(1,)]` writes `part_sums[np]`
before the host reads `part_sums[-1]`. Coverage is judged one kernel at a time, so the first
kernel alone leaves an element "never written" (GR001). Once a later launch of the launcher
receives the tensor, without the name rebound in between, and its kernel stores through the
parameter it receives, the code does not establish that this kernel must write it whole: its
coverage is not judged (as for an earlier call, launch_shared.py). A later kernel that only
reads the tensor changes nothing: this kernel's coverage is judged as before."""

from __future__ import annotations

import ast
import functools
import textwrap

from argus.analyzers.frontend.text_memo import by_text
from argus.analyzers.model.launch_shared import launcher_index
from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.nodes import subtree
from tree_sitter import Node

# kernel name -> (its parameters in order, the parameters it stores or atomically writes through)
KernelWrites = dict[str, tuple[tuple[str, ...], frozenset[str]]]

_WRITES = frozenset({"store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas",
                     "atomic_and", "atomic_or", "atomic_xor"})


def module_kernel_writes(kernels: list[tuple[str, str]]) -> KernelWrites:
    """(name, source text) of each kernel of a module -> what `kernel_writes` finds of each."""
    out: KernelWrites = {}
    for name, text in kernels:
        found = kernel_writes(name, text)
        if found is not None:
            out[name] = found
    return out


def subscripted_names(node: Node) -> frozenset[str]:
    """The names subscripted in a tree-sitter `node` (a launch's `kernel[grid]` among them):
    the kernels a launcher may launch, whose texts its cache key then holds (once per text of
    the launcher: frontend/text_memo.py)."""
    return by_text("subscripted_names", node, lambda: _subscripted_names(node))


def _subscripted_names(node: Node) -> frozenset[str]:
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "subscript":
            value = n.child_by_field_name("value")
            if value is not None and value.type == "identifier" and value.text is not None:
                out.add(value.text.decode())
        stack.extend(n.children)
    return frozenset(out)


@functools.lru_cache(maxsize=256)
def kernel_writes(name: str, text: str) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """One kernel's parameters and the ones its stores' addresses are based on: the names an
    address is formed from, followed through the kernel's assignments (`p = out + offs`,
    `out += row * stride`), less those only inside a load (an index table read). Kept per
    text (an immutable answer): every check of a file asks it for each of its kernels, and the
    cache key of a kernel launched beside it holds it (module_view.py)."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return None
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if func is None:
        return None
    params = tuple(a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs)
    sources: dict[str, set[str]] = {}
    for n in subtree(func):
        if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    sources.setdefault(t.id, set()).update(_address_names(n.value))
    stored: set[str] = set()
    for n in subtree(func):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _WRITES and n.args:
            stored |= _closure(_address_names(n.args[0]), sources)
    return params, frozenset(stored & set(params))


def _address_names(e: ast.expr) -> set[str]:
    """Names an address expression is formed from, outside the loads it contains."""
    out: set[str] = set()
    todo: list[ast.AST] = [e]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "load"):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _closure(names: set[str], sources: dict[str, set[str]]) -> set[str]:
    out, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo += sources.get(n, ())
    return out


def written_later(site: LaunchSite | None, host_name: str) -> bool:
    """Whether a launch after this one in the launcher, with `host_name` not rebound in
    between, passes it to a parameter its kernel writes through."""
    if site is None or site.host_func is None or not site.kernel_writes:
        return False
    # kept on the launcher's tree per launch call and name; the answer also reads the module's
    # kernels' writes, so it is reused only while those are the same table (node_memo.py)
    return on_node(
        site.host_func, ("written_later", site.call, host_name), lambda: _written_later(site, host_name),
        site.kernel_writes,
    )


def _written_later(site: LaunchSite, host_name: str) -> bool:
    assert site.host_func is not None
    line = site.call.lineno
    _, stores, calls = launcher_index(site.host_func)
    rebound = stores.get(host_name, [])
    for n in calls:
        if not (isinstance(n.func, ast.Subscript) and n.lineno > line):
            continue
        kernel = n.func.value.id if isinstance(n.func.value, ast.Name) else None
        params, writes = site.kernel_writes.get(kernel or "", ((), frozenset()))
        if not _receives_into(n, host_name, params, writes):
            continue
        if not any(line < r < n.lineno for r in rebound):
            return True
    return False


def _receives_into(call: ast.Call, name: str, params: tuple[str, ...], writes: frozenset[str]) -> bool:
    """`call` passes `name` to one of the `writes` parameters (by position or keyword)."""
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Name) and a.id == name and i < len(params) and params[i] in writes:
            return True
    return any(isinstance(k.value, ast.Name) and k.value.id == name and k.arg in writes for k in call.keywords)
