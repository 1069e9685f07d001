"""DF005 assert-tag-failed."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import TagAssertFailed
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register, where


@register
class AssertTagFailed(Rule[TagAssertFailed]):
    """## What it checks
    A tag assertion the author wrote in a comment holds, in every probe and program:
    `# argus: tag a[1] == b[0]` (axis 1 of `a` carries the same coordinates as axis 0 of `b`) or
    `# argus: tag c ~ (M, N)` (axis 0 of `c` runs along M and axis 1 along N), checked right after
    the statement on that line runs. Comments never change what Triton compiles.

    ## Why it matters
    The built-in rules know GEMM, attention and MoE; a kernel of your own has invariants only you
    know (which axis of a gathered tile is the expert, that a transposed operand is meant to be
    transposed). Writing them down makes the checker hold you to them on every edit.

    ## Example
    ```python
    kt = tl.load(k_ptrs)             # argus: tag kt ~ (HEAD_DIM, N_CTX)
    qk = tl.dot(q, kt)               # argus: tag q[1] == kt[0]
    ```

    ## Fix
    None automatic: either the code or the assertion is wrong."""

    code = "DF005"
    reads = ("tag-assert",)

    def check(self, fact: TagAssertFailed, ctx: RuleContext) -> Iterator[Finding]:
        msg = f"tag assertion `{fact.text}` does not hold: {fact.left} carries {fact.left_tag}, {fact.right} carries {fact.right_tag}"
        summary = f"{where(fact.probe)}: lane {fact.lane}: {fact.left} = ({fact.left_tag}) but {fact.right} = ({fact.right_tag})"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, assertion=fact.text))
