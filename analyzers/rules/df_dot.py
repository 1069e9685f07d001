"""DF001 dot-operand-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import DotMismatch
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register, where


@register
class DotOperandMismatch(Rule[DotMismatch]):
    """## What it checks
    In `tl.dot(a, b)` the contraction coordinate of `a`'s column j equals the contraction
    coordinate of `b`'s row j, element by element: A[m, k] meets B[k, n] with the same k. The
    same holds for `Q @ K^T` (the head-dim index) and `P @ V` (the key index).

    ## Why it matters
    A B tile built as [BLOCK_N, BLOCK_K], or one that drifted along N, still compiles whenever the
    tile sizes happen to agree, runs, and returns wrong sums with no error anywhere.

    ## Example
    ```python
    b_ptrs = b_ptr + offs_n[:, None] * stride_bn + offs_k[None, :] * stride_bk   # [N, K]
    acc += tl.dot(a, b)
    ```
    Use instead: `b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn`.

    ## Fix
    None automatic: only the author knows which operand is laid out wrong."""

    code = "DF001"
    reads = ("dot-mismatch",)
    supersedes = {"DF003": ("coverage",)}  # the operands are wrong, not the loop bounds

    def check(self, fact: DotMismatch, ctx: RuleContext) -> Iterator[Finding]:
        if fact.mismatch == "axis" and (_unnamed_only(fact.a_coord) or _unnamed_only(fact.b_coord)):
            return  # what that axis indexes is not established (see _unnamed_only)
        j = fact.j
        a_c = ", ".join(f"{k}={v}" for k, v in sorted(fact.a_coord.items()))  # sorted: set order varies by hash seed
        b_c = ", ".join(f"{k}={v}" for k, v in sorted(fact.b_coord.items()))
        if fact.mismatch == "axis":
            msg = (
                f"the dot contracts different axes: column {j} of `a` varies along {a_c or '?'} while row {j} of "
                f"`b` varies along {b_c or '?'}"
            )
        else:
            msg = (
                f"contraction index mismatch on {fact.symbol}: column {j} of `a` holds {fact.symbol}={fact.a_value} but "
                f"row {j} of `b` holds {fact.symbol}={fact.b_value}"
            )
        summary = f"{where(fact.probe)}: a[.., {j}] = ({a_c}) meets b[{j}, ..] = ({b_c})"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, a_tag=a_c, b_tag=b_c, lane=j))


def _unnamed_only(coord: dict[str, int]) -> bool:
    """Whether an operand varies only along axes the launcher never names: a literal extent of
    an allocation (`q.new_empty(B, T, H, 64)`'s last axis) or a size left unknown, which the
    binder calls `_t93`. A chunk-local matrix's column indexes positions of T inside the chunk,
    but no code says so: contracting it with rows along T is not a mismatch the code
    establishes (issue 12, rule 1). Named axes on both sides are judged as before."""
    return bool(coord) and all(k.lstrip("(").startswith("_") for k in coord)
