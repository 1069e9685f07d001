"""NU002-NU005: online-softmax scale tags."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import MaskedRowNaN, SoftmaxScale
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where


@register
class SoftmaxRescaleMissing(Rule[SoftmaxScale]):
    """## What it checks
    In an online softmax, whenever the running max changes from m_old to m_new, the accumulator
    and the running sum are both rescaled by exp(m_old - m_new), and the probabilities of the
    new block are taken relative to that same m_new. Values relative to different maxes never
    meet in one sum.

    ## Why it matters
    A missing rescale adds terms measured against different maxes: results are wrong whenever a
    later key block raises a row's max, that is, on most real inputs longer than one block.

    ## Example
    ```python
    p = tl.exp(qk - m_new[:, None])
    acc = tl.dot(p, v, acc)                  # acc is still relative to m_old
    ```
    Use instead: `acc = tl.dot(p, v, acc * alpha[:, None])` with `alpha = tl.exp(m_old - m_new)`.

    ## Fix
    None automatic."""

    code = "NU002"
    reads = ("scale-mismatch", "stale-max")

    def check(self, fact: SoftmaxScale, ctx: RuleContext) -> Iterator[Finding]:
        if fact.kind == "stale-max":
            msg = "the exponent subtracts a max that does not cover this block's scores (the previous running max)"
            summary = (
                f"{where(fact.probe)}: p is taken relative to the running max before this block was seen"
            )
        else:
            msg = "two values relative to different running maxes are added: one of them was not rescaled by exp(m_old - m_new)"
            summary = f"{where(fact.probe)}: a term relative to m_old meets a term relative to m_new"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary))


@register
class SoftmaxUnstable(Rule[SoftmaxScale]):
    """## What it checks
    `exp` of scores whose sum normalizes a softmax is taken after subtracting the (running) row
    max.

    ## Why it matters
    exp overflows fp32 past 88.7: logits of a trained model reach that, and one inf turns the
    whole row into NaN.

    ## Example
    ```python
    num = tl.exp(x)
    out = num / tl.sum(num, axis=0)
    ```
    Use instead: `num = tl.exp(x - tl.max(x, axis=0))`.

    ## Fix
    None automatic."""

    code = "NU003"
    reads = ("unstable-exp",)

    def check(self, fact: SoftmaxScale, ctx: RuleContext) -> Iterator[Finding]:
        msg = "exp of the scores is taken without subtracting the row max, and its sum normalizes the result"
        summary = (
            f"{where(fact.probe)}: a score of 89 or more makes exp overflow to inf and the row becomes NaN"
        )
        yield self.finding(fact, ctx, msg, base_witness(fact, summary))


@register
class SoftmaxMaskedRowNaN(Rule[MaskedRowNaN]):
    """## What it checks
    A row whose scores are all masked to -inf cannot produce NaN: not by -inf - (-inf) in the
    exponent, not by dividing by a zero sum.

    ## Why it matters
    Empty rows are normal (a sequence of length 0, a query before any visible key, padding). A
    single NaN row poisons everything downstream that reduces over it.

    ## Example
    ```python
    row_max = tl.max(x, axis=0)              # -inf when the row is empty
    num = tl.exp(x - row_max)                # -inf - -inf = NaN
    ```
    Use instead: `row_max = tl.where(row_max == -float("inf"), 0.0, row_max)` and guard the sum.

    ## Fix
    None automatic."""

    code = "NU004"
    reads = ("masked-row-nan",)

    def check(self, fact: MaskedRowNaN, ctx: RuleContext) -> Iterator[Finding]:
        e = elem(fact.tensor, fact.element)
        msg = "a fully masked row turns into NaN here (-inf - -inf, or 0 / 0) and the NaN is stored"
        summary = f"{where(fact.probe)}: the row of {e} has no valid score; {e} is written as NaN"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, element=e))


@register
class NormalizationMismatch(Rule[SoftmaxScale]):
    """## What it checks
    The final division of the accumulator uses the running sum of the same scale, after the last
    block: not a per-block sum, not a sum that was rescaled differently, and not inside the loop
    while later blocks still rescale and add to the quotient.

    ## Why it matters
    Dividing early or by the wrong sum gives rows that do not sum to one: a bias the size of the
    max change, invisible on inputs with one key block.

    ## Example
    ```python
    for start_n in range(0, N_CTX, BLOCK_N):
        ...
        acc = acc / l_i[:, None]             # inside the loop
    ```
    Use instead: divide once, after the loop.

    ## Fix
    None automatic."""

    code = "NU005"
    reads = ("normalized-early", "division-scale")

    def check(self, fact: SoftmaxScale, ctx: RuleContext) -> Iterator[Finding]:
        if fact.kind == "normalized-early":
            msg = "the accumulator is divided by its running sum before the last block: later blocks rescale and add to the quotient"
            summary = f"{where(fact.probe)}: the normalized value is rescaled and accumulated again in the next iteration"
        else:
            msg = "the accumulator is divided by a running sum relative to a different max"
            summary = f"{where(fact.probe)}: numerator and denominator have different scales"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary))
