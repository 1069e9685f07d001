"""Count the flagged kernels of a real-world run by the verdicts of docs/realworld.md's triage.

`benchmarks/realworld.py --json OUT` says which kernels carry an error or warning (MB003 and
AR001 aside); the triage table in docs/realworld.md says, per package, file, line and code,
whether a finding was real, real-latent, unclear or false. This joins the two, so the false
rate the issue's target speaks of comes from a command rather than from a hand count:

    python benchmarks/realworld_verdicts.py OUT.json.gz [OUT2.json.gz ...] [--list untriaged|false]

A kernel counts as false when any of its findings' latest row (the table is append-only: a
later row for the same key re-judges it) says false; as triaged when every finding has a row;
else as untriaged. Rows that name a finding only in another row's text ("same for 194") are
not matched, so the untriaged count is an upper bound.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "realworld.md"
PACKAGES = ("liger-kernel", "fla-core", "flag-gems")
Key = tuple[str, str, str, str]  # package, file, line, code


def verdicts(doc: Path = DOC) -> dict[Key, str]:
    """(package, file, line, code) -> the latest verdict the triage table gives it."""
    out: dict[Key, str] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) >= 7 and cells[0] in PACKAGES:
            out[(cells[0], cells[2], cells[3], cells[4])] = cells[5]
    return out


def flagged(run: Path) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    """(package, file, kernel) -> its error/warning findings (line, code), MB003/AR001 aside."""
    opener = gzip.open if run.suffix == ".gz" else open
    with opener(run, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    out: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for pin, pkg in data.items():
        name = pin.split("==")[0]
        for f in pkg["files"]:
            for k in f.get("kernels") or []:
                fs = [
                    (str(g.get("line")), g["code"])
                    for g in k["findings"]
                    if g.get("severity") in ("error", "warning") and g["code"] not in ("MB003", "AR001")
                ]
                if fs:
                    out[(name, f["path"], k["name"])] = fs
    return out


def classify(findings: list[tuple[str, str]], package: str, path: str, table: dict[Key, str]) -> str:
    found = [table.get((package, path, line, code)) for line, code in findings]
    if any(v and v.startswith("false") for v in found):
        return "false"
    return "triaged" if all(found) else "untriaged"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="JSON written by benchmarks/realworld.py --json")
    ap.add_argument("--list", choices=("false", "untriaged"), help="also list the kernels of one class")
    ap.add_argument("--doc", type=Path, default=DOC)
    a = ap.parse_args(argv)
    table = verdicts(a.doc)
    for run in a.runs:
        counts: Counter[tuple[str, str]] = Counter()
        listed = []
        for (pkg, path, kernel), fs in sorted(flagged(run).items()):
            cls = classify(fs, pkg, path, table)
            counts[(pkg, cls)] += 1
            if cls == a.list:
                listed.append(f"  {pkg} {path} {kernel} {fs}")
        for pkg in sorted({p for p, _ in counts}):
            row = {c: counts[(pkg, c)] for c in ("false", "triaged", "untriaged")}
            print(f"{run.name}: {pkg}: flagged {sum(row.values())}, " + ", ".join(f"{k} {v}" for k, v in row.items()))
        if listed:
            print("\n".join(listed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
