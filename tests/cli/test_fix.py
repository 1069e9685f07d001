"""`--fix`, `--diff`, `--statistics` and unknown codes in `# argus: ignore[...]`."""

from __future__ import annotations

import json

from argus.analyzers import RULES, Finding, Fix, TextEdit
from cli_helpers import HALF_TYPED, UNMASKED_STORE, UNMASKED_STORE_FIXED, UNMASKED_STORE_LINE
from test_check import write
from test_formats import SOURCE, _span

from argus_lsp import cli, cli_check, fixing


def test_fix_applies_the_quick_fix_and_reports_what_is_left(argus, tmp_path):
    path = write(tmp_path, "scale.py", UNMASKED_STORE)
    r = argus("check", "scale.py")
    assert r.rc == 1 and f"scale.py:{UNMASKED_STORE_LINE}:5: MB002" in r.out, r
    assert "1 fixable with `argus check --fix`." in r.out
    r = argus("check", "scale.py", "--fix")
    assert r.rc == 0, r
    assert r.out == "Fixed 1 problem. All checks passed: 1 kernel in 1 file.\n"
    assert path.read_text() == UNMASKED_STORE_FIXED
    assert argus("check", "scale.py", "--fix").out == "All checks passed: 1 kernel in 1 file.\n"


def test_fix_keeps_the_file_mode(argus, tmp_path):
    path = write(tmp_path, "scale.py", UNMASKED_STORE)
    path.chmod(0o754)
    assert argus("check", "scale.py", "--fix").rc == 0
    assert path.stat().st_mode & 0o777 == 0o754


def test_diff_prints_the_fix_and_writes_nothing(argus, tmp_path):
    path = write(tmp_path, "scale.py", UNMASKED_STORE)
    r = argus("check", "scale.py", "--diff")
    assert r.rc == 1, r
    assert r.out.splitlines()[:2] == ["--- scale.py", "+++ scale.py"]
    assert "-    tl.store(out_ptr + offs, x * factor)\n" in r.out
    assert "+    tl.store(out_ptr + offs, x * factor, mask=mask)\n" in r.out
    assert r.err == "Would fix 1 problem.\n"
    assert path.read_text() == UNMASKED_STORE
    r = argus("check", "-", "--stdin-filename", "k/scale.py", "--diff", stdin=UNMASKED_STORE)
    assert r.rc == 1 and r.out.startswith("--- k/scale.py\n"), r
    write(tmp_path, "two.py", HALF_TYPED)  # a finding without a fix: nothing to diff
    r = argus("check", "two.py", "--diff")
    assert (r.rc, r.out, r.err) == (0, "", "Would fix 0 problems.\n"), r
    assert argus("check", "scale.py", "--diff", "--fix").rc == 2  # one or the other


def test_fix_never_writes_a_file_that_changed_during_the_check(monkeypatch, tmp_path, capsys):
    """An editor saves the file while it is being checked: the editor's text must survive.
    The checker is real; the save is made from inside it, at the worst moment."""
    path = write(tmp_path, "scale.py", UNMASKED_STORE)
    edited = UNMASKED_STORE.replace("factor: float", "factor: float = 2.0")
    real = cli_check.check_source

    def check_while_the_editor_saves(text, display, **kw):
        findings = real(text, display, **kw)
        path.write_text(edited)
        return findings

    monkeypatch.setattr(cli_check, "check_source", check_while_the_editor_saves)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "scale.py", "--fix"]) == 2
    captured = capsys.readouterr()
    assert "argus: not fixing scale.py: it changed while it was being checked" in captured.err
    assert f"scale.py:{UNMASKED_STORE_LINE}:5: MB002" in captured.out
    assert path.read_text() == edited


def _finding(code: str, *edits: TextEdit) -> Finding:
    span = _span(SOURCE, b"b_ptrs += BLOCK_K")
    info = RULES[code]
    return Finding(code, info.name, info.severity, "k", span, "m", fix=Fix("fix it", tuple(edits)))


def test_plan_leaves_out_fixes_that_clash_and_applies_identical_ones_once():
    insert_a = TextEdit(10, 10, "a")
    plan = fixing.plan([_finding("MB002", insert_a), _finding("MB004", insert_a)], len(SOURCE))
    assert (plan.edits, plan.fixed, plan.conflicting) == ((insert_a,), 2, 0)
    clash = [_finding("MB002", TextEdit(10, 10, "a")), _finding("MB004", TextEdit(10, 10, "b"))]
    assert fixing.plan(clash, len(SOURCE)) == fixing.FixPlan((), 0, 2)
    inside = [_finding("MB002", TextEdit(5, 20, "x")), _finding("MB004", TextEdit(12, 12, "y"))]
    assert fixing.plan(inside, len(SOURCE)).edits == ()
    apart = [_finding("MB002", TextEdit(5, 8, "x")), _finding("MB004", TextEdit(12, 12, "y"))]
    plan = fixing.plan(apart, len(SOURCE))
    assert plan.fixed == 2
    assert fixing.apply(b"0123456789abcdef", plan.edits) == b"01234x89abyc" + b"def"
    assert fixing.plan([_finding("MB002", TextEdit(5, 10_000, ""))], len(SOURCE)).edits == ()


def test_statistics_count_per_code(argus, tmp_path, corpus):
    r = argus("check", corpus / "matmul_v3.py", corpus / "vector_add_v2.py", "--statistics")
    lines = r.out.splitlines()
    assert r.rc == 1 and lines[-1].startswith("Found "), r
    rows = [line.split() for line in lines[:-1]]
    counts = [int(row[0]) for row in rows]
    assert counts == sorted(counts, reverse=True) and {row[1] for row in rows} >= {"DF002", "MB002"}
    doc = json.loads(argus("check", corpus / "vector_add_v2.py", "--statistics", "--format", "json").out)
    assert {"code": "MB002", "name": "oob-store", "count": 1, "fixable": 1} in doc
    full = argus("check", corpus / "vector_add_v2.py", "--format", "json").json()
    assert sum(row["count"] for row in doc) == len(full["diagnostics"])
    r = argus("check", corpus / "vector_add_v2.py", "--statistics", "--format", "sarif")
    assert r.rc == 2 and "--statistics prints text or json" in r.err


def test_unknown_code_in_a_suppression_comment_is_reported(argus, tmp_path):
    text = HALF_TYPED.replace("tl.store(x_ptr + offs, 1.0, mask=offs < n)\n", "pass  # argus: ignore[XX999, MB]\n", 1)
    write(tmp_path, "two.py", text)
    r = argus("check", "two.py")
    assert r.rc == 1, r  # the warning changes no exit status: the comment silences nothing
    line = text.splitlines().index("    pass  # argus: ignore[XX999, MB]") + 1
    warnings = [row for row in r.err.splitlines() if row.startswith("argus: warning:")]
    assert warnings == [
        f"argus: warning: unknown rule code in `# argus: ignore[...]` at two.py:{line}: XX999 "
        "(`argus rules` lists them)"
    ]
    write(tmp_path, "two.py", text.replace("XX999, ", ""))
    # Only the note on kernels without a launch site remains (this file has no launcher).
    assert "warning" not in argus("check", "two.py").err
