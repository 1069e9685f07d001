"""Whether a kernel is ever told the extent of the axis a bounds finding overruns.

`N, M = mix.shape` in the launcher, then `kernel[grid](mix, ..., N=N, HC=HC)`: the kernel
indexes `mix`'s columns up to `HC * HC + 2 * HC` and is never given `M`, so it cannot compare
with it. Its indexing states a relation between the sizes it is given and the one it is not
(`M == HC * HC + 2 * HC`), which the caller guarantees (an assert in the forward, the model's
construction); the probes choose `M` freely and read past it. What such a read shows rests on
the probes' choice, not on the code (issue 12, rule 1; cause K27): it is a hint naming the
assumption. Where the launch passes the extent (as an argument, in a value computed from it,
or in the grid, `cdiv(M, BLOCK)`), the kernel was told and the bound is judged as before.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from argus.analyzers.interp.facts import OutOfBounds, Uncovered
from argus.analyzers.module_ast import module_tree
from argus.analyzers.rule_reads import host_read


def untold_axis(fact: OutOfBounds | Uncovered, source: bytes, kernel: str, params: set[str]) -> str | None:
    """The launcher's name of an axis of the tensor that no launch of `kernel` in the file
    tells the kernel (nor a kernel parameter of that name); None when every axis is told,
    unnamed, or no launch is in the file. Any such axis counts, not only the one the lane's
    coordinates seem to overrun: an overrun of a trailing axis wraps into the next row, and
    the flat offset cannot say which axis the kernel's index outgrew. A kernel that loads
    integer data (prefix sums, indices) may learn an extent from it: not judged so. An axis labelled with a
    size whose extent is not that size's value (`scale.view(-1, dim)` labelled `n_rows` but
    holding the scale's own rows) is not told by passing that size."""
    if fact.int_data:
        return None  # extents it learns from data (`cu_seqlens`, offsets) are told that way
    named = [s for s in fact.symbols if s and not s.startswith("_") and s.isidentifier()]
    if not named or len(named) != len(fact.symbols):
        return None  # an axis of a size the probes made up, not the launcher's
    told = _told_names(source, kernel)
    if told is None:
        return None
    bound = _bound_in_launchers(source, kernel)
    sizes = _sizes(fact.probe.sizes or "")
    for s, extent in zip(fact.symbols, fact.shape or [None] * len(fact.symbols), strict=False):
        relabelled = extent is not None and s in sizes and sizes[s] != extent
        # only a size the launching function itself names and then withholds is untold: a name
        # bound elsewhere (an autograd forward's `N, C = x.shape` read in backward through
        # `ctx`, where the grid is `x.shape[0]`) says nothing about what this launch passes
        if relabelled or (s not in told and s not in params and s in bound):
            return s
    return None


def parsed_module(source: bytes) -> ast.Module | None:
    """The launcher module's syntax tree, parsed once per text for every stage that reads it
    (module_ast.py); read-only for its callers. None: it does not parse."""
    return module_tree(source)


@host_read  # (the kernel cache's second level re-asks it after a host edit)
@lru_cache(maxsize=64)
def _bound_in_launchers(source: bytes, kernel: str) -> frozenset[str]:
    """Names assigned (or taken as parameters) in the functions that launch `kernel`."""
    tree = parsed_module(source)
    if tree is None:
        return frozenset()
    out: set[str] = set()
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        if not any(_launches(n, kernel) for n in ast.walk(func)):
            continue
        out |= {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
        out |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return frozenset(out)


def untold_note(axis: str) -> str:
    return (
        f"reported as a hint: the launch never gives the kernel the extent of `{axis}`, so what it "
        f"indexes there rests on the caller relating that extent to the sizes it does give"
    )


def _sizes(text: str) -> dict[str, int]:
    out = {}
    for part in text.split():
        name, _, value = part.partition("=")
        if value.lstrip("-").isdigit():
            out[name] = int(value)
    return out


@host_read  # (the kernel cache's second level re-asks it after a host edit)
@lru_cache(maxsize=64)
def _told_names(source: bytes, kernel: str) -> frozenset[str] | None:
    """Every name a launch of `kernel` in the file passes (its arguments and grid) and,
    through the launcher's assignments, every name those are computed from. None without a
    launch in the file (the sizes are not the launcher's then)."""
    tree = parsed_module(source)
    if tree is None:
        return None
    told: set[str] = set()
    launched = False
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        calls = [n for n in ast.walk(func) if _launches(n, kernel)]
        if not calls:
            continue
        launched = True
        names: set[str] = set()
        for call in calls:
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript)
            for e in (call.func.slice, *call.args, *(k.value for k in call.keywords)):
                names |= _names(e)
        sources = _assignment_sources(func)
        for _ in range(6):
            grown = names | {s for n in names for s in sources.get(n, ())}
            if grown == names:
                break
            names = grown
        told |= names | _unpacked_from_whole_shapes(func, names, calls) | _tested_names(func, calls)
    return frozenset(told) if launched else None


def _tested_names(func: ast.AST, calls: list[ast.Call]) -> set[str]:
    """Names an `if` the launch sits under or an assert of the launcher tests (`if hc == 4:`):
    the code fixes or bounds them there, which tells the kernel as much as an argument."""
    out: set[str] = set()
    launch_ids = {id(c) for c in calls}
    for n in ast.walk(func):
        encloses = isinstance(n, ast.If) and any(id(x) in launch_ids for b in n.body for x in ast.walk(b))
        if isinstance(n, ast.Assert) or encloses:
            out |= _names(n.test)  # type: ignore[attr-defined]
    return out


_WHOLE_SIZE_CALLS = frozenset({"numel", "nelement", "size"})


def _unpacked_from_whole_shapes(func: ast.AST, told: set[str], calls: list[ast.Call]) -> set[str]:
    """The names unpacked from a tensor's shape (`a, b, c = x.shape`) whose whole size the
    launch passes another way (`n = x.numel()`, a loop over `x.shape[i]`, `math.prod(x.shape)`):
    the kernel is told their product, so each of them counts as told."""
    whole: set[str] = set()
    unpacked: dict[str, str] = {}
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple):
            t = _shape_owner(n.value)
            if t is not None:
                unpacked |= {e.id: t for e in n.targets[0].elts if isinstance(e, ast.Name)}
            continue
        if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Name) and t.id in told for t in targets):
                whole |= _whole_sizes(n.value)
    for c in calls:
        for e in (c.func.slice, *c.args, *(k.value for k in c.keywords)):  # type: ignore[attr-defined]
            whole |= _whole_sizes(e)
    return {name for name, t in unpacked.items() if t in whole}


def _shape_owner(e: ast.expr) -> str | None:
    if isinstance(e, ast.Attribute) and e.attr == "shape" and isinstance(e.value, ast.Name):
        return e.value.id
    return None


def _whole_sizes(e: ast.AST) -> set[str]:
    """Tensors whose whole shape or element count `e` reads."""
    out = set()
    for n in ast.walk(e):
        owner = _shape_owner(n) if isinstance(n, ast.expr) else None
        if owner is not None:
            out.add(owner)
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in _WHOLE_SIZE_CALLS
            and isinstance(n.func.value, ast.Name)
            and not n.args
        ):
            out.add(n.func.value.id)
    return out


def _launches(n: ast.AST, kernel: str) -> bool:
    if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)):
        return False
    v = n.func.value
    return (v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None) == kernel


def _assignment_sources(func: ast.AST) -> dict[str, set[str]]:
    """name -> the names its assigned values read (`grid = (triton.cdiv(M, BLOCK),)`)."""
    out: dict[str, set[str]] = {}
    for n in ast.walk(func):
        if isinstance(n, ast.Assign):
            targets, value = n.targets, n.value
        elif isinstance(n, ast.AnnAssign | ast.AugAssign) and n.value is not None:
            targets, value = [n.target], n.value
        else:
            continue
        read = _names(value)
        for t in targets:
            for x in ast.walk(t):
                if isinstance(x, ast.Name):
                    out.setdefault(x.id, set()).update(read)
    return out


def _names(e: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
