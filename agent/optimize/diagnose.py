"""Diagnose: the checker's findings on the user's kernel, its pattern, and (on a GPU) its roofline class.

The pattern is read from the kernel's syntax tree, the grammar Triton compiles: a `tl.dot` inside a
loop is a contraction (`gemm`); with `exp`/`exp2` and a running `max` it is an online softmax
(`attention`); a contraction whose rows come through loaded indices (expert ids, sorted token ids) is a
grouped GEMM (`moe`); a `tl.sum`/`tl.max` without a dot is a `reduction`; anything else `elementwise`.
The profile is the user's kernel timed by gate 3's worker (same method), classified by the roofline.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from argus.agent.optimize.gate_invariants import feedback_of
from argus.analyzers import Finding, check_source

PATTERNS = ("moe", "attention", "gemm", "reduction", "elementwise")


@dataclass
class Diagnosis:
    kernel: str
    pattern: str
    findings: list[Finding] = field(default_factory=list)
    bound: str | None = None  # compute-bound, memory-bound, latency-bound (GPU only)
    pct_roofline: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "pattern": self.pattern,
            "bound": self.bound,
            "pct_roofline": self.pct_roofline,
            "findings": [feedback_of(f, "user") for f in self.findings],
        }


def _calls(node: ast.AST) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Attribute):
                out.add(func.attr)
            elif isinstance(func, ast.Name):
                out.add(func.id)
    return out


def _loads_through_loaded_index(fn: ast.FunctionDef) -> bool:
    """A load whose address uses a value computed from another load (an expert id, a sorted token id)."""
    assigns = [s for s in ast.walk(fn) if isinstance(s, ast.Assign)]
    loaded = {t.id for s in assigns if "load" in _calls(s.value) for t in s.targets if isinstance(t, ast.Name)}
    changed = True
    while changed:  # transitively: ids -> rows -> row pointers
        changed = False
        for sub in assigns:
            if {n.id for n in ast.walk(sub.value) if isinstance(n, ast.Name)} & loaded:
                for t in sub.targets:
                    if isinstance(t, ast.Name) and t.id not in loaded:
                        loaded.add(t.id)
                        changed = True
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "load" and sub.args:
            if {n.id for n in ast.walk(sub.args[0]) if isinstance(n, ast.Name)} & loaded:
                return True
    return False


def kernel_pattern(source: str, kernel: str) -> str:
    """One of PATTERNS for the jit function `kernel` (or the file's first dot-bearing kernel)."""
    tree = ast.parse(source)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    fn = next((f for f in fns if f.name == kernel), None)
    if fn is None:
        return "elementwise"
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For | ast.While)]
    in_loop = set().union(*(_calls(lp) for lp in loops)) if loops else set()
    calls = _calls(fn)
    if "dot" in in_loop and ({"exp", "exp2"} & in_loop) and "maximum" in in_loop | calls:
        return "attention"
    if "dot" in calls and _loads_through_loaded_index(fn):
        return "moe"
    if "dot" in in_loop:
        return "gemm"
    if {"sum", "max", "min", "reduce"} & calls:
        return "reduction"
    return "elementwise"


def diagnose(source: str, kernel: str, path: str) -> Diagnosis:
    findings = [f for f in check_source(source, path=path) if f.kernel == kernel or not kernel]
    return Diagnosis(kernel=kernel, pattern=kernel_pattern(source, kernel), findings=findings)
