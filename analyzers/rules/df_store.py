"""DF004 store-tag-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import ScatterCollision, ScatterIndex, StoreTag
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where
from argus.analyzers.rules.scatter_address import store_scattered_by_data


@register
class StoreTagMismatch(Rule[StoreTag | ScatterIndex | ScatterCollision]):
    """## What it checks
    The value stored to `out[i, j]` was computed for coordinate (i, j): not transposed, not
    shifted by a tile, not taken from another program's rows; and a row gathered through a
    loaded index (a token id, a sorted MoE slot) is scattered back through the same index.

    ## Why it matters
    `tl.store(c_ptrs, tl.trans(acc))` or a MoE output addressed by sorted position instead of
    token id writes correct numbers to the wrong places: the kernel passes on symmetric or
    identity-routed test inputs and fails in production.

    ## Example
    ```python
    out_ptrs = out_ptr + slots[:, None] * stride_om + offs_n[None, :]   # sorted position
    tl.store(out_ptrs, acc)          # acc rows were gathered by token id
    ```
    Use instead: address `out` with the same flat ids that gathered the rows.

    ## Fix
    None automatic."""

    code = "DF004"
    reads = ("store-tag", "scatter-index", "scatter-collision")

    def check(self, fact: StoreTag | ScatterIndex | ScatterCollision, ctx: RuleContext) -> Iterator[Finding]:
        dest = elem(fact.tensor, fact.dest, fact.symbols)
        if isinstance(fact, ScatterCollision):
            a, b = fact.positions
            msg = (
                f"rows gathered through different entries of a loaded index ({fact.index_symbol}={a} and "
                f"{fact.index_symbol}={b}, which hold different ids) are both written to {dest}: `{fact.tensor}` is "
                f"not addressed by the id that gathered them"
            )
            summary = f"{where(fact.probe)}: the rows of index entries {fact.index_symbol}={a} and {fact.index_symbol}={b} land in {dest}"
        elif isinstance(fact, ScatterIndex):
            msg = (
                f"the stored rows were gathered through a loaded index ({fact.index_symbol}), but `{fact.tensor}` is "
                f"addressed without it"
            )
            summary = f"{where(fact.probe)}: the value for {fact.index_symbol}={fact.index_value} is written to {dest}"
        else:
            if not fact.transposed and store_scattered_by_data(ctx.func, fact.node, fact.smap):
                # each lane writes where its data says (a rank, a compaction slot): the
                # destination is the data's, which synthesized contents cannot stand for
                return
            how = " (transposed)" if fact.transposed else ""
            msg = f"`{fact.tensor}` receives a value computed for {fact.symbol}={fact.got} at {fact.symbol}={fact.expected}{how}"
            summary = f"{where(fact.probe)}: lane {tuple(fact.lane)} stores the value for {fact.symbol}={fact.got} into {dest}"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, destination=dest))
