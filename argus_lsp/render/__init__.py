"""Output formats of `argus check`: one small module per format, chosen by name from RENDERERS.

Every renderer takes the same `Report` (findings already converted to 1-based lines and character
columns) and returns the whole output as text; only the text format uses colour.
"""

from __future__ import annotations

from typing import Protocol

from argus_lsp.render import github, json, sarif, text
from argus_lsp.render.report import Diagnostic, Report, Summary


class Renderer(Protocol):
    def __call__(self, report: Report, *, color: bool = False) -> str: ...


RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json.render,
    "sarif": sarif.render,
    "github": github.render,
}

__all__ = ["RENDERERS", "Diagnostic", "Renderer", "Report", "Summary"]
