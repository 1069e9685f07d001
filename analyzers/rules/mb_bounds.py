"""MB001 oob-load and MB002 oob-store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from argus.analyzers.findings import Finding, Severity
from argus.analyzers.interp.facts import OutOfBounds
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where
from argus.analyzers.rules.fixes import add_mask_fix
from argus.analyzers.rules.untold_extent import untold_axis, untold_note


def _bounds_finding(rule: Rule[OutOfBounds], fact: OutOfBounds, ctx: RuleContext, verb: str) -> Finding:
    t, coords, shape, syms = fact.tensor, fact.coords, fact.shape, fact.symbols
    bounds = ", ".join(
        f"{s}={n}" if not s.startswith("_") else str(n) for s, n in zip(syms, shape, strict=True)
    )
    msg = (
        f"{verb} {elem(t, coords, syms)} outside `{t}` of shape ({bounds}) with its mask on "
        f"({fact.lanes} lane{'s' if fact.lanes != 1 else ''})"
    )
    summary = f"{where(fact.probe)}: lane {tuple(fact.lane)} {verb} {elem(t, coords, syms)} (element offset {fact.offset})"
    fix = add_mask_fix(fact, ctx)
    found = rule.finding(
        fact, ctx, msg, base_witness(fact, summary, tensor=t, element=coords, offset=fact.offset), fix
    )
    params = {a.arg for a in ctx.func.args.args} if ctx.func is not None else set()
    axis = untold_axis(fact, ctx.source, ctx.kernel, params)
    if axis is None or not found.severity.fails_check:
        return found
    return replace(found, severity=Severity.HINT, message=f"{msg}; {untold_note(axis)}")


@register
class OutOfBoundsLoad(Rule[OutOfBounds]):
    """## What it checks
    Every lane that a load reads with its mask on lies inside the tensor it addresses, for every
    problem size the launch allows (probes at 1, B-1, B, B+1, 2B+1 around each tile size).

    ## Why it matters
    An unmasked tail reads the next row, another tensor or unmapped memory. Often the values are
    masked away later and nothing shows, until a size where the read faults or a NaN leaks.

    ## Example
    ```python
    a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K)   # no M mask
    ```
    Use instead: `mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K)`.

    ## Fix
    Adds the mask the kernel already uses for the same offsets, when there is exactly one."""

    code = "MB001"
    reads = ("oob-load",)

    def check(self, fact: OutOfBounds, ctx: RuleContext) -> Iterator[Finding]:
        yield _bounds_finding(self, fact, ctx, "reads")


@register
class OutOfBoundsStore(Rule[OutOfBounds]):
    """## What it checks
    Every lane that a store or atomic writes with its mask on lies inside the tensor it
    addresses, for every problem size the launch allows.

    ## Why it matters
    An out-of-bounds store corrupts a neighbouring tensor or the allocator's memory; the failure
    shows up far away from the kernel, if at all.

    ## Example
    ```python
    tl.store(out_ptr + offsets, x + y)          # the last program writes past n_elements
    ```
    Use instead: `tl.store(out_ptr + offsets, x + y, mask=offsets < n_elements)`.

    ## Fix
    Adds the mask the kernel already uses for the same offsets, when there is exactly one."""

    code = "MB002"
    reads = ("oob-store",)

    def check(self, fact: OutOfBounds, ctx: RuleContext) -> Iterator[Finding]:
        yield _bounds_finding(self, fact, ctx, "writes")
