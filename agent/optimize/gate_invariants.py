"""Gate 1, invariants: the candidate's source through the checker, before any GPU time.

A candidate fails on any error finding, and on any warning or unanalyzed construct (AR) that the user's
own kernel does not already have, so it is never worse than what it replaces. Hints (PF) never fail a
candidate: they are suggestions, and a rewrite may trade one for another. Library modules that a
candidate imports (`knowledge.kernels.*`) are checked too and must have no error or warning; so must the
library kernels the `expert` rewrite copies into the file (`_argus_*`, origin knowledge:expert), which are
held to that same rule: their notes (AR) are the library's, not a regression of the user's kernel. The
violations go back to the policy as structured feedback: code, line, message, witness.
"""

from __future__ import annotations

import ast
import importlib.util
from collections import Counter
from pathlib import Path

from argus.agent.optimize.safety import check_candidate
from argus.agent.optimize.types import Candidate, GateResult
from argus.analyzers import Finding, Severity, check_source


def feedback_of(f: Finding, where: str = "candidate") -> dict:
    """The structured form a policy receives (and the report shows)."""
    witness = f.witness or {}
    return {
        "code": f.code,
        "severity": str(f.severity),
        "kernel": f.kernel,
        "line": f.line,
        "message": f.message,
        "witness": witness.get("summary") or ", ".join(f"{k}={v}" for k, v in witness.items())[:300] or None,
        "where": where,
    }


def _key(f: Finding) -> tuple[str, str]:
    return (f.code, f.kernel)


def blocking(f: Finding) -> bool:
    return f.severity != Severity.HINT


def module_source(module: str) -> tuple[str, str] | None:
    """(path, text) of an importable module, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return spec.origin, Path(spec.origin).read_text(encoding="utf-8")


def _defines(source: str, name: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True  # the anti-cheat check reports the syntax error
    return any(isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == name for n in tree.body)


def check_invariants(original: str, candidate: Candidate, path: str, protected: tuple[str, ...] = (),
                     required: tuple[str, ...] = ()) -> GateResult:
    """Gate 1 on one candidate; `protected` names (the reference) must not be redefined, `required` ones
    (the kernel's launcher) must be defined."""
    missing = [n for n in required if not _defines(candidate.source, n)]
    if missing:
        return GateResult("invariants", False, f"the candidate does not define {', '.join(missing)}",
                          feedback=[{"code": "MISSING", "message": f"define {n} (keep its name and signature)"} for n in missing])
    cheats = check_candidate(original, candidate.source, protected)
    if cheats:
        return GateResult(
            "invariants", False, "anti-cheat: " + "; ".join(f"line {v.line}: {v.message}" for v in cheats[:3]),
            feedback=[v.to_dict() for v in cheats],
        )
    base = Counter(_key(f) for f in check_source(original, path=path) if blocking(f))
    found = check_source(candidate.source, path=path)
    bad: list[Finding] = []
    seen: Counter[tuple[str, str]] = Counter()
    copied = candidate.origin == "knowledge:expert"
    for f in found:
        if not blocking(f):
            continue
        if copied and (f.kernel or "").startswith("_argus_") and f.severity not in (Severity.ERROR, Severity.WARNING):
            continue
        seen[_key(f)] += 1
        if f.severity == Severity.ERROR or seen[_key(f)] > base[_key(f)]:
            bad.append(f)
    feedback = [feedback_of(f) for f in bad]
    for module in candidate.uses:
        located = module_source(module)
        if located is None:
            feedback.append({"code": "IMPORT", "message": f"cannot find module {module}", "where": module})
            continue
        lib_path, text = located
        feedback += [feedback_of(f, module) for f in check_source(text, path=lib_path)
                     if f.severity in (Severity.ERROR, Severity.WARNING)]
    if feedback:
        first = feedback[0]
        reason = f"{first['code']} at line {first.get('line', '?')} ({first.get('where')}): {first['message']}"
        return GateResult("invariants", False, reason, feedback=feedback, details={"findings": len(found)})
    hints = sorted({f.code for f in found if not blocking(f)})
    return GateResult("invariants", True, details={"findings": len(found), "hints": hints})
