"""Pointer steps (DF002): how far each load's address moves between two loop iterations.

Loads record the address of their first active lane per iteration (`record_load_step`);
`tl.dot` names the direct-load operands of an accumulating dot in a loop and the contraction
axis of each (ops_linalg.py); after each program `check_pointer_steps` compares the first two
recorded iterations of each such operand: one tile of the contraction axis, and nothing else.
The interpreter binds the first two functions as its methods (the `OpContext` interface).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np
from argus.analyzers.interp.facts import Fact
from argus.analyzers.interp.values import TensorInfo
from argus.analyzers.model.nodes import subtree

if TYPE_CHECKING:
    from argus.analyzers.interp.context import RunContext


def record_load_step(
    interp: RunContext,
    node: ast.AST,
    ptr_offsets: np.ndarray,
    t: TensorInfo,
    active: np.ndarray | None = None,
) -> None:
    if not interp.loops:
        return
    its = tuple(f.iteration for f in interp.loops)
    first = ptr_offsets.reshape(-1)[:1] if ptr_offsets.size else ptr_offsets.reshape(-1)
    if active is not None and active.size and not bool(active.reshape(-1)[0]):
        first = first[:0]  # the reference lane is masked off: its address says nothing
    interp.load_history.setdefault(id(node), []).append((its, first.copy(), t))


def pointer_update_for(interp: RunContext, load_node: ast.AST) -> ast.AST | None:
    """The statement in the current loop that last moved the load's pointer variable."""
    arg = load_node.args[0] if isinstance(load_node, ast.Call) and load_node.args else None
    if isinstance(arg, ast.Name) and interp.loops:
        return interp.loops[-1].updates.get(arg.id)
    return None


def check_pointer_steps(interp: RunContext) -> None:
    """DF002: each direct-load operand of an accumulating dot in a loop moves one tile of
    the contraction axis per iteration, and nothing else."""
    latest_upd = {id(r[2][0]): r[6] for r in interp.dot_operands if r[6] is not None}
    done: set[int] = set()
    for dot_node, smap, tinfo, cdim, side, step, upd in interp.dot_operands:
        if id(tinfo[0]) in done:
            continue
        done.add(id(tinfo[0]))
        upd = latest_upd.get(id(tinfo[0]), upd)
        hist = interp.load_history.get(id(tinfo[0]))
        if not hist or len(hist) < 2:
            continue
        (its0, off0, t), (its1, off1, _) = hist[0], hist[1]
        if its0[:-1] != its1[:-1] or not off0.size or not off1.size:
            continue
        c0, ok0 = t.unravel(off0)
        c1, ok1 = t.unravel(off1)
        if not (ok0.all() and ok1.all()):
            continue  # the reference lane is outside the tensor: its coordinates mean nothing
        raw = int(off1[0] - off0[0])
        if _moves_one_tile(t, c1 - c0, raw, cdim, step):
            continue
        if _in_descending_loop(interp, tinfo[0]) and _moves_one_tile(t, c0 - c1, -raw, cdim, step):
            continue  # a loop counting down (`range(NT - 1, -1, -1)`) walks the tiles backwards
        if in_flattened_loop(interp, tinfo[0]):
            continue  # one loop over several reduced axes (a convolution's window and channels)
        where = upd if upd is not None else tinfo[0]
        interp.sink.add(
            Fact(
                "pointer-step",
                where,
                smap,
                {
                    "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
                    "sizes": interp.launch.describe_sizes(),
                    "probe": interp.launch.kind,
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
                        for k, v in (interp.launch.config or {}).items()
                        if not k.startswith("num_")
                    ),
                },
                [(tinfo[0], smap, "the load it feeds"), (dot_node, smap, "the accumulating dot")],
            )
        )


def _moves_one_tile(t: TensorInfo, moved: np.ndarray, raw: int, cdim: int, step: int) -> bool:
    """Whether a move of the coordinates by `moved` (`raw` elements of address) between two
    iterations is the step of a contraction loop over dimension `cdim` with tiles of `step`."""
    delta = moved.reshape(-1)
    others = np.delete(delta, cdim)
    # one tile per iteration, or several when other programs take the tiles between
    # (interleaved split-K); a skipped tile shows up as DF003 coverage instead. A loop that
    # walks the chunks backwards (`range(NT - 1, -1, -1)`, a reverse scan) steps by minus one
    # tile: still one tile per iteration (cause K23)
    if not others.any() and delta[cdim] != 0 and abs(int(delta[cdim])) % step == 0:
        return True
    stride = t.strides[cdim] if cdim < len(t.strides) else 0
    # the address moved by one tile of the contraction axis; the coordinates carried into
    # another dimension only because the lane lies past one of its extents (a wrong head
    # index), which is a bounds problem, not a step problem
    return stride > 0 and abs(raw) == step * stride


def _in_descending_loop(interp: RunContext, load: ast.AST) -> bool:
    """Whether the innermost `for` loop around `load` counts down (`range(a, b, -1)`): a
    backward recurrence over chunks (a state gradient accumulated from the last chunk to the
    first) moves its pointers one tile back per iteration, and that is its step."""

    def find() -> bool:
        inner = _innermost_loop(interp, load)
        return inner is not None and _counts_down(inner)

    return interp.kernel.cached(f"descending-loop:{id(load)}", find)


def _innermost_loop(interp: RunContext, load: ast.AST) -> ast.For | None:
    funcs = [interp.kernel.func, *(h.func for h in interp.helpers.values())]
    inner = None
    for f in funcs:
        for n in subtree(f):
            if isinstance(n, ast.For) and any(x is load for x in subtree(n)):
                if inner is None or any(x is n for x in subtree(inner)):
                    inner = n
    return inner


def in_flattened_loop(interp: RunContext, load: ast.AST) -> bool:
    """Whether the innermost loop around `load` walks several axes at once: its variable is
    split with `//` or `%` in the body (`for dhwc in range(KD * KH * KW * NC): w = dhwc %
    KW ...`). Each iteration then moves along whichever axis the split gives, all of them
    reduced: a step along a window axis is the loop's design, not a stale pointer (DF002),
    and each contraction index enters once per window offset, not twice by mistake (DF003)."""

    def find() -> bool:
        loop = _innermost_loop(interp, load)
        if loop is None or not isinstance(loop.target, ast.Name):
            return False
        var = loop.target.id
        return any(
            isinstance(n, ast.BinOp)
            and isinstance(n.op, ast.Mod | ast.FloorDiv)
            and isinstance(n.left, ast.Name)
            and n.left.id == var
            for st in loop.body
            for n in subtree(st)
        )

    return interp.kernel.cached(f"flattened-loop:{id(load)}", find)


def _counts_down(loop: ast.For) -> bool:
    it = loop.iter
    if not isinstance(it, ast.Call) or len(it.args) != 3:
        return False
    step = it.args[2]
    return (
        isinstance(step, ast.UnaryOp)
        and isinstance(step.op, ast.USub)
        and isinstance(step.operand, ast.Constant)
        and isinstance(step.operand.value, int)
        and step.operand.value > 0
    )


def accumulating_dots(func: ast.FunctionDef, helpers: list[ast.FunctionDef]) -> set[int]:
    """Dot calls whose result is added into a variable it came from (`acc += tl.dot(...)`):
    the dots whose operands must step along the contraction axis from one iteration to the
    next (read once per kernel, from its source and its helpers')."""
    out: set[int] = set()
    for f in [func, *helpers]:
        if not any(isinstance(c, ast.Call) and _calls_dot(c) for c in subtree(f)):
            continue  # no dot anywhere in it: none of its assignments can add one
        for n in subtree(f):
            value, target = None, None
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                value, target = n.value, None
            elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                value, target = n.value, n.targets[0].id
            if value is None:
                continue
            inner = subtree(value)
            # the dots first: an assignment holding none adds nothing, whatever the two pure
            # tests below answer (reset_each_iteration scans the loop around the assignment)
            dots = {id(c) for c in inner if isinstance(c, ast.Call) and _calls_dot(c)}
            if not dots:
                continue
            if target is not None and not any(isinstance(x, ast.Name) and x.id == target for x in inner):
                continue
            name = target if target is not None else n.target.id  # type: ignore[union-attr]
            if reset_each_iteration(f, n, name):
                continue  # `b_dv = tl.zeros(...)` earlier in the same iteration: no loop reduction
            out |= dots
    return out


def _calls_dot(c: ast.Call) -> bool:
    """`tl.dot(...)`, `dot(...)`, `x.dot(...)`: a call whose callee is named `dot`."""
    return isinstance(c.func, ast.Attribute | ast.Name) and (
        c.func.attr if isinstance(c.func, ast.Attribute) else c.func.id
    ) == "dot"


def reset_each_iteration(func: ast.FunctionDef, stmt: ast.stmt, name: str) -> bool:
    """Whether `name` is assigned afresh (from a value that does not read it) earlier in the
    body of the innermost loop holding `stmt`: the dot then accumulates within one iteration
    only (a per-chunk tile summed from several products), and its operands need not step."""
    loop = _enclosing_loop(func, stmt)
    if loop is None:
        return False
    for n in subtree(loop):
        if (
            isinstance(n, ast.Assign)
            and n.lineno < stmt.lineno
            and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
            and not any(isinstance(x, ast.Name) and x.id == name for x in subtree(n.value))
        ):
            return True
    return False


def _enclosing_loop(func: ast.FunctionDef, stmt: ast.AST) -> ast.For | ast.While | None:
    """The innermost `for`/`while` of `func` whose subtree holds `stmt` (the loops holding it are
    nested, so the innermost is its nearest loop ancestor), read off a parent map built once per
    function: scanning every loop's subtree for every statement was quadratic in the kernel."""
    parents = func.__dict__.get("_argus_parents")
    if parents is None:
        parents = {c: n for n in subtree(func) for c in ast.iter_child_nodes(n)}
        func._argus_parents = parents  # type: ignore[attr-defined]
    n = parents.get(stmt)
    while n is not None and not isinstance(n, ast.For | ast.While):
        n = parents.get(n)
    return n


def per_iteration_dots(func: ast.FunctionDef) -> set[int]:
    """Dot calls given an accumulator (`tl.dot(a, b, acc)`) that is assigned afresh earlier in
    the same loop iteration: a sum over one iteration's products, not a loop reduction."""
    out: set[int] = set()
    for n in subtree(func):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)):
            continue
        name = n.targets[0].id
        dots = [
            c
            for c in subtree(n.value)
            if isinstance(c, ast.Call)
            and isinstance(c.func, ast.Attribute | ast.Name)
            and (c.func.attr if isinstance(c.func, ast.Attribute) else c.func.id) == "dot"
        ]
        if dots and reset_each_iteration(func, n, name):
            out |= {id(c) for c in dots}
    return out
