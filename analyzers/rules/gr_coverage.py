"""GR001 uncovered-output and GR003 grid-mismatch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from argus.analyzers.findings import Finding, Severity
from argus.analyzers.interp.facts import GridAxis, GridDecomposition, Uncovered
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where
from argus.analyzers.rules.scratch_buffer import scratch_consumer
from argus.analyzers.rules.untold_extent import untold_axis, untold_note


@register
class UncoveredOutput(Rule[Uncovered]):
    """## What it checks
    With the launch grid, every element of each output the launcher allocates uninitialized
    (`torch.empty*`) is written by some program: the grid is large enough, `cdiv` is used where
    it should be, no early `return` or too-strict mask leaves elements behind.

    ## Why it matters
    Unwritten elements of `torch.empty` hold whatever the allocator last had there: often zeros
    in a fresh process (so tests pass), stale activations in a serving process.

    ## Example
    ```python
    grid = (triton.cdiv(M, 2 * BLOCK_M), triton.cdiv(N, BLOCK_N))   # half the row blocks
    ```
    Use instead: `grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))`.

    ## Fix
    None automatic."""

    code = "GR001"
    reads = ("uncovered",)

    def check(self, fact: Uncovered, ctx: RuleContext) -> Iterator[Finding]:
        e = elem(fact.tensor, fact.element, fact.symbols)
        msg = (
            f"{fact.missing} of {fact.total} elements of `{fact.tensor}` are never written by any program "
            f"(grid {tuple(fact.grid)}); first: {e}"
        )
        summary = f"{where(fact.probe)}, grid={tuple(fact.grid)}: no program writes {e}"
        found = self.finding(fact, ctx, msg, base_witness(fact, summary, element=e, grid=list(fact.grid)))
        params = tuple(a.arg for a in ctx.func.args.args) if ctx.func is not None else ()
        consumer = scratch_consumer(ctx.source, ctx.kernel, fact.tensor, params)
        axis = untold_axis(fact, ctx.source, ctx.kernel, set(params)) if consumer is None else None
        if consumer is not None and found.severity.fails_check:
            found = replace(
                found,
                severity=Severity.HINT,
                message=(
                    f"{msg}; reported as a hint: the launcher allocates it only to pass it on to `{consumer}`, "
                    f"so whether those elements are read is that kernel's reading"
                ),
            )
        elif axis is not None and found.severity.fails_check:
            found = replace(found, severity=Severity.HINT, message=f"{msg}; {untold_note(axis)}")
        yield found


@register
class GridMismatch(Rule[GridAxis | GridDecomposition]):
    """## What it checks
    The grid that launches the kernel has every axis that `tl.program_id` reads, and the sizes
    its program-id decomposition assumes (`off_z = pid // H` needs an axis of Z * H programs).

    ## Why it matters
    `tl.program_id(1)` on a 1-D grid is always 0: every batch but the first is silently skipped.
    An axis of Z programs split as `pid // H, pid % H` covers the wrong (batch, head) pairs.

    ## Example
    ```python
    pid_b = tl.program_id(1)
    ...
    grid = (triton.cdiv(N, BLOCK_N),)
    ```
    Use instead: `grid = (triton.cdiv(N, BLOCK_N), B)`.

    ## Fix
    None automatic."""

    code = "GR003"
    reads = ("grid-axis", "grid-decomposition")
    supersedes = {"GR001": ("uncovered",)}  # one root cause: the grid

    def check(self, fact: GridAxis | GridDecomposition, ctx: RuleContext) -> Iterator[Finding]:
        if isinstance(fact, GridAxis):
            msg = (
                f"`tl.program_id({fact.axis})` reads grid axis {fact.axis}, but the launch grid has "
                f"{fact.grid_axes} axis{'es' if fact.grid_axes != 1 else ''} {tuple(fact.grid)}: it is always 0"
            )
            summary = f"{where(fact.probe)}: grid {tuple(fact.grid)} has no axis {fact.axis}"
        else:
            msg = (
                f"program id axis {fact.axis} is split with `{fact.op} {fact.divisor}`, but the grid launches "
                f"{fact.extent} programs on that axis, not a multiple of {fact.divisor}={fact.divisor_value}"
            )
            summary = f"{where(fact.probe)}: axis {fact.axis} has {fact.extent} programs; {fact.divisor}={fact.divisor_value}"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary))
