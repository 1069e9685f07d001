"""`argus check` end to end: exit codes, paths, selection, config and bad input."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import GOOD_KERNEL, HALF_TYPED, HALF_TYPED_ERROR_LINE, NO_KERNEL, REPO


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_clean_file_exits_0(argus, tmp_path):
    write(tmp_path, "fill.py", GOOD_KERNEL)
    r = argus("check", "fill.py")
    assert r.rc == 0, r
    assert r.out == "All checks passed: 1 kernel in 1 file.\n"
    assert r.err == ""


def test_half_typed_kernel_gets_ar002_and_the_other_kernel_is_still_checked(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "two.py", "--format", "json")
    assert r.rc == 1, r
    doc = r.json()
    assert doc["summary"]["kernels"] == 2
    assert [(d["code"], d["kernel"], d["line"]) for d in doc["diagnostics"]] == [
        ("AR002", "unfinished_kernel", HALF_TYPED_ERROR_LINE)
    ]


def test_exit_zero_keeps_findings_but_exits_0(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "two.py", "--exit-zero")
    assert r.rc == 0, r
    assert "AR002 [error] parse-error in unfinished_kernel" in r.out


def test_file_without_kernels_reports_nothing(argus, tmp_path):
    write(tmp_path, "helpers.py", "import triton\n" + NO_KERNEL)
    r = argus("check", "helpers.py", "--format", "json")
    assert r.rc == 0, r
    assert r.json()["diagnostics"] == []
    assert r.json()["summary"]["kernels"] == 0
    assert argus("check", "helpers.py").out == "No Triton kernels found.\n"


def test_missing_path_is_reported_and_the_others_still_checked(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "nope/missing.py", "two.py", "--format", "json")
    assert r.rc == 2, r
    assert r.err == "argus: no such file or directory: nope/missing.py\n"
    assert [d["code"] for d in r.json()["diagnostics"]] == ["AR002"]
    write(tmp_path, "fill.py", GOOD_KERNEL)
    r = argus("check", "fill.py", "gone.py")  # a clean file does not hide the missing one
    assert r.rc == 2 and "All checks passed: 1 kernel in 1 file." in r.out, r


def test_non_utf8_file_is_named_and_the_others_still_checked(argus, tmp_path):
    write(tmp_path, "bad.py", b"\xff\xfe" + b"import triton\n")
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "bad.py", "two.py")
    assert r.rc == 2, r
    assert "argus: cannot read bad.py: not UTF-8 (byte 0xff at line 1, byte 1)" in r.err
    assert "Traceback" not in r.err
    assert "two.py:15:5: AR002" in r.out


def test_non_utf8_file_that_never_mentions_triton_is_skipped(argus, tmp_path):
    write(tmp_path, "latin1.py", "x = 'caf\u00e9'\n".encode("latin-1"))
    r = argus("check", ".")
    assert (r.rc, r.err) == (0, ""), r


def test_folders_are_walked_and_paths_joined_as_given(argus, tmp_path):
    write(tmp_path, "pkg/kernels/two.py", HALF_TYPED)
    write(tmp_path, "pkg/kernels/notes.txt", HALF_TYPED)  # not *.py: not checked
    for skipped in (".venv/lib/k.py", "node_modules/k.py", "__pycache__/k.py", ".git/k.py"):
        write(tmp_path, f"pkg/{skipped}", HALF_TYPED)
    r = argus("check", "pkg", "--format", "json")
    assert r.rc == 1, r
    assert [d["path"] for d in r.json()["diagnostics"]] == ["pkg/kernels/two.py"]


def test_no_path_means_the_current_folder(argus, tmp_path):
    write(tmp_path, "sub/two.py", HALF_TYPED)
    r = argus("check", "--format", "json")
    assert r.rc == 1, r
    assert [d["path"] for d in r.json()["diagnostics"]] == ["sub/two.py"]


def test_a_file_given_twice_is_checked_once(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "two.py", ".", "--format", "json")
    assert len(r.json()["diagnostics"]) == 1
    assert r.json()["summary"]["files"] == 1


def test_select_and_ignore_take_code_prefixes(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    assert argus("check", "two.py", "--select", "AR").rc == 1
    assert argus("check", "two.py", "--select", "df,ar002").rc == 1
    assert argus("check", "two.py", "--select", "DF").rc == 0
    assert argus("check", "two.py", "--ignore", "AR002").rc == 0
    assert argus("check", "two.py", "--select", "AR", "--ignore", "AR0").rc == 0


def test_unknown_codes_are_a_usage_error(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "two.py", "--select", "DF,XY123")
    assert r.rc == 2 and r.out == "", r
    assert "unknown rule code in --select: XY123" in r.err
    r = argus("check", "two.py", "--ignore", "ZZ,QQ")
    assert r.rc == 2
    assert "unknown rule codes in --ignore: ZZ, QQ" in r.err


def test_pyproject_settings_apply_and_flags_override_them(argus, tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.argus]\nignore = ["AR"]\n')
    write(tmp_path, "src/two.py", HALF_TYPED)
    assert argus("check", "src").rc == 0
    assert argus("check", "src", "--ignore", "PF").rc == 1


def test_pyproject_accepts_comma_separated_strings(argus, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.argus]\nselect = "DF, MB"\n')
    write(tmp_path, "two.py", HALF_TYPED)
    assert argus("check", "two.py").rc == 0
    assert argus("check", "two.py", "--select", "AR").rc == 1


def test_bad_pyproject_settings_are_usage_errors(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    write(tmp_path, "pyproject.toml", '[tool.argus]\nselect = ["NOPE1"]\n')
    r = argus("check", "two.py")
    assert r.rc == 2
    assert "unknown rule code in" in r.err and "pyproject.toml ([tool.argus] select): NOPE1" in r.err
    write(tmp_path, "pyproject.toml", "[tool.argus\n")
    r = argus("check", "two.py")
    assert r.rc == 2 and "cannot read" in r.err and "pyproject.toml" in r.err
    write(tmp_path, "pyproject.toml", "[tool.argus]\nselect = 3\n")
    r = argus("check", "two.py")
    assert r.rc == 2 and "must be a list of codes" in r.err


def test_output_file_receives_the_report(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "two.py", "--format", "json", "--output", "report.json")
    assert r.rc == 1 and r.out == "", r
    assert '"code": "AR002"' in (tmp_path / "report.json").read_text()
    r = argus("check", "two.py", "--output", "no/such/dir/report.txt")
    assert r.rc == 2 and "cannot write no/such/dir/report.txt" in r.err


def test_usage_errors_exit_2(argus):
    assert argus().rc == 2
    r = argus("check", "--format", "xml")
    assert r.rc == 2 and "invalid choice" in r.err
    assert argus("frobnicate").rc == 2


def test_version_and_help(argus):
    r = argus("--version")
    assert r.rc == 0 and r.out.startswith("argus ")
    r = argus("check", "--help")
    assert r.rc == 0 and "--exit-zero" in r.out


def test_corpus_mutant_matmul_v3_reports_df002_at_line_33(argus, corpus):
    r = argus("check", corpus / "matmul_v3.py", "--format", "json")
    assert r.rc == 1, r
    assert ("DF002", 33) in {(d["code"], d["line"]) for d in r.json()["diagnostics"]}


def test_corpus_mutant_vector_add_v2_reports_mb002_on_its_marked_line(argus, corpus):
    path = corpus / "vector_add_v2.py"
    marked = [i for i, line in enumerate(path.read_text().splitlines(), 1) if "# expect: MB002" in line]
    r = argus("check", path, "--format", "json")
    assert r.rc == 1, r
    assert {d["line"] for d in r.json()["diagnostics"] if d["code"] == "MB002"} & set(marked)


def test_bundled_examples(argus):
    assert argus("check", REPO / "examples" / "gemm.py").rc == 0
    buggy = REPO / "examples" / "gemm_stale_b.py"
    bug_line = buggy.read_text().splitlines().index("        b_tile += TILE_K") + 1
    r = argus("check", buggy, "--format", "json")
    assert r.rc == 1, r
    failing = [d for d in r.json()["diagnostics"] if d["severity"] in ("error", "warning")]
    assert ("DF002", bug_line) in [(d["code"], d["line"]) for d in failing]
    # the drifting B tile also contracts the wrong k and reads past N: consequences, nothing else
    assert {d["code"] for d in failing} <= {"DF002", "DF001", "MB001"}
