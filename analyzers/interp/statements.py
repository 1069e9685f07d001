"""Statements: what each statement of a kernel body (or a helper's) does to the environment.

Assignments bind names (and note which loop statement last moved each name, for the pointer-step
check), `if` takes the branch its condition decides, `for` runs `range`/`tl.static_range` loops
iteration by iteration under a bound, `return` ends the function through `KernelReturn`. Each
statement is also the budget's checkpoint, and where the author's tag assertions (DF005) are
checked. Expressions are evaluated by expressions.py.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp.absent_args import replace_absent
from argus.analyzers.interp.asserts import check_assertion
from argus.analyzers.interp.budget import over_time, time_exceeded
from argus.analyzers.interp.context import LoopFrame
from argus.analyzers.interp.expressions import evaluate, truth
from argus.analyzers.interp.facts import Fact
from argus.analyzers.interp.ops_arith import binop
from argus.analyzers.interp.ops_core import Retype
from argus.analyzers.interp.ops_creation import dtype_read_off_unknown_tensor
from argus.analyzers.interp.ops_dtype import raise_reached
from argus.analyzers.interp.values import LOW_PRECISION, KernelReturn, Val, is_float, scalar
from argus.analyzers.model.nodes import range_operands

if TYPE_CHECKING:
    from argus.analyzers.interp.context import RunContext

MAX_ITERATIONS = 512


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def block(interp: RunContext, stmts: list[ast.stmt], env: dict[str, Any]) -> None:
    for st in stmts:
        stmt(interp, st, env)


def stmt(interp: RunContext, st: ast.stmt, env: dict[str, Any]) -> None:
    if over_time(interp.deadline):
        raise time_exceeded(interp.time_limit)  # at the kernel: where time ran out is arbitrary
    exec_stmt(interp, st, env)
    if (
        interp.assertions
        and interp.smap is interp.kernel.smap
        and not isinstance(st, ast.For | ast.While | ast.If)
    ):
        check_assertions(interp, st, env)


def check_assertions(interp: RunContext, st: ast.stmt, env: dict[str, Any]) -> None:
    """The tag assertions written on the rows of `st`, checked against the values after it."""
    row0 = interp.smap.row0
    for row in range(row0 + st.lineno - 1, row0 + (st.end_lineno or st.lineno)):
        a = interp.assertions.get(row)
        if a is not None:
            check_assertion(interp, a, st, env)


def exec_stmt(interp: RunContext, st: ast.stmt, env: dict[str, Any]) -> None:
    if isinstance(st, ast.Assign):
        v = evaluate(interp, st.value, env)
        for t in st.targets:
            assign(interp, t, v, env, st)
    elif isinstance(st, ast.AugAssign):
        cur = evaluate(interp, st.target, env)
        rhs = evaluate(interp, st.value, env)
        if cur is None or rhs is None:  # an argument the launch as bound omits (absent_args.py)
            cur, rhs = replace_absent(interp, st.op, cur, rhs, st.target, st.value)
        if isinstance(st.op, ast.Add | ast.Sub):
            check_accumulator(interp, cur, rhs, st)
        v = binop(interp, st.op, cur, rhs, st)
        assign(interp, st.target, v, env, st)
    elif isinstance(st, ast.AnnAssign):
        if st.value is not None:
            assign(interp, st.target, evaluate(interp, st.value, env), env, st)
    elif isinstance(st, ast.Expr):
        if isinstance(st.value, ast.Constant):
            return  # docstring
        evaluate(interp, st.value, env)
    elif isinstance(st, ast.If):
        c = evaluate(interp, st.test, env)
        cond = truth(interp, c, st.test)
        if isinstance(c, Val):
            interp.branch_checked |= set(c.checked) | set(c.loaded_from)
        block(interp, st.body if cond else st.orelse, env)
    elif isinstance(st, ast.For):
        for_loop(interp, st, env)
    elif isinstance(st, ast.While):
        while_loop(interp, st, env)
    elif isinstance(st, ast.Return):
        raise KernelReturn(evaluate(interp, st.value, env) if st.value is not None else None)
    elif isinstance(st, ast.Pass):
        return
    elif isinstance(st, ast.Break):
        raise _Break()
    elif isinstance(st, ast.Continue):
        raise _Continue()
    elif isinstance(st, ast.Assert):
        c = evaluate(interp, st.test, env)
        if isinstance(c, Val):
            interp.branch_checked |= set(c.checked) | set(c.loaded_from)
    elif isinstance(st, ast.With):
        block(interp, st.body, env)
    elif isinstance(st, ast.Raise):
        raise_reached(interp, st)  # ops_dtype.py: a compile error; a guessed dtype is retyped
    else:
        raise Unevaluable(f"the statement `{type(st).__name__}`", st)


def check_accumulator(interp: RunContext, acc: Any, term: Any, st: ast.stmt) -> None:
    """NU001 for loop reductions: `acc += term` in a loop, with `acc` made by tl.zeros/tl.full
    in fp16/bf16/fp8: every iteration rounds the running sum to that precision."""

    if not interp.loops or not isinstance(acc, Val) or not isinstance(term, Val):
        return
    if acc.init_site is None or acc.dtype not in LOW_PRECISION or not is_float(term.dtype):
        return
    node, smap = acc.init_site
    if dtype_read_off_unknown_tensor(node, interp.launch.args):
        return  # `tl.zeros(..., dtype=out_ptr.dtype.element_ty)` of a tensor whose dtype is a guess
    interp.sink.add(
        Fact(
            "low-precision-acc",
            node,
            smap,
            {
                "dtype": acc.dtype,
                "inputs": term.dtype,
                "pid": interp.pid[: max(interp.launch.grid_axes, 1)],
                "sizes": interp.launch.describe_sizes(),
            },
            [(st, interp.smap, "the accumulation in the loop")],
        )
    )


def assign(interp: RunContext, target: ast.expr, v: Any, env: dict[str, Any], st: ast.stmt) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = v
        for frame in interp.loops:
            frame.updates[target.id] = st
        if interp.trace is not None and interp.smap is interp.kernel.smap:
            interp.trace.setdefault((target.id, st.lineno), v)
    elif isinstance(target, ast.Tuple | ast.List):
        if not isinstance(v, tuple | list) or len(v) != len(target.elts):
            raise Unevaluable("a tuple assignment of a different length", st)
        for t, x in zip(target.elts, v, strict=True):
            assign(interp, t, x, env, st)
    else:
        raise Unevaluable(f"assignment to `{ast.unparse(target)}`", st)


def range_args(interp: RunContext, call: ast.Call, env: dict[str, Any]) -> tuple[list[int], bool, bool]:
    """The integer arguments of `range(...)`, and whether the bound depends on the launch
    (runtime) or grows with the problem size: the loop variable inherits both."""
    vals = [evaluate(interp, a, env) for a in range_operands(call)]
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


def for_loop(interp: RunContext, st: ast.For, env: dict[str, Any]) -> None:
    it = st.iter
    if not isinstance(it, ast.Call):
        raise Unevaluable(f"a loop over `{ast.unparse(it)}`", st)
    fname = _callee_text(it.func)
    if fname.split(".")[-1] not in ("range", "static_range"):
        raise Unevaluable(f"a loop over `{fname}`", st)
    ints, runtime, _grows = range_args(interp, it, env)
    rng = range(*ints)
    if len(rng) > MAX_ITERATIONS:
        raise Unevaluable(f"a loop of {len(rng)} iterations at this probe size", st)
    frame = LoopFrame(st)
    interp.loops.append(frame)
    try:
        for i, x in enumerate(rng):
            frame.iteration = i
            v = scalar(x, "int32", grows=runtime, runtime=runtime, loopvar=True)
            assign(interp, st.target, v, env, st)
            try:
                block(interp, st.body, env)
            except _Continue:
                continue
            except _Break:
                break
        else:
            block(interp, st.orelse, env)
    finally:
        interp.loops.pop()


def _callee_text(func: ast.expr) -> str:
    """`ast.unparse(func)`, kept on the node: a loop's header is read again at every execution
    of the loop (per program, per enclosing iteration), and trees are not edited after parsing
    (as `model/nodes.subtree` relies on)."""
    text = func.__dict__.get("_argus_text")
    if text is None:
        text = func._argus_text = ast.unparse(func)  # type: ignore[attr-defined]
    return text


def while_loop(interp: RunContext, st: ast.While, env: dict[str, Any]) -> None:
    frame = LoopFrame(st)
    interp.loops.append(frame)
    try:
        for i in range(MAX_ITERATIONS + 1):
            if i == MAX_ITERATIONS:
                raise Unevaluable("a while loop that did not end within the probe's budget", st)
            frame.iteration = i
            if not truth(interp, evaluate(interp, st.test, env), st.test):
                break
            try:
                block(interp, st.body, env)
            except _Continue:
                continue
            except _Break:
                break
    finally:
        interp.loops.pop()
