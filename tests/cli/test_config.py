"""`[tool.argus]` as `argus check` reads it: found from each checked file's folder upward,
strict about unknown keys and empty selections, and overridden by flags."""

from __future__ import annotations

from cli_helpers import GOOD_KERNEL, HALF_TYPED
from test_check import write


def test_a_misspelt_key_is_an_error_that_names_the_closest_key(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    write(tmp_path, "pyproject.toml", '[tool.argus]\nselct = ["DF"]\n')
    r = argus("check", "two.py")
    assert (r.rc, r.out) == (2, ""), r
    assert "pyproject.toml: unknown key `selct` (did you mean `select`?)" in r.err
    write(tmp_path, "pyproject.toml", '[tool.argus]\nfrobnicate = 1\n')
    assert "unknown key `frobnicate` (known keys: select, ignore, severity, kernel-timeout)" in argus("check", "two.py").err


def test_an_editor_setting_in_the_project_file_is_named_as_such(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    write(tmp_path, "pyproject.toml", '[tool.argus]\nrun = "onSave"\n')
    r = argus("check", "two.py")
    assert r.rc == 2 and "`run` is an editor setting, not a project one" in r.err, r


def test_empty_selections_are_errors(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    for value in ("[]", '""', '" , "'):
        write(tmp_path, "pyproject.toml", f"[tool.argus]\nselect = {value}\n")
        r = argus("check", "two.py")
        assert (r.rc, r.out) == (2, ""), r
        assert "pyproject.toml: `select = " in r.err and "` in [tool.argus] selects no rule" in r.err
    write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n")
    for flag in ("", ","):
        r = argus("check", "two.py", "--select", flag)
        assert (r.rc, r.out) == (2, ""), r
        assert "selects no rule, so nothing would be checked" in r.err
    assert argus("check", "two.py", "--ignore", "").rc == 1  # ignoring nothing is harmless


def test_configuration_is_found_from_the_checked_file_upward(argus, tmp_path):
    """Run from a folder without settings: each file gets the settings of its own project."""
    write(tmp_path, "quiet/pyproject.toml", '[tool.argus]\nignore = ["AR"]\n')
    write(tmp_path, "quiet/pkg/pyproject.toml", "[project]\nname = 'pkg'\n")  # no table: passed over
    write(tmp_path, "quiet/pkg/src/two.py", HALF_TYPED)
    write(tmp_path, "loud/two.py", HALF_TYPED)
    r = argus("check", "quiet/pkg/src/two.py", "--format", "json")
    assert r.rc == 0 and r.json()["diagnostics"] == [], r
    r = argus("check", "quiet", "loud", "--format", "json")
    assert [d["path"] for d in r.json()["diagnostics"]] == ["loud/two.py"], r
    r = argus("check", "quiet", "--ignore", "PF")  # a flag replaces the project's setting
    assert r.rc == 1 and "AR002" in r.out, r


def test_a_broken_project_file_stops_the_run_before_anything_is_checked(argus, tmp_path):
    write(tmp_path, "ok/two.py", HALF_TYPED)
    write(tmp_path, "bad/two.py", HALF_TYPED)
    write(tmp_path, "bad/pyproject.toml", "[tool.argus]\nselect = ['NOPE1']\n")
    r = argus("check", "ok", "bad")
    assert (r.rc, r.out) == (2, ""), r
    assert "unknown rule code in" in r.err and "NOPE1" in r.err


def test_project_severity_levels_apply(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    write(tmp_path, "pyproject.toml", '[tool.argus.severity]\nAR002 = "hint"\n')
    r = argus("check", "two.py")
    assert r.rc == 0 and "AR002 [hint]" in r.out, r
    write(tmp_path, "pyproject.toml", '[tool.argus.severity]\nAR = "off"\n')
    r = argus("check", "two.py", "--format", "json")
    assert r.rc == 0 and r.json()["diagnostics"] == [], r
    write(tmp_path, "pyproject.toml", '[tool.argus.severity]\nAR002 = "loud"\n')
    r = argus("check", "two.py")
    assert r.rc == 2 and "AR002: 'loud' is not one of error, warning, hint, info, off" in r.err, r


def test_stdin_with_a_filename_uses_its_name_and_its_configuration(argus, tmp_path):
    write(tmp_path, "proj/pyproject.toml", '[tool.argus]\nignore = ["PF"]\n')
    r = argus("check", "-", "--stdin-filename", "proj/k/two.py", "--format", "json", stdin=HALF_TYPED)
    assert r.rc == 1, r
    assert [(d["path"], d["code"]) for d in r.json()["diagnostics"]] == [("proj/k/two.py", "AR002")]
    write(tmp_path, "proj/pyproject.toml", '[tool.argus]\nignore = ["AR"]\n')
    assert argus("check", "-", "--stdin-filename", "proj/k/two.py", stdin=HALF_TYPED).rc == 0
    assert argus("check", "--stdin-filename", "proj/k/two.py", stdin=HALF_TYPED).rc == 0  # `-` implied
    r = argus("check", "-", stdin=GOOD_KERNEL)
    assert (r.rc, r.out) == (0, "All checks passed: 1 kernel in 1 file.\n"), r
    r = argus("check", "-", stdin=HALF_TYPED)
    assert r.out.startswith("-:15:5: AR002"), r


def test_stdin_usage_errors(argus, tmp_path):
    write(tmp_path, "two.py", HALF_TYPED)
    r = argus("check", "two.py", "--stdin-filename", "x.py")
    assert r.rc == 2 and "add `-` to the paths" in r.err
    r = argus("check", "-", "--fix", stdin=HALF_TYPED)
    assert r.rc == 2 and "--fix cannot write back to stdin" in r.err
