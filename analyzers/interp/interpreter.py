"""The tag interpreter: runs a kernel body abstractly for one probe launch, program by program.

Integer index math is exact (numpy int64 with Triton's int32/int64 typing tracked beside it);
every loaded element carries its tag; memory operations, dots, reductions and stores check their
invariants as they execute and record `Fact`s. This module holds the interpreter's state (the
`OpContext` the op modules use, context.py) and drives one probe: which programs run
(programs.py), each program's parameters and body, and the checks made after a program
(pointer_steps.py) and after all of them (coverage.py). Statements and expressions follow
Python's `ast` (the grammar Triton compiles) in statements.py and expressions.py, calls in
calls.py; `tl.*` builtins are declared in the op modules (ops.py lists them).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp import calls, expressions, pointer_steps, statements
from argus.analyzers.interp.budget import kernel_deadline, over_time, time_exceeded
from argus.analyzers.interp.contents import SynthesizedMemory
from argus.analyzers.interp.context import LoopFrame, MemoryLog
from argus.analyzers.interp.coverage import every_store_whole, judge_output_coverage, judge_reduction_coverage
from argus.analyzers.interp.facts import Fact, FactSink
from argus.analyzers.interp.ops_core import Retype
from argus.analyzers.interp.programs import choose_programs
from argus.analyzers.interp.values import (
    Descriptor,
    DType,
    FullRun,
    KernelReturn,
    Ptr,
    TensorInfo,
    is_float,
    norm_dtype,
    scalar,
)
from argus.analyzers.model.kernel import Helper, KernelModel, SourceMap
from argus.analyzers.model.launch import ProbeLaunch
from argus.analyzers.model.scan import KernelScan


class Interpreter:
    """One probe's run of one kernel. The walkers are module functions of the interpreter,
    bound here as its methods: statements.py, expressions.py, calls.py, and the pointer-step
    records of pointer_steps.py (both part of the `OpContext` the ops see)."""

    block = statements.block
    stmt = statements.stmt
    assign = statements.assign
    expr = expressions.evaluate
    truth = expressions.truth
    call_helper = calls.call_helper
    record_load_step = pointer_steps.record_load_step
    pointer_update_for = pointer_steps.pointer_update_for

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
        sink.stamp = _pick_stamp(launch)
        self.int_tensors = int_tensors  # pointer params whose contents are integers (learned)
        self.smap = kernel.smap
        self.mem = MemoryLog()
        self.lineage_ids = itertools.count(1)
        self.lineage_by_key: dict[Any, frozenset[int]] = {}
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
        # facts held until the probe's end (GR003's: released unless every output is written whole)
        self.held_facts: dict[int, Fact] = {}
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
            "accumulating",
            lambda: pointer_steps.accumulating_dots(kernel.func, [h.func for h in helpers.values()]),
        )
        self.trace: dict[tuple[str, int], Any] | None = None  # (name, line) -> first value (hover)
        self.assertions: dict[int, Any] = {}  # file row -> TagAssertion (DF005)
        self.deadline, self.time_limit = kernel_deadline(kernel.cached)  # budget.py

    # ---- driving ---------------------------------------------------------------------------
    def programs(self) -> list[tuple[int, int, int]]:
        choice = choose_programs(self.kernel, self.scan, self.launch)
        self.light_programs = choice.light
        self.complete = self.complete and choice.complete
        return choice.programs

    def run(self) -> None:
        if min(self.launch.grid) <= 0:
            return
        # overflow, 0/0 and inf - inf are what the checks look for, not errors (binop and compare
        # rely on this instead of entering np.errstate for every operation)
        with np.errstate(all="ignore"):
            try:
                self._run_programs()
            finally:  # a probe cut short (not evaluable, out of time) reports what it saw
                for fact in self.held_facts.values():
                    self.sink.add(fact)

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
        pointer_steps.check_pointer_steps(self)

    def bind_params(self) -> dict[str, Any]:
        env: dict[str, Any] = {}
        for p in self.kernel.params:
            if p.name not in self.launch.args:
                continue
            v = self.launch.args[p.name]
            if isinstance(v, TensorInfo):
                if p.name in self.int_tensors and not v.dtype.startswith("int"):
                    v = dataclasses.replace(v, dtype="int32")
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
        hold: bool = False,
        **data: Any,
    ) -> None:
        """Add a fact to the sink; with `hold`, keep it until `finish` (GR003's `grid-axis`:
        released unless every output is written whole; the first sighting per node)."""
        if not hold:
            self.sink.add(self._fact_of(fact_kind, node, global_, related, data))
        elif id(node) not in self.held_facts:
            self.held_facts[id(node)] = self._fact_of(fact_kind, node, global_, related, data)

    def _fact_of(
        self, fact_kind: str, node: ast.AST, global_: bool, related: list[tuple[ast.AST, str]] | None, data: dict
    ) -> Fact:
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
        return Fact(fact_kind, node, self.smap, data, rel, global_)

    # ---- memory and queries --------------------------------------------------------------
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

    def accumulating_dot(self, node: ast.AST) -> bool:
        return id(node) in self.accumulating

    def tensor_named(self, name: str | None) -> TensorInfo | None:
        v = self.launch.args.get(name) if name else None
        return v if isinstance(v, TensorInfo) else None

    def finish(self) -> None:
        """After all programs: coverage of outputs (GR001) and reduction coverage (DF003)."""
        held, self.held_facts = list(self.held_facts.values()), {}
        if self.launch.assumed or self.launch.grid_chosen:
            for fact in held:
                self.sink.add(fact)
            return  # how many programs run is not known: what they cover is not either
        whole = False
        if self.complete and not self.grid_problem:
            whole = judge_output_coverage(self) or every_store_whole(self)
        # `pid_z = tl.program_id(1)` on a 1-D grid is 0: where every output is still written
        # whole, each element by one plain store, the kernel does its work with that axis at 0
        # (flag-gems' Ascend mm: one K split); an output left unwritten keeps GR003 (over GR001)
        if not whole:
            for fact in held:
                self.sink.add(fact)
        judge_reduction_coverage(self)

    def new_lineage(self, key: Any = None) -> frozenset[int]:
        """A fresh lineage id; with `key` (what the value is a function of, such as the elements a
        load reads), the same id each time, so a second pass over a row is the data the first saw."""
        if key is None:
            return frozenset({next(self.lineage_ids)})
        if key not in self.lineage_by_key:
            self.lineage_by_key[key] = frozenset({next(self.lineage_ids)})
        return self.lineage_by_key[key]

    def float_dtype_of(self, t: TensorInfo) -> str:
        d = t.dtype.rstrip("?")
        return d if is_float(d) or d.startswith("int") else "fp16"


def _pick_stamp(launch: ProbeLaunch) -> Callable[[Fact], Fact] | None:
    """What a fact this probe observes rests on, of the values it picked (ProbeLaunch.choices,
    grid_picks): added to the fact's context, where judge.py reads it."""
    if not launch.choices and not launch.grid_picks and not launch.guards and not launch.loops:
        return None

    def stamp(fact: Fact) -> Fact:
        pid = fact.probe.pid
        seen_by = [tuple(pid) if pid is not None else None]
        other = getattr(fact, "other_pid", None)  # a race's second program (None: the same one)
        if other is not None:
            seen_by.append(tuple(other))
        picks = launch.picks_under(seen_by, fact.kind)
        if not picks or fact.probe.choice:
            return fact
        return dataclasses.replace(fact, probe=dataclasses.replace(fact.probe, choice="; ".join(picks)))

    return stamp
