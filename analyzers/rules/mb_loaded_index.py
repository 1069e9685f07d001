"""MB005 unchecked-loaded-index."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from argus.analyzers.findings import Finding, Severity
from argus.analyzers.interp.facts import UncheckedIndex
from argus.analyzers.rules.base import Rule, RuleContext, base_witness, register, where
from argus.analyzers.rules.index_evidence import kernel_side


@register
class UncheckedLoadedIndex(Rule[UncheckedIndex]):
    """## What it checks
    A value loaded from memory that selects a row, page, slot, expert or token of another tensor
    is checked against its range or sentinel (expert id -1, page < 0, token >= num_valid,
    target == ignore_index) before it addresses memory: by a mask built from that check, or a
    branch (`if expert == -1: return`). Values that only bound the program's own range of work
    (prefix sums such as `cu_seqlens`) are trusted.

    It is a **warning** only where the code itself shows that out-of-range values exist: the
    kernel compares the index with a sentinel or a bound on another path, loads it with a
    negative `other=`, is given a sentinel parameter (`ignore_index`), shifts it into a window
    checked from below only, or host code in the same file fills an integer tensor with a
    negative value (padding the launcher creates). Otherwise the caller's contract (token ids
    below the vocabulary, block-table entries that name pages) is trusted: the finding is a
    **hint** that names that assumption. For the strict reading, make every MB005 a warning in
    the project's settings: `[tool.argus.severity]` `MB005 = "warning"`.

    ## Why it matters
    Routing tables carry sentinels by design: -1 for an expert on another rank, padding ids past
    the valid count. Used as an address, the sentinel reads another expert's weights or memory
    before the tensor.

    ## Example
    ```python
    expert = tl.load(expert_ids_ptr + pid_m)
    w_ptrs = w_ptr + expert * stride_we + ...
    ```
    Use instead: `if expert == -1: ...write zeros...; return` before building `w_ptrs`.

    ## Fix
    None automatic: the right handling of a sentinel is the author's."""

    code = "MB005"
    reads = ("unchecked-index",)

    def check(self, fact: UncheckedIndex, ctx: RuleContext) -> Iterator[Finding]:
        if fact.lower_only:
            msg = (
                f"a value loaded from `{fact.index_from}` addresses `{fact.tensor}` after a check of its lower end "
                f"only: it is shifted into a window (`{fact.window_start}`) whose upper end nothing tests"
            )
        else:
            msg = (
                f"a value loaded from `{fact.index_from}` addresses `{fact.tensor}` without a range or sentinel "
                f"check on the way (no mask or branch tests it)"
            )
        evidence = kernel_side(list(fact.compared), ctx.source, ctx.kernel, fact.index_from, fact.tensor)
        if evidence:
            msg += f"; out-of-range values exist here: {evidence[0]}"
            severity = Severity.WARNING
        else:
            msg += (
                "; trusted as the caller's contract (every value in range): nothing in this file shows "
                "a sentinel or padding"
            )
            severity = Severity.HINT
        summary = f"{where(fact.probe)}: `{fact.index_from}` contents reach the address of `{fact.tensor}` unchecked"
        witness = base_witness(fact, summary, index_tensor=fact.index_from, addressed=fact.tensor)
        witness["evidence"] = "; ".join(evidence) or "none (the caller's contract is assumed)"
        yield replace(self.finding(fact, ctx, msg, witness), severity=severity)
