"""AR001 not-analyzed and AR002 parse-error (emitted by the driver; documented here)."""

from __future__ import annotations

from collections.abc import Iterator

from argus.analyzers.findings import Finding
from argus.analyzers.interp.facts import Fact, TagAssertBad, Unmodelled
from argus.analyzers.rules.base import Rule, RuleContext, register


@register
class NotAnalyzed(Rule[Unmodelled | TagAssertBad]):
    """## What it checks
    Nothing: it reports a construct the analyzer does not model, by name (a custom
    `tl.reduce` combine function, an unknown call, a loop the probe cannot bound).

    ## Why it matters
    Argus never guesses past what it does not understand. The kernel's findings from before the
    construct still stand; what depends on it is not judged, and this note says so.

    ## Example
    `acc = tl.reduce(x, 0, my_combine)` gives "`tl.reduce` with a custom combine function is not
    modelled".

    ## Fix
    None; silence with `# argus: ignore[AR001]` if the note is not useful."""

    code = "AR001"
    reads = ("unmodelled", "tag-assert-bad")

    def check(self, fact: Unmodelled | TagAssertBad, ctx: RuleContext) -> Iterator[Finding]:
        if isinstance(fact, TagAssertBad):
            msg = (
                f"the tag assertion `{fact.text}` is not understood; write `# argus: tag X[i] == Y[j]` "
                f"or `# argus: tag X ~ (A, B)`"
            )
        elif fact.stand_in is not None:
            msg = (
                f"the value of {fact.what} is not known without running the launcher; "
                f"probes use {fact.stand_in}"
            )
        elif fact.fallback:
            msg = (
                f"{fact.what} is not modelled: the kernel was checked as if it had no launch site "
                f"(coverage and grid rules not judged; bounds only where one size bounds every access)"
            )
        else:
            msg = f"{fact.what} is not modelled: findings that depend on it are not judged"
        yield self.finding(fact, ctx, msg, None)


@register
class ParseError(Rule[Fact]):
    """## What it checks
    Nothing: the kernel does not parse (a half-typed edit, a syntax error), or it reads a name
    that nothing binds (no parameter, local, module binding, import or builtin) in code Triton
    compiles, so Triton's compile of it would fail with a NameError.

    ## Why it matters
    A kernel that does not parse or compile cannot run, so nothing in it can be judged; only that
    kernel is affected and nothing else is reported for it, so the other kernels of the file keep
    their findings. Names that are bound somewhere the checker does not follow (an import from
    another module, a binding in one branch) are not this case: those kernels are analyzed.

    ## Example
    `acc = tl.dot(a, ` while typing, or `tl.store(out_ptr + offs, valu)` where only `value` is bound.

    ## Fix
    Finish the statement, or spell the name as it is bound."""

    code = "AR002"
    reads = ()

    def check(self, fact: Fact, ctx: RuleContext) -> Iterator[Finding]:
        return iter(())
