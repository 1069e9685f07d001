"""Which PF hint, and which knowledge card, a measurement supports: one decision, two front ends.

The editor (argus_lsp/features/profile_lens.py) shows these hints as diagnostics once a kernel has
been profiled, and `argus profile` prints them under its table, so a kernel gets the same advice
in both. Pure: no LSP, no subprocess, nothing of the user's code runs here.

A kernel gets a hint only when it sits under HINT_BELOW_PCT of the roof that binds it (or is
latency-bound) on a GPU with a peak table entry. The hint reuses the existing PF codes: a PF
finding the checker already reported in the kernel whose knowledge card covers the measured
bottleneck (the measurement backs the static hint), else the code of the card that is the first
thing to check for that bottleneck (FALLBACK_CODE).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argus.agent.profile.result import ProfileResult
from argus.analyzers import RULES, Finding, Severity, Span, check_source
from argus.analyzers.suppressions import apply_suppressions
from argus.knowledge.retrieve import by_code, recommend

#: Under this percent of the binding roof a measured kernel gets a PF hint.
HINT_BELOW_PCT = 50.0
#: The code (and so the card) to cite for a bottleneck when the checker reported no PF finding
#: in the kernel whose card covers it: coalescing for memory, tensor cores for compute,
#: autotuning (tile sizes, warps, stages: too few programs) for latency.
FALLBACK_CODE = {"memory": "PF003", "compute": "PF004", "latency": "PF001"}


def bottleneck(r: ProfileResult) -> str | None:
    """The bottleneck to hint at: memory, compute or latency; None when the kernel is near its roof."""
    roof = r.roofline
    if r.is_cpu or not r.peak or roof.pct_of_roof is None:
        return None
    if roof.bound == "latency-bound":
        return "latency"
    if roof.bound == "memory-bound" and (roof.pct_memory or roof.pct_of_roof) < HINT_BELOW_PCT:
        return "memory"
    if roof.bound == "compute-bound" and (roof.pct_compute or roof.pct_of_roof) < HINT_BELOW_PCT:
        return "compute"
    return None


def measured_summary(r: ProfileResult) -> str:
    """The numbers a hint cites: `measured 2.53 ms, 435 TFLOP/s (44% of H200 bfloat16 peak), ...`."""
    roof = r.roofline
    parts = [f"measured {format_ms(r.median_ms)}"]
    if roof.tflops is not None:
        pc = f" ({roof.pct_compute:.0f}% of {r.peak} {r.dtype} peak)" if roof.pct_compute is not None else ""
        parts.append(f"{roof.tflops:.3g} TFLOP/s{pc}")
    if roof.tbs is not None:
        pm = f" ({roof.pct_memory:.0f}% of {r.peak} HBM peak)" if roof.pct_memory is not None else ""
        parts.append(f"{roof.tbs:.3g} TB/s{pm}")
    where = f"{roof.pct_of_roof:.0f}% of the roof at its intensity" if roof.pct_of_roof is not None else ""
    return f"{', '.join(parts)}: {roof.bound}, {where}".rstrip(", ")


def format_ms(ms: float) -> str:
    return f"{ms:.3g} ms" if ms >= 0.01 else f"{ms * 1e3:.3g} us"


def kernel_name_span(source: bytes, kernel: str, fallback_line: int | None = None) -> tuple[int, int] | None:
    """Byte offsets of the kernel's name in its top-level `def`/`class` (the editor's text may differ
    from the file on disk the task was read from); else the whole 1-based `fallback_line`."""
    m = re.search(
        rb"^(?:async[ \t]+)?(?:def|class)[ \t]+(" + re.escape(kernel.encode()) + rb")\b", source, re.M
    )
    if m:
        return m.start(1), m.end(1)
    if not fallback_line:
        return None
    starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", source)]
    start = starts[min(fallback_line - 1, len(starts) - 1)]
    end = re.compile(rb"\r|\n").search(source, start)
    return start, end.start() if end else len(source)


def kernel_text(source: bytes, name_start: int) -> str:
    """The kernel's own text: from its name to the next top-level statement."""
    nxt = re.compile(rb"^\S", re.M).search(source, source.find(b"\n", name_start) + 1)
    return source[name_start : nxt.start() if nxt else len(source)].decode("utf-8", "replace")


def covers(code: str, bottleneck: str) -> bool:
    """Whether a knowledge card for `code` names `bottleneck` among the ones it addresses."""
    return any(bottleneck in c.bottlenecks for c in by_code(code))


def card_for(code: str, bottleneck: str, text: str) -> tuple[str, str] | None:
    """(id, title) of the knowledge card for `code` that covers `bottleneck`; when several do, the
    one `knowledge.retrieve` ranks first against the kernel's text (attention -> online softmax)."""
    cards = [c for c in by_code(code) if bottleneck in c.bottlenecks] or by_code(code)
    if not cards:
        return None
    hits = recommend([code], bottleneck=bottleneck, text=text, cards=cards, limit=1)
    card = hits[0].card if hits else cards[0]
    return card.id, card.title


def measured_findings(
    r: ProfileResult, kernel: str, source: bytes, static: Sequence[Finding], fallback_line: int | None = None
) -> list[Finding]:
    """The PF hint (zero or one) that the measurement `r` of `kernel` supports, on the kernel's name.

    `static` are the checker's findings for `source`: a PF code among them in this kernel whose
    card covers the measured bottleneck is the one cited; else FALLBACK_CODE.
    """
    neck = bottleneck(r)
    span = kernel_name_span(source, kernel, fallback_line)
    if neck is None or span is None:
        return []
    codes = [f.code for f in static if f.kernel == kernel and f.code.startswith("PF")]
    backed = [c for c in dict.fromkeys(codes) if covers(c, neck)]
    code = backed[0] if backed else FALLBACK_CODE[neck]
    card = card_for(code, neck, kernel_text(source, span[0]))
    info = RULES.get(code)
    why = (
        f"the checker's {code} hint in this kernel fits that bottleneck"
        if backed
        else f"first thing to check for a {neck}-bound kernel: {info.summary.rstrip('.') if info else code}"
    )
    see = f"; card `{card[0]}`: {card[1]}" if card else ""
    message = f"{kernel}: {measured_summary(r)} on {r.device}; {why}{see}"
    witness = {
        "summary": measured_summary(r),
        "median_ms": r.median_ms,
        "tflops": r.roofline.tflops,
        "tbs": r.roofline.tbs,
        "pct_of_roof": r.roofline.pct_of_roof,
        "bound": r.roofline.bound,
        "device": r.device,
        "sizes": r.sizes,
        "card": card[0] if card else None,
    }
    name = info.name if info else "performance"
    return [Finding(code, name, Severity.HINT, kernel, _span(source, *span), message, witness)]


def _span(source: bytes, start: int, end: int) -> Span:
    return Span(start, end, _point(source, start), _point(source, end))


def _point(source: bytes, offset: int) -> tuple[int, int]:
    """tree-sitter's (row, byte column), rows split on `\\n` only, as every Finding's span has."""
    return source.count(b"\n", 0, offset), offset - (source.rfind(b"\n", 0, offset) + 1)


def hints_for_file(r: ProfileResult, path: Path, fallback_line: int | None = None) -> list[Finding]:
    """What the editor shows for `r` once it is profiled, for a file on disk (`argus profile`):
    the checker's findings on the file pick the code, and `# argus: ignore[...]` comments apply.
    Reads and parses the file; runs none of it. A file that cannot be read gets no hint."""
    if bottleneck(r) is None:
        return []
    try:
        source = path.read_bytes()
    except OSError:
        return []
    static = check_source(source, str(path))
    return apply_suppressions(source, measured_findings(r, r.kernel, source, static, fallback_line))


def hint_json(f: Finding) -> dict[str, Any]:
    """A measured hint as `argus profile --json` writes it next to the result."""
    return {
        "code": f.code,
        "name": f.name,
        "line": f.span.line,
        "message": f.message,
        "card": (f.witness or {}).get("card"),
    }
