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
    out: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for name, files in _packages(run):
        for f in files:
            for k in f.get("kernels") or []:
                fs = [
                    (str(g.get("line")), g["code"])
                    for g in k["findings"]
                    if g.get("severity") in ("error", "warning") and g["code"] not in ("MB003", "AR001")
                ]
                if fs:
                    out[(name, f["path"], k["name"])] = fs
    return out


def _packages(run: Path) -> list[tuple[str, list[dict]]]:
    """(package name, its files) of one run's JSON."""
    opener = gzip.open if run.suffix == ".gz" else open
    with opener(run, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    return [(pin.split("==")[0], pkg["files"]) for pin, pkg in data.items()]


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
    total: Counter[str] = Counter()
    for run in a.runs:
        counts: Counter[tuple[str, str]] = Counter()
        listed = []
        for (pkg, path, kernel), fs in sorted(flagged(run).items()):
            cls = classify(fs, pkg, path, table)
            counts[(pkg, cls)] += 1
            if cls == a.list:
                listed.append(f"  {pkg} {path} {kernel} {fs}")
        sizes = kernel_counts(run)
        for pkg in sorted({p for p, _ in counts} | set(sizes)):
            row = {c: counts[(pkg, c)] for c in ("false", "triaged", "untriaged")}
            total.update({**row, "kernels": sizes.get(pkg, 0)})
            print(f"{run.name}: {pkg}: {_line(row, sizes.get(pkg, 0))}")
        if listed:
            print("\n".join(listed))
    if len(a.runs) > 1 or len({p for r in a.runs for p in kernel_counts(r)}) > 1:
        row = {c: total[c] for c in ("false", "triaged", "untriaged")}
        print(f"all: {_line(row, total['kernels'])}")
    return 0


def kernel_counts(run: Path) -> dict[str, int]:
    """package -> kernels in the run, flagged or not: the denominator of the false rate."""
    return {name: sum(len(f.get("kernels") or []) for f in files) for name, files in _packages(run)}


def _line(row: dict[str, int], kernels: int) -> str:
    share = f" ({100 * row['false'] / kernels:.2f}% of {kernels} kernels)" if kernels else ""
    return f"flagged {sum(row.values())}, " + ", ".join(f"{k} {v}" for k, v in row.items()) + share


if __name__ == "__main__":
    raise SystemExit(main())
