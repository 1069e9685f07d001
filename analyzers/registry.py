"""The rule catalogue: one entry per code of shared/RULES.md, and selection by code prefix.

Codes are a public contract, so they live in one table here; each rule module adds its long
documentation (What it checks / Why it matters / Example / Fix) through `document`, and the rule
pages, SARIF help text and hover text are all generated from that one source.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from argus.analyzers.findings import Severity

DOCS_BASE_URL = "https://github.com/argus-kernels/argus/blob/main/docs/rules"


@dataclass
class RuleInfo:
    code: str
    name: str
    severity: Severity
    summary: str
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def docs_url(self) -> str:
        return f"{DOCS_BASE_URL}/{self.code}.md"

    def markdown(self) -> str:
        """The rule's full documentation page."""
        out = [
            f"# {self.code} {self.name}",
            "",
            f"Default severity: **{self.severity.value}**.",
            "",
            self.summary,
            "",
        ]
        for title, body in self.sections.items():
            out += [f"## {title}", "", body.strip(), ""]
        return "\n".join(out).rstrip() + "\n"


_E, _W, _H, _I = Severity.ERROR, Severity.WARNING, Severity.HINT, Severity.INFO
_TABLE = [
    (
        "DF001",
        "dot-operand-mismatch",
        _E,
        "In `tl.dot(a, b)` the contraction coordinate of `a`'s columns equals that of `b`'s rows, element by element.",
    ),
    (
        "DF002",
        "stale-reduction-pointer",
        _E,
        "A pointer that feeds a load inside a reduction loop moves by exactly one tile of the reduction axis per iteration.",
    ),
    (
        "DF003",
        "reduction-coverage",
        _E,
        "Each output element accumulates every index of the reduction extent exactly once.",
    ),
    (
        "DF004",
        "store-tag-mismatch",
        _E,
        "The value stored to `out[i, j]` was computed for coordinate (i, j).",
    ),
    ("DF005", "assert-tag-failed", _E, "A tag assertion written by the author does not hold."),
    (
        "MB001",
        "oob-load",
        _E,
        "Every lane a load reads with its mask on lies inside the tensor it addresses.",
    ),
    (
        "MB002",
        "oob-store",
        _E,
        "Every lane a store or atomic writes with its mask on lies inside the tensor it addresses.",
    ),
    (
        "MB003",
        "int32-offset-overflow",
        _W,
        "An offset that grows with the problem size is computed in 64-bit before it is multiplied by a stride or size.",
    ),
    (
        "MB004",
        "masked-garbage-reduced",
        _W,
        "Lanes a masked load leaves undefined (no `other=`) never reach a reduction, a `tl.dot` or an unmasked store.",
    ),
    (
        "MB005",
        "unchecked-loaded-index",
        _W,
        "A value loaded from memory that selects a row, page, expert or token is checked against its range or sentinel before it addresses memory.",
    ),
    (
        "GR001",
        "uncovered-output",
        _E,
        "With the launch grid, every element of each output is written by some program.",
    ),
    ("GR002", "write-race", _E, "No two programs or lanes store plain values to the same element."),
    (
        "GR003",
        "grid-mismatch",
        _E,
        "The launch grid has the axes `tl.program_id` reads and the sizes its program-id decomposition assumes.",
    ),
    (
        "GR004",
        "autotune-side-effect",
        _W,
        "An autotuned kernel that accumulates with atomics or updates an argument in place declares it in `reset_to_zero` / `restore_value`.",
    ),
    (
        "NU001",
        "low-precision-accumulator",
        _W,
        "Reductions and `tl.dot` accumulate in fp32 or wider when their inputs are fp16/bf16/fp8.",
    ),
    (
        "NU002",
        "softmax-rescale-missing",
        _E,
        "When the running max changes, the accumulator and the running sum are both rescaled by exp(m_old - m_new).",
    ),
    ("NU003", "softmax-unstable", _W, "`exp` of scores is taken after subtracting the (running) row max."),
    (
        "NU004",
        "softmax-masked-row-nan",
        _W,
        "A row whose scores are all masked to -inf cannot produce NaN or divide by a zero sum.",
    ),
    (
        "NU005",
        "normalization-mismatch",
        _E,
        "The final division uses the running sum that belongs to the same scale as the accumulator.",
    ),
    (
        "PF001",
        "no-autotune",
        _H,
        "Tile sizes, warps and stages are fixed: autotune them over the shapes that are served.",
    ),
    (
        "PF002",
        "no-l2-swizzle",
        _H,
        "Large 2-D grids walk programs row-major: group programs (GROUP_M) for L2 reuse.",
    ),
    (
        "PF003",
        "uncoalesced-access",
        _H,
        "The innermost tile axis of a load is not the tensor's contiguous axis.",
    ),
    (
        "PF004",
        "no-tensor-cores",
        _H,
        "`tl.dot` on fp32 inputs with tf32 disabled, or an elementwise loop where a `tl.dot` fits.",
    ),
    ("PF005", "no-pipelining", _H, "A reduction loop runs with `num_stages` of 1."),
    (
        "PF006",
        "tma-candidate",
        _H,
        "On Hopper, tile loads through tensor descriptors or block pointers would use the TMA engine.",
    ),
    ("PF007", "redundant-load", _H, "The same tile is loaded twice in one iteration."),
    (
        "AR001",
        "not-analyzed",
        _I,
        "A construct the analyzer does not model; the kernel's other findings still stand.",
    ),
    ("AR002", "parse-error", _E, "The file or kernel does not parse; nothing else is reported for it."),
]

RULES: dict[str, RuleInfo] = {c: RuleInfo(c, n, s, d) for c, n, s, d in _TABLE}

_SECTION = re.compile(r"^##\s+(.+?)\s*$", re.M)


def document(code: str, docstring: str | None) -> None:
    """Attach a rule module's docstring (sections headed `## Title`) to its catalogue entry."""
    text = inspect.cleandoc(docstring or "")
    parts = _SECTION.split(text)
    sections = {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    RULES[code].sections = sections


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(code.startswith(p.strip().upper()) for p in patterns if p.strip())


def selected(code: str, select: Iterable[str] | None, ignore: Iterable[str] | None) -> bool:
    """ruff-style selection: prefixes (`DF`, `MB00`, `NU001`); `ignore` wins over `select`."""
    if select is not None and not _matches(code, select):
        return False
    return not (ignore is not None and _matches(code, ignore))


def unknown_codes(patterns: Iterable[str]) -> list[str]:
    """Patterns that match no code at all (a typo in --select deserves an error, not silence)."""
    return [p for p in patterns if p.strip() and not any(c.startswith(p.strip().upper()) for c in RULES)]
