"""Diff the findings of two checkers: a git revision's and the working tree's, over the corpora.

    python scripts/diff_findings.py [--base REV] [--liger DIR] [--save FILE] [PATH ...]

A restructure of `analyzers/` must not change what users see. This script exports the tree of
`--base` (default `HEAD`) with `git archive` into a temporary folder, runs `argus check --format
json` of that tree and of the working tree over the same files (each in its own subprocess, with
its own tree first on `PYTHONPATH`, from an empty folder so that no `[tool.argus]` table applies),
normalizes the diagnostics and prints either `identical: ...` (exit 0) or the differences (exit 1).

Default inputs: the shared corpus (`../shared/corpus`), `tests/corpus_own`, `tests/corpus_styles`
and the Triton files of the liger-kernel wheel (pinned below). The wheel is fetched once with
`pip download` into a git-ignored cache (`/tmp/argus-liger` unless `--liger` names another folder)
and unpacked there; nothing of it is committed. `--save` writes the normalized findings of the
working tree as JSON (a record of the baseline). The base revision's report is cached next to its
exported tree, keyed by the inputs' contents, so a second comparison runs only the working tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIGER_PIN = "liger-kernel==0.8.5"
RUN_CLI = "import sys; from argus_lsp.cli import main; sys.exit(main(sys.argv[1:]))"
TIMEOUT_S = 1800


def liger_files(cache: Path) -> list[Path]:
    """The wheel's `.py` files that define a `@triton.jit` kernel (downloaded and unpacked once)."""
    unpacked = cache / "src"
    if not unpacked.exists():
        wheels = sorted(cache.glob("liger_kernel-*.whl"))
        if not wheels:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", LIGER_PIN, "-d", str(cache)],
                check=True,
                timeout=600,
            )
            wheels = sorted(cache.glob("liger_kernel-*.whl"))
        with zipfile.ZipFile(wheels[-1]) as z:
            members = [n for n in z.namelist() if n.endswith(".py")]
            z.extractall(unpacked, members)
    return sorted(p for p in unpacked.rglob("*.py") if "triton.jit" in p.read_text(encoding="utf-8"))


def export_revision(rev: str, dest: Path) -> Path:
    """Unpack `rev`'s tree into `dest` (no worktree, no checkout: the repository is untouched)."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    out = dest / sha[:12]
    if not out.exists():
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", sha], check=True, capture_output=True
        ).stdout
        tmp = Path(tempfile.mkdtemp(dir=dest))
        tar_path = tmp / "tree.tar"
        tar_path.write_bytes(archive)
        with tarfile.open(tar_path) as t:
            t.extractall(tmp / "tree", filter="data")
        (tmp / "tree").rename(out)
    return out


def run_checker(tree: Path, files: list[Path]) -> dict:
    """`argus check --format json` of the checker in `tree` over `files`, as one subprocess.

    The hash seed is fixed: the order of the tag names in some witnesses follows set iteration
    order, so two runs of the same checker can differ in that order unless the seed is the same."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run(
            [sys.executable, "-c", RUN_CLI, "check", "--format", "json", "--exit-zero", *map(str, files)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    if proc.returncode != 0:
        raise SystemExit(f"checker in {tree} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


def cached_report(tree: Path, files: list[Path]) -> dict:
    """The base revision's report, kept next to its exported tree (it cannot change)."""
    digest = hashlib.blake2b("\n".join(map(str, files)).encode(), digest_size=8)
    for f in files:
        digest.update(f.read_bytes())
    path = tree.parent / f"{tree.name}-{digest.hexdigest()}.json"
    if path.exists():
        return json.loads(path.read_text())
    report = run_checker(tree, files)
    path.write_text(json.dumps(report))
    return report


def normalized(report: dict) -> list[dict]:
    """Every field of every diagnostic, in a stable order (the CLI's own order is kept per file)."""
    rows = [dict(d) for d in report["diagnostics"]]
    return sorted(rows, key=lambda d: json.dumps(d, sort_keys=True, default=str))


def describe(d: dict) -> str:
    return f"{d['path']}:{d['line']}:{d['column']} {d['code']} {d['message']}"


def diff(base: list[dict], new: list[dict]) -> tuple[list[dict], list[dict]]:
    key = lambda d: json.dumps(d, sort_keys=True, default=str)  # noqa: E731
    base_keys = {key(d) for d in base}
    new_keys = {key(d) for d in new}
    return [d for d in base if key(d) not in new_keys], [d for d in new if key(d) not in base_keys]


def default_inputs(liger_cache: Path) -> list[Path]:
    dirs = [
        ROOT.parent / "shared" / "corpus",
        ROOT / "tests" / "corpus_own",
        ROOT / "tests" / "corpus_styles",
    ]
    files = [f for d in dirs if d.exists() for f in sorted(d.rglob("*.py"))]
    return files + liger_files(liger_cache)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, help="files to check (default: the corpora)")
    ap.add_argument("--base", default="HEAD", help="the revision to compare against (default HEAD)")
    ap.add_argument("--liger", type=Path, default=Path(tempfile.gettempdir()) / "argus-liger")
    ap.add_argument("--save", type=Path, help="write the working tree's normalized findings here")
    args = ap.parse_args()
    args.liger.mkdir(parents=True, exist_ok=True)
    files = [p.resolve() for p in args.paths] or default_inputs(args.liger)
    exports = Path(tempfile.gettempdir()) / "argus-base"
    exports.mkdir(exist_ok=True)
    base_tree = export_revision(args.base, exports)
    base_report, new_report = cached_report(base_tree, files), run_checker(ROOT, files)
    base, new = normalized(base_report), normalized(new_report)
    if args.save:
        args.save.write_text(json.dumps(new, indent=1, sort_keys=True, default=str) + "\n")
    gone, added = diff(base, new)
    if base_report["summary"] != new_report["summary"]:
        print(f"summaries differ: base {base_report['summary']} / new {new_report['summary']}")
    if not gone and not added and base_report["summary"] == new_report["summary"]:
        s = new_report["summary"]
        print(
            f"identical: {len(new)} findings over {s['files']} files, {s['kernels']} kernels (base {args.base})"
        )
        return 0
    for d in gone:
        print(f"- {describe(d)}")
    for d in added:
        print(f"+ {describe(d)}")
    print(f"different: {len(gone)} findings only in base, {len(added)} only in the working tree")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
