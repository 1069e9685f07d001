"""Output formats of `argus check`: one small module per format, chosen by name from RENDERERS.

Every renderer takes the same `Report` (findings already converted to 1-based lines and character
columns) and returns the whole output as text; only the text formats use colour. The names are
ruff's `--output-format` spellings; `text` is kept as the old name of `concise`.
"""

from __future__ import annotations

from typing import Protocol

from argus_lsp.render import github, gitlab, json, lines, sarif, statistics, text
from argus_lsp.render.report import Diagnostic, Report, Summary


class Renderer(Protocol):
    def __call__(self, report: Report, *, color: bool = False) -> str: ...


RENDERERS: dict[str, Renderer] = {
    "concise": text.render_concise,
    "full": text.render_full,
    "text": text.render_concise,
    "json": json.render,
    "json-lines": lines.render_json_lines,
    "pylint": lines.render_pylint,
    "sarif": sarif.render,
    "github": github.render,
    "gitlab": gitlab.render,
}
# `--statistics`: counts per code instead of findings, in the formats that can carry a table
STATISTICS: dict[str, Renderer] = {
    "concise": statistics.render_text,
    "full": statistics.render_text,
    "text": statistics.render_text,
    "json": statistics.render_json,
}

__all__ = ["RENDERERS", "STATISTICS", "Diagnostic", "Renderer", "Report", "Summary"]
