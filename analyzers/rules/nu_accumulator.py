"""NU001 low-precision-accumulator."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import LowPrecision
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register
from argus.analyzers.rules.fixes import fp32_accumulator_fix


@register
class LowPrecisionAccumulator(Rule[LowPrecision]):
    """## What it checks
    `tl.dot` and loop reductions accumulate in fp32 (or wider) when their inputs are
    fp16/bf16/fp8.

    ## Why it matters
    fp16 has 11 bits of mantissa: summing K=4096 products in fp16 loses most of the low bits of
    every term after the first few hundred, and bf16 is worse. The error grows with K and passes
    small tests.

    ## Example
    ```python
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    ```
    Use instead: an fp32 accumulator, cast once at the store.

    ## Fix
    Replaces the accumulator's dtype (or `out_dtype`) with `tl.float32`."""

    code = "NU001"
    reads = ("low-precision-dot", "low-precision-acc")

    def check(self, fact: LowPrecision, ctx: RuleContext) -> Iterator[Finding]:
        msg = f"{fact.inputs} products are accumulated in {fact.dtype}: accumulate in fp32 and cast once at the end"
        summary = f"accumulator dtype {fact.dtype} for inputs {fact.inputs}"
        yield self.finding(
            fact,
            ctx,
            msg,
            base_witness(fact, summary, accumulator=fact.dtype),
            fp32_accumulator_fix(fact, ctx),
        )
