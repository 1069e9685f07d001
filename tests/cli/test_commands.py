"""The other subcommands: `rules`, `serve`/`argus-lsp` argument handling, delegated commands,
and the promise that a crash while checking one file is reported without a traceback."""

from __future__ import annotations

import sys

import pytest
from argus.analyzers import RULES
from cli_helpers import GOOD_KERNEL, HALF_TYPED

from argus_lsp import cli, cli_check


def test_rules_table_lists_every_code(argus):
    r = argus("rules")
    assert r.rc == 0
    for code, info in RULES.items():
        assert any(line.startswith(code) and info.name in line for line in r.out.splitlines())


def test_rules_shows_one_page_by_code_or_name(argus):
    r = argus("rules", "df002")
    assert r.rc == 0 and r.out.startswith("# DF002 stale-reduction-pointer\n")
    assert argus("rules", "stale-reduction-pointer").out == r.out
    r = argus("rules", "XX999")
    assert r.rc == 2 and "unknown rule: XX999" in r.err


def test_serve_rejects_a_malformed_tcp_address(argus):
    r = argus("serve", "--tcp", "localhost")
    assert r.rc == 2 and "--tcp expects HOST:PORT" in r.err
    assert cli.serve_main(["--tcp", "127.0.0.1:99999"]) == 2
    assert cli.serve_main(["--bogus"]) == 2


def test_delegated_command_gets_its_own_flags(monkeypatch, tmp_path, capsys):
    pkg = tmp_path / "fake_delegate"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("SEEN = []\n\ndef main(argv):\n    SEEN.append(argv)\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli.SUBCOMMANDS, "knowledge", cli.Subcommand("fake_delegate.cli", "cards"))
    assert cli.main(["knowledge", "search", "--limit", "3", "split-k"]) == 3
    import fake_delegate.cli as fake

    assert fake.SEEN == [["search", "--limit", "3", "split-k"]]


def test_missing_delegate_module_is_reported(monkeypatch, capsys):
    monkeypatch.setitem(cli.SUBCOMMANDS, "profile", cli.Subcommand("argus_no_such_pkg.cli", "profile"))
    assert cli.main(["profile", "k.py::kernel"]) == 2
    assert (
        "`argus profile` is not available: module argus_no_such_pkg.cli is not installed"
        in capsys.readouterr().err
    )


def test_internal_error_in_one_file_is_reported_and_others_checked(monkeypatch, tmp_path, capsys):
    """The analyzer is real; a failure is injected for one file only, to exercise the crash path."""
    (tmp_path / "a_crash.py").write_text(GOOD_KERNEL)
    (tmp_path / "b_two.py").write_text(HALF_TYPED)
    real = cli_check.check_source

    def crash_on_a(text, path, **kw):
        if path.endswith("a_crash.py"):
            raise RuntimeError("boom")
        return real(text, path, **kw)

    monkeypatch.setattr(cli_check, "check_source", crash_on_a)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "."]) == 2
    captured = capsys.readouterr()
    assert "argus: internal error while checking a_crash.py: RuntimeError: boom" in captured.err
    assert "Traceback" not in captured.err
    assert "b_two.py:15:5: AR002" in captured.out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlinks")
def test_unreadable_file_under_a_folder_is_reported(argus, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "two.py").write_text(HALF_TYPED)
    (tmp_path / "src" / "gone.py").symlink_to(tmp_path / "nowhere.py")  # dangling: cannot be read
    r = argus("check", "src")
    assert r.rc == 2, r
    assert "argus: cannot read src/gone.py: No such file or directory" in r.err
    assert "src/two.py:15:5: AR002" in r.out
