"""Abstract evaluation of the host code around a launch `kernel[grid](...)`.

The launcher is never run: its statements are evaluated over *host values* (tensors with
symbolic-then-concrete shapes, ints, floats) just far enough to learn what the launch binds:
which argument is which tensor, with which shape and strides; which sizes are passed; the grid;
the constexpr values. Unknown calls give opaque values, never errors.

Evaluation happens twice. The first pass uses placeholder sizes and records how dimensions
relate (`M, K = a.shape`, `assert K == K2`, `assert D in (64, 128)`, `torch.empty((M, N))`); the
second pass, once per probe, uses concrete sizes chosen for each dimension class.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.errors import HOST_ERRORS, NoLaunch
from argus.analyzers.model.binder_ctx import AttributeTable
from argus.analyzers.model.device_picks import DeviceCount, device_choice, device_query
from argus.analyzers.model.guard_tests import size_fixed_by
from argus.analyzers.model.host_asserts import HostAsserts
from argus.analyzers.model.host_caller_args import mapping_get
from argus.analyzers.model.host_calls import HostCalls
from argus.analyzers.model.host_functions import HostFunction
from argus.analyzers.model.host_guards import HostGuards
from argus.analyzers.model.host_invoke import HostInvoke, UnknownResult
from argus.analyzers.model.host_loops import MAX_ITEMS, HostLoops
from argus.analyzers.model.host_numbers import STRING_METHODS, string_method
from argus.analyzers.model.host_sequences import LIST_METHODS, list_method
from argus.analyzers.model.host_stores import HostStores
from argus.analyzers.model.host_tensor_ops import ELEMENT_BYTES
from argus.analyzers.model.host_values import (
    NEGATED,
    TORCH_DTYPES,
    DimClasses,
    HostTensor,
    KnownTruth,
    Opaque,
    SymInt,
    contiguous_strides,
    dotted_name,
    transpose,
)
from argus.analyzers.model.launch_loops import first_yield_of, loop_text
from argus.analyzers.model.nodes import stored_names, subtree
from argus.analyzers.model.runtime_values import RUNTIME_READS, RunTimeValue, carried, runtime_read


class HostEval(HostStores, HostInvoke, HostLoops, HostGuards, HostAsserts, HostCalls):
    """Evaluates host statements; `bind` maps names to host values. Inside a called host
    function (`call_depth` > 0) returns, raises, loops and undecided branches are followed as
    model/host_invoke.py says."""

    # ---- statements ------------------------------------------------------------------------
    def run_block(self, stmts: list[ast.stmt], stop_at: ast.AST | None = None) -> bool:
        """Run statements until `stop_at` (a node inside) is reached; True when it was reached."""
        for st in stmts:
            if stop_at is not None and self.contains(st, stop_at):
                if isinstance(st, ast.If | ast.With | ast.For | ast.Try):
                    if self._enter_containing(st, stop_at):
                        return True
                return True
            self.stmt(st)
        return False

    def contains(self, st: ast.AST, target: ast.AST) -> bool:
        """Whether `target` lies inside `st`, once per pair for the binder's host runs. The
        entry keeps both nodes: keyed by `id()` alone, an entry outlived a tree the binder
        parsed and dropped (a helper's body, a copied forward), and a new node given the same
        address got its answer (which launch a file's kernels bind then depended on the hash
        seed and on the files checked before it)."""
        key = (id(st), id(target))
        held = self.contains_memo.get(key)
        if held is None or held[0] is not st or held[1] is not target:
            held = self.contains_memo[key] = (st, target, _contains(st, target))
        return held[2]

    def _enter_containing(self, st: ast.stmt, target: ast.AST) -> bool:
        if isinstance(st, ast.If):
            inside = any(self.contains(s, target) for s in st.body)
            if inside and size_fixed_by(st.test):
                self.record_assert(st.test)  # `if hc == 4: kernel[...]`: launched only at hc == 4
            self.launch_guards.append((st.test, inside, self.guard_value(st.test)))
            self._guard_contradicted(st, inside)
            self.note_rank_test(st.test, inside)  # `if x.dim() == 1: kernel[...]` (guard_ranks.py)
            if inside:
                self.note_pin_test(st.test)  # `elif dim == v.ndim - 1: kernel[...]` (guard_pins.py)
            return self.run_block(st.body if inside else st.orelse, target)
        if isinstance(st, ast.With | ast.Try):
            return self.run_block(st.body, target)
        if isinstance(st, ast.For):
            # `for off in range(0, n, step): kernel[...](OFFSET=off)`: the first iteration's
            # launch (its loop variable bound); a loop over values not known leaves it unknown;
            # one whose items are not all known is named for its coverage (launch_loops.py)
            item, every = self._first_item(st.iter)
            self.assign(st.target, item)
            if not every:
                self.launch_loops.append(loop_text(st))
            return self.run_block(st.body, target)
        return True

    def _first_item(self, it: ast.expr) -> tuple[Any, bool]:
        """The loop's first item, and whether its items are all known (a range of plain ints,
        a known sequence) rather than only the first (a range of a size, a generator)."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            bounds = [self.expr(a) for a in it.args]
            if 1 <= len(bounds) <= 3 and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
                try:
                    r = range(*bounds)
                except ValueError:  # a step of 0: the loop raises
                    return Opaque("loop"), True
                every = not any(isinstance(b, SymInt) for b in bounds) and len(r) <= MAX_ITEMS
                if not len(r):
                    raise NoLaunch("the loop holding the launch runs no iteration at these sizes", it)
                return r[0], every
            return Opaque("loop"), True
        if isinstance(it, ast.Call) and (item := first_yield_of(self, it)) is not None:
            return item, False  # `for off, n in iter_chunks(T, ...)`: the generator's first `yield`
        v = self.expr(it)
        return (v[0] if isinstance(v, tuple | list) and v else Opaque("loop")), True

    def stmt(self, st: ast.stmt) -> None:
        if self.call_depth > 0:
            try:
                if self.function_stmt(st):
                    return
            except (*HOST_ERRORS, RecursionError) as exc:
                raise UnknownResult from exc
        try:
            if isinstance(st, ast.Assign):
                v = self.expr(st.value)
                for t in st.targets:
                    self.assign(t, v)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                self.assign(st.target, self.expr(st.value))
            elif isinstance(st, ast.AugAssign):
                cur = self.expr(st.target)
                self.assign(st.target, self.binop(st.op, cur, self.expr(st.value)))
            elif isinstance(st, ast.Assert):
                if self.call_depth == 0:
                    self.note_rank_test(st.test, True)
                self.record_assert(st.test)
            elif isinstance(st, ast.If):
                c = self.expr(st.test)
                if isinstance(c, KnownTruth):
                    c = c.truth  # `w is not None and ...` of a `None` w: false, whatever the rest
                if isinstance(c, Opaque) and self.environment_test(st.test):
                    self.machine_branch(st)
                    return
                if isinstance(c, Opaque):
                    if self.call_depth == 0 and st.body and isinstance(st.body[-1], ast.Raise):
                        # past an undecided refusal the test was false all the same: the ranks
                        # it states hold (`if not can_fuse(gate, value): raise`, guard_ranks.py)
                        self.note_rank_test(st.test, False)
                    if self.call_depth == 0:
                        self.join_branches(st)  # the launcher's own body: both sides, joined
                    else:
                        self.undecided_branch(st)
                    return
                if self.call_depth == 0 and st.body and isinstance(st.body[-1], ast.Raise):
                    self.note_rank_test(st.test, False)  # `if x.dim() < 3: raise` (guard_ranks.py)
                    self.record_refusal(st, bool(c))
                self.run_block(st.body if c else st.orelse)
            elif isinstance(st, ast.FunctionDef):
                self.env[st.name] = ("func", st)
            elif isinstance(st, ast.For | ast.While):
                self.run_loop(st)  # (a loop holding the launch is entered by run_block)
            elif isinstance(st, ast.With):
                self.run_block(st.body)
            elif isinstance(st, ast.Try):
                self.run_block(st.body + st.orelse + st.finalbody)
                self.forget(list(st.handlers))  # what a handler assigns may or may not hold
            elif isinstance(st, ast.Expr):
                self.expr(st.value)
            elif isinstance(st, ast.Delete):
                for t in st.targets:
                    self.delete(t)
        except (*HOST_ERRORS, RecursionError):
            pass

    def environment_test(self, test: ast.expr) -> bool:
        """Whether an undecided test asks about the machine, not the problem: it reads only
        names the launcher does not bind (imported functions and flags: `check_shared_mem`,
        `IS_NVIDIA_HOPPER`, `torch.cuda...`), host functions, and tensors' `.device`."""
        parents: dict[int, ast.AST] = {}
        for n in ast.walk(test):
            for child in ast.iter_child_nodes(n):
                parents[id(child)] = n
        for n in ast.walk(test):
            if not isinstance(n, ast.Name):
                continue
            v = self.env.get(n.id, _UNBOUND)
            if v is _UNBOUND or isinstance(v, HostFunction):
                continue
            up = parents.get(id(n))
            if isinstance(v, HostTensor) and isinstance(up, ast.Attribute) and up.attr in ("device", "is_cuda"):
                continue
            return False
        return True

    def machine_branch(self, st: ast.If) -> None:
        """`if check_shared_mem('hopper'): BV = 64 elif ...`: each side is what the code does on
        some machine. The first side whose assignments are all known is taken (the body, then
        the `else`: `sm_count = 1` kept where the `cuda` side asks the device), like the first
        autotune config; never a value no side gives."""
        sides = [st.body, st.orelse] if st.orelse else [st.body, []]
        for side in sides:
            trial = HostEval(self.dims, self.sizes, self.recording, self.contains_memo)
            trial.env = {k: dict(v) if isinstance(v, dict) else v for k, v in self.env.items()}
            trial.call_depth, trial.storages = self.call_depth, self.storages
            trial.run_block(side)
            if all(not isinstance(trial.env.get(n), Opaque) for n in stored_names(side)):
                break
        else:
            side = st.body
        self.run_block(side)

    def record_refusal(self, st: ast.If, taken: bool) -> None:
        """`if X.shape[1] != W.shape[0]: raise` is `assert X.shape[1] == W.shape[0]` (the
        sizes are related, as an assert relates them); any other refusal over sizes taken at
        the probe's sizes makes the probe no launch."""
        test = st.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq):
            eq = ast.Compare(left=test.left, ops=[ast.Eq()], comparators=test.comparators)
            self.record_assert(ast.copy_location(eq, test))
            return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self.record_assert(test.operand)
            return
        if taken and self.refuses_sizes(st):
            self.broken_asserts.append(st)  # type: ignore[arg-type]  # launch.py words it

    def refuses_sizes(self, st: ast.If) -> bool:
        """`if n_cols > BLOCK_SIZE: raise ...` taken at the probe's sizes: the launcher refuses
        them (like a broken assert), so the probe is no launch. Only a test over sizes counts."""
        if not st.body or not isinstance(st.body[-1], ast.Raise) or self.recording:
            return False
        return any(
            isinstance(self.expr(n), SymInt) or self._rank_read(n)
            for n in ast.walk(st.test)
            if isinstance(n, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
        )

    def _rank_read(self, n: ast.AST) -> bool:
        """`x.dim()` / `x.ndim` of a host tensor: `if x.dim() < 3: raise` taken at the probe's
        rank is a launch the launcher refuses, like a size it refuses."""
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "dim" and not n.args:
            return isinstance(self.expr(n.func.value), HostTensor)
        if isinstance(n, ast.Attribute) and n.attr == "ndim":
            return isinstance(self.expr(n.value), HostTensor)
        return False

    def unify(self, a: Any, b: Any) -> None:
        if isinstance(a, SymInt) and isinstance(b, SymInt):
            self.dims.union(a.sym, b.sym)
        elif isinstance(a, tuple | list) and isinstance(b, tuple | list) and len(a) == len(b):
            for x, y in zip(a, b, strict=True):
                self.unify(x, y)
        elif isinstance(a, SymInt) and isinstance(b, int) and not isinstance(b, bool):
            self.dims.allowed[self.dims.find(a.sym)] = [int(b)]

    # ---- expressions -----------------------------------------------------------------------
    def expr(self, e: ast.expr) -> Any:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            return Opaque(type(e).__name__)
        return m(e)

    def e_Constant(self, e: ast.Constant) -> Any:
        return e.value

    def e_Name(self, e: ast.Name) -> Any:
        if e.id in self.env:
            return self.env[e.id]
        return {"None": None, "True": True, "False": False}.get(e.id, Opaque(e.id))

    def e_Tuple(self, e: ast.Tuple) -> Any:
        items = self.elements(e.elts)
        return tuple(items) if isinstance(items, list) else items

    def e_List(self, e: ast.List) -> Any:
        return self.elements(e.elts)

    def elements(self, elts: list[ast.expr]) -> list[Any] | Opaque:
        """The items of a display or an argument list, `*x.shape` spread out; a starred item
        that is not a known sequence leaves the length unknown, so the whole is opaque."""
        out: list[Any] = []
        for x in elts:
            if isinstance(x, ast.Starred):
                inner = self.expr(x.value)
                if not isinstance(inner, tuple | list):
                    return Opaque("starred")
                out.extend(inner)
            else:
                out.append(self.expr(x))
        return out

    def e_Slice(self, e: ast.Slice) -> Any:
        parts = [None if p is None else self._slice_bound(p) for p in (e.lower, e.upper, e.step)]
        if all(p is None or (isinstance(p, int) and not isinstance(p, bool)) for p in parts):
            return slice(*parts)
        if parts[0] in (None, 0) and isinstance(parts[1], RunTimeValue) and parts[2] in (None, 1):
            return slice(None, parts[1])  # `idx[:out_size]` of a count the run decides (host_calls.py)
        return Opaque("slice")

    def _slice_bound(self, p: ast.expr) -> Any:
        """A slice's bound; `-L` of a size keeps L's class, marked negated (`-sym`), so that
        `ids[:, -L:]` is L positions long in L's class (host_calls.tensor_index)."""
        v = self.expr(p)
        if isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.USub) and isinstance(v, int):
            inner = self.expr(p.operand)
            if isinstance(inner, SymInt):
                return SymInt(v, NEGATED + inner.sym)
        return v

    def e_Dict(self, e: ast.Dict) -> Any:
        return {self.expr(k): self.expr(v) for k, v in zip(e.keys, e.values, strict=True) if k is not None}

    def e_IfExp(self, e: ast.IfExp) -> Any:
        c = self.expr(e.test)
        if isinstance(c, KnownTruth):
            c = c.truth
        if isinstance(c, Opaque):
            if self.call_depth > 0 and not self.environment_test(e.test):
                return Opaque("ifexp")  # a helper's value is never one side picked blindly
            return self.expr(e.body)
        return self.expr(e.body) if c else self.expr(e.orelse)

    def e_BoolOp(self, e: ast.BoolOp) -> Any:
        """`a and b` / `a or b`, short-circuited as Python does: the first known falsy operand
        of an `and` (a known truthy one of an `or`) decides it; before it, an unknown operand
        leaves the value unknown but not its truth (`weight is not None and ...` of a `None`
        weight is false whatever the rest is)."""
        deciding = isinstance(e.op, ast.Or)
        unknown = False
        last: Any = None
        for node in e.values:
            v = self.expr(node)
            if isinstance(v, KnownTruth) and v.truth == deciding:
                return v
            if isinstance(v, Opaque):
                unknown = True
                continue
            if bool(v) == deciding:
                return KnownTruth(deciding) if unknown else v  # its value is unknown, its truth is not
            last = v
        return Opaque("boolop") if unknown else last

    def e_UnaryOp(self, e: ast.UnaryOp) -> Any:
        v = self.expr(e.operand)
        if isinstance(v, KnownTruth) and isinstance(e.op, ast.Not):
            return not v.truth
        if isinstance(v, Opaque):
            return v
        if isinstance(e.op, ast.USub):
            return -v
        if isinstance(e.op, ast.Not):
            return not v
        if isinstance(e.op, ast.UAdd):
            return v
        return ~v

    def e_BinOp(self, e: ast.BinOp) -> Any:
        a, b = self.expr(e.left), self.expr(e.right)
        if isinstance(e.op, ast.MatMult) and isinstance(a, HostTensor) and isinstance(b, HostTensor):
            out = self._product_of(a, b, transposed=False)  # `x @ w`
            return Opaque("matmul") if out is None else out
        return self.binop(e.op, a, b)

    def e_Compare(self, e: ast.Compare) -> Any:
        left = self.expr(e.left)
        for op, comp in zip(e.ops, e.comparators, strict=True):
            right = self.expr(comp)
            if self.call_depth > 0 and isinstance(op, ast.Is | ast.IsNot) and Opaque in (type(left), type(right)):
                return Opaque("compare")  # in a helper: `torch.version.hip is not None` is unknown
            if isinstance(op, ast.Is):
                ok = left is right or (left is None and right is None)
            elif isinstance(op, ast.IsNot):
                ok = not (left is right or (left is None and right is None))
            elif isinstance(left, Opaque) or isinstance(right, Opaque):
                return Opaque("compare")
            else:
                try:
                    ok = {
                        ast.Eq: lambda a, b: a == b,
                        ast.NotEq: lambda a, b: a != b,
                        ast.Lt: lambda a, b: a < b,
                        ast.LtE: lambda a, b: a <= b,
                        ast.Gt: lambda a, b: a > b,
                        ast.GtE: lambda a, b: a >= b,
                        ast.In: lambda a, b: a in b,
                        ast.NotIn: lambda a, b: a not in b,
                    }[type(op)](left, right)
                except (TypeError, KeyError):
                    return Opaque("compare")
            if not ok:
                return False
            left = right
        return True

    def e_Subscript(self, e: ast.Subscript) -> Any:
        v = self.expr(e.value)
        idx = self.expr(e.slice)
        if isinstance(v, HostTensor):
            return self.tensor_index(v, idx)
        if isinstance(v, tuple | list | dict) and not isinstance(idx, Opaque):
            try:
                return v[idx]
            except (IndexError, KeyError, TypeError):
                return Opaque("subscript")
        if isinstance(v, RunTimeValue):
            return v  # `state.view(torch.int64)[-2]`: still the run's value
        if type(v) is Opaque and self.callee(v.what) is not None:
            return Opaque(v.what)  # `tile_shapes[0][0]` of a helper's unknown result: the helper's
        return Opaque("subscript")

    def e_Attribute(self, e: ast.Attribute) -> Any:
        dotted = dotted_name(e)
        if dotted and (dotted.split(".")[0] == "torch" or dotted.rpartition(".")[0] in ("tl", "triton.language")):
            last = dotted.split(".")[-1]
            if last in TORCH_DTYPES:
                return ("dtype", TORCH_DTYPES[last])
        if dotted in self.env:
            return self.env[dotted]  # `ctx.input_shape` the launcher stored (host_stores.py)
        base = self.expr(e.value)
        if isinstance(base, RunTimeValue):
            return base
        if isinstance(base, AttributeTable):  # `ctx.C` after the forward ran (binder_ctx.py)
            return base[e.attr] if e.attr in base else Opaque(dotted or e.attr)
        if e.attr == "value" and isinstance(base, int | float | bool):
            return base  # `tl.constexpr(3).value`: the constexpr's number
        if isinstance(base, HostTensor):
            if e.attr == "shape":
                return tuple(SymInt(s, y) for s, y in zip(base.shape, base.symbols, strict=True))
            if e.attr in ("T", "mT") and len(base.shape) >= 2:
                return transpose(base, -1, -2)
            if e.attr == "dtype":
                return ("dtype", base.dtype)
            if e.attr == "ndim":
                return len(base.shape)
            if e.attr == "itemsize":  # bytes per element, of a dtype the launcher establishes
                known = base.dtype_known  # else the caller's choice (host_calls.caller_itemsize)
                return ELEMENT_BYTES.get(base.dtype, Opaque("itemsize")) if known else self.caller_itemsize(dotted)
            return ("method", base, e.attr)
        if isinstance(base, dict):
            return Opaque(e.attr)
        if isinstance(base, str) and e.attr in STRING_METHODS:
            return ("str method", base, e.attr)  # called in e_Call (host_numbers.py)
        if isinstance(base, tuple) and len(base) == 2 and all(isinstance(t, HostTensor) for t in base):
            if e.attr in ("values", "indices"):  # `torch.sort(x, dim=-1).values`, `x.max(dim).indices`
                return base[0] if e.attr == "values" else base[1]
        return Opaque(dotted or e.attr)

    def e_Lambda(self, e: ast.Lambda) -> Any:
        return ("lambda", e, dict(self.env))

    def e_Call(self, e: ast.Call) -> Any:
        fname = dotted_name(e.func)
        args = self.elements(e.args)
        if isinstance(e.func, ast.Attribute) and e.func.attr in LIST_METHODS and isinstance(e.func.value, ast.Name):
            held = self.env.get(e.func.value.id)
            if isinstance(held, list) and not e.keywords:  # `out_shape.insert(dim, 1)` (host_sequences.py)
                self.env[e.func.value.id], out = list_method(held, e.func.attr, args)
                return out
        if isinstance(args, Opaque):
            return Opaque(fname or "call")  # `f(*xs)` of unknown length: arguments unknown
        if isinstance(e.func, ast.Attribute) and e.func.attr in RUNTIME_READS:
            if read := runtime_read(e, self.expr(e.func.value)):  # `t.item()`: the run's (runtime_values.py)
                return read
        kwargs = {k.arg: self.expr(k.value) for k in e.keywords if k.arg}
        if isinstance(e.func, ast.Attribute) and e.func.attr == "get" and 1 <= len(args) <= 2 and not kwargs:
            held = self.expr(e.func.value)
            if isinstance(held, dict):  # `kwargs.get("out", None)` of a mapping the evaluator holds
                return mapping_get(held, args)
        base = self.expr(e.func) if isinstance(e.func, ast.Attribute) else None
        if isinstance(base, tuple) and len(base) == 3 and base[0] == "str method":
            out = string_method(base[1], base[2], args, kwargs)  # `str(a.dtype).split(".")`
            return Opaque(fname or "call") if out is None else out
        if isinstance(base, tuple) and len(base) == 3 and base[0] == "method":
            out = self.tensor_method(base[1], base[2], args, kwargs)
        elif (seq := self.sequence_call(fname, args)) is not None and fname not in self.env:
            out = seq
        elif fname == "isinstance" and "isinstance" not in self.env:
            out = self.type_test(args)
        elif fname == "map" and len(args) >= 2:
            out = self.mapped(args[0], args[1:])
        elif isinstance(self.env.get(fname), tuple) and self.env[fname][0] == "lambda" and not kwargs:
            out = self.apply_lambda(self.env[fname], args)  # `f = lambda x: ...; f(t)`
        elif self.device_count is not None and device_query(fname):
            out = DeviceCount(self.device_count, fname)  # the probe's pick (device_picks.py)
            self.device_choices[fname] = device_choice(fname, out)
            self.device_uses[fname] = self.device_uses.get(fname, 0) + 1
        else:
            fn = self.callee(fname)
            out = self.invoke(fn, args, kwargs, e) if fn is not None else self.call(fname, args, kwargs, e)
        if isinstance(out, HostTensor) and any(self._unsized_shape(a) for a in e.args):
            out.sized = False  # `q.new_empty(NK, *v.shape)` of a `v` whose rank is unknown
        if type(out) is Opaque:  # `state.view(torch.int64)`, `int(c0)` of a run-time value
            out = base if isinstance(base, RunTimeValue) else carried(fname, [*args, *kwargs.values()]) or out
        return out

    def _unsized_shape(self, arg: ast.expr) -> bool:
        """`*v.shape`, `v.shape` or `v.shape[:-1]` of a tensor whose extents are not stated,
        also inside a tuple or either arm of a conditional (`(NK, *v.shape) if NK > 1 else v.shape`)."""
        if isinstance(arg, ast.Tuple | ast.List):
            return any(self._unsized_shape(x) for x in arg.elts)
        if isinstance(arg, ast.IfExp):
            return self._unsized_shape(arg.body) or self._unsized_shape(arg.orelse)
        node = arg.value if isinstance(arg, ast.Starred) else arg
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            node = node.value
        if (
            not isinstance(node, ast.Attribute)
            or node.attr != "shape"
            or not isinstance(node.value, ast.Name)
        ):
            return False
        t = self.env.get(node.value.id)
        return isinstance(t, HostTensor) and not t.sized


_UNBOUND = object()


def _contains(tree: ast.AST, target: ast.AST) -> bool:
    return any(n is target for n in subtree(tree))


__all__ = [
    "DimClasses",
    "HostEval",
    "HostTensor",
    "Opaque",
    "SymInt",
    "contiguous_strides",
    "dotted_name",
]
