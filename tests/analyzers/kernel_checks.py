"""What the kernel-construct tests ask of a check, written once.

The construct tests (test_kernel_constructs*.py) each check small kernels and ask three things:
which error/warning findings stand (MB003 aside, as the real-world figures count them), which
constructs were not modelled (AR001 messages), and, for the speed tests, every field of every
finding, so that a cut is shown to change nothing a user could see.
"""

from __future__ import annotations

from argus.analyzers import Severity, check_source
from argus.analyzers.project import SourceSet

HEADER = """
import torch
import triton
import triton.language as tl

"""

GATING = (Severity.ERROR, Severity.WARNING)


def findings(text: str, project: SourceSet | None = None, path: str = "<string>") -> list:
    """The findings of `text` with the usual imports in front; a text checked inside a `project`
    is a whole module and keeps its own imports."""
    return check_source(text if project is not None else HEADER + text, path, project=project)


def _gating(text: str, **kw) -> list:
    return [f for f in findings(text, **kw) if f.severity in GATING and f.code != "MB003"]


def failing(text: str, **kw) -> list[tuple[str, int]]:
    """(code, line) of each error/warning finding but MB003, sorted."""
    return sorted((f.code, f.span.line) for f in _gating(text, **kw))


def failing_explained(text: str, **kw) -> list[tuple[str, int, str]]:
    """As `failing`, with each message, so that an assertion that fails says why."""
    return [(f.code, f.line, f.message) for f in _gating(text, **kw)]


def codes(text: str, **kw) -> set[str]:
    return {c for c, _ in failing(text, **kw)}


def not_modelled(text: str, **kw) -> list[str]:
    """The AR001 messages: constructs the checker named instead of guessing past."""
    return [f.message for f in findings(text, **kw) if f.code == "AR001"]


def everything(text: str, path: str = "k.py") -> list[tuple]:
    """Every field a user sees of every finding of a whole module `text`."""
    return [
        (f.code, f.span, f.message, f.severity, repr(f.witness), f.related) for f in check_source(text, path)
    ]
