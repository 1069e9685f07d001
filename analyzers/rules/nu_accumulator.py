"""NU001 low-precision-accumulator."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import Fact
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register
from argus.analyzers.rules.fixes import fp32_accumulator_fix


@register
class LowPrecisionAccumulator(Rule):
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

    def check(self, fact: Fact, ctx: RuleContext) -> Iterator[Finding]:
        d = fact.data
        msg = f"{d['inputs']} products are accumulated in {d['dtype']}: accumulate in fp32 and cast once at the end"
        summary = f"accumulator dtype {d['dtype']} for inputs {d['inputs']}"
        yield self.finding(
            fact,
            ctx,
            msg,
            base_witness(fact, summary, accumulator=d["dtype"]),
            fp32_accumulator_fix(fact, ctx),
        )
