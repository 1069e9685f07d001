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
from argus.analyzers.model.host_values import KnownTruth, Opaque


class HostGuards:
    """Mixin of HostEval (which provides `expr`, `recording`, `undecided_depth`, `broken_asserts`)."""

    recording: bool
    undecided_depth: int
    broken_asserts: list[Any]
    expr: Callable[[ast.expr], Any]  # HostEval's

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
