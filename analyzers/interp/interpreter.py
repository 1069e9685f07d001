"""The tag interpreter: runs a kernel body abstractly for one probe launch, program by program.

Integer index math is exact (numpy int64 with Triton's int32/int64 typing tracked beside it);
every loaded element carries its tag; memory operations, dots, reductions and stores check their
invariants as they execute and record `Fact`s. Statements and expressions follow Python's `ast`
(the grammar Triton compiles); `tl.*` builtins are declared in the op modules (ops.py lists them).
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import math
from typing import Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import ops
from argus.analyzers.interp.asserts import check_assertion
from argus.analyzers.interp.budget import kernel_deadline, over_time, time_exceeded
from argus.analyzers.interp.contents import SynthesizedMemory
from argus.analyzers.interp.context import LoopFrame, MemoryLog
from argus.analyzers.interp.facts import Fact, FactSink
from argus.analyzers.interp.ops_arith import binop, compare
from argus.analyzers.interp.ops_core import Retype
from argus.analyzers.interp.ops_shapes import subscript, trans
from argus.analyzers.interp.programs import MAX_TILED, bare_axis_programs, spread_programs, tiled_count
from argus.analyzers.interp.values import (
    LOW_PRECISION,
    BlockPtr,
    Descriptor,
    DType,
    FullRun,
    KernelReturn,
    Ptr,
    PtrDType,
    TensorInfo,
    Val,
    is_float,
    norm_dtype,
    scalar,
)
from argus.analyzers.model.host import dotted_name as _dotted
from argus.analyzers.model.kernel import Helper, KernelModel, SourceMap
from argus.analyzers.model.launch import ProbeLaunch
from argus.analyzers.model.nodes import subtree
from argus.analyzers.model.scan import KernelScan

MAX_ITERATIONS = 512


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_EXPR_DISPATCH: dict[type, Any] = {}  # ast node type -> Interpreter.e_<Type>


class Interpreter:
    def __init__(
        self,
        kernel: KernelModel,
        scan: KernelScan,
        launch: ProbeLaunch,
        helpers: dict[str, Helper],
        module_consts: dict[str, Any],
        sink: FactSink,
        int_tensors: set[str],
    ) -> None:
        self.kernel = kernel
        self.scan = scan
        self.launch = launch
        self.helpers = helpers
        self.module_consts = module_consts
        self.sink = sink
        self.int_tensors = int_tensors  # pointer params whose contents are integers (learned)
        self.smap = kernel.smap
        self.mem = MemoryLog()
        self.lineage_ids = itertools.count(1)
        self.pid: tuple[int, int, int] = (0, 0, 0)
        self.program_index = 0
        self.loops: list[LoopFrame] = []
        self.branch_checked: set[int] = set()
        self.load_history: dict[int, list[tuple[tuple[int, ...], np.ndarray, TensorInfo]]] = {}
        self.dot_operands: list[tuple[ast.AST, SourceMap, Any, int, str, int, ast.AST | None]] = []
        self.scalar_loads: dict[int, dict[int, int]] = {}
        self.trusted_tensors: set[int] = set()
        self.complete = True  # all programs ran (coverage and races can be judged)
        self.grid_problem = False
        self.oob_nodes: set[int] = set()
        self.dot_keys: dict[tuple[int, int], list[str]] = {}
        self.call_stack: list[tuple[ast.AST, SourceMap]] = []  # helper calls made from the kernel
        self.site_tensor: dict[int, int] = {}
        # index tables synthesized to their contract (a permutation, a partition): judged through
        self.contract_tables: set[int] = set()
        self.partition_tensors: set[int] = set()  # prefix-sum tables synthesized as a partition
        self.memory = SynthesizedMemory(
            scan, launch, int_tensors, self.contract_tables, self.partition_tensors
        )
        self.lower_only_tensors = {name for name, pol in scan.policies.items() if pol.lower_only}
        # programs run for their addresses only (see programs()); the one running now is
        self.light_programs: set[tuple[int, int, int]] = set()
        self.address_only = False
        self._unravel_memo: tuple[TensorInfo, np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None
        self.site_name: dict[int, str] = {}
        self.program_ids: list[tuple[int, int, int]] = []
        self.symbol_sizes: dict[str, int] = {}
        for v in launch.args.values():
            if isinstance(v, TensorInfo):
                for sym, size in zip(v.symbols, v.shape, strict=True):
                    self.symbol_sizes.setdefault(sym, size)
        self.accumulating = kernel.cached(
            "accumulating", lambda: _accumulating_dots(kernel.func, [h.func for h in helpers.values()])
        )
        self.trace: dict[tuple[str, int], Any] | None = None  # (name, line) -> first value (hover)
        self.assertions: dict[int, Any] = {}  # file row -> TagAssertion (DF005)
        self.deadline, self.time_limit = kernel_deadline(kernel.cached)  # budget.py

    # ---- driving ---------------------------------------------------------------------------
    def programs(self) -> list[tuple[int, int, int]]:
        progs = self._choose_programs()
        self.light_programs = self._light_programs(progs)
        if self.light_programs and (self.launch.kind != "ragged" or self.launch.sampled):
            # edge probes (size 1, exact and half tiles, further configs) look at tails: the
            # ragged probe's address-only programs already covered races and low addresses
            progs = [p for p in progs if p not in self.light_programs]
            self.light_programs = set()
            self.complete = False  # (coverage is the ragged probe's to judge)
        return progs

    def _persistent(self) -> bool:
        return self.kernel.cached(
            "persistent",
            lambda: any(
                isinstance(n, ast.Call) and ast.unparse(n.func).endswith("num_programs")
                for n in subtree(self.kernel.func)
            ),
        )

    def _light_programs(self, progs: list[tuple[int, int, int]]) -> set[tuple[int, int, int]]:
        """Which programs run for their addresses only. Along batch/head (bare) axes programs
        differ only in where they read and write: the ones at the last corner of those axes run
        in full (each coordinate there differs from the others, so tag mix-ups show), every tile
        of the other axes among them; the rest check bounds, races and coverage. Where the work
        is read from memory (page tables, lengths, ignored rows) programs differ in more than
        addresses: the first and second index along those axes run in full too, so that three
        programs meet different contents."""
        bare = [a for a in range(3) if a in self.launch.bare_axes]
        if not bare or self._persistent():
            return set()
        g = self.launch.grid
        full = {p for p in progs if all(p[a] == g[a] - 1 for a in bare)}
        if self._data_dependent():
            full |= {p for p in progs if all(p[a] == 0 for a in bare)}
            full |= {p for p in progs if all(p[a] == min(1, g[a] - 1) for a in bare)}
        return set(progs) - full

    def _choose_programs(self) -> list[tuple[int, int, int]]:
        g = self.launch.grid
        if (self.launch.kind != "ragged" or self.launch.sampled) and math.prod(g) > 2:
            # edge probes look for tails and edges: the first and last program of each axis
            self.complete = False
            corners = {(x, y, z) for x in {0, g[0] - 1} for y in {0, g[1] - 1} for z in {0, g[2] - 1}}
            return sorted(corners, key=lambda p: (p[2], p[1], p[0]))
        bare = self.launch.bare_axes
        if math.prod(g) > 8 and bare and not self._persistent() and tiled_count(g, bare) <= MAX_TILED:
            self.complete = False
            return bare_axis_programs(g, bare, self._data_dependent())
        progs, complete = spread_programs(g)
        self.complete = self.complete and complete
        return progs

    def _data_dependent(self) -> bool:
        """Programs whose work depends on loaded indices or lengths (a page table, sequence
        lengths with sentinels): the first and last program alone may both miss the sentinel
        that the second meets."""
        return any(p.sentinels or p.sentinel_params or p.length for p in self.scan.policies.values())

    def run(self) -> None:
        if min(self.launch.grid) <= 0:
            return
        # overflow, 0/0 and inf - inf are what the checks look for, not errors (binop and compare
        # rely on this instead of entering np.errstate for every operation)
        with np.errstate(all="ignore"):
            self._run_programs()

    def _run_programs(self) -> None:
        self.program_ids = self.programs()
        # a kernel whose floating-point data once decided an address, mask or branch in an
        # address-only run will again: later programs and probes of it run in full at once
        escapes = self.kernel.cached("light_escapes", lambda: [False])
        escaped = escapes[0]
        for i, pid in enumerate(self.program_ids):
            if over_time(self.deadline):
                raise time_exceeded(self.time_limit)
            self.pid = pid
            self.program_index = i
            fell_back = False
            if pid in self.light_programs and not escaped:
                try:
                    self.run_program(address_only=True)
                    continue
                except Retype:
                    raise
                except (FullRun, Unevaluable, ArithmeticError, TypeError, ValueError, KeyError, IndexError):
                    fell_back = True  # its shortcuts do not hold here: run it in full
            self.run_program(address_only=False)
            if fell_back:
                # (only now: a full run that finds a tensor of integers restarts the probe, and
                # the address-only run may then hold)
                escaped = escapes[0] = True
        self.address_only = False
        self.finish()

    def run_program(self, address_only: bool) -> None:
        self.address_only = address_only
        self.branch_checked = set()
        self.load_history = {}
        self.dot_operands = []
        env = self.bind_params()
        with contextlib.suppress(KernelReturn):
            self.block(self.kernel.func.body, env)
        self.check_pointer_steps()

    def bind_params(self) -> dict[str, Any]:
        env: dict[str, Any] = {}
        for p in self.kernel.params:
            if p.name not in self.launch.args:
                continue
            v = self.launch.args[p.name]
            if isinstance(v, TensorInfo):
                if p.name in self.int_tensors and not v.dtype.startswith("int"):
                    v = TensorInfo(
                        v.index, v.name, v.shape, v.strides, v.symbols, "int32", v.created, v.sized
                    )
                env[p.name] = Ptr(v, np.zeros((), dtype=np.int64))
            elif isinstance(v, tuple) and v and v[0] == "dtype":
                env[p.name] = DType(norm_dtype(v[1]))
            elif isinstance(v, tuple) and v and v[0] == "desc":
                t = v[1]
                env[p.name] = Descriptor(t, 0, t.shape, t.strides, v[2])
            elif isinstance(v, bool):
                env[p.name] = scalar(v, constexpr=p.constexpr)
            elif isinstance(v, int):
                env[p.name] = scalar(
                    v, constexpr=p.constexpr, runtime=not p.constexpr, param=None if p.constexpr else p.name
                )
            elif isinstance(v, float):
                env[p.name] = scalar(v, "fp32", constexpr=p.constexpr)
            elif isinstance(v, str):
                env[p.name] = v
            elif v is None:
                env[p.name] = None
            else:
                raise Unevaluable(
                    f"argument `{p.name}` ({getattr(v, 'what', type(v).__name__)})", self.kernel.func
                )
        return env

    # ---- facts -----------------------------------------------------------------------------
    def fact(
        self,
        fact_kind: str,
        node: ast.AST,
        global_: bool = False,
        related: list[tuple[ast.AST, str]] | None = None,
        **data: Any,
    ) -> None:
        data.setdefault("pid", self.pid[: max(self.launch.grid_axes, 1)])
        data.setdefault("sizes", self.launch.describe_sizes())
        data.setdefault("probe", self.launch.kind)
        if self.launch.config:
            data.setdefault(
                "config",
                ", ".join(f"{k}={v}" for k, v in self.launch.config.items() if not k.startswith("num_")),
            )
        if self.launch.assumed:
            data.setdefault("assumed", self.launch.notes[0])
        rel = [(n, self.smap, m) for n, m in (related or [])]
        self.sink.add(Fact(fact_kind, node, self.smap, data, rel, global_))

    # ---- statements ------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], env: dict[str, Any]) -> None:
        for st in stmts:
            self.stmt(st, env)

    def stmt(self, st: ast.stmt, env: dict[str, Any]) -> None:
        if over_time(self.deadline):
            raise time_exceeded(self.time_limit)  # at the kernel: where time ran out is arbitrary
        self.exec_stmt(st, env)
        if (
            self.assertions
            and self.smap is self.kernel.smap
            and not isinstance(st, ast.For | ast.While | ast.If)
        ):
            self.check_assertions(st, env)

    def check_assertions(self, st: ast.stmt, env: dict[str, Any]) -> None:

        row0 = self.smap.row0
        for row in range(row0 + st.lineno - 1, row0 + (st.end_lineno or st.lineno)):
            a = self.assertions.get(row)
            if a is not None:
                check_assertion(self, a, st, env)

    def exec_stmt(self, st: ast.stmt, env: dict[str, Any]) -> None:
        if isinstance(st, ast.Assign):
            v = self.expr(st.value, env)
            for t in st.targets:
                self.assign(t, v, env, st)
        elif isinstance(st, ast.AugAssign):
            cur = self.expr(st.target, env)
            rhs = self.expr(st.value, env)
            if isinstance(st.op, ast.Add | ast.Sub):
                self.check_accumulator(cur, rhs, st)
            v = self.binop(st.op, cur, rhs, st)
            self.assign(st.target, v, env, st)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.assign(st.target, self.expr(st.value, env), env, st)
        elif isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return  # docstring
            self.expr(st.value, env)
        elif isinstance(st, ast.If):
            c = self.expr(st.test, env)
            cond = self.truth(c, st.test)
            if isinstance(c, Val):
                self.branch_checked |= set(c.checked) | set(c.loaded_from)
            self.block(st.body if cond else st.orelse, env)
        elif isinstance(st, ast.For):
            self.for_loop(st, env)
        elif isinstance(st, ast.While):
            self.while_loop(st, env)
        elif isinstance(st, ast.Return):
            raise KernelReturn(self.expr(st.value, env) if st.value is not None else None)
        elif isinstance(st, ast.Pass):
            return
        elif isinstance(st, ast.Break):
            raise _Break()
        elif isinstance(st, ast.Continue):
            raise _Continue()
        elif isinstance(st, ast.Assert):
            c = self.expr(st.test, env)
            if isinstance(c, Val):
                self.branch_checked |= set(c.checked) | set(c.loaded_from)
        elif isinstance(st, ast.With):
            self.block(st.body, env)
        else:
            raise Unevaluable(f"the statement `{type(st).__name__}`", st)

    def check_accumulator(self, acc: Any, term: Any, st: ast.stmt) -> None:
        """NU001 for loop reductions: `acc += term` in a loop, with `acc` made by tl.zeros/tl.full
        in fp16/bf16/fp8: every iteration rounds the running sum to that precision."""

        if not self.loops or not isinstance(acc, Val) or not isinstance(term, Val):
            return
        if acc.init_site is None or acc.dtype not in LOW_PRECISION or not is_float(term.dtype):
            return
        node, smap = acc.init_site
        self.sink.add(
            Fact(
                "low-precision-acc",
                node,
                smap,
                {
                    "dtype": acc.dtype,
                    "inputs": term.dtype,
                    "pid": self.pid[: max(self.launch.grid_axes, 1)],
                    "sizes": self.launch.describe_sizes(),
                },
                [(st, self.smap, "the accumulation in the loop")],
            )
        )

    def assign(self, target: ast.expr, v: Any, env: dict[str, Any], st: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = v
            for frame in self.loops:
                frame.updates[target.id] = st
            if self.trace is not None and self.smap is self.kernel.smap:
                self.trace.setdefault((target.id, st.lineno), v)
        elif isinstance(target, ast.Tuple | ast.List):
            if not isinstance(v, tuple | list) or len(v) != len(target.elts):
                raise Unevaluable("a tuple assignment of a different length", st)
            for t, x in zip(target.elts, v, strict=True):
                self.assign(t, x, env, st)
        else:
            raise Unevaluable(f"assignment to `{ast.unparse(target)}`", st)

    def truth(self, c: Any, node: ast.AST) -> bool:
        if isinstance(c, Val):
            if self.address_only and is_float(c.dtype):
                raise FullRun()
            if c.unknown:
                raise Unevaluable(f"a branch on {c.unknown}", node)
            if not c.is_scalar:
                if c.data.size == 1:
                    return bool(c.data.reshape(()).item())
                raise Unevaluable("a branch on a tensor condition", node)
            return bool(c.data.item())
        if c is None:
            return False
        return bool(c)

    def range_args(self, call: ast.Call, env: dict[str, Any]) -> tuple[list[int], bool, bool]:
        vals = [self.expr(a, env) for a in call.args]
        ints, runtime, grows = [], False, False
        for v in vals:
            if isinstance(v, Val):
                if v.unknown:
                    raise Unevaluable(f"a loop bound from {v.unknown}", call)
                if is_float(v.dtype) and v.src:
                    raise Retype(v.src)  # a loaded loop bound (sequence length) is an integer
                ints.append(int(v.item()))
                runtime |= v.runtime or v.grows
                grows |= v.grows
            elif isinstance(v, int):
                ints.append(int(v))
            else:
                raise Unevaluable("a loop bound that is not an integer", call)
        return ints, runtime, grows

    def for_loop(self, st: ast.For, env: dict[str, Any]) -> None:
        it = st.iter
        if not isinstance(it, ast.Call):
            raise Unevaluable(f"a loop over `{ast.unparse(it)}`", st)
        fname = ast.unparse(it.func)
        if fname.split(".")[-1] not in ("range", "static_range"):
            raise Unevaluable(f"a loop over `{fname}`", st)
        ints, runtime, _grows = self.range_args(it, env)
        rng = range(*ints)
        if len(rng) > MAX_ITERATIONS:
            raise Unevaluable(f"a loop of {len(rng)} iterations at this probe size", st)
        frame = LoopFrame(st)
        self.loops.append(frame)
        try:
            for i, x in enumerate(rng):
                frame.iteration = i
                v = scalar(x, "int32", grows=runtime, runtime=runtime, loopvar=True)
                self.assign(st.target, v, env, st)
                try:
                    self.block(st.body, env)
                except _Continue:
                    continue
                except _Break:
                    break
            else:
                self.block(st.orelse, env)
        finally:
            self.loops.pop()

    def while_loop(self, st: ast.While, env: dict[str, Any]) -> None:
        frame = LoopFrame(st)
        self.loops.append(frame)
        try:
            for i in range(MAX_ITERATIONS + 1):
                if i == MAX_ITERATIONS:
                    raise Unevaluable("a while loop that did not end within the probe's budget", st)
                frame.iteration = i
                if not self.truth(self.expr(st.test, env), st.test):
                    break
                try:
                    self.block(st.body, env)
                except _Continue:
                    continue
                except _Break:
                    break
        finally:
            self.loops.pop()

    # ---- expressions -----------------------------------------------------------------------
    def expr(self, e: ast.expr, env: dict[str, Any]) -> Any:
        m = _EXPR_DISPATCH.get(type(e))
        if m is None:
            m = getattr(type(self), "e_" + type(e).__name__, None)
            if m is None:
                raise Unevaluable(f"the expression `{type(e).__name__}`", e)
            _EXPR_DISPATCH[type(e)] = m
        return m(self, e, env)

    def e_Constant(self, e: ast.Constant, env: dict[str, Any]) -> Any:
        v = e.value
        if isinstance(v, bool | int | float):
            cached = getattr(e, "_argus_val", None)
            if cached is None:
                cached = e._argus_val = scalar(v, constexpr=True)  # type: ignore[attr-defined]
            return cached.with_()  # a copy: values are not shared between evaluations
        return v

    def e_Name(self, e: ast.Name, env: dict[str, Any]) -> Any:
        if e.id in env:
            return env[e.id]
        if e.id in self.module_consts:
            return self.module_consts[e.id]
        if e.id in ("None", "True", "False"):
            return {"None": None, "True": scalar(True), "False": scalar(False)}[e.id]
        if e.id in ("tl", "triton", "math", "libdevice", "tlm"):
            return ("module", e.id)
        if e.id in self.helpers:
            return ("helper", e.id)
        if e.id in (
            "float",
            "int",
            "min",
            "max",
            "range",
            "len",
            "abs",
            "bool",
            "print",
            "isinstance",
            "getattr",
        ):
            return ("builtin", e.id)
        raise Unevaluable(f"the name `{e.id}` (not a parameter, local or module constant)", e)

    def e_Tuple(self, e: ast.Tuple, env: dict[str, Any]) -> Any:
        return tuple(self.expr(x, env) for x in e.elts)

    def e_List(self, e: ast.List, env: dict[str, Any]) -> Any:
        return [self.expr(x, env) for x in e.elts]

    def e_IfExp(self, e: ast.IfExp, env: dict[str, Any]) -> Any:
        return (
            self.expr(e.body, env) if self.truth(self.expr(e.test, env), e.test) else self.expr(e.orelse, env)
        )

    def e_JoinedStr(self, e: ast.JoinedStr, env: dict[str, Any]) -> Any:
        return "<str>"

    def e_Attribute(self, e: ast.Attribute, env: dict[str, Any]) -> Any:
        dotted = getattr(e, "_argus_dotted", None)
        if dotted is None:
            dotted = e._argus_dotted = _dotted(e)  # type: ignore[attr-defined]  # parsed once, read per program
        if dotted:
            head = dotted.split(".")[0]
            if head in ("tl", "triton", "libdevice", "tlm") and head not in env:
                return ops.module_attribute(dotted, e)
            if dotted in self.helpers and head not in env:  # `tle.program_id`: another module's helper
                return ("helper", dotted)
        base = self.expr(e.value, env)
        if isinstance(base, tuple) and base and base[0] == "module":
            return ops.module_attribute(base[1] + "." + e.attr, e)
        if isinstance(base, Ptr) and e.attr in ("dtype", "type"):
            return PtrDType(base.tensor.dtype.rstrip("?"))
        if isinstance(base, PtrDType) and e.attr == "element_ty":
            return DType(base.element)
        if isinstance(base, Val):
            if e.attr == "dtype":
                return DType(base.dtype)
            if e.attr == "T":
                return trans(self, [base], {}, e)
            if e.attr == "shape":
                return tuple(scalar(s, constexpr=True) for s in base.shape)
            return ("method", base, e.attr)
        if isinstance(base, Ptr | BlockPtr | Descriptor):
            return ("method", base, e.attr)
        if isinstance(base, DType) and e.attr in ("primitive_bitwidth", "is_floating", "element_ty"):
            if e.attr == "element_ty":
                return base
            return ("method", base, e.attr)
        raise Unevaluable(f"the attribute `{ast.unparse(e)}`", e)

    def e_Subscript(self, e: ast.Subscript, env: dict[str, Any]) -> Any:
        base = self.expr(e.value, env)
        if isinstance(base, tuple | list):
            idx = self.expr(e.slice, env)
            i = int(idx.item()) if isinstance(idx, Val) else idx
            return base[i]
        return subscript(self, base, e.slice, e, env)

    def e_UnaryOp(self, e: ast.UnaryOp, env: dict[str, Any]) -> Any:
        v = self.expr(e.operand, env)
        if isinstance(e.op, ast.Not):
            if isinstance(v, Val) and v.is_scalar:
                return v.with_(data=np.asarray(not bool(v.item())), dtype="int1")
            return scalar(not v)
        if not isinstance(v, Val):
            raise Unevaluable(f"`{ast.unparse(e)}`", e)
        if isinstance(e.op, ast.USub):
            r = v.with_(data=-v.data)
            if v.maxinfo is not None:
                r.maxinfo = None
            return r
        if isinstance(e.op, ast.UAdd):
            return v
        if isinstance(e.op, ast.Invert):
            if v.dtype == "int1":
                return v.with_(data=~v.data.astype(bool))
            return v.with_(data=~v.data)
        raise Unevaluable(f"`{ast.unparse(e)}`", e)

    def e_BinOp(self, e: ast.BinOp, env: dict[str, Any]) -> Any:
        return self.binop(e.op, self.expr(e.left, env), self.expr(e.right, env), e)

    def binop(self, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
        return binop(self, op, a, b, node)

    def e_Compare(self, e: ast.Compare, env: dict[str, Any]) -> Any:
        left = self.expr(e.left, env)
        result = None
        for op, comp in zip(e.ops, e.comparators, strict=True):
            right = self.expr(comp, env)
            r = compare(self, op, left, right, e)
            result = r if result is None else binop(self, ast.BitAnd(), result, r, e)
            left = right
        return result

    def e_BoolOp(self, e: ast.BoolOp, env: dict[str, Any]) -> Any:
        vals = []
        for x in e.values:
            v = self.expr(x, env)
            vals.append(v)
            if isinstance(v, Val) and v.is_scalar and not v.unknown:
                if isinstance(e.op, ast.And) and not bool(v.item()):
                    return v
                if isinstance(e.op, ast.Or) and bool(v.item()):
                    return v
        out = vals[0]
        for v in vals[1:]:
            out = binop(self, ast.BitAnd() if isinstance(e.op, ast.And) else ast.BitOr(), out, v, e)
        return out

    def e_Call(self, e: ast.Call, env: dict[str, Any]) -> Any:
        fn = self.expr(e.func, env)
        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                raise Unevaluable("a *args call", e)
            args.append(self.expr(a, env))
        kwargs = {}
        for k in e.keywords:
            if k.arg is None:
                raise Unevaluable("a **kwargs call", e)
            kwargs[k.arg] = self.expr(k.value, env)
        if isinstance(fn, tuple) and fn and fn[0] == "helper":
            return self.call_helper(fn[1], args, kwargs, e)
        if isinstance(fn, tuple) and fn and fn[0] == "method":
            return ops.method(self, fn[1], fn[2], args, kwargs, e)
        if isinstance(fn, tuple) and fn and fn[0] in ("tl", "builtin"):
            return ops.call(self, fn[1], args, kwargs, e)
        if isinstance(fn, DType):
            return ops.call(self, "cast_to", [args[0], fn] if args else [fn], kwargs, e)
        raise Unevaluable(f"the call `{ast.unparse(e.func)}`", e)

    def e_Lambda(self, e: ast.Lambda, env: dict[str, Any]) -> Any:
        return ("lambda", e, env)

    def call_helper(self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        helper = self.helpers[name]
        fn = helper.func
        params = fn.args.posonlyargs + fn.args.args
        defaults = [None] * (len(params) - len(fn.args.defaults)) + list(fn.args.defaults)
        env: dict[str, Any] = {}
        saved = self.smap
        self.call_stack.append((node, saved))
        pin = getattr(helper, "pinned_map", None)  # another file's helper: findings point at the call
        self.smap = helper.smap if pin is None else pin(saved, node)
        try:
            for i, (p, d) in enumerate(zip(params, defaults, strict=True)):
                if i < len(args):
                    env[p.arg] = args[i]
                elif p.arg in kwargs:
                    env[p.arg] = kwargs[p.arg]
                elif d is not None:
                    env[p.arg] = self.expr(d, env)
                else:
                    raise Unevaluable(f"a call of `{name}` without its argument `{p.arg}`", node)
            for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True):
                env[a.arg] = kwargs.get(a.arg, self.expr(d, env) if d is not None else None)
            try:
                self.block(fn.body, env)
            except KernelReturn as r:
                return r.value
            return None
        except Unevaluable as u:
            if pin is not None:  # what another file's helper does not model is placed at the call
                u.node = node
            raise
        finally:
            self.smap = saved
            self.call_stack.pop()

    # ---- memory ----------------------------------------------------------------------------
    def contents(self, t: TensorInfo, offsets: np.ndarray) -> np.ndarray:
        """Synthesized contents at `offsets` (valid ones): see contents.py."""
        return self.memory.at(t, offsets)

    def unravel(self, t: TensorInfo, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`t.unravel(offsets)`, remembered for the last array: a load or store asks it of
        the same offsets for its bounds check and again for its tags."""
        memo = self._unravel_memo
        if memo is not None and memo[0] is t and memo[1] is offsets:
            return memo[2]
        out = t.unravel(offsets)
        self._unravel_memo = (t, offsets, out)
        return out

    def record_load_step(
        self, node: ast.AST, ptr_offsets: np.ndarray, t: TensorInfo, active: np.ndarray | None = None
    ) -> None:
        if not self.loops:
            return
        its = tuple(f.iteration for f in self.loops)
        first = ptr_offsets.reshape(-1)[:1] if ptr_offsets.size else ptr_offsets.reshape(-1)
        if active is not None and active.size and not bool(active.reshape(-1)[0]):
            first = first[:0]  # the reference lane is masked off: its address says nothing
        self.load_history.setdefault(id(node), []).append((its, first.copy(), t))

    def pointer_update_for(self, load_node: ast.AST) -> ast.AST | None:
        """The statement in the current loop that last moved the load's pointer variable."""
        arg = load_node.args[0] if isinstance(load_node, ast.Call) and load_node.args else None
        if isinstance(arg, ast.Name) and self.loops:
            return self.loops[-1].updates.get(arg.id)
        return None

    def accumulating_dot(self, node: ast.AST) -> bool:
        return id(node) in self.accumulating

    def tensor_named(self, name: str | None) -> TensorInfo | None:
        v = self.launch.args.get(name) if name else None
        return v if isinstance(v, TensorInfo) else None

    def check_pointer_steps(self) -> None:
        """DF002: each direct-load operand of an accumulating dot in a loop moves one tile of
        the contraction axis per iteration, and nothing else."""
        latest_upd = {id(r[2][0]): r[6] for r in self.dot_operands if r[6] is not None}
        done: set[int] = set()
        for dot_node, smap, tinfo, cdim, side, step, upd in self.dot_operands:
            if id(tinfo[0]) in done:
                continue
            done.add(id(tinfo[0]))
            upd = latest_upd.get(id(tinfo[0]), upd)
            hist = self.load_history.get(id(tinfo[0]))
            if not hist or len(hist) < 2:
                continue
            (its0, off0, t), (its1, off1, _) = hist[0], hist[1]
            if its0[:-1] != its1[:-1] or not off0.size or not off1.size:
                continue
            c0, ok0 = t.unravel(off0)
            c1, ok1 = t.unravel(off1)
            if not (ok0.all() and ok1.all()):
                continue  # the reference lane is outside the tensor: its coordinates mean nothing
            delta = (c1 - c0).reshape(-1)
            raw = int(off1[0] - off0[0])
            others = np.delete(delta, cdim)
            # one tile per iteration, or several when other programs take the tiles between
            # (interleaved split-K); a skipped tile shows up as DF003 coverage instead
            if not others.any() and delta[cdim] > 0 and delta[cdim] % step == 0:
                continue
            stride = t.strides[cdim] if cdim < len(t.strides) else 0
            if stride > 0 and raw == step * stride:
                # the address moved by one tile of the contraction axis; the coordinates
                # carried into another dimension only because the lane lies past one of its
                # extents (a wrong head index), which is a bounds problem, not a step problem
                continue
            where = upd if upd is not None else tinfo[0]
            self.sink.add(
                Fact(
                    "pointer-step",
                    where,
                    smap,
                    {
                        "pid": self.pid[: max(self.launch.grid_axes, 1)],
                        "sizes": self.launch.describe_sizes(),
                        "probe": self.launch.kind,
                        "tensor": t.name,
                        "dim": t.symbols[cdim] if cdim < len(t.symbols) else str(cdim),
                        "step": step,
                        "raw_step": raw,
                        "coords0": c0.reshape(-1).tolist(),
                        "coords1": c1.reshape(-1).tolist(),
                        "symbols": list(t.symbols),
                        "side": side,
                        "config": ", ".join(
                            f"{k}={v}"
                            for k, v in (self.launch.config or {}).items()
                            if not k.startswith("num_")
                        ),
                    },
                    [(tinfo[0], smap, "the load it feeds"), (dot_node, smap, "the accumulating dot")],
                )
            )

    def finish(self) -> None:
        """After all programs: coverage of outputs (GR001) and reduction coverage (DF003)."""
        if self.launch.assumed:
            return
        if self.complete and not self.grid_problem:
            for tidx, writer in self.mem.writer.items():
                t = self._tensor_by_index(tidx)
                if t is None or not t.sized:
                    continue
                # uninitialized outputs must be fully written; a tensor the grid tiles in every
                # dimension (an in-place update) too; others (caches, slices) may be partial
                if not (t.created and tidx not in self.mem.loaded) and not t.grid_tiled:
                    continue
                if tidx in self.mem.coverage_unjudged:
                    continue
                written = (writer >= 0) | (self.mem.atomic.get(tidx, np.full_like(writer, -1)) >= 0)
                offs = _valid_offsets(t)
                missing = offs[~written[offs]]
                if missing.size:
                    node, smap = self.mem.last_store[tidx]
                    coords, _ = t.unravel(missing[:1])
                    self.sink.add(
                        Fact(
                            "uncovered",
                            node,
                            smap,
                            {
                                "sizes": self.launch.describe_sizes(),
                                "probe": self.launch.kind,
                                "tensor": t.name,
                                "element": coords.reshape(-1).tolist(),
                                "symbols": list(t.symbols),
                                "missing": int(missing.size),
                                "total": int(offs.size),
                                "grid": self.launch.grid[: self.launch.grid_axes],
                                "config": ", ".join(
                                    f"{k}={v}"
                                    for k, v in (self.launch.config or {}).items()
                                    if not k.startswith("num_")
                                ),
                            },
                            [(self.launch.site.grid_node, self.launch.site.smap, "the launch grid")]
                            if self.launch.site
                            else [],
                            True,
                        )
                    )
        for (_tidx, _off), (
            counts,
            loop_node,
            smap,
            tensor,
            dim,
            pid,
            elem,
            direct,
            plain,
            store,
        ) in self.mem.coverage.items():
            # operands loaded directly (GEMM): every index exactly once; computed operands (P @ V
            # under a causal mask): no index twice, since masked keys legitimately count zero
            # with sampled programs a missing index may belong to a program that did not run,
            # unless one plain store wrote the element (its program did the whole reduction)
            whole = self.complete or (plain and self.launch.kind == "ragged" and not self.launch.sampled)
            bad = np.nonzero(counts != 1)[0] if direct and whole else np.nonzero(counts > 1)[0]
            if bad.size and not self.complete and store is not None and not (counts > 1).any():
                # a skipped index judged from one plain store (programs were sampled): the
                # store is where the partial value lands
                loop_node, smap = store
            if bad.size:
                k = int(bad[0])
                self.sink.add(
                    Fact(
                        "coverage",
                        loop_node,
                        smap,
                        {
                            "sizes": self.launch.describe_sizes(),
                            "probe": self.launch.kind,
                            "pid": pid,
                            "tensor": tensor,
                            "dim": dim,
                            "index": k,
                            "count": int(counts[k]),
                            "missing": int((counts == 0).sum()),
                            "extra": int((counts > 1).sum()),
                            "element": elem,
                            "config": ", ".join(
                                f"{k2}={v}"
                                for k2, v in (self.launch.config or {}).items()
                                if not k2.startswith("num_")
                            ),
                        },
                        [],
                        True,
                    )
                )

    def _tensor_by_index(self, idx: int) -> TensorInfo | None:
        for v in self.launch.args.values():
            if isinstance(v, TensorInfo) and v.index == idx:
                return v
        return None

    def new_lineage(self) -> frozenset[int]:
        return frozenset({next(self.lineage_ids)})

    def float_dtype_of(self, t: TensorInfo) -> str:
        d = t.dtype.rstrip("?")
        return d if is_float(d) or d.startswith("int") else "fp16"


def _accumulating_dots(func: ast.FunctionDef, helpers: list[ast.FunctionDef]) -> set[int]:
    """Dot calls whose result is added into a variable it came from (`acc += tl.dot(...)`)."""
    out: set[int] = set()
    for f in [func, *helpers]:
        for n in subtree(f):
            value, target = None, None
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                value, target = n.value, None
            elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                value, target = n.value, n.targets[0].id
            if value is None:
                continue
            inner = subtree(value)
            if target is not None and not any(isinstance(x, ast.Name) and x.id == target for x in inner):
                continue
            out |= {
                id(c)
                for c in inner
                if isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute | ast.Name)
                and (c.func.attr if isinstance(c.func, ast.Attribute) else c.func.id) == "dot"
            }
    return out


def _valid_offsets(t: TensorInfo) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in t.shape], indexing="ij")
    offs = np.zeros(grids[0].shape if grids else (), dtype=np.int64)
    for g, st in zip(grids, t.strides, strict=True):
        offs = offs + g * st
    return offs.reshape(-1)
