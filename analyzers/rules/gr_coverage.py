"""GR001 uncovered-output and GR003 grid-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import Fact
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where


@register
class UncoveredOutput(Rule):
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

    def check(self, fact: Fact, ctx: RuleContext) -> Iterator[Finding]:
        d = fact.data
        e = elem(d["tensor"], d["element"], d["symbols"])
        msg = (
            f"{d['missing']} of {d['total']} elements of `{d['tensor']}` are never written by any program "
            f"(grid {tuple(d['grid'])}); first: {e}"
        )
        summary = f"{where(d)}, grid={tuple(d['grid'])}: no program writes {e}"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, element=e, grid=list(d["grid"])))


@register
class GridMismatch(Rule):
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

    def check(self, fact: Fact, ctx: RuleContext) -> Iterator[Finding]:
        d = fact.data
        if fact.kind == "grid-axis":
            msg = (
                f"`tl.program_id({d['axis']})` reads grid axis {d['axis']}, but the launch grid has "
                f"{d['grid_axes']} axis{'es' if d['grid_axes'] != 1 else ''} {tuple(d['grid'])}: it is always 0"
            )
            summary = f"{where(d)}: grid {tuple(d['grid'])} has no axis {d['axis']}"
        else:
            msg = (
                f"program id axis {d['axis']} is split with `{d['op']} {d['divisor']}`, but the grid launches "
                f"{d['extent']} programs on that axis, not a multiple of {d['divisor']}={d['divisor_value']}"
            )
            summary = f"{where(d)}: axis {d['axis']} has {d['extent']} programs; {d['divisor']}={d['divisor_value']}"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary))
