"""MB004 masked-garbage-reduced."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import UndefReduced
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register, where
from argus.analyzers.rules.fixes import other_fix


@register
class MaskedGarbageReduced(Rule[UndefReduced]):
    """## What it checks
    Lanes that a masked load leaves undefined (no `other=`) never reach a reduction, a `tl.dot`
    or a store with its mask on, mixed with defined lanes.

    ## Why it matters
    Masked-off lanes of a load without `other=` hold whatever the register had: often 0 (so
    tests pass), sometimes NaN or a huge value. `tl.max` or `tl.sum` over them returns garbage
    for exactly the rows whose length is not a multiple of the block.

    ## Example
    ```python
    x = tl.load(x_row + cols, mask=cols < n_cols)
    x_max = tl.max(x, axis=0)
    ```
    Use instead: `tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))`.

    ## Fix
    Adds `other=` with the neutral element of the consumer (0.0 for sums and dots, -inf for a
    max, +inf for a min) to the load, when the load is known."""

    code = "MB004"
    reads = ("undef-reduced",)

    def check(self, fact: UndefReduced, ctx: RuleContext) -> Iterator[Finding]:
        op = fact.op
        what = {"store": "are stored with the store's mask on", "dot": "enter `tl.dot`"}.get(
            op, f"reach `tl.{op}`"
        )
        msg = f"undefined lanes of a masked load without `other=` {what} together with real data"
        summary = f"{where(fact.probe)}: lane {tuple(fact.lane)} is undefined (masked off, no `other=`) when it reaches {op}"
        fix = None
        load = fact.load
        if load is not None and op != "store":
            neutral = {"max": '-float("inf")', "min": 'float("inf")'}.get(op, "0.0")
            fix = other_fix(load[0], load[1], ctx, neutral)
        related = ((load[0], load[1], "the masked load without `other=`"),) if load is not None else ()
        witness = base_witness(fact, summary, lane=fact.lane)
        yield self.finding(fact, ctx, msg, witness, fix, also_related=related)
