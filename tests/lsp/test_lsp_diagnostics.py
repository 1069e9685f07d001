"""End to end: the real server process, as VS Code (push, UTF-16) and as Neovim (pull, UTF-8)."""

from __future__ import annotations

from argus.analyzers import RULES, check_source
from lsp_support import HALF_TYPED, UNICODE_HALF_TYPED, Session, diag_key, edits_of, finding_key, mutant
from lsprotocol import types


def second_kernel() -> tuple[str, int]:
    """The vector-add mutant's kernel (MB002 on its store), and the store's 0-based line in it."""
    text, expect, _ = mutant("vector_add_v2")
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("@triton.jit"))
    end = next(i for i in range(start + 2, len(lines)) if lines[i] and not lines[i].startswith(" "))
    store = min(expect["MB002"])
    return "\n".join(lines[start:end]) + "\n", store - start


async def test_mutant_reports_expected_code(session: Session) -> None:
    text, expect, _ = mutant("matmul_v3")
    uri = "file:///work/matmul_v3.py"
    session.open(uri, text)
    diags = await session.diagnostics(uri)
    assert any(d.code == "DF002" and d.range.start.line in expect["DF002"] for d in diags), diags
    hit = next(d for d in diags if d.code == "DF002")
    assert hit.source == "argus"
    assert hit.code_description is not None and hit.code_description.href == RULES["DF002"].docs_url
    assert hit.severity == types.DiagnosticSeverity.Error


async def test_quick_fix_clears_the_diagnostic(session: Session) -> None:
    text, expect, _ = mutant("vector_add_v2")
    uri = "file:///work/vector_add_v2.py"
    session.open(uri, text)
    diags = await session.diagnostics(uri)
    mb002 = [d for d in diags if d.code == "MB002" and d.range.start.line in expect["MB002"]]
    assert mb002, diags
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=mb002[0].range,
            context=types.CodeActionContext(diagnostics=mb002),
        )
    )
    fix = next(a for a in actions or [] if a.is_preferred)
    assert fix.kind == types.CodeActionKind.QuickFix
    session.apply(uri, edits_of(fix.edit, uri))
    after = await session.diagnostics(uri)
    assert not [d for d in after if d.code == "MB002"], after
    assert not [f for f in check_source(session.texts[uri]) if f.code in ("MB002", "AR002")]


async def test_ignore_action_silences_the_line(session: Session) -> None:
    uri = "file:///work/half.py"
    session.open(uri, HALF_TYPED)
    diags = await session.diagnostics(uri)
    ar002 = [d for d in diags if d.code == "AR002"]
    assert ar002, diags
    actions = await session.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=ar002[0].range,
            context=types.CodeActionContext(diagnostics=ar002[:1]),
        )
    )
    ignore = next(a for a in actions or [] if a.title == "Ignore AR002 on this line")
    session.apply(uri, edits_of(ignore.edit, uri))
    line = session.texts[uri].split("\n")[ar002[0].range.start.line]
    assert line.endswith("# argus: ignore[AR002]")
    after = await session.diagnostics(uri)
    assert [diag_key(d) for d in after] == [
        finding_key(session.texts[uri], f, session.encoding) for f in check_source(session.texts[uri])
    ]


async def test_half_typed_kernel_gets_ar002_only_for_itself(session: Session) -> None:
    kernel, _ = second_kernel()
    text = HALF_TYPED + "\n\n" + kernel
    uri = "file:///work/two_kernels.py"
    session.open(uri, text)
    diags = await session.diagnostics(uri)
    first_end = HALF_TYPED.count("\n")
    ar002 = [d for d in diags if d.code == "AR002"]
    assert ar002 and all(d.range.start.line < first_end for d in ar002), diags


async def test_complete_kernel_next_to_half_typed_one_keeps_its_findings(session: Session) -> None:
    kernel, store = second_kernel()
    text = HALF_TYPED + "\n\n" + kernel
    uri = "file:///work/two_kernels.py"
    session.open(uri, text)
    diags = await session.diagnostics(uri)
    offset = (HALF_TYPED + "\n\n").count("\n")
    assert any(d.code == "MB002" and d.range.start.line == offset + store for d in diags), diags


async def test_positions_survive_non_ascii(session: Session) -> None:
    uri = "file:///work/unicode.py"
    session.open(uri, UNICODE_HALF_TYPED)
    diags = await session.diagnostics(uri)
    findings = check_source(UNICODE_HALF_TYPED)
    assert findings and findings[0].code == "AR002"
    line = UNICODE_HALF_TYPED.encode().split(b"\n")[findings[0].span.start_point[0]]
    assert "é🎉".encode() in line[: findings[0].span.start_point[1]]  # the error sits after them
    assert [diag_key(d) for d in diags] == [
        finding_key(UNICODE_HALF_TYPED, f, session.encoding) for f in findings
    ]


async def test_clean_file_has_no_diagnostics(session: Session) -> None:
    kernel, _ = second_kernel()
    fixed = kernel.replace(
        "tl.store(out_ptr + offsets, x + y)", "tl.store(out_ptr + offsets, x + y, mask=mask)"
    )
    text = "import triton\nimport triton.language as tl\n\n\n" + fixed
    uri = "file:///work/clean.py"
    session.open(uri, text)
    diags = await session.diagnostics(uri)
    assert [
        d for d in diags if d.severity in (types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning)
    ] == []


async def test_pull_clients_are_not_pushed_to(session: Session) -> None:
    uri = "file:///work/half.py"
    session.open(uri, HALF_TYPED)
    first = await session.diagnostics(uri)
    if not session.pulls:
        assert session.client.published  # type: ignore[attr-defined]
        return
    assert session.client.published == []  # type: ignore[attr-defined]
    ident = types.TextDocumentIdentifier(uri=uri)
    full = await session.client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident)
    )
    assert full.kind == "full" and full.result_id.startswith(f"{uri}@1"), full
    report = await session.client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=ident, previous_result_id=full.result_id)
    )
    assert report.kind == "unchanged" and report.result_id == full.result_id, report
    assert first


async def test_a_letter_typed_into_a_name_is_one_ar002_as_the_cli_says_and_undoing_it_restores(
    session: Session,
) -> None:
    text, expect, _ = mutant("vector_add_v2")
    uri = "file:///work/vector_add_v2.py"
    session.open(uri, text)
    before = await session.diagnostics(uri)
    assert any(d.code == "MB002" for d in before), before
    for typed_after in ("mask = offsets < n_elements", "grid = (triton.cdiv(n_elements"):
        at = text.index(typed_after) + len(typed_after)  # a kernel name, then a launcher name
        session.edit(uri, at, at, "q")
        edited = session.texts[uri]
        diags = await session.diagnostics(uri)
        cli = check_source(edited)
        assert [f.code for f in cli] == ["AR002"] and "`n_elementsq` is bound nowhere" in cli[0].message
        assert sorted(diag_key(d) for d in diags) == sorted(
            finding_key(edited, f, session.encoding) for f in cli
        )
        session.edit(uri, at, at + 1, "")
        assert sorted(diag_key(d) for d in await session.diagnostics(uri)) == sorted(
            diag_key(d) for d in before
        )
