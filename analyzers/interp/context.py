"""What an op module may use of the interpreter: the `OpContext` protocol.

The op modules (`ops_*.py`, access_checks.py, coverage.py, asserts.py) are written against this
interface, not against the `Interpreter` class: the probe being run (launch, program id, which
programs run for addresses only), the per-probe logs they read and extend (memory writers, loop
frames, dot operands), the fact recorder, and a few queries. `Interpreter` implements it, and
`RunContext` (below), the wider interface of the statement and expression walkers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from argus.analyzers.interp.facts import FactSink
from argus.analyzers.interp.values import TensorInfo
from argus.analyzers.model.kernel import Helper, KernelModel, SourceMap
from argus.analyzers.model.launch import ProbeLaunch
from argus.analyzers.model.scan import KernelScan


@dataclass
class LoopFrame:
    node: ast.For | ast.While
    iteration: int = 0
    updates: dict[str, ast.AST] = field(default_factory=dict)


@dataclass
class MemoryLog:
    """Who wrote which element of each tensor, across the programs of one probe."""

    writer: dict[int, np.ndarray] = field(default_factory=dict)  # tensor -> program index per offset (-1)
    coverage_unjudged: set[int] = field(default_factory=set)  # written through group offsets
    atomic: dict[int, np.ndarray] = field(default_factory=dict)
    last_store: dict[int, tuple[ast.AST, SourceMap]] = field(default_factory=dict)
    loaded: set[int] = field(default_factory=set)
    # tensors some program read where it had not written them first (an in-place update's read;
    # a program reading back what it stored itself is not one: GR004)
    read_first: set[int] = field(default_factory=set)
    coverage: dict[tuple[int, int], Any] = field(default_factory=dict)  # -> coverage.ReductionCover
    stored: dict[int, Any] = field(default_factory=dict)  # -> rule_same_store.StoredValues (GR002)


class OpContext(Protocol):
    """The interpreter state and services an op may read or extend."""

    # the kernel and the probe being run
    kernel: KernelModel
    scan: KernelScan
    launch: ProbeLaunch
    helpers: dict[str, Helper]
    smap: SourceMap  # of the function running now (a helper's, inside a helper call)
    pid: tuple[int, int, int]
    program_index: int
    program_ids: list[tuple[int, int, int]]
    address_only: bool  # this program runs for its addresses only (floats are stand-ins)
    symbol_sizes: dict[str, int]
    int_tensors: set[str]
    lower_only_tensors: set[str]
    # per-probe logs the ops read and extend
    sink: FactSink
    mem: MemoryLog
    loops: list[LoopFrame]
    call_stack: list[tuple[ast.AST, SourceMap]]
    branch_checked: set[int]
    dot_operands: list[tuple[ast.AST, SourceMap, Any, int, str, int, ast.AST | None]]
    dot_keys: dict[tuple[int, int], list[str]]
    scalar_loads: dict[int, dict[int, int]]
    trusted_tensors: set[int]
    contract_tables: set[int]
    partition_tensors: set[int]
    oob_nodes: set[int]
    site_tensor: dict[int, int]
    site_name: dict[int, str]
    grid_problem: bool

    def fact(
        self,
        fact_kind: str,
        node: ast.AST,
        global_: bool = False,
        related: list[tuple[ast.AST, str]] | None = None,
        hold: bool = False,
        **data: Any,
    ) -> None: ...

    def contents(self, t: TensorInfo, offsets: np.ndarray) -> np.ndarray: ...

    def unravel(self, t: TensorInfo, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def record_load_step(
        self, node: ast.AST, ptr_offsets: np.ndarray, t: TensorInfo, active: np.ndarray | None = None
    ) -> None: ...

    def pointer_update_for(self, load_node: ast.AST) -> ast.AST | None: ...

    def call_helper(
        self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any: ...  # a jit helper run on values (a scan's combine function)

    def accumulating_dot(self, node: ast.AST) -> bool: ...

    def tensor_named(self, name: str | None) -> TensorInfo | None: ...

    def new_lineage(self, key: Any = None) -> frozenset[int]: ...

    def float_dtype_of(self, t: TensorInfo) -> str: ...


class RunContext(OpContext, Protocol):
    """What the statement and expression walkers (statements.py, expressions.py, calls.py) and the
    end-of-run checks (pointer_steps.py, coverage.py) use besides what an op may: the module's
    constants, the hover trace, the tag assertions, the time budget, the state of the whole run,
    and the walkers themselves, reached through the interpreter so that no walker module imports
    one that imports it back."""

    module_consts: dict[str, Any]
    trace: dict[tuple[str, int], Any] | None  # (name, line) -> first value assigned (hover)
    assertions: dict[int, Any]  # file row -> TagAssertion (DF005)
    deadline: float
    time_limit: float
    complete: bool  # every program of the grid ran (output coverage can be judged)
    load_history: dict[int, list[tuple[tuple[int, ...], np.ndarray, TensorInfo]]]

    def expr(self, e: ast.expr, env: dict[str, Any]) -> Any: ...

    def block(self, stmts: list[ast.stmt], env: dict[str, Any]) -> None: ...
