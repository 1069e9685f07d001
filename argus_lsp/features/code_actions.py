"""Quick fixes: the checker's own fix, and "Ignore CODE on this line".

The checker's fix travels in the diagnostic's `data` (already in the client's encoding), so no
analysis runs here. `data` also records the document version it was computed for; if the
document has changed since, the fix's ranges may point at the wrong text, so it is not offered
(the next analysis brings a fresh one). The ignore action works on the current text.
"""

from __future__ import annotations

import re

from argus.analyzers.suppressions import IGNORE
from lsprotocol import types

from argus_lsp.convert import LineIndex, edit_from_json, units
from argus_lsp.documents import Document

_BRACKETED = re.compile(r"#\s*argus:\s*ignore\[([^\]]*)\]", re.I)


def workspace_edit(doc: Document, edits: list[types.TextEdit], versioned: bool) -> types.WorkspaceEdit:
    """Versioned `documentChanges` where the client supports them (a stale edit is then refused)."""
    if versioned:
        ident = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
        return types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=ident, edits=edits)]
        )
    return types.WorkspaceEdit(changes={doc.uri: edits})


def ignore_edit(index: LineIndex, line: int, code: str, encoding: str) -> types.TextEdit | None:
    """The edit that silences `code` on `line`, or None if it is already silenced there."""
    if line >= len(index.starts):
        return None
    text = index.line_text(line).decode("utf-8", "replace")
    for m in IGNORE.finditer(text):
        if m.group(1) is None:
            return None  # a bare `# argus: ignore` already silences every code
    m = _BRACKETED.search(text)
    if m is not None:
        codes = [c.strip().upper() for c in m.group(1).split(",") if c.strip()]
        if any(code.startswith(c) for c in codes):
            return None
        inner = m.group(1).rstrip()
        new = f"{inner}, {code}" if inner.strip() else code
        col_start = units(text[: m.start(1)], encoding)
        col_end = units(text[: m.end(1)], encoding)
        rng = types.Range(
            start=types.Position(line=line, character=col_start),
            end=types.Position(line=line, character=col_end),
        )
        return types.TextEdit(range=rng, new_text=new)
    end = types.Position(line=line, character=units(text, encoding))
    sep = "" if text.endswith(" ") or not text else "  "
    return types.TextEdit(range=types.Range(start=end, end=end), new_text=f"{sep}# argus: ignore[{code}]")


def _wanted(params: types.CodeActionParams) -> bool:
    only = params.context.only
    quickfix = types.CodeActionKind.QuickFix.value
    return not only or any(str(k) == quickfix or quickfix.startswith(f"{k}.") for k in only)


def code_actions(
    doc: Document, params: types.CodeActionParams, encoding: str, versioned: bool
) -> list[types.CodeAction]:
    if not _wanted(params):
        return []
    index = doc.index()
    fixes: list[types.CodeAction] = []
    ignores: list[types.CodeAction] = []
    seen: set[tuple[str, int]] = set()
    for diag in params.context.diagnostics:
        if diag.source != "argus" or not isinstance(diag.code, str):
            continue
        data = diag.data if isinstance(diag.data, dict) else {}
        fix = data.get("fix")
        if fix and data.get("version") == doc.version:
            edits = [edit_from_json(e) for e in fix["edits"]]
            fixes.append(
                types.CodeAction(
                    title=fix["title"],
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=True,
                    edit=workspace_edit(doc, edits, versioned),
                )
            )
        line = diag.range.start.line
        if (diag.code, line) in seen:
            continue
        seen.add((diag.code, line))
        edit = ignore_edit(index, line, diag.code, encoding)
        if edit is not None:
            ignores.append(
                types.CodeAction(
                    title=f"Ignore {diag.code} on this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=workspace_edit(doc, [edit], versioned),
                )
            )
    return fixes + ignores
