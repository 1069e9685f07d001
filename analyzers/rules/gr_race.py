"""GR002 write-race."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import Race
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where


@register
class WriteRace(Rule[Race]):
    """## What it checks
    No two programs (or two lanes of one store) store plain values to the same element;
    accumulation across programs uses atomics.

    ## Why it matters
    Programs run in no fixed order: with split-K, `tl.store` keeps whichever partial sum lands
    last, so the result changes from run to run and GPU to GPU.

    ## Example
    ```python
    pid_k = tl.program_id(2)          # SPLIT_K programs per output tile
    tl.store(c_ptrs, acc, mask=c_mask)
    ```
    Use instead: `tl.atomic_add(c_ptrs, acc, mask=c_mask)` into a zeroed output.

    ## Fix
    None automatic: an atomic also needs the output zeroed first."""

    code = "GR002"
    reads = ("race",)

    def check(self, fact: Race, ctx: RuleContext) -> Iterator[Finding]:
        e = elem(fact.tensor, fact.element, fact.symbols)
        if fact.other_pid is None:
            msg = f"two lanes of this store write the same element {e}"
            summary = f"{where(fact.probe)}: two lanes write {e}"
        else:
            other = tuple(fact.other_pid)
            msg = f"programs {tuple(fact.probe.pid or ())} and {other} both store {e} without an atomic"
            summary = f"{where(fact.probe)}: {e} is written by program {tuple(fact.probe.pid or ())} and by program {other}"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, element=e, other_pid=fact.other_pid))
