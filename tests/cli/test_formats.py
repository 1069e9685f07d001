"""The four output formats: text frames and witnesses, the JSON contract, SARIF, GitHub commands.

Renderer details (columns, escaping, witness layout) are tested on real `Finding` objects placed
in a real source text, so they hold whatever findings the analyzer emits; the subprocess tests
check the same formats end to end.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from argus.analyzers import RULES, Finding, Fix, Related, Severity, Span, TextEdit
from cli_helpers import HALF_TYPED, HALF_TYPED_ERROR_LINE

from argus_lsp.render import RENDERERS, Report
from argus_lsp.render import github as github_fmt

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())

# Line 3 holds a two-byte character before the span, so byte and character columns differ.
SOURCE = ("@triton.jit\ndef k(b_ptrs, BLOCK_K: tl.constexpr):\n    s = 'é'; b_ptrs += BLOCK_K\n").encode()


def _span(source: bytes, needle: bytes) -> Span:
    start = source.index(needle)
    end = start + len(needle)
    row = source.count(b"\n", 0, start)
    line_start = source.rfind(b"\n", 0, start) + 1
    return Span(start, end, (row, start - line_start), (row, end - line_start))


def sample_report(path: str = "pkg/k.py") -> Report:
    span = _span(SOURCE, b"b_ptrs += BLOCK_K")
    info = RULES["DF002"]
    finding = Finding(
        "DF002",
        info.name,
        info.severity,
        "k",
        span,
        "`b_ptrs` moves by BLOCK_K per iteration; expected BLOCK_K * stride_bk",
        witness={
            "summary": "iteration 1 reads b[0, 32] instead of b[32, 0]",
            "M": 16,
            "K": 64,
            "pid": [0, 0],
        },
        fix=Fix("advance by BLOCK_K * stride_bk", (TextEdit(span.end_byte, span.end_byte, " * stride_bk"),)),
        related=(Related(_span(SOURCE, b"BLOCK_K: tl.constexpr"), "the tile size"),),
    )
    hint = Finding("PF001", "no-autotune", Severity.HINT, "k", _span(SOURCE, b"def k"), "fixed tile sizes")
    report = Report(tool_version="9.9.9")
    report.add_file(path, SOURCE, 1, [hint, finding])
    return report


# --- text ---------------------------------------------------------------------------------------


def test_full_frame_columns_are_characters_and_witness_keys_are_indented():
    out = RENDERERS["full"](sample_report())
    lines = out.splitlines()
    head = lines.index(next(line for line in lines if "DF002" in line))
    assert lines[head] == (
        "pkg/k.py:3:14: DF002 [error] stale-reduction-pointer in k: "
        "`b_ptrs` moves by BLOCK_K per iteration; expected BLOCK_K * stride_bk"
    )
    assert lines[head + 1] == "  3 |     s = 'é'; b_ptrs += BLOCK_K"
    assert lines[head + 2] == "    |              " + "^" * len("b_ptrs += BLOCK_K")
    assert lines[head + 3] == "  witness: iteration 1 reads b[0, 32] instead of b[32, 0]"
    assert lines[head + 4 : head + 7] == ["    M=16", "    K=64", "    pid=(0, 0)"]
    assert lines[head + 7] == "  related: pkg/k.py:2:15: the tile size"
    assert lines[head + 8] == "  fix: advance by BLOCK_K * stride_bk"
    assert lines[-1] == "Found 2 problems (1 error, 1 hint); checked 1 kernel in 1 file."
    assert "\x1b[" not in out


def test_concise_is_one_line_per_finding_and_the_witness_on_one_more():
    report = sample_report()
    lines = RENDERERS["concise"](report).splitlines()
    assert RENDERERS["text"](report) == RENDERERS["concise"](report)
    assert lines == [
        "pkg/k.py:2:1: PF001 [hint] no-autotune in k: fixed tile sizes",
        "pkg/k.py:3:14: DF002 [error] stale-reduction-pointer in k: "
        "`b_ptrs` moves by BLOCK_K per iteration; expected BLOCK_K * stride_bk",
        "  witness: iteration 1 reads b[0, 32] instead of b[32, 0]",
        "",
        "Found 2 problems (1 error, 1 hint); checked 1 kernel in 1 file.",
    ]


def test_concise_witness_without_a_summary_lists_its_keys_on_one_line():
    from argus_lsp.render.text import witness_line

    (d,) = [d for d in sample_report().diagnostics if d.code == "DF002"]
    bare = replace(d, witness={"M": 16, "pid": [0, 0]})
    assert witness_line(bare) == "M=16, pid=(0, 0)"


def test_text_colour_only_when_asked():
    assert "\x1b[1;31mDF002" in RENDERERS["text"](sample_report(), color=True)
    assert "\x1b[1;31mDF002" in RENDERERS["full"](sample_report(), color=True)


def test_color_flag_overrides_the_terminal_test(argus, tmp_path):
    (tmp_path / "two.py").write_text(HALF_TYPED)
    assert "\x1b[" in argus("check", "two.py", "--color", "always").out  # NO_COLOR=1 is set here
    assert "\x1b[" not in argus("check", "two.py", "--color", "auto").out  # not a terminal
    assert "\x1b[" not in argus("check", "two.py", "--color", "always", "--format", "json").out


def _run_on_tty(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    leader, follower = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "argus_lsp", *args],
        cwd=cwd,
        env=env,
        stdout=follower,
        stderr=subprocess.PIPE,
        timeout=60,
    )
    os.close(follower)
    chunks = []
    try:
        while chunk := os.read(leader, 65536):
            chunks.append(chunk)
    except OSError:  # Linux reports EIO once the follower side is closed and drained
        pass
    os.close(leader)
    assert proc.returncode == 1
    return b"".join(chunks).decode()


def test_colour_on_a_tty_unless_no_color(tmp_path):
    (tmp_path / "two.py").write_text(HALF_TYPED)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[" in _run_on_tty(["check", "two.py"], tmp_path, env)
    assert "\x1b[" not in _run_on_tty(["check", "two.py"], tmp_path, {**env, "NO_COLOR": "1"})
    assert "\x1b[" not in _run_on_tty(["check", "two.py", "--color", "never"], tmp_path, env)


def test_text_end_to_end_half_typed(argus, tmp_path):
    (tmp_path / "two.py").write_text(HALF_TYPED)
    head = f"two.py:{HALF_TYPED_ERROR_LINE}:5: AR002 [error] parse-error in unfinished_kernel: "
    r = argus("check", "two.py")
    lines = r.out.splitlines()
    assert len(lines) == 3 and lines[0].startswith(head) and lines[1] == "", r
    assert r.out.endswith("Found 1 problem (1 error); checked 2 kernels in 1 file.\n")
    for flag in ("--verbose", "-v"):
        lines = argus("check", "two.py", flag).out.splitlines()
        assert lines[0].startswith(head)
        assert lines[1] == f"  {HALF_TYPED_ERROR_LINE} |     offs = pid * BLOCK + tl.arange(0,"
    assert argus("check", "two.py", "--output-format", "full").out == argus("check", "two.py", "-v").out
    assert argus("check", "two.py", "--output-format", "concise").out == r.out


def test_text_witness_on_corpus_mutant(argus, corpus):
    r = argus("check", corpus / "matmul_v3.py", "--select", "DF002", "--verbose")
    lines = r.out.splitlines()
    heads = [i for i, line in enumerate(lines) if ":33:" in line and " DF002 [error] " in line]
    assert heads, r
    head = heads[0]
    assert lines[head + 1] == "  33 |         b_ptrs += BLOCK_K  # expect: DF002"
    assert lines[head + 2].lstrip(" |").startswith("^")
    assert lines[head + 3].startswith("  witness: ")
    extra = [line for line in lines[head + 4 :] if line.startswith("    ")]
    assert extra and all("=" in line for line in extra)


# --- json ---------------------------------------------------------------------------------------


def test_json_follows_the_contract():
    doc = json.loads(RENDERERS["json"](sample_report()))
    assert doc["version"] == 1
    assert doc["summary"] == {"files": 1, "kernels": 1, "errors": 1, "warnings": 0, "hints": 1, "infos": 0}
    df = doc["diagnostics"][1]
    assert list(df) == [
        "path",
        "kernel",
        "code",
        "name",
        "severity",
        "line",
        "column",
        "end_line",
        "end_column",
        "message",
        "witness",
        "fix",
    ]
    assert (df["line"], df["column"], df["end_line"], df["end_column"]) == (3, 14, 3, 31)
    assert df["fix"] == {
        "title": "advance by BLOCK_K * stride_bk",
        "edits": [{"line": 3, "column": 31, "end_line": 3, "end_column": 31, "new_text": " * stride_bk"}],
    }
    assert df["witness"]["pid"] == [0, 0]
    assert doc["diagnostics"][0]["fix"] is None


def test_json_end_to_end(argus, tmp_path):
    (tmp_path / "two.py").write_text(HALF_TYPED)
    doc = argus("check", "two.py", "--format", "json").json()
    assert doc["summary"] == {"files": 1, "kernels": 2, "errors": 1, "warnings": 0, "hints": 0, "infos": 0}
    (d,) = doc["diagnostics"]
    assert (d["path"], d["kernel"], d["severity"], d["line"], d["column"]) == (
        "two.py",
        "unfinished_kernel",
        "error",
        HALF_TYPED_ERROR_LINE,
        5,
    )


# --- sarif --------------------------------------------------------------------------------------


def test_sarif_validates_and_lists_the_rules_that_occur():
    log = json.loads(RENDERERS["sarif"](sample_report()))
    jsonschema.validate(log, SCHEMA)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["DF002", "PF001"]
    assert rules[0]["helpUri"].endswith("/DF002.md")
    assert rules[0]["help"]["markdown"] == RULES["DF002"].markdown()
    assert rules[0]["fullDescription"]["text"] == RULES["DF002"].summary
    assert rules[1]["defaultConfiguration"]["level"] == "note"
    by_rule = {r["ruleId"]: r for r in run["results"]}
    df = by_rule["DF002"]
    assert rules[df["ruleIndex"]]["id"] == "DF002"
    assert df["level"] == "error" and by_rule["PF001"]["level"] == "note"
    assert "Witness: iteration 1 reads b[0, 32]" in df["message"]["text"]
    loc = df["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "pkg/k.py"
    assert loc["region"] == {"startLine": 3, "startColumn": 14, "endLine": 3, "endColumn": 31}
    change = df["fixes"][0]["artifactChanges"][0]
    assert change["replacements"][0]["insertedContent"]["text"] == " * stride_bk"


def test_sarif_uris_are_relative_with_forward_slashes_and_encoded():
    log = json.loads(RENDERERS["sarif"](sample_report(path=os.path.join("my kernels", "k.py"))))
    jsonschema.validate(log, SCHEMA)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "my%20kernels/k.py"


def test_sarif_end_to_end_validates(argus, tmp_path, corpus):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "two.py").write_text(HALF_TYPED)
    r = argus("check", "sub", "--format", "sarif")
    assert r.rc == 1, r
    log = json.loads(r.out)
    jsonschema.validate(log, SCHEMA)
    assert [res["ruleId"] for res in log["runs"][0]["results"]] == ["AR002"]
    r = argus("check", corpus / "matmul.py", "--format", "sarif")
    jsonschema.validate(json.loads(r.out), SCHEMA)


# --- github -------------------------------------------------------------------------------------


def test_github_commands_and_levels():
    out = RENDERERS["github"](sample_report()).splitlines()
    assert out[0].startswith(
        "::notice file=pkg/k.py,line=2,endLine=2,col=1,endColumn=6,"
        "title=Argus PF001 (no-autotune)::k: fixed tile sizes"
    )
    assert out[1] == (
        "::error file=pkg/k.py,line=3,endLine=3,col=14,endColumn=31,title=Argus DF002 (stale-reduction-pointer)"
        "::k: `b_ptrs` moves by BLOCK_K per iteration; expected BLOCK_K * stride_bk"
        "%0Awitness: iteration 1 reads b[0, 32] instead of b[32, 0]%0Afix: advance by BLOCK_K * stride_bk"
    )


@pytest.mark.parametrize(
    ("raw", "data", "prop"),
    [
        ("100% done", "100%25 done", "100%25 done"),
        ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
        ("dir,x:y.py", "dir,x:y.py", "dir%2Cx%3Ay.py"),
    ],
)
def test_github_escaping(raw, data, prop):
    assert github_fmt.escape_data(raw) == data
    assert github_fmt.escape_property(raw) == prop


def test_github_omits_columns_on_multiline_ranges(argus, tmp_path):
    (tmp_path / "two.py").write_text(HALF_TYPED)
    r = argus("check", "two.py", "--format", "github")
    assert r.rc == 1
    line = f"line={HALF_TYPED_ERROR_LINE},endLine={HALF_TYPED_ERROR_LINE + 1},title="
    assert r.out.startswith(f"::error file=two.py,{line}Argus AR002 (parse-error)::unfinished_kernel: ")
    assert "col=" not in r.out


# --- json-lines, pylint, gitlab -----------------------------------------------------------------


def test_json_lines_is_one_diagnostic_object_per_line():
    report = sample_report()
    lines = RENDERERS["json-lines"](report).splitlines()
    assert [json.loads(line) for line in lines] == json.loads(RENDERERS["json"](report))["diagnostics"]


def test_pylint_lines():
    assert RENDERERS["pylint"](sample_report()).splitlines() == [
        "pkg/k.py:2: [PF001(no-autotune), k] fixed tile sizes",
        "pkg/k.py:3: [DF002(stale-reduction-pointer), k] "
        "`b_ptrs` moves by BLOCK_K per iteration; expected BLOCK_K * stride_bk",
    ]


def test_gitlab_code_quality_report():
    issues = json.loads(RENDERERS["gitlab"](sample_report()))
    assert [(i["check_name"], i["severity"], i["location"]) for i in issues] == [
        ("PF001", "minor", {"path": "pkg/k.py", "lines": {"begin": 2, "end": 2}}),
        ("DF002", "critical", {"path": "pkg/k.py", "lines": {"begin": 3, "end": 3}}),
    ]
    assert issues[1]["description"].startswith("DF002 stale-reduction-pointer in k: `b_ptrs` moves")
    assert len({i["fingerprint"] for i in issues}) == 2


def test_gitlab_fingerprints_survive_moved_lines_and_tell_duplicates_apart():
    """GitLab matches findings across pipelines by fingerprint: a line inserted above must not
    change it, and two identical findings must not share one."""
    report = sample_report()
    (df,) = [d for d in report.diagnostics if d.code == "DF002"]
    moved = Report(diagnostics=[replace(df, range=replace(df.range, line=9, end_line=9))])
    twice = Report(diagnostics=[df, df])
    fingerprint = json.loads(RENDERERS["gitlab"](Report(diagnostics=[df])))[0]["fingerprint"]
    assert json.loads(RENDERERS["gitlab"](moved))[0]["fingerprint"] == fingerprint
    pair = [i["fingerprint"] for i in json.loads(RENDERERS["gitlab"](twice))]
    assert pair[0] == fingerprint and pair[1] != fingerprint


def test_line_formats_end_to_end(argus, tmp_path):
    (tmp_path / "two.py").write_text(HALF_TYPED)
    r = argus("check", "two.py", "--output-format", "pylint")
    assert r.rc == 1 and r.out.startswith(f"two.py:{HALF_TYPED_ERROR_LINE}: [AR002(parse-error), unfinished_kernel]")
    r = argus("check", "two.py", "--output-format", "json-lines")
    assert [json.loads(line)["code"] for line in r.out.splitlines()] == ["AR002"]
    r = argus("check", str(tmp_path / "two.py"), "--output-format", "gitlab")
    assert json.loads(r.out)[0]["location"]["path"] == "two.py"  # relative to the repository root
