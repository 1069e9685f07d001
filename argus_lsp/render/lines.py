"""Two line-oriented formats as ruff spells them: `json-lines` and `pylint`.

`json-lines` is one JSON object per finding (the same object as in the json format's
`diagnostics`), so a script can stream or `grep` it; `pylint` is `path:line: [CODE] message`, the
shape many editors' error formats (Vim's `errorformat`, Emacs' compile mode) already parse.
"""

from __future__ import annotations

import json

from argus_lsp.render.json import diagnostic_object
from argus_lsp.render.report import Report


def render_json_lines(report: Report, *, color: bool = False) -> str:
    return "".join(
        json.dumps(diagnostic_object(d), ensure_ascii=False, default=str) + "\n" for d in report.diagnostics
    )


def render_pylint(report: Report, *, color: bool = False) -> str:
    return "".join(
        f"{d.path}:{d.line}: [{d.code}({d.name}), {d.kernel}] {d.message}\n" for d in report.diagnostics
    )
