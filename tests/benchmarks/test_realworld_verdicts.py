"""The false-rate count joins a real-world run with the triage table's latest verdicts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from benchmarks.realworld_verdicts import classify, flagged, main, verdicts

DOC = """
| package | version | file | line | code | verdict | reason |
|---|---|---|---|---|---|---|
| flag-gems | 5.0.2 | ops/a.py | 10 | MB001 | false | guessed rank |
| flag-gems | 5.0.2 | ops/a.py | 10 | MB001 | real | re-judged: the launcher does pass it |
| flag-gems | 5.0.2 | ops/b.py | 7 | GR002 | false | idempotent store |
"""


def _run(tmp: Path) -> Path:
    def kernel(name: str, *findings: tuple[int, str, str]) -> dict:
        return {"name": name, "findings": [{"line": ln, "code": c, "severity": s} for ln, c, s in findings]}

    files = [
        {"path": "ops/a.py", "kernels": [kernel("ka", (10, "MB001", "error"), (12, "MB003", "warning"))]},
        {"path": "ops/b.py", "kernels": [kernel("kb", (7, "GR002", "error"), (9, "NU003", "warning"))]},
        {"path": "ops/c.py", "kernels": [kernel("kc", (3, "DF003", "hint")), kernel("kd", (4, "MB002", "error"))]},
    ]
    out = tmp / "run.json.gz"
    with gzip.open(out, "wt", encoding="utf-8") as fh:
        json.dump({"flag-gems==5.0.2": {"files": files}}, fh)
    return out


def test_each_flagged_kernel_takes_its_findings_latest_verdict(tmp_path: Path) -> None:
    doc = tmp_path / "realworld.md"
    doc.write_text(DOC, encoding="utf-8")
    table = verdicts(doc)
    runs = flagged(_run(tmp_path))
    assert set(runs) == {("flag-gems", "ops/a.py", "ka"), ("flag-gems", "ops/b.py", "kb"), ("flag-gems", "ops/c.py", "kd")}
    got = {k[2]: classify(fs, k[0], k[1], table) for k, fs in runs.items()}
    # ka: the later row re-judged it real; kb: one false finding makes the kernel false even
    # beside an untriaged one; kd: no row at all; MB003 and hints never count
    assert got == {"ka": "triaged", "kb": "false", "kd": "untriaged"}


def test_the_false_rate_counts_every_kernel_of_the_run(tmp_path: Path, capsys) -> None:
    """The share is over all kernels of the package (4 here), not over the flagged ones (3)."""
    doc = tmp_path / "realworld.md"
    doc.write_text(DOC, encoding="utf-8")
    run = _run(tmp_path)
    assert main([str(run), str(run), "--doc", str(doc)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run.json.gz: flag-gems: flagged 3, false 1, triaged 1, untriaged 1 (25.00% of 4 kernels)"
    assert lines[-1] == "all: flagged 6, false 2, triaged 2, untriaged 2 (25.00% of 8 kernels)"
