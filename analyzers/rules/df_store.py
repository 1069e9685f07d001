"""DF004 store-tag-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import Fact
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, elem, register, where


@register
class StoreTagMismatch(Rule):
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

    def check(self, fact: Fact, ctx: RuleContext) -> Iterator[Finding]:
        d = fact.data
        dest = elem(d["tensor"], d["dest"], d.get("symbols"))
        if fact.kind == "scatter-collision":
            a, b = d["positions"]
            msg = (
                f"rows gathered through different entries of a loaded index ({d['index_symbol']}={a} and "
                f"{d['index_symbol']}={b}, which hold different ids) are both written to {dest}: `{d['tensor']}` is "
                f"not addressed by the id that gathered them"
            )
            summary = f"{where(d)}: the rows of index entries {d['index_symbol']}={a} and {d['index_symbol']}={b} land in {dest}"
        elif fact.kind == "scatter-index":
            msg = (
                f"the stored rows were gathered through a loaded index ({d['index_symbol']}), but `{d['tensor']}` is "
                f"addressed without it"
            )
            summary = f"{where(d)}: the value for {d['index_symbol']}={d['index_value']} is written to {dest}"
        else:
            how = " (transposed)" if d.get("transposed") else ""
            msg = f"`{d['tensor']}` receives a value computed for {d['symbol']}={d['got']} at {d['symbol']}={d['expected']}{how}"
            summary = f"{where(d)}: lane {tuple(d['lane'])} stores the value for {d['symbol']}={d['got']} into {dest}"
        yield self.finding(fact, ctx, msg, base_witness(fact, summary, destination=dest))
