"""The tests a launch sits under (`if combin_shape[dim] != 1: kernel[...]`), as the host
evaluator meets them on its way to the launch: their value at the probe's sizes, kept for
launch_guards.py (fprec: findings under an undecided test are hints naming it), and a test the
sizes contradict, which refuses the probe like a broken assert (hosttensor). A mixin of HostEval,
kept apart so host.py stays one job: statements and expressions."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from argus.analyzers.errors import HOST_ERRORS
from argus.analyzers.imports import NameRenamer
from argus.analyzers.model.guard_pins import computed_pins
from argus.analyzers.model.guard_ranks import rank_wants
from argus.analyzers.model.host_functions import undocumented
from argus.analyzers.model.host_values import KnownTruth, Opaque
from argus.analyzers.model.node_memo import fresh_copy, on_node


class HostGuards:
    """Mixin of HostEval (which provides `expr`, `recording`, `undecided_depth`, `broken_asserts`)."""

    recording: bool
    undecided_depth: int
    broken_asserts: list[Any]
    expr: Callable[[ast.expr], Any]  # HostEval's
    rank_wants: dict[str, tuple[int, bool | None, str]]
    rank_alias_map: dict[str, ast.expr]
    pin_wants: dict[str, int]
    env: dict[str, Any]
    record_assert: Callable[[ast.expr], None]  # HostAsserts'

    def note_pin_test(self, test: ast.expr) -> None:
        """`elif dim == saved_v.ndim - 1:` holding the launch: the value `dim` must take there
        (guard_pins.computed_pins), for the binder to pin a launcher parameter to."""
        if self.undecided_depth:
            return

        def value(e: ast.expr) -> Any:
            try:
                return self.expr(e)
            except (*HOST_ERRORS, RecursionError):
                return None

        for name, v in computed_pins(test, value).items():
            self.pin_wants.setdefault(name, v)

    def note_rank_test(self, test: ast.expr, holds: bool) -> None:
        """Ranks a test on the launch's path states (guard_ranks.py): `== K` fixes one, a lower
        bound raises a bound already noted, a fixed rank is kept over any bound."""
        if self.undecided_depth:
            return  # a test on a side of an undecided `if` may never run

        def value(e: ast.expr) -> Any:
            try:
                return self.expr(e)
            except (*HOST_ERRORS, RecursionError):
                return None

        inlined = self._predicate_test(test, holds)
        if inlined is not None:  # `if not can_fuse(gate, value): raise`: what `can_fuse` returns
            test, holds = inlined
            if holds:  # holding on the launch's path, it relates sizes as an assert does
                self.record_assert(test)
        for name, rank, exact, partner in rank_wants(test, holds, value, self.rank_alias_map):
            old = self.rank_wants.get(name)
            if old is None or _stronger(exact, rank, old):
                self.rank_wants[name] = (rank, exact, partner)

    def _predicate_test(self, test: ast.expr, holds: bool) -> tuple[ast.expr, bool] | None:
        """`pred(a, b)` (or `not pred(a, b)`) of a host function whose body is one `return E`:
        E with its parameters renamed to the plain names passed, and whether it holds on the
        launch's path (sglang's `can_fuse_qwen4_gate_value`: `return ... and gate.dim() == 3`)."""
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, holds = test.operand, not holds
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)) or test.keywords:
            return None
        node = getattr(self.env.get(test.func.id), "node", None)
        if not isinstance(node, ast.FunctionDef):
            return None
        # (kept on the call while the predicate's tree is the same: every probe runs the launcher)
        inlined = on_node(test, "predicate_inlined", lambda: _inlined(test, node), node)
        return None if inlined is None else (inlined, holds)

    def guard_value(self, test: ast.expr) -> Any:
        """The value of a test the launch sits under, at these sizes (Opaque when unknown)."""
        try:
            c = self.expr(test)
        except (*HOST_ERRORS, RecursionError):
            return Opaque("guard")
        return c.truth if isinstance(c, KnownTruth) else c

    def _guard_contradicted(self, st: ast.If, inside: bool) -> None:
        """The launch sits inside `if log_n == 7:` and the probe's sizes make the test false: no
        real call launches the kernel at those sizes, so the probe is refused like a broken
        assert (launch.py words it). Only `==` over numbers counts (a name or subscript holding a size or an int computed from sizes): a
        flag or an option (`if causal:`, `if dtype == torch.float16`) keeps the launch, and so
        does a path chosen by an inequality (`if n > 4096:`), whose other probes still hold."""
        test = st.test
        if not inside or self.recording or self.undecided_depth or not isinstance(test, ast.Compare):
            return  # the `else` of `if ord == 2:` is an option the probe did not choose, not a size
        if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
            # `if n > 4096:` picks a path by size: each probe of the other path stays; a probe
            # that hits the one value `if n != 1:` excludes keeps its launch, and what it shows
            # there is a hint naming the test (launch_guards.py)
            return
        value = self.expr(st.test)
        if not isinstance(value, bool) or value == inside:
            return
        numbers = (
            self.expr(n)
            for n in ast.walk(st.test)
            if isinstance(n, ast.Name | ast.Subscript | ast.Call) and n is not st.test
        )
        if any(isinstance(v, int) and not isinstance(v, bool) for v in numbers):
            self.broken_asserts.append(st)  # type: ignore[arg-type]


def _stronger(exact: bool | None, rank: int, old: tuple[int, bool | None, str]) -> bool:
    """Whether a rank wanted replaces the one noted: a fixed rank any other (the first fixed
    one stays), a lower bound a smaller bound or a match."""
    if old[1]:
        return False
    if exact:
        return True
    if exact is False:
        return old[1] is None or old[0] < rank
    return False


def _inlined(call: ast.Call, pred: ast.FunctionDef) -> ast.expr | None:
    """The expression `pred`'s one `return` gives, its parameters renamed to the plain names
    `call` passes (its locals are left: a test of one names nothing of the caller's)."""
    body = undocumented(pred).body  # type: ignore[attr-defined]
    params = [a.arg for a in pred.args.posonlyargs + pred.args.args]
    if not (len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None):
        return None
    if len(call.args) != len(params) or not all(isinstance(a, ast.Name) for a in call.args):
        return None
    renames = {p: (a.id, None) for p, a in zip(params, call.args, strict=True)}  # type: ignore[attr-defined]
    return NameRenamer(renames).visit(fresh_copy(body[0].value))  # type: ignore[no-any-return]
