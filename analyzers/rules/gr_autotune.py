"""GR004 autotune-side-effect."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import AutotuneHazard
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register


@register
class AutotuneSideEffect(Rule[AutotuneHazard]):
    """## What it checks
    An autotuned kernel that accumulates into an argument with atomics, or updates an argument
    in place, lists it in `reset_to_zero` (atomics) or `restore_value` (in-place updates).

    ## Why it matters
    `@triton.autotune` benchmarks every config on the same buffers before the real run: the
    output of the first call for each new key holds the sums of all the benchmark runs.

    ## Example
    ```python
    @triton.autotune(configs=[...], key=["M", "N", "K"])
    ...
    tl.atomic_add(c_ptrs, acc, mask=c_mask)
    ```
    Use instead: `@triton.autotune(configs=[...], key=[...], reset_to_zero=["c_ptr"])`.

    ## Fix
    None automatic (the decorator may be shared)."""

    code = "GR004"
    reads = ("autotune-atomic", "autotune-inplace")

    def check(self, fact: AutotuneHazard, ctx: RuleContext) -> Iterator[Finding]:
        if fact.kind == "autotune-atomic":
            msg = (
                f"`{fact.tensor}` accumulates with atomics in an autotuned kernel but is not in `reset_to_zero`: "
                f"every benchmarked config adds into it"
            )
            need = "reset_to_zero"
        else:
            msg = (
                f"`{fact.tensor}` is read and written in place in an autotuned kernel but is not in `restore_value`: "
                f"each benchmarked config updates it again"
            )
            need = "restore_value"
        summary = f"autotune runs each config on the same `{fact.tensor}` before the real launch; add it to `{need}`"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, tensor=fact.tensor, missing=need))
