"""What the code itself says about a loaded index's range, for MB005's severity.

Trusting the caller's contract (token ids below the vocabulary, block-table entries that name
pages) is the default: most loaded indices in real code are correct by construction upstream,
and the kernel cannot tell. The code shows that out-of-range values exist when it names a
sentinel: the kernel compares the index with one somewhere else (`expert == -1`, `tok <
num_valid`, a window shift checked from below only), loads it with a negative `other=`, is
given a sentinel parameter (`ignore_index`), or host code in the same file fills an integer
tensor with a negative value (`torch.full(..., -1)`, `.fill_(-1)`, `t[i] = -1`): padding the
launcher creates. Each piece of evidence is a short phrase the finding quotes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache

from argus.analyzers.module_ast import Place, bfs_merged, module_tree, part_answers, walk_places
from argus.analyzers.rule_reads import host_read

# a scalar kernel parameter that carries a sentinel or the count of valid entries
_SENTINEL_PARAM = re.compile(r"ignore|sentinel|invalid|num_valid|pad_id|padding_idx|pad_token", re.IGNORECASE)
_COUNT_PARAM = re.compile(r"num_valid", re.IGNORECASE)
_FILL_CALLS = {"full", "full_like", "new_full", "fill_", "pad", "masked_fill", "masked_fill_"}


def kernel_side(
    policy_phrases: list[str], source: bytes, kernel: str, index_from: str, addressed: str | None = None
) -> list[str]:
    """Evidence inside the kernel and its file (the interpreter's own comparisons come as
    `policy_phrases`); `addressed` is the tensor the index addresses."""
    index = _module_index(source)
    if index is None:
        return policy_phrases
    func = index.functions.get(kernel)
    out = []
    if func is not None:
        # the interpreter's policies follow data flow loosely (a value computed from the
        # gathered data compared with a float bound); only a comparison of the loaded index
        # itself, or a window shift, is evidence
        out += [p for p in policy_phrases if "window" in p or _compared_directly(func, index_from)]
        out += _negative_other(func, index_from, addressed)
        out += [
            f"the kernel is given the sentinel `{a.arg}`"
            for a in func.args.args
            if _SENTINEL_PARAM.search(a.arg)
            and a.arg != index_from
            and not _bounds_program_id_only(func, a.arg)
        ]
    fills = _host_fills(source, kernel, index_from)
    if fills:
        out.append(f"host code in this file fills the tensor passed as `{index_from}` with {fills[0]}")
    return out


@host_read  # (the kernel cache's second level re-asks it after a host edit)
def _host_fills(source: bytes, kernel: str, index_from: str) -> tuple[str, ...]:
    """The values host code in the file fills the tensor passed as `index_from` with."""
    every_fill = _negative_fills(source)  # (none in most files: then no launch is followed)
    index = _module_index(source) if every_fill else None
    if index is None:
        return ()
    related = _host_names_of(index, kernel, index_from)
    return tuple(value for value, filled in every_fill if filled in related)


@dataclass(frozen=True)
class _ModuleIndex:
    """What `_host_names_of` reads of the module, gathered in one walk per text: it walked the
    whole module several times for every index of every kernel judged, 20-30 ms each on a
    1,000-line file, again after every edit that re-judged a kernel."""

    #: the first function of each name (in `ast.walk` order)
    functions: dict[str, ast.FunctionDef]
    #: kernel name -> (an enclosing function, the launch `kernel[grid](...)`) for every
    #: function the launch lies in (a nested function's launch is its enclosing one's too)
    launches: dict[str, list[tuple[ast.FunctionDef, ast.Call]]]
    #: called name (`f(...)`, `x.f(...)`) -> its calls
    calls: dict[str, list[ast.Call]]
    #: assigned name -> the names in the values assigned to it
    sources: dict[str, set[str]]


@lru_cache(maxsize=8)
def _module_index(source: bytes) -> _ModuleIndex | None:
    tree = module_tree(source)
    if tree is None:
        return None
    functions: dict[str, ast.FunctionDef] = {}
    launches: dict[str, list[tuple[ast.FunctionDef, ast.Call]]] = {}
    calls: dict[str, list[ast.Call]] = {}
    sources: dict[str, set[str]] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef):
            functions.setdefault(n.name, n)
            for inner in ast.walk(n):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Subscript):
                    kernel = _name(inner.func.value)
                    if kernel is not None:
                        launches.setdefault(kernel, []).append((n, inner))
        elif isinstance(n, ast.Call):
            name = _name(n.func)
            if name is not None:
                calls.setdefault(name, []).append(n)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                for target in ast.walk(t):
                    if isinstance(target, ast.Name):
                        sources.setdefault(target.id, set()).update(_names(n.value))
    return _ModuleIndex(functions, launches, calls, sources)


def _host_names_of(index: _ModuleIndex, kernel: str, param: str) -> set[str]:
    """Host names that may hold the tensor passed as `param`: the names in its argument at
    each launch of `kernel` in the file, followed back through assignments (`ids =
    padded.view(-1)`), and the parameter's own name with and without `_ptr` (a launch in
    another module passes it under the name the kernel gives it). A fill of any other tensor
    says nothing of this index's range (K18)."""
    names = {param, param.removesuffix("_ptr")}
    func = index.functions.get(kernel)
    params = [a.arg for a in func.args.args] if func is not None else []
    position = params.index(param) if param in params else None
    for launcher, n in index.launches.get(kernel, []):
        args = [k.value for k in n.keywords if k.arg == param]
        if position is not None and position < len(n.args):
            args.append(n.args[position])
        for a in args:
            names |= _names(a)
            # the launcher's own parameter: what its callers in the file pass there
            for p in _names(a) & {x.arg for x in launcher.args.args}:
                names |= _caller_names(index, launcher, p)
    for _ in range(3):
        names |= {src for name in list(names) for src in index.sources.get(name, ())}
    return names


def _caller_names(index: _ModuleIndex, launcher: ast.FunctionDef, param: str) -> set[str]:
    """Names passed as `param` of `launcher` by its calls in the file."""
    position = [a.arg for a in launcher.args.args].index(param)
    out: set[str] = set()
    for n in index.calls.get(launcher.name, []):
        args = [k.value for k in n.keywords if k.arg == param]
        if position < len(n.args):
            args.append(n.args[position])
        for a in args:
            out |= _names(a)
    return out


def _bounds_program_id_only(func: ast.FunctionDef, param: str) -> bool:
    """A count of valid entries (`num_valid_tokens`) that the kernel compares only with its
    program id (`if pid >= num_valid_tokens: return`) bounds which position a program reads,
    not the values it loads there: no evidence that those values can be out of range. A count
    compared with nothing still counts (a kernel that forgot the test is what MB005 is for)."""
    if not _COUNT_PARAM.search(param):
        return False
    from_pid: set[str] = set()
    for _ in range(4):
        for n in ast.walk(func):
            if isinstance(n, ast.Assign) and (_calls(n.value, "program_id") or _names(n.value) & from_pid):
                if not _calls(n.value, "load"):
                    from_pid |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    sides = []
    for n in ast.walk(func):
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            a, b = n.left, n.comparators[0]
            for x, y in ((a, b), (b, a)):
                if isinstance(x, ast.Name) and x.id == param:
                    sides.append(y)
    return bool(sides) and all(
        _calls(y, "program_id") or (_names(y) and _names(y) <= from_pid) for y in sides
    )


def _calls(e: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Call) and _name(n.func) == name for n in ast.walk(e))


def _names(e: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


def _compared_directly(func: ast.FunctionDef, index_from: str) -> bool:
    """Some comparison in the kernel tests a variable assigned straight from a load of
    `index_from` (through casts: `tok = tl.load(ids_ptr + i).to(tl.int64)`) against a literal
    or a scalar parameter (`tok < num_valid`, `expert == -1`), not against a tile (`cols == idx`)."""
    direct: set[str] = set()
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and _loads_from(n.value, index_from):
            direct |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    params = {a.arg for a in func.args.args}

    def bound(e: ast.expr) -> bool:
        return (
            isinstance(e, ast.Constant)
            or _negative_int(e) is not None
            or (isinstance(e, ast.Name) and e.id in params)
        )

    for n in ast.walk(func):
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            a, b = n.left, n.comparators[0]
            for x, y in ((a, b), (b, a)):
                if isinstance(x, ast.Name) and x.id in direct and bound(y):
                    return True
    return False


def _loads_from(e: ast.expr, index_from: str) -> bool:
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("to", "cast"):
        e = e.func.value
    return (
        isinstance(e, ast.Call)
        and _name(e.func) == "load"
        and bool(e.args)
        and index_from in {x.id for x in ast.walk(e.args[0]) if isinstance(x, ast.Name)}
    )


def _negative_other(func: ast.FunctionDef, index_from: str, addressed: str | None) -> list[str]:
    """`other=-1` on a load of the index: the masked-off lanes hold a sentinel. It is evidence
    unless the index passes through `tl.where(<the load's mask>, ids, 0)` before it addresses
    `addressed` (K26: the kernel puts the sentinel in and takes it out again)."""
    out = []
    for n in ast.walk(func):
        if not (isinstance(n, ast.Call) and _name(n.func) == "load" and n.args):
            continue
        if index_from not in {x.id for x in ast.walk(n.args[0]) if isinstance(x, ast.Name)}:
            continue
        for k in n.keywords:
            v = _negative_int(k.value)
            if k.arg == "other" and v is not None and not _sentinel_lanes_unused(func, n, addressed):
                out.append(f"`{index_from}` is loaded with `other={v}`")
    return out


_MASK_POSITION = {"load": 1, "store": 2}  # tl.atomic_*(ptr, val, mask): 2 as for a store


def _sentinel_lanes_unused(func: ast.FunctionDef, load: ast.Call, addressed: str | None) -> bool:
    """Whether the kernel takes the sentinel it filled the masked-off lanes with out again
    before any access of `addressed`: the loaded value is replaced on those lanes by a
    `tl.where` on the load's mask (or a conjunction or reshape of it), and only the replaced
    value addresses memory. A mask on the access alone does not count: `other=-1` then still
    says the author expects -1 in the data (the earlier sessions' reading, kept)."""
    load_mask = _mask_arg(load, "load")
    if addressed is None or load_mask is None:
        return False
    implied = _implied_by(func, _names(load_mask))
    if not implied:
        return False
    return any(
        isinstance(n, ast.Call) and _name(n.func) == "where" and n.args and _names(n.args[0]) & implied
        for n in ast.walk(func)
    ) and _loaded_value_replaced(func, load, implied)


def _mask_arg(call: ast.Call, name: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == "mask":
            return k.value
    position = _MASK_POSITION.get(name, 2)
    return call.args[position] if len(call.args) > position else None


def _implied_by(func: ast.FunctionDef, roots: set[str]) -> set[str]:
    """Names whose value is the mask `roots` or implies it: a conjunction with it, a reshape,
    broadcast or `[:, None]` of it. A disjunction or a negation implies nothing."""
    out = set(roots)
    for _ in range(4):
        for n in ast.walk(func):
            if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)):
                continue
            v = n.value
            if _names(v) & out and not any(isinstance(x, ast.BitOr | ast.Invert | ast.Not | ast.Or) for x in ast.walk(v)):
                out.add(n.targets[0].id)
    return out


def _loaded_value_replaced(func: ast.FunctionDef, load: ast.Call, implied: set[str]) -> bool:
    """The value the load is assigned to feeds (through assignments) a `tl.where(mask, value,
    ...)` whose mask implies the load's, and only that `where`'s result addresses memory."""
    target = next(
        (n.targets[0].id for n in ast.walk(func)
         if isinstance(n, ast.Assign) and n.value is load and isinstance(n.targets[0], ast.Name)),
        None,
    )
    if target is None:
        return False
    derived = {target}
    for _ in range(4):
        for n in ast.walk(func):
            if (
                isinstance(n, ast.Assign)
                and isinstance(n.targets[0], ast.Name)
                and _names(n.value) & derived
                and not (isinstance(n.value, ast.Call) and _name(n.value.func) == "where")
            ):
                derived.add(n.targets[0].id)
    for n in ast.walk(func):
        if isinstance(n, ast.Call) and _name(n.func) in _MASK_POSITION and n.args and _names(n.args[0]) & derived:
            return False  # a value still holding the sentinel addresses memory
        if isinstance(n, ast.Call) and (_name(n.func) or "").startswith("atomic_") and n.args:
            if _names(n.args[0]) & derived:
                return False
    return True


@lru_cache(maxsize=32)
def _negative_fills(source: bytes) -> tuple[tuple[str, str], ...]:
    """Each negative fill of a tensor in host code, with the name of the tensor it fills:
    the receiver of `.fill_(-1)`, the name a `torch.full(..., -1)` is assigned to, the base
    of `t[i] = -1`."""
    answers = part_answers(source, "negative_fills", _part_negative_fills)
    return () if answers is None else tuple(bfs_merged(answers))


def _part_negative_fills(part: ast.Module) -> list[tuple[Place, tuple[str, str]]]:
    """`_negative_fills` of one part of the module, each with its place in the walk."""
    assigned_to: dict[int, str] = {}
    places = walk_places(part)
    for _, n, _ in places:
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name):
            for inner in ast.walk(n.value):
                assigned_to.setdefault(id(inner), n.targets[0].id)
    found: list[tuple[Place, tuple[str, str]]] = []
    for place, n, _ in places:
        if isinstance(n, ast.Call) and _name(n.func) in _FILL_CALLS:
            values = list(n.args[1:]) + [k.value for k in n.keywords if k.arg in ("fill_value", "value")]
            if _name(n.func) in ("fill_", "masked_fill_") or _name(n.func) == "new_full":
                values = list(n.args) + values
            filled = assigned_to.get(id(n), "")
            if _name(n.func) in ("fill_", "masked_fill_") and isinstance(n.func, ast.Attribute):
                filled = _base_name(n.func.value) or filled
            found += [(place, (f"`{v}`", filled)) for v in (_negative_int(x) for x in values) if v is not None]
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) for t in n.targets):
            v = _negative_int(n.value)
            if v is not None:
                target = next(t for t in n.targets if isinstance(t, ast.Subscript))
                found.append((place, (f"`{v}`", _base_name(target) or "")))
    return found


def _base_name(e: ast.expr) -> str | None:
    while isinstance(e, ast.Subscript | ast.Attribute):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None



def _name(f: ast.expr) -> str | None:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _negative_int(e: ast.expr) -> int | None:
    if (
        isinstance(e, ast.UnaryOp)
        and isinstance(e.op, ast.USub)
        and isinstance(e.operand, ast.Constant)
        and isinstance(e.operand.value, int)
        and not isinstance(e.operand.value, bool)
    ):
        return -e.operand.value
    return None
