"""docs/cli.md shows real output: every `$ argus check ...` example in it is run on the folder the
page describes (`kernels/fill.py` and `kernels/scale.py`) and must print exactly what is shown."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from cli_helpers import HALF_TYPED, REPO, UNMASKED_STORE, run_argus

DOC = REPO / "docs" / "cli.md"


def examples() -> list[tuple[str, str]]:
    """(command, output) for each `$ argus check` line in a code block, up to the next `$` line."""
    found: list[tuple[str, list[str]]] = []
    in_block = False
    for line in DOC.read_text().splitlines():
        if line.startswith("```"):
            in_block = not in_block
            current = None
            continue
        if not in_block:
            continue
        if line.startswith("$ "):
            current = [] if line.startswith("$ argus check") else None
            if current is not None:
                found.append((line[2:], current))
        elif current is not None:
            current.append(line)
    return [(cmd, "\n".join(out) + "\n" if out else "") for cmd, out in found]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "fill.py").write_text(HALF_TYPED)
    (tmp_path / "kernels" / "scale.py").write_text(UNMASKED_STORE)
    return tmp_path


def test_the_page_has_examples():
    assert len(examples()) >= 8


@pytest.mark.parametrize(("command", "shown"), examples(), ids=[c for c, _ in examples()])
def test_example_output_is_what_the_command_prints(command, shown, folder, tmp_path_factory):
    work = tmp_path_factory.mktemp("run")
    shutil.copytree(folder / "kernels", work / "kernels")
    r = run_argus(*shlex.split(command)[1:], cwd=work)
    printed = r.out if r.out or not r.err else r.err
    assert printed == shown, r
