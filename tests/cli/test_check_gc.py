"""`argus check` sets the collector up as the language server does (argus_lsp/gc_pause.py): a
check of a package is the same allocation pattern file after file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import contextlib, gc, io, json, sys
from argus_lsp.cli import main
from argus_lsp.gc_pause import YOUNG
before = gc.get_threshold()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["check", "--exit-zero", sys.argv[1]])
print(json.dumps([code, before, gc.get_threshold(), YOUNG, gc.get_freeze_count()]))
"""


def test_argus_check_widens_the_young_generation_and_freezes_start_up() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(REPO / "examples" / "gemm.py")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    code, before, after, young, frozen = json.loads(out.stdout.strip().splitlines()[-1])
    assert code == 0
    assert before[0] < young and after == [young, before[1], before[2]]
    assert frozen > 10_000
