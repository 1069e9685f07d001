"""The prompt the `llm` policy sends: the kernel, findings with witnesses, the profile, cards, history.

The reply contract is stated in the prompt itself (the model cannot know it otherwise): one fenced
python block whose module-level definitions replace the same names in the user's file.
"""

from __future__ import annotations

import json

from argus.agent.optimize.history import History
from argus.agent.optimize.policies.base import PolicyContext

SYSTEM = """You optimize Triton GPU kernels. Every candidate you write is checked, in this order, by:
1. invariants: the Argus checker (data-flow tags, bounds, grid coverage, softmax numerics); any error, or any
   warning the user's kernel does not already have, rejects it;
2. correctness: fresh random inputs on several shapes (ragged tails included), outputs poisoned with NaN,
   compared with the reference; no torch computation outside the Triton kernel, no threads or streams,
   no patching of anything;
3. performance: CUDA-event timing on the served shapes; it must beat the user's kernel.
Reply with exactly ONE fenced ```python code block. Its module-level definitions (functions, including the
@triton.jit kernel and the launcher, classes and constants) REPLACE the definitions of the same names in
the user's file; new names are added; imports you add are added; everything else in the file stays.
Keep the launcher's name and signature. Do not redefine the reference."""


def render(ctx: PolicyContext, history: History) -> list[dict[str, str]]:
    """Chat messages for one proposal."""
    findings = [f for f in ctx.diagnosis.to_json()["findings"]]
    cards = "\n\n".join(f"### {h.card.title} ({h.card.id})\n{_mechanism(h.card)}" for h in ctx.cards[:4])
    profile = ctx.profile.get("timing") or "not measured (no GPU)"
    parts = [
        f"Kernel `{ctx.kernel}`, launcher `{ctx.launcher}`, pattern `{ctx.diagnosis.pattern}`, "
        f"bound: {ctx.diagnosis.bound or 'unknown'}.",
        f"## The user's file ({ctx.path})\n```python\n{ctx.source}\n```",
        "## Checker findings on the user's kernel\n" + (json.dumps(findings, indent=1) if findings else "none"),
        f"## Profile of the user's kernel\n{json.dumps(profile, default=str)[:2000]}",
        f"## Techniques that fit (knowledge cards)\n{cards or 'none'}",
    ]
    if history.attempts:
        parts.append("## Your previous candidates\n" + history.table())
        fb = history.feedback()
        if fb:
            parts.append("## Why the last rejected candidate failed (fix this)\n" + json.dumps(fb[:8], indent=1, default=str))
    parts.append("Write the next candidate.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _mechanism(card) -> str:
    body = card.body
    start = body.find("## Mechanism")
    if start < 0:
        return body[:800]
    end = body.find("\n## ", start + 5)
    return body[start + len("## Mechanism"): end if end > 0 else None].strip()[:1200]
