"""A flow-insensitive pre-scan of a kernel body: which parameters are pointers, which sizes are
tiled (compared with `tl.arange` offsets or used as loop bounds), and how loaded integers are
checked (which fixes the contents the interpreter synthesizes for index tensors).
"""

from __future__ import annotations

import ast
import contextlib
import threading
from dataclasses import dataclass, field

from argus.analyzers.interp.ops import op_names
from argus.analyzers.model.nodes import subtree

# calls whose first argument is an address over pointer parameters (from the op registry)
MEMORY_CALLS = op_names(lambda op: op.takes_pointer)


@dataclass
class IndexPolicy:
    """How to synthesize the contents of an integer tensor the kernel loads from."""

    upper: str | None = None  # contents in [0, upper] (upper itself is the padding sentinel)
    sentinels: set[int] = field(default_factory=set)
    sentinel_params: set[str] = field(default_factory=set)  # `target == ignore_index`
    work_bound: bool = False  # compared with program-id arithmetic: must not cut work
    length: bool = False  # compared with tl.arange offsets: a length (of a row, a sequence)
    prefix: bool = False  # read at i and i + 1: offsets of groups (cu_seqlens, expert starts)
    # shifted into a window (`local = ids - vocab_start`) and bounded there from below only:
    # such a check does not cover the index (its upper end is open)
    lower_only: bool = False
    window_start: str | None = None  # the runtime offset of that window (`vocab_start`)


@dataclass
class KernelScan:
    pointers: set[str]
    tiled: set[str]  # runtime params compared with arange offsets or bounding loops
    arange_params: set[str]  # constexpr params that size a tl.arange or a tile shape
    policies: dict[str, IndexPolicy]
    derived: dict[str, set[str]]  # variable -> params it is computed from
    # pointer param -> rank its addresses imply: one per stride param multiplied in, plus one
    # for a unit-stride term (`base + rows * stride_t + head * stride_h + offs_d`: 3)
    address_ranks: dict[str, int] = field(default_factory=dict)


_LOCAL = threading.local()  # per-thread subtree index: the language server checks off its loop


def _tables() -> tuple[dict[int, frozenset[str]], dict[int, frozenset[str]]]:
    if not hasattr(_LOCAL, "names"):
        _LOCAL.names, _LOCAL.calls = {}, {}
    return _LOCAL.names, _LOCAL.calls


def _index(root: ast.AST) -> None:
    """Names and call names under every node of `root`, in one post-order pass (the scan asks
    these of the same subtrees many times). A node with one named child shares its set."""
    names_t, calls_t = _tables()
    empty: frozenset[str] = frozenset()

    def visit(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
        names = calls = empty
        for fname in node._fields:
            v = getattr(node, fname, None)
            kids = v if isinstance(v, list) else (v,)
            for c in kids:
                if not isinstance(c, ast.AST):
                    continue
                n2, c2 = visit(c)
                if n2:
                    names = n2 if not names else names | n2
                if c2:
                    calls = c2 if not calls else calls | c2
        if isinstance(node, ast.Name):
            names = names | {node.id}
        elif isinstance(node, ast.Call):
            calls = calls | {_call_name(node)}
        names_t[id(node)] = names
        calls_t[id(node)] = calls
        return names, calls

    visit(root)


def _names(node: ast.AST) -> set[str]:
    got = _tables()[0].get(id(node))
    return set(got) if got is not None else {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls(node: ast.AST) -> frozenset[str]:
    got = _tables()[1].get(id(node))
    return (
        got
        if got is not None
        else frozenset(_call_name(c) for c in ast.walk(node) if isinstance(c, ast.Call))
    )


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


def scan_kernel(
    func: ast.FunctionDef, params: list[str], helpers: dict[str, ast.FunctionDef] | None = None
) -> KernelScan:
    for table in _tables():
        table.clear()
    body_nodes = list(subtree(func))
    _index(func)
    for h in (helpers or {}).values():
        body_nodes += subtree(h)
        _index(h)
    # the node kinds each pass below looks at, in source order (one type test per node)
    by_kind: dict[type, list[ast.AST]] = {}
    for n in body_nodes:
        by_kind.setdefault(type(n), []).append(n)
    assigns: list[ast.Assign] = by_kind.get(ast.Assign, [])  # type: ignore[assignment]
    calls: list[ast.Call] = by_kind.get(ast.Call, [])  # type: ignore[assignment]
    fors: list[ast.For] = by_kind.get(ast.For, [])  # type: ignore[assignment]
    binds = [n for n in body_nodes if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For)]
    # variable -> names on the right of its assignments (transitively closed below)
    deps: dict[str, set[str]] = {}
    for n in binds:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(n, ast.Assign):
            targets, value = n.targets, n.value
        elif isinstance(n, ast.AugAssign | ast.AnnAssign) and n.value is not None:
            targets, value = [n.target], n.value
        elif isinstance(n, ast.For):
            targets, value = [n.target], n.iter
        for t in targets:
            for name in _names(t):
                deps.setdefault(name, set()).update(_names(value) if value is not None else set())
    derived: dict[str, set[str]] = {}
    pset = set(params)

    def roots(v: str, seen: set[str]) -> set[str]:
        if v in derived:
            return derived[v]
        if v in seen:
            return set()
        seen.add(v)
        out = {v} & pset
        for d in deps.get(v, ()):
            out |= roots(d, seen)
        return out

    for v in list(deps) + params:
        derived[v] = roots(v, set())

    # pointers: parameters reached through additive positions of addresses (`base + offsets`)
    additive: dict[str, set[str]] = {}
    for n in assigns:
        for t in n.targets:
            for name in _names(t):
                additive.setdefault(name, set()).update(_additive_names(n.value))

    def bases(names: set[str], seen: set[str]) -> set[str]:
        out: set[str] = set()
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            if name in pset:
                out.add(name)
            out |= bases(additive.get(name, set()), seen)
        return out

    pointers: set[str] = set()
    loads: dict[str, str] = {}  # variable -> pointer param it was loaded from
    arange_vars: set[str] = set()
    for n in calls:
        if _call_name(n) in MEMORY_CALLS and n.args:
            pointers |= bases(_additive_names(n.args[0]), set())
        if _call_name(n) in ("make_block_ptr", "make_tensor_descriptor"):
            for kw in n.keywords:
                if kw.arg == "base":
                    pointers |= bases(_additive_names(kw.value), set())
    pointers &= pset
    constexprs = {
        a.arg
        for a in func.args.args + func.args.kwonlyargs
        if a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr")
    }
    pointers -= constexprs
    for n in assigns:
        value = _unwrap_casts(n.value)
        if isinstance(value, ast.Call) and _call_name(value) == "load" and value.args:
            src = bases(_additive_names(value.args[0]), set()) & pointers
            for t in n.targets:
                for name in _names(t):
                    if len(src) == 1:
                        loads[name] = next(iter(src))
        if "arange" in _calls(n.value):
            for t in n.targets:
                arange_vars |= _names(t)
    # prefix-sum tables: one pointer read at `X` and at `X + 1` (a group's start and end)
    addresses: dict[str, list[ast.expr]] = {}
    for n in calls:
        if _call_name(n) == "load" and n.args:
            src = bases(_additive_names(n.args[0]), set()) & pointers
            if len(src) == 1:
                addresses.setdefault(next(iter(src)), []).append(n.args[0])
    prefix_tables = set()
    for p, addrs in addresses.items():
        plus_one = [
            a.left
            for a in addrs
            if isinstance(a, ast.BinOp)
            and isinstance(a.op, ast.Add)
            and isinstance(a.right, ast.Constant)
            and a.right.value == 1
        ]
        if plus_one:
            shapes = {ast.dump(a) for a in addrs}
            if any(ast.dump(x) in shapes for x in plus_one):
                prefix_tables.add(p)
    # close arange-derived variables (a load's result is data, not derived from its address)
    loaded_vars = {
        name
        for n in assigns
        if isinstance(_unwrap_casts(n.value), ast.Call) and _call_name(_unwrap_casts(n.value)) == "load"
        for t in n.targets
        for name in _names(t)
    }
    changed = True
    while changed:
        changed = False
        for v, ds in deps.items():
            if v not in arange_vars and v not in loaded_vars and ds & arange_vars:
                arange_vars.add(v)
                changed = True
    loop_vars = {name for n in fors for name in _names(n.target)}
    # which loads a variable's value comes from: a load's result is its tensor's data, not its
    # address's; a loop counter is not the data of its bound
    load_derived = {
        v: {loads[d] for d in _closure(v, deps, set(loads) | loop_vars) if d in loads} for v in deps
    }
    for v, p in loads.items():
        load_derived[v] = {p}
    pid_vars = _pid_vars(assigns, deps, loaded_vars | loop_vars)

    tiled: set[str] = set()
    policies: dict[str, IndexPolicy] = {}
    for n in by_kind.get(ast.Compare, []) + fors:
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            left, right = _names(n.left), _names(n.comparators[0])
            for a, b, bnode in ((left, right, n.comparators[0]), (right, left, n.left)):
                if a & arange_vars or "arange" in _calls(n.left if a is left else n.comparators[0]):
                    for name in b:
                        tiled |= derived.get(name, {name} & pset) - pointers
                        for src in load_derived.get(name, set()):
                            policies.setdefault(src, IndexPolicy()).length = True
                for name in a:
                    for src in load_derived.get(name, set()):
                        pol = policies.setdefault(src, IndexPolicy())
                        if isinstance(bnode, ast.Constant) and isinstance(bnode.value, int):
                            pol.sentinels.add(int(bnode.value))
                            if isinstance(n.ops[0], ast.GtE | ast.Lt):  # `page >= 0`: -1 is the sentinel
                                pol.sentinels.add(int(bnode.value) - 1)
                        elif isinstance(bnode, ast.UnaryOp) and isinstance(bnode.operand, ast.Constant):
                            with contextlib.suppress(ValueError, TypeError):
                                pol.sentinels.add(int(ast.literal_eval(bnode)))
                        elif isinstance(bnode, ast.Name) and bnode.id in pset and bnode.id not in pointers:
                            if isinstance(n.ops[0], ast.Eq | ast.NotEq):
                                pol.sentinel_params.add(bnode.id)
                            else:
                                pol.upper = bnode.id
                        elif b & pid_vars or "program_id" in _calls(bnode):
                            pol.work_bound = True
        if isinstance(n, ast.For) and isinstance(n.iter, ast.Call):
            for a in n.iter.args:
                for name in _names(a):
                    tiled |= derived.get(name, {name} & pset) - pointers
    for p in prefix_tables:
        policies.setdefault(p, IndexPolicy()).prefix = True
    compares: list[ast.Compare] = by_kind.get(ast.Compare, [])  # type: ignore[assignment]
    windows = _lower_only_windows(assigns, compares, loads, pset, pointers, constexprs)
    for src, start in windows.items():
        pol = policies.setdefault(src, IndexPolicy())
        pol.lower_only, pol.window_start = True, start
    arange_params: set[str] = set()
    for n in calls:
        if _call_name(n) in (
            "arange",
            "zeros",
            "full",
            "make_block_ptr",
            "make_tensor_descriptor",
        ):
            for a in list(n.args) + [k.value for k in n.keywords]:
                arange_params |= _names(a) & pset
    runtime_ints = pset - pointers - constexprs
    values = {
        n.targets[0].id: n.value
        for n in assigns
        if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    }
    shifts = _pointer_shifts(by_kind.get(ast.AugAssign, []))
    address_ranks = _address_ranks(calls, _AddressTerms(values, pointers, runtime_ints, shifts))
    return KernelScan(pointers, tiled & pset, arange_params, policies, derived, address_ranks)


def _address_ranks(calls: list[ast.Call], proto: _AddressTerms) -> dict[str, int]:
    """Pointer param -> the rank its addresses imply (the widest over its memory calls)."""
    ranks: dict[str, int] = {}
    for n in calls:
        if _call_name(n) in MEMORY_CALLS and n.args:
            terms = _AddressTerms(proto.values, proto.pointers, proto.runtime_ints, proto.shifts)
            terms.visit(n.args[0])
            if len(terms.bases) == 1:
                base = next(iter(terms.bases))
                ranks[base] = max(ranks.get(base, 0), len(terms.strides) + (1 if terms.unit else 0))
    return ranks


def _pointer_shifts(augassigns: list[ast.AST]) -> dict[str, list[ast.expr]]:
    """`x_ptr += row * stride_x`: the terms each name is moved by before addresses are formed."""
    shifts: dict[str, list[ast.expr]] = {}
    for n in augassigns:
        if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name):
            shifts.setdefault(n.target.id, []).append(n.value)
    return shifts


class _AddressTerms:
    """The additive terms of an address: its base pointer param, the stride params its terms
    multiply by, and whether one term has no stride (the unit-stride innermost dimension).
    Variables are followed to their (last) assignment."""

    def __init__(
        self,
        values: dict[str, ast.expr],
        pointers: set[str],
        runtime_ints: set[str],
        shifts: dict[str, list[ast.expr]] | None = None,
    ) -> None:
        self.values, self.pointers, self.runtime_ints = values, pointers, runtime_ints
        self.shifts = shifts or {}
        self.bases: set[str] = set()
        self.strides: set[str] = set()
        self.unit = False
        self._seen: set[str] = set()

    def visit(self, e: ast.expr) -> None:
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
            self.visit(e.left)
            self.visit(e.right)
        elif isinstance(e, ast.Name):
            if e.id in self.shifts and f"+{e.id}" not in self._seen:
                self._seen.add(f"+{e.id}")
                for shift in self.shifts[e.id]:
                    self._visit_shift(shift)
            if e.id in self.pointers:
                self.bases.add(e.id)
            elif e.id in self.values and e.id not in self._seen and self._pointer_like(e.id):
                self._seen.add(e.id)
                self.visit(self.values[e.id])
            else:
                self.unit = True
        elif isinstance(e, ast.Subscript):
            self.visit(e.value)
        elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("to", "cast"):
            self.visit(e.func.value)
        elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
            found = _names(e) & self.runtime_ints
            if found:
                self.strides |= found
            else:
                self.unit = True

    def _visit_shift(self, e: ast.expr) -> None:
        """A term a pointer was moved by: only its strided products count (a scalar offset
        such as `row * stride` adds a dimension; a bare offset says nothing of unit stride)."""
        unit = self.unit
        self.visit(e)
        self.unit = unit

    def _pointer_like(self, name: str, visiting: frozenset[str] = frozenset()) -> bool:
        """A variable that holds a pointer (`k_base = K + ...`), not an index."""
        names = _additive_names(self.values[name])
        if names & self.pointers:
            return True
        visiting = visiting | {name}
        return any(n in self.values and n not in visiting and self._pointer_like(n, visiting) for n in names)


def _lower_only_windows(
    assigns: list[ast.Assign],
    compares: list[ast.Compare],
    loads: dict[str, str],
    pset: set[str],
    pointers: set[str],
    constexprs: set[str],
) -> dict[str, str]:
    """Tensors whose loaded ids are shifted by a runtime offset (`local = ids - start`) and
    then compared with a lower bound only (`local >= 0`): the window's upper end is unchecked.
    Maps each to the offset parameter."""
    shifted: dict[str, tuple[str, str]] = {}
    for n in assigns:
        v = n.value
        if (
            isinstance(v, ast.BinOp)
            and isinstance(v.op, ast.Sub)
            and isinstance(v.left, ast.Name)
            and v.left.id in loads
            and isinstance(v.right, ast.Name)
            and v.right.id in pset
            and v.right.id not in pointers | constexprs
        ):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    shifted[t.id] = (loads[v.left.id], v.right.id)
    lower: set[str] = set()
    upper: set[str] = set()
    for n in compares:
        if len(n.ops) != 1:
            continue
        op = n.ops[0]
        for side, expr in (("left", n.left), ("right", n.comparators[0])):
            if not (isinstance(expr, ast.Name) and expr.id in shifted):
                continue
            is_lower = (
                isinstance(op, ast.GtE | ast.Gt) if side == "left" else isinstance(op, ast.LtE | ast.Lt)
            )
            is_upper = (
                isinstance(op, ast.Lt | ast.LtE) if side == "left" else isinstance(op, ast.Gt | ast.GtE)
            )
            if is_lower:
                lower.add(expr.id)
            if is_upper:
                upper.add(expr.id)
    return dict(shifted[v] for v in lower - upper)


def _unwrap_casts(e: ast.AST) -> ast.AST:
    """`tl.load(...).to(tl.int64)` -> the load call."""
    while (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr in ("to", "cast")
        and isinstance(e.func.value, ast.Call)
    ):
        e = e.func.value
    return e


def _additive_names(e: ast.AST | None) -> set[str]:
    """Names in positions where a pointer can sit: operands of + and -, subscripted or
    method-called bases, branches of tl.where; not factors of a product."""
    if e is None:
        return set()
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
        return _additive_names(e.left) | _additive_names(e.right)
    if isinstance(e, ast.Subscript):
        return _additive_names(e.value)
    if isinstance(e, ast.Call):
        name = _call_name(e)
        if name in (
            "multiple_of",
            "max_contiguous",
            "max_constancy",
            "broadcast_to",
            "reshape",
            "view",
            "expand_dims",
            "trans",
        ):
            return _additive_names(e.args[0]) if e.args else set()
        if name == "where" and len(e.args) == 3:
            return _additive_names(e.args[1]) | _additive_names(e.args[2])
        if name == "advance" and e.args:
            return _additive_names(e.args[0])
        if name in ("make_block_ptr", "make_tensor_descriptor"):
            base = e.args[0] if e.args else next((k.value for k in e.keywords if k.arg == "base"), None)
            return _additive_names(base)
    if isinstance(e, ast.IfExp):
        return _additive_names(e.body) | _additive_names(e.orelse)
    return set()


def _closure(v: str, deps: dict[str, set[str]], stop: set[str] | None = None) -> set[str]:
    """Variables `v` is computed from; `stop` ones are reached but not looked through."""
    stop = stop or set()
    seen, stack = set(), [v]
    while stack:
        x = stack.pop()
        if x in stop and x != v:
            continue
        for d in deps.get(x, ()):
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return seen


def _pid_vars(assigns: list[ast.Assign], deps: dict[str, set[str]], stop: set[str] | None = None) -> set[str]:
    """Variables computed from a program id by arithmetic: not through loaded data or loops."""
    stop = stop or set()
    out: set[str] = set()
    for n in assigns:
        if "program_id" in _calls(n.value):
            for t in n.targets:
                out |= _names(t)
    changed = True
    while changed:
        changed = False
        for v, ds in deps.items():
            if v not in out and v not in stop and ds & out:
                out.add(v)
                changed = True
    return out
