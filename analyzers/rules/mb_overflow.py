"""MB003 int32-offset-overflow."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from argus.analyzers.findings import Finding, Severity
from argus.analyzers.interp.facts import Int32Offset
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register
from argus.analyzers.rules.fixes import wrap_int64_fix


@register
class Int32OffsetOverflow(Rule[Int32Offset]):
    """## What it checks
    An offset that grows with the problem size (a program id, a loop-walked row or a loaded
    index, multiplied by a runtime stride or size) is computed in 64-bit: `.to(tl.int64)` before
    the multiply. In-tile offsets (`tl.arange(0, B) * stride`), one-tile increments, values only
    compared, and tensor-descriptor coordinates may stay 32-bit.

    ## Why it matters
    Program ids and `tl.arange` are int32. `row * stride` wraps past 2^31 elements (an 8 GB fp32
    tensor, or a 4096 x 524288 KV cache) and the kernel reads or writes far outside its tensor.
    Small tests never reach the size, so only a range argument finds it.

    ## Example
    ```python
    x_row = x_ptr + row * x_row_stride
    ```
    Use instead: `x_row = x_ptr + row.to(tl.int64) * x_row_stride`.

    ## Severity
    A warning where the growing index multiplies a stride or size that grows with the problem
    too (rows times a row length, a batch index times a batch stride: real tensors pass 2^31
    elements that way). A hint, naming the assumption, where the launch passes the factor as a
    fixed number (`row * 8` wraps only past 2^28 rows) or does not state the tensor's shape.

    ## Fix
    Casts the growing operand to int64 before the multiply."""

    code = "MB003"
    reads = ("int32-offset",)

    def check(self, fact: Int32Offset, ctx: RuleContext) -> Iterator[Finding]:
        expr = fact.expr
        msg = (
            f"`{expr}` is computed in int32 and grows with the problem size; it wraps once the product passes "
            f"2^31 - 1 (tensor `{fact.tensor}`)"
        )
        factor, grows_max = fact.factor, fact.grows_max
        if factor > 0:
            needed = -(-(2**31) // factor)  # the index at which the int32 product wraps
            summary = (
                f"{fact.probe.sizes}: here the index reaches {grows_max} and {fact.factor_name} = {factor}; "
                f"the product passes 2^31 - 1 once the index reaches {needed:,} "
                f"(a tensor of {needed:,} x {factor:,} elements)"
            )
        else:
            summary = f"{fact.probe.sizes}: a growing index times a runtime stride, in int32"
        finding = self.finding(
            fact,
            ctx,
            msg,
            base_witness(fact, summary, expression=expr, bound="2^31 - 1", stride=factor),
            wrap_int64_fix(fact, ctx),
        )
        assumption = _size_assumption(fact)
        if assumption:
            finding = replace(finding, message=f"{msg}; {assumption}", severity=Severity.HINT)
        yield finding


def _size_assumption(fact: Int32Offset) -> str:
    """Why the product may never pass 2^31, where the code leaves that open (empty: a growing
    index times a stride or size that grows with the problem too, which real inputs reach)."""
    if fact.factor_fixed:
        return (
            f"reported as a hint: the launch passes `{fact.factor_name}` as a fixed number, so this wraps only if "
            f"the growing index alone passes 2^31 / {fact.factor or fact.factor_name}"
        )
    if not fact.tensor_sized:
        return f"reported as a hint: the launcher does not state the shape of `{fact.tensor}`, so its size is assumed"
    return ""
