"""A flow-insensitive pre-scan of a kernel body: which parameters are pointers, which sizes are
tiled (compared with `tl.arange` offsets or used as loop bounds), and how loaded integers are
checked (which fixes the contents the interpreter synthesizes for index tensors).
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers.model.nodes import assignment_parts, range_operands, subtree
from argus.analyzers.model.scan_addresses import AddressTerms, address_ranks, pointer_shifts
from argus.analyzers.model.scan_axes import axis_index_keys
from argus.analyzers.model.scan_index import (
    MEMORY_CALLS,
    additive_names,
    call_name,
    calls_of,
    index_subtrees,
    names_of,
    tables,
    unwrap_casts,
)


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
    # the kernel asserts the range (`assert tgt >= 0 and tgt < C`, `tl.device_assert`): every
    # value is a valid index, none is a padding sentinel past `upper`
    asserted: bool = False
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
    # pointer param -> {stride param, or "" for the unit-stride term -> what indexes that axis}
    axis_keys: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    # the `@triton.jit` helpers the kernel calls, by name (model/data_params.py reads them)
    helpers: dict[str, ast.FunctionDef] = field(default_factory=dict)
    # pointer params that are an address's only base somewhere (`tl.load(x)`, `x + offs`): a
    # number the launcher seems to pass for one is a value it did not follow (binder_values.py)
    sole_pointers: set[str] = field(default_factory=set)
    # of `tiled`, the params that only bound unit-step loops (`for p in range(passes)`): a count
    # of iterations, not an extent a block walks (the binder keeps their probe values small)
    counted: set[str] = field(default_factory=set)


def scan_kernel(
    func: ast.FunctionDef, params: list[str], helpers: dict[str, ast.FunctionDef] | None = None
) -> KernelScan:
    """One pass over the kernel (and the helpers it calls): each part below decides one thing."""
    body = _Body.collect(func, helpers)
    pset = set(params)
    deps = _dependencies(body.binds)
    derived = _param_roots(deps, params)
    constexprs = _constexpr_params(func)
    bases = _AddressBases(body.assigns, pset)
    pointers, sole = _pointer_params(body, bases, pset)
    pointers -= constexprs
    loads = _loaded_from(body.assigns, bases, pointers)
    loaded_vars = _loaded_vars(body.assigns)
    loop_vars = {name for n in body.fors for name in names_of(n.target)}
    checks = _Checks(
        pset,
        pointers,
        derived,
        arange_vars=_arange_vars(body.assigns, deps, loaded_vars),
        load_derived=_load_sources(deps, loads, loop_vars),
        pid_vars=_pid_vars(body.assigns, deps, loaded_vars | loop_vars),
    )
    checks.asserted = _asserted_compares(body.nodes)
    for n in body.compares + body.fors:
        checks.visit(n)
    policies = checks.policies
    for p in _prefix_tables(body.calls, bases, pointers, body.assigns):
        policies.setdefault(p, IndexPolicy()).prefix = True
    windows = _lower_only_windows(body.assigns, body.compares, loads, pset, pointers, constexprs)
    for src, start in windows.items():
        pol = policies.setdefault(src, IndexPolicy())
        pol.lower_only, pol.window_start = True, start
    arange_params = _tile_size_params(body.calls, pset)
    ranks = _pointer_ranks(body, pset, pointers, constexprs)
    axes = axis_index_keys(body.assigns, body.calls, body.compares, body.fors, pointers, pset - pointers - constexprs)
    out = KernelScan(pointers, checks.tiled & pset, arange_params, policies, derived, ranks, axes)
    out.helpers = dict(helpers or {})
    out.sole_pointers = sole & pointers
    out.counted = (checks.counted - checks.tiled) & pset
    out.tiled |= out.counted  # (a loop bound is still a size the launch must make)
    return out


def _unit_step(call: ast.Call) -> bool:
    """`range(n)`, `range(a, b)`, `range(a, b, 1)`: one iteration per unit of the bound."""
    operands = range_operands(call)
    if len(operands) <= 2:
        return True
    step = operands[2]
    return isinstance(step, ast.Constant) and step.value == 1


@dataclass
class _Body:
    """The nodes of the kernel and its helpers that the scan's parts look at, by kind, in source
    order (one type test per node), with the subtree index built."""

    nodes: list[ast.AST]
    assigns: list[ast.Assign]
    calls: list[ast.Call]
    fors: list[ast.For]
    compares: list[ast.Compare]
    augassigns: list[ast.AugAssign]

    @property
    def binds(self) -> list[ast.AST]:
        kinds = ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For
        return [n for n in self.nodes if isinstance(n, kinds)]

    @classmethod
    def collect(cls, func: ast.FunctionDef, helpers: dict[str, ast.FunctionDef] | None) -> _Body:
        for table in tables():
            table.clear()
        nodes = list(subtree(func))
        index_subtrees(func)
        for h in (helpers or {}).values():
            nodes += subtree(h)
            index_subtrees(h)
        by_kind: dict[type, list[Any]] = {}
        for n in nodes:
            by_kind.setdefault(type(n), []).append(n)
        kinds = (ast.Assign, ast.Call, ast.For, ast.Compare, ast.AugAssign)
        return cls(nodes, *(by_kind.get(k, []) for k in kinds))


def _dependencies(binds: list[ast.AST]) -> dict[str, set[str]]:
    """Variable -> names on the right of its assignments (and of the loops that bind it)."""
    deps: dict[str, set[str]] = {}
    for n in binds:
        parts = assignment_parts(n)
        if parts is None:
            continue
        targets, value = parts
        for t in targets:
            for name in names_of(t):
                deps.setdefault(name, set()).update(names_of(value))
    return deps


def _param_roots(deps: dict[str, set[str]], params: list[str]) -> dict[str, set[str]]:
    """Variable -> the parameters it is computed from (the transitive closure of `deps`)."""
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
    return derived


def _constexpr_params(func: ast.FunctionDef) -> set[str]:
    return {
        a.arg
        for a in func.args.args + func.args.kwonlyargs
        if a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr")
    }


class _AddressBases:
    """The parameters an address is based on: those reached through additive positions
    (`base + offsets`), following variables to what they were assigned."""

    def __init__(self, assigns: list[ast.Assign], pset: set[str]) -> None:
        self.pset = pset
        self.additive: dict[str, set[str]] = {}
        for n in assigns:
            for t in n.targets:
                for name in names_of(t):
                    self.additive.setdefault(name, set()).update(additive_names(n.value))

    def __call__(self, address: ast.AST | None) -> set[str]:
        return self._bases(additive_names(address), set())

    def _bases(self, names: set[str], seen: set[str]) -> set[str]:
        out: set[str] = set()
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            if name in self.pset:
                out.add(name)
            out |= self._bases(self.additive.get(name, set()), seen)
        return out


def _pointer_params(body: _Body, bases: _AddressBases, pset: set[str]) -> tuple[set[str], set[str]]:
    """Parameters that addresses of memory calls and block pointers are based on, and those of
    them that are some address's only base."""
    found: list[set[str]] = []
    for n in body.calls:
        if call_name(n) in MEMORY_CALLS and n.args:
            found.append(bases(n.args[0]) & pset)
        if call_name(n) in ("make_block_ptr", "make_tensor_descriptor"):
            for kw in n.keywords:
                if kw.arg == "base":
                    found.append(bases(kw.value) & pset)
    # an address holds one pointer: in `loss_ptr + M`, where `loss_ptr` alone is an address
    # elsewhere, `M` is the offset (fla-core's grpo), not a second pointer; nor is what is
    # multiplied (`abs_row_idx * stride` with `abs_row_idx = row_idx + ROW_OFFSET`)
    sure = {next(iter(b)) for b in found if len(b) == 1}
    scaled: set[str] = set()
    for n in body.nodes:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            scaled |= bases(n.left) | bases(n.right)
    pointers: set[str] = set()
    for b in found:
        pointers |= (b & sure) or (b - scaled) or b
    return pointers, sure


def _is_load(value: ast.AST) -> bool:
    value = unwrap_casts(value)
    return isinstance(value, ast.Call) and call_name(value) == "load"


def _loaded_from(assigns: list[ast.Assign], bases: _AddressBases, pointers: set[str]) -> dict[str, str]:
    """Variable -> the pointer parameter its value was loaded from (`x = tl.load(X + offs)`)."""
    loads: dict[str, str] = {}
    for n in assigns:
        value = unwrap_casts(n.value)
        if isinstance(value, ast.Call) and call_name(value) == "load" and value.args:
            src = bases(value.args[0]) & pointers
            for t in n.targets:
                for name in names_of(t):
                    if len(src) == 1:
                        loads[name] = next(iter(src))
    return loads


def _loaded_vars(assigns: list[ast.Assign]) -> set[str]:
    return {name for n in assigns if _is_load(n.value) for t in n.targets for name in names_of(t)}


def _arange_vars(assigns: list[ast.Assign], deps: dict[str, set[str]], loaded_vars: set[str]) -> set[str]:
    """Variables computed from `tl.arange` offsets (a load's result is data, not derived from
    its address)."""
    arange_vars: set[str] = set()
    for n in assigns:
        if "arange" in calls_of(n.value):
            for t in n.targets:
                arange_vars |= names_of(t)
    changed = True
    while changed:
        changed = False
        for v, ds in deps.items():
            if v not in arange_vars and v not in loaded_vars and ds & arange_vars:
                arange_vars.add(v)
                changed = True
    return arange_vars


def _load_sources(
    deps: dict[str, set[str]], loads: dict[str, str], loop_vars: set[str]
) -> dict[str, set[str]]:
    """Which loads a variable's value comes from: a load's result is its tensor's data, not its
    address's; a loop counter is not the data of its bound."""
    load_derived = {
        v: {loads[d] for d in _closure(v, deps, set(loads) | loop_vars) if d in loads} for v in deps
    }
    for v, p in loads.items():
        load_derived[v] = {p}
    return load_derived


@dataclass
class _Checks:
    """What the kernel's comparisons and loop bounds decide: the sizes that are tiled (compared
    with arange offsets, bounding loops) and how loaded integers are checked (`IndexPolicy`)."""

    pset: set[str]
    pointers: set[str]
    derived: dict[str, set[str]]
    arange_vars: set[str]
    load_derived: dict[str, set[str]]
    pid_vars: set[str]
    tiled: set[str] = field(default_factory=set)
    counted: set[str] = field(default_factory=set)  # bounds of unit-step loops (added to `tiled` below)
    policies: dict[str, IndexPolicy] = field(default_factory=dict)
    asserted: set[int] = field(default_factory=set)  # ids of comparisons the kernel asserts

    def visit(self, n: ast.AST) -> None:
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            left, right = names_of(n.left), names_of(n.comparators[0])
            for a, b, bnode in ((left, right, n.comparators[0]), (right, left, n.left)):
                if a & self.arange_vars or "arange" in calls_of(n.left if a is left else n.comparators[0]):
                    for name in b:
                        self._tile(name)
                        for src in self.load_derived.get(name, set()):
                            self.policies.setdefault(src, IndexPolicy()).length = True
                for name in a:
                    for src in self.load_derived.get(name, set()):
                        pol = self.policies.setdefault(src, IndexPolicy())
                        self._bound(pol, n.ops[0], bnode, b)
                        if id(n) in self.asserted and pol.upper is not None:
                            pol.asserted = True
        if isinstance(n, ast.For) and isinstance(n.iter, ast.Call):
            unit = _unit_step(n.iter)
            for a in range_operands(n.iter):
                if unit and isinstance(a, ast.Name) and a.id in self.pset:
                    # the parameter itself bounds the loop; a bound computed from sizes
                    # (`tl.cdiv(K, BLOCK_K)`, a local `num_k`) tiles those sizes
                    self.counted.add(a.id)
                    continue
                for name in names_of(a):
                    self._tile(name)

    def _tile(self, name: str) -> None:
        self.tiled |= self.derived.get(name, {name} & self.pset) - self.pointers

    def _bound(self, pol: IndexPolicy, op: ast.cmpop, bnode: ast.expr, b: set[str]) -> None:
        """A loaded value compared with `bnode`: a sentinel, an upper bound, or work bounds."""
        if isinstance(bnode, ast.Constant) and isinstance(bnode.value, int):
            pol.sentinels.add(int(bnode.value))
            if isinstance(op, ast.GtE | ast.Lt):  # `page >= 0`: -1 is the sentinel
                pol.sentinels.add(int(bnode.value) - 1)
        elif isinstance(bnode, ast.UnaryOp) and isinstance(bnode.operand, ast.Constant):
            with contextlib.suppress(ValueError, TypeError):
                pol.sentinels.add(int(ast.literal_eval(bnode)))
        elif isinstance(bnode, ast.Name) and bnode.id in self.pset and bnode.id not in self.pointers:
            if isinstance(op, ast.Eq | ast.NotEq):
                pol.sentinel_params.add(bnode.id)
            else:
                pol.upper = bnode.id
        elif b & self.pid_vars or "program_id" in calls_of(bnode):
            pol.work_bound = True


def _asserted_compares(nodes: list[ast.AST]) -> set[int]:
    """Comparisons inside an `assert` statement or a `tl.device_assert(...)` call."""
    out: set[int] = set()
    for n in nodes:
        tests: list[ast.AST] = []
        if isinstance(n, ast.Assert):
            tests = [n.test]
        elif isinstance(n, ast.Call) and call_name(n) == "device_assert" and n.args:
            tests = [n.args[0]]
        for t in tests:
            out |= {id(c) for c in ast.walk(t) if isinstance(c, ast.Compare)}
    return out


def _prefix_tables(
    calls: list[ast.Call], bases: _AddressBases, pointers: set[str], assigns: list[ast.Assign]
) -> set[str]:
    """Prefix-sum tables: one pointer read at `X` and at `X + 1` (a group's start and end).
    Not a table of records read at `2 * i` and `2 * i + 1` (kron's `(a_idx, b_idx)` pairs):
    those are two fields of record i, not the bounds of group i."""
    addresses: dict[str, list[ast.expr]] = {}
    for n in calls:
        if call_name(n) == "load" and n.args:
            src = bases(n.args[0]) & pointers
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
        plus_one = [x for x in plus_one if not _strided_record(x, assigns)]
        if plus_one:
            shapes = {ast.dump(a) for a in addrs}
            if any(ast.dump(x) in shapes for x in plus_one):
                prefix_tables.add(p)
    return prefix_tables


def _strided_record(address: ast.expr, assigns: list[ast.Assign]) -> bool:
    """Is a term of `address` a program's record index: `i * 2` (or a name assigned it,
    `offset = batch_id * 2`) of a scalar `i`? A tile of pairs (`tl.arange(0, B) * 2`) is left
    as it was read before."""
    values = {a.targets[0].id: a.value for a in assigns if len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)}
    terms = [address.left, address.right] if isinstance(address, ast.BinOp) and isinstance(address.op, ast.Add) else [address]
    for t in terms:
        t = values.get(t.id, t) if isinstance(t, ast.Name) else t
        if isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult) and not _tiled(t, values):
            if any(isinstance(c, ast.Constant) and type(c.value) is int and c.value >= 2 for c in (t.left, t.right)):
                return True
    return False


def _tiled(e: ast.expr, values: dict[str, ast.expr]) -> bool:
    """Does `e` (or a name it reads, one assignment back) hold a `tl.arange`?"""
    for n in ast.walk(e):
        if isinstance(n, ast.Call) and call_name(n) == "arange":
            return True
        if isinstance(n, ast.Name) and n.id in values:
            if any(isinstance(c, ast.Call) and call_name(c) == "arange" for c in ast.walk(values[n.id])):
                return True
    return False


def _tile_size_params(calls: list[ast.Call], pset: set[str]) -> set[str]:
    """Parameters that size a `tl.arange` or a tile shape (kept powers of two by the binder)."""
    arange_params: set[str] = set()
    for n in calls:
        if call_name(n) in ("arange", "zeros", "full", "make_block_ptr", "make_tensor_descriptor"):
            for a in list(n.args) + [k.value for k in n.keywords]:
                arange_params |= names_of(a) & pset
    return arange_params


def _pointer_ranks(body: _Body, pset: set[str], pointers: set[str], constexprs: set[str]) -> dict[str, int]:
    runtime_ints = pset - pointers - constexprs
    values = {
        n.targets[0].id: n.value
        for n in body.assigns
        if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    }
    shifts = pointer_shifts(list(body.augassigns))
    return address_ranks(body.calls, AddressTerms(values, pointers, runtime_ints, shifts))


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
        if "program_id" in calls_of(n.value):
            for t in n.targets:
                out |= names_of(t)
    changed = True
    while changed:
        changed = False
        for v, ds in deps.items():
            if v not in out and v not in stop and ds & out:
                out.add(v)
                changed = True
    return out
