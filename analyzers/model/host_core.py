"""The state of the host evaluator and its arithmetic: the sizes of dimension classes, new
host tensors, and binary operations that keep track of the dimension class a size measures."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.interp.budget import oversized_result
from argus.analyzers.model.host_functions import MAX_CALLS
from argus.analyzers.model.host_numbers import cancelled_factor
from argus.analyzers.model.host_values import DimClasses, HostTensor, Opaque, SymInt, contiguous_strides
from argus.analyzers.model.runtime_values import first_runtime


class HostCore:
    """Sizes, tensor creation and arithmetic of one evaluation of a launcher."""

    def __init__(
        self,
        dims: DimClasses,
        sizes: dict[str, int] | None,
        recording: bool,
        contains_memo: dict[tuple[int, int], tuple[Any, Any, bool]] | None = None,
    ) -> None:
        self.dims = dims
        self.contains_memo = contains_memo if contains_memo is not None else {}
        self.sizes = sizes  # root class -> concrete value (None while recording)
        self.recording = recording
        self.env: dict[str, Any] = {}
        self.storages = 0
        self.fresh = 0
        # the launcher's `assert a == b` that the probe's sizes break (see HostEval.record_assert)
        self.broken_asserts: list[ast.expr] = []
        # the `if` tests the launch sits under, each with the side it is on and the test's
        # value at these sizes (launch_guards.py judges whether the probe satisfies them)
        self.launch_guards: list[tuple[ast.expr, bool, Any]] = []
        # loops the launch sits in whose items are not all known, named (launch_loops.py)
        self.launch_loops: list[str] = []
        # tensor parameter -> (rank, exact, partner) the rank tests on the launch's path state, and
        # the names the launcher assigns a rank to (guard_ranks.py)
        self.rank_wants: dict[str, tuple[int, bool | None, str]] = {}
        self.rank_alias_map: dict[str, ast.expr] = {}
        self.pin_wants: dict[str, int] = {}  # name -> the int a test holding the launch wants (guard_pins.py)
        # the count a device query returns in this probe (device_picks.py; None: unknown), and
        # the queries answered with it that the launch may rest on, named; each with the
        # times its count was used (`min(count, T)` drops one: device_picks.py)
        self.device_count: int | None = None
        self.second_pick = False  # the probe is the second pick (binder_picks.SECOND_PICK)
        self.device_choices: dict[str, str] = {}
        self.device_uses: dict[str, int] = {}
        # storages the launcher allocates with a value in every element (`torch.zeros`): an
        # output a kernel writes in part by design (a band, a diagonal) is no uncovered output
        self.initialized: set[int] = set()
        # dimension classes nothing in the launcher names or relates (LaunchBinder._anonymous)
        self.free_roots: set[str] = set()
        # host functions being called (model/host_invoke.py): nesting, and calls left to make
        self.call_depth = 0
        self.calls_left = MAX_CALLS
        # `q, k = ctx.saved_tensors`: the binder makes each saved tensor as it makes a
        # parameter tensor (None: they stay opaque)
        self.saved_tensor: Callable[[str], Any] | None = None

    # ---- sizes -----------------------------------------------------------------------------
    def dim(self, sym: str) -> SymInt:
        root = self.dims.find(sym)
        if self.sizes is None:
            return SymInt(7, sym)
        return SymInt(self.sizes.get(root, 7), sym)

    def new_tensor(self, shape: list[Any], dtype: str, name: str, dtype_known: bool) -> HostTensor:
        self.storages += 1
        dims, syms = [], []
        for i, s in enumerate(shape):
            if isinstance(s, SymInt):
                dims.append(int(s))
                syms.append(s.sym)
            elif isinstance(s, int):
                sym = f"_{name}{i}"
                self.dims.find(sym)
                self.dims.allowed.setdefault(sym, [int(s)])
                dims.append(int(s))
                syms.append(sym)
            else:
                sym = f"_{name}{i}"
                dims.append(int(self.dim(sym)))
                syms.append(sym)
        return HostTensor(dims, contiguous_strides(dims), dtype, syms, self.storages, name, dtype_known)

    def binop(self, op: ast.operator, a: Any, b: Any) -> Any:
        if isinstance(a, Opaque | HostTensor) or isinstance(b, Opaque | HostTensor) or a is None or b is None:
            read = first_runtime([a, b])  # `tile_sum[-1].item() + 1` (runtime_values.py)
            return read if read is not None and not isinstance(a, HostTensor) and not isinstance(b, HostTensor) else Opaque("binop")
        fn = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.FloorDiv: lambda: a // b,
            ast.Mod: lambda: a % b,
            ast.Div: lambda: a / b,
            ast.Pow: lambda: a**b,
            ast.LShift: lambda: a << b,
            ast.RShift: lambda: a >> b,
            ast.BitAnd: lambda: a & b,
            ast.BitOr: lambda: a | b,
        }.get(type(op))
        if fn is None or oversized_result(op, a, b):
            return Opaque("binop")
        r = fn()
        if (
            self.recording
            and isinstance(op, ast.FloorDiv | ast.Div)
            and isinstance(a, SymInt)
            and isinstance(b, int)
            and not isinstance(b, SymInt)
            and b in (2, 4)
        ):
            root = self.dims.find(a.sym)
            self.dims.multiple_of[root] = max(self.dims.multiple_of.get(root, 1), b)
        if isinstance(op, ast.FloorDiv) and isinstance(a, SymInt) and isinstance(b, SymInt):
            # `x.numel() // N` of a tensor `(B, N)`: B's class again (host_numbers.py)
            left = cancelled_factor(a.sym, b.sym, lambda f, g: self.dims.find(f) == self.dims.find(g))
            if left is not None:
                return SymInt(r, left)
        if (
            isinstance(r, int)
            and not isinstance(r, bool)
            and (isinstance(a, SymInt) or isinstance(b, SymInt))
        ):
            sym = f"({_symname(a)}{_opname(op)}{_symname(b)})"
            if self.recording:
                self.dims.derived.setdefault(sym, sym)
            return SymInt(r, sym)
        return r


def _symname(x: Any) -> str:
    return x.sym if isinstance(x, SymInt) else str(x)


def _opname(op: ast.operator) -> str:
    return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}.get(type(op), "?")
