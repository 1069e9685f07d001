"""DF002 stale-reduction-pointer and DF003 reduction-coverage."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from argus.analyzers.findings import Finding, Severity
from argus.analyzers.interp.facts import PadReduced, PointerStep, ReductionCount
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where


@register
class StaleReductionPointer(Rule[PointerStep]):
    """## What it checks
    A pointer (or block pointer, or descriptor coordinate) that feeds an operand of an
    accumulating `tl.dot` inside a reduction loop moves by exactly one tile along the contraction
    axis per iteration: not 0, not a tile of another axis, not an offset missing its stride.

    ## Why it matters
    A pointer that is never advanced re-reads the first K tile every iteration; one advanced by
    `BLOCK_K` without `* stride_bk` walks along N instead. Both compile and produce wrong results
    whose error depends on the data.

    ## Example
    ```python
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        b_ptrs += BLOCK_K          # moves along N when B is row-major
    ```
    Use instead: `b_ptrs += BLOCK_K * stride_bk`.

    ## Fix
    None automatic: the right step depends on the tensor's layout."""

    code = "DF002"
    reads = ("pointer-step",)
    supersedes = {"DF003": ("coverage",)}  # the pointer steps are wrong, not the loop bounds

    def check(self, fact: PointerStep, ctx: RuleContext) -> Iterator[Finding]:
        t, syms = fact.tensor, fact.symbols
        c0, c1 = fact.coords0, fact.coords1
        delta = [b - a for a, b in zip(c0, c1, strict=True)]
        moved = ", ".join(f"{s} by {x}" for s, x in zip(syms, delta, strict=True) if x) or "nowhere"
        msg = (
            f"`{t}` moves {moved} per iteration of the reduction loop; it must move {fact.dim} by {fact.step} "
            f"(one tile of the contraction axis) and nothing else"
        )
        summary = f"{where(fact.probe)}: iteration 0 reads {elem(t, c0, syms)}, iteration 1 reads {elem(t, c1, syms)}"
        yield self.finding(
            fact,
            ctx,
            msg,
            base_witness(
                fact,
                summary,
                tensor=t,
                iteration0=c0,
                iteration1=c1,
                expected_step=f"{fact.dim} += {fact.step}",
            ),
        )


@register
class ReductionCoverage(Rule[ReductionCount | PadReduced]):
    """## What it checks
    Over the whole reduction, each output element accumulates every index of the reduction
    extent exactly once: no skipped tail, no tile counted twice, and no lane outside the extent
    contributing anything but the neutral element (0 for a sum, -inf for a max).

    ## Why it matters
    `range(0, K // BLOCK_K)` silently drops the last K % BLOCK_K columns; `x - mean` on masked
    tail lanes adds mean^2 per lane to a variance. The results are wrong only for some sizes,
    which is why tests with round sizes miss them.

    ## Example
    ```python
    for k in range(0, K // BLOCK_K):      # drops the K tail
        acc += tl.dot(a, b)
    ```
    Use instead: `for k in range(0, tl.cdiv(K, BLOCK_K))` with the K tail masked.

    ## Fix
    None automatic."""

    code = "DF003"
    reads = ("coverage", "pad-reduced")

    def check(self, fact: ReductionCount | PadReduced, ctx: RuleContext) -> Iterator[Finding]:
        if isinstance(fact, ReductionCount):
            if fact.count == 0:
                msg = (
                    f"the reduction over {fact.dim} skips {fact.missing} of its indices (first: {fact.dim}={fact.index}) for "
                    f"`{fact.tensor}`"
                )
            else:
                msg = f"the reduction over {fact.dim} counts index {fact.dim}={fact.index} {fact.count} times for `{fact.tensor}`"
            summary = f"{where(fact.probe)}: {fact.tensor} element {fact.element} received {fact.dim}={fact.index} {fact.count} times (expected once)"
            yield self.finding(
                fact,
                ctx,
                msg,
                base_witness(fact, summary, tensor=fact.tensor, index=fact.index, count=fact.count),
            )
        else:
            lane = fact.lane
            msg = (
                f"lanes outside the data reach `tl.{fact.op}` holding {fact.value:.4g} instead of the neutral "
                f"{fact.identity}: they change the result"
            )
            summary = f"{where(fact.probe)}: masked-off lane {lane} holds {fact.value:.4g} when it reaches {fact.op}"
            found = self.finding(fact, ctx, msg, base_witness(fact, summary, lane=lane, value=fact.value))
            if fact.sign_from is not None and found.severity.fails_check:
                found = replace(
                    found,
                    severity=Severity.HINT,
                    message=(
                        f"{msg}; reported as a hint: the padding was scaled by values loaded from "
                        f"`{fact.sign_from}`, and only a negative one flips it (the code does not say their sign)"
                    ),
                )
            yield found
