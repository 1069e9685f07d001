"""A launch site (`kernel[grid](...)` in the same file) and the probe launch made from it: one
concrete instance of the kernel (sizes, tensors with their strides, constexprs, grid)."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers.findings import Span
from argus.analyzers.model.kernel import SourceMap
from argus.analyzers.model.nodes import subtree

# event kinds that measure the sizes themselves (bounds, which elements a grid writes, how
# often a reduction reaches an index): what they show at sizes a launch guard excludes is no
# fact of the code (a race or a tag mismatch is judged as usual)
SIZE_EVENTS = frozenset({"oob-load", "oob-store", "uncovered", "coverage", "grid-decomposition"})

ROW_PAD = 3  # gap after each row (in elements) of padded probe layouts: overreads land in a gap


@dataclass
class LaunchSite:
    call: ast.Call
    host_func: ast.FunctionDef | None
    body: list[ast.stmt]
    smap: SourceMap
    # what the launcher's module names (model/host_functions.py): functions the launcher calls,
    # module constants; set by whoever builds the site (empty: names stay opaque)
    functions: dict[str, Any] = field(default_factory=dict, kw_only=True)
    # an autograd `backward`'s `forward` beside it (model/binder_ctx.py): what `ctx` holds
    forward: ast.FunctionDef | None = field(default=None, kw_only=True)
    # the module's kernels: name -> (parameters, those written through) (model/launch_later.py)
    kernel_writes: dict[str, tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=dict, kw_only=True)

    @functools.cached_property
    def body_nodes(self) -> list[ast.AST]:
        """Every node of the launcher body, in `ast.walk` order (looked through repeatedly)."""
        return subtree(ast.Module(body=self.body, type_ignores=[]))

    @property
    def grid_node(self) -> ast.expr:
        sub = self.call.func
        assert isinstance(sub, ast.Subscript)
        return sub.slice


@dataclass
class ProbeLaunch:
    kind: str
    args: dict[str, Any]  # param -> TensorInfo | int | float | bool
    runtime: set[str]  # params that are runtime (not constexpr) values
    grid: tuple[int, int, int]
    grid_axes: int
    sizes: dict[str, int]  # display name -> value
    config: dict[str, Any] | None
    site: LaunchSite | None
    assumed: bool
    grid_span: Span | None = None
    notes: list[str] = field(default_factory=list)
    sampled: bool = False  # run only edge programs (further autotune configs)
    bare_axes: frozenset[int] = frozenset()  # grid axes that count batch or head indices only
    fixed_runtime: frozenset[str] = frozenset()  # runtime numbers the launcher fixes (literals)
    # values the probe picked where the code does not establish them, each named ("`BLOCK_M`
    # (autotune configs not readable) = 32"); findings resting on them are at most hints
    choices: tuple[str, ...] = ()
    # grid axes of such a value (axis, its pick named): coverage is not judged, and what a
    # program other than the first along the axis sees rests on the pick
    grid_picks: tuple[tuple[int, str], ...] = ()
    counted_axes: frozenset[int] = frozenset()  # axes whose size the kernel reads (tl.num_programs)
    # parameters given a stand-in value (the launcher's value is not known): a grid split by
    # one of them is not judged (GR003), its divisor being the probe's choice
    stand_ins: frozenset[str] = frozenset()
    # `if` tests the launch sits under that the probe's sizes do not satisfy (launch_guards.py):
    # what bounds and coverage show at those sizes is at most a hint naming the test
    guards: tuple[str, ...] = ()
    # loops the launch sits in, checked at their first iteration (launch_loops.py): what the
    # output's coverage shows there is at most a hint naming the loop
    loops: tuple[str, ...] = ()

    @property
    def grid_chosen(self) -> bool:
        return bool(self.grid_picks)

    def picks_under(self, pids: list[tuple[int, ...] | None], kind: str = "") -> tuple[str, ...]:
        """The picks an event seen by programs `pids` rests on: every constexpr pick; a grid
        axis's pick unless each program is the first along it (program 0 runs under any grid)
        and the kernel does not read the axis's size; for a bounds or coverage event, the launch
        guards these sizes do not satisfy."""
        out = list(self.choices)
        if kind in SIZE_EVENTS:
            out += self.guards
        if kind == "uncovered":
            out += self.loops
        for axis, text in self.grid_picks:
            if axis in self.counted_axes or any(p is None or len(p) <= axis or p[axis] != 0 for p in pids):
                out.append(text)
        return tuple(out)

    def describe_sizes(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.sizes.items())


def find_launch_calls(tree: ast.AST, kernel: str) -> list[ast.Call]:
    out = []
    for n in subtree(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
            v = n.func.value
            name = v.id if isinstance(v, ast.Name) else (v.attr if isinstance(v, ast.Attribute) else None)
            if name == kernel:
                out.append(n)
    return out


def padded_strides(shape: list[int], dims: frozenset[int] | None = None) -> list[int]:
    """Row-major strides with ROW_PAD elements of gap after each row of the innermost
    dimension whose stride the launch passes (`dims`; None: all of them, so the rows of the
    last dimension): `key.stride(0)` of a (tokens, heads, head_size) key pads between tokens
    and leaves each token's heads contiguous, as the kernel that reads only that stride may."""
    rank = len(shape)
    passed = set(range(rank)) if dims is None else {d % rank for d in dims if -rank <= d < rank}
    inner = max((d for d in passed if d < rank - 1), default=None)
    strides, acc = [0] * rank, 1
    for d in range(rank - 1, -1, -1):
        strides[d] = acc
        acc *= max(int(shape[d]), 1)
        if inner is not None and d - 1 == inner:
            acc += ROW_PAD
    return strides
