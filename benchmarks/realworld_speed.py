"""Checker speed on real kernels: CPU per kernel of this tree against a baseline tree, one core.

    python benchmarks/realworld_speed.py [--files 40] [--seed 5] [--repeat 3]
                                         [--baseline-rev main | --baseline-path DIR]
                                         [--packages liger_kernel,fla_core] [--dir benchmarks/.realworld]
                                         [--json out.json] [--profile DIR] [--paths LIST]
    python benchmarks/realworld_speed.py --compare OLD.json.gz NEW.json.gz

The sample is drawn by a seeded rule, not by hand: the Triton files of the unpacked packages
(`benchmarks/.realworld/src`, from `realworld.py`) sorted by path, and `random.Random(seed)`
picks `--files` of them. Each tree (this one, and the baseline: a git revision exported with
`git archive`, or a folder) checks the sample in its own subprocess pinned to one core, with its
own code first on the path; every file is checked with its package's other modules at hand, as
`realworld.py` and `argus check PACKAGE/` do. The two trees alternate file by file (so a
neighbour's load on the shared machine falls on both alike) and each file's time is the
worker's CPU time, split evenly over its kernels (as in `realworld.py`), the least of `--repeat`
passes over the whole sample (a pass checks every file once, in one process, as a CLI run over
a package does: what one file's check leaves in memory is there for the next, in both trees).

It prints, per tree, the CPU milliseconds per kernel (median, p95, total) and the ratios
baseline / this tree, the files whose ratio is furthest from 1, and whether the findings of
every file are the same in both trees (a digest of each whole finding: code, kernel, span,
message, severity, witness, fix and related places): a speed change must not change a finding. Kernels get a 600 s budget here, so that
the findings do not depend on the machine's load (the default budget is wall-clock time). `--profile DIR` writes a cProfile of this
tree's check of each file there (slower; for finding where the time goes, not for the figures).
`--compare OLD NEW` diffs the findings of two `realworld.py --json` files, kernel by kernel.
`--paths LIST` times the files listed in LIST (one a line, relative to DIR/src) instead of the
seeded sample: a subset chosen by a stated rule, such as the files around the median kernel.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_DIR = HERE / ".realworld"
DEFAULT_PACKAGES = "liger_kernel,fla_core"
TRITON_MARKER = b"triton"
KERNEL_MARKERS = (b"triton.jit", b"@jit")  # the sample is drawn from files that define kernels
FILE_TIMEOUT_S = 600  # one file in one tree; a worker past it is an error of the benchmark
# the kernel budget is wall-clock time: on a loaded machine the default (10 s) cut kernels short
# in one pass and not in another; with this one the findings do not depend on the load
KERNEL_TIMEOUT_S = 600.0


def sample_files(src: Path, packages: list[str], count: int, seed: int) -> list[tuple[Path, Path]]:
    """(package root, file) pairs: the seeded sample of the packages' Triton files."""
    pool: list[tuple[Path, Path]] = []
    for root in sorted(src.iterdir()):
        if not any(root.name.startswith(p + "-") for p in packages):
            continue
        pool += [(root, f) for f in package_files(root) if any(m in f.read_bytes() for m in KERNEL_MARKERS)]
    if not pool:
        raise SystemExit(f"no Triton files of {', '.join(packages)} under {src} (run realworld.py first)")
    rng = random.Random(seed)
    return sorted(rng.sample(pool, min(count, len(pool))), key=lambda rf: str(rf[1]))


def listed_files(src: Path, listing: Path) -> list[tuple[Path, Path]]:
    """(package root, file) pairs for the paths listed one a line in `listing` (absolute, or
    relative to `src`; blank lines and `#` comments skipped), in the listed order: a chosen
    subset (the median kernels, the slowest files) timed the same way as the sample."""
    roots = sorted(p for p in src.iterdir() if p.is_dir())
    out: list[tuple[Path, Path]] = []
    for line in listing.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        path = (src / line).resolve()
        root = next((r for r in roots if path.is_relative_to(r.resolve())), None)
        if root is None or not path.is_file():
            raise SystemExit(f"{line}: not a file under a package root of {src}")
        out.append((root.resolve(), path))
    if not out:
        raise SystemExit(f"{listing} lists no files")
    return out


def package_files(root: Path) -> list[Path]:
    """The `.py` files under `root` that mention Triton, sorted (as realworld_fetch.triton_files)."""
    return [p for p in sorted(root.rglob("*.py")) if TRITON_MARKER in p.read_bytes()]


def export_revision(rev: str, dest: Path) -> Path:
    """`rev`'s tree unpacked under `dest` (git archive: no checkout, the repository is untouched)."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    out = dest / f"speed-{sha[:12]}"
    if not out.exists():
        tmp = Path(tempfile.mkdtemp(dir=dest))
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", sha], check=True, capture_output=True
        ).stdout
        (tmp / "tree.tar").write_bytes(archive)
        with tarfile.open(tmp / "tree.tar") as t:
            t.extractall(tmp / "tree", filter="data")
        (tmp / "tree").rename(out)
    return out


# --- the worker: one tree, files named on stdin, one JSON line out per file ------------------


def worker(tree: Path, profile_dir: Path | None) -> int:
    """Check each `root<TAB>file` line of stdin with the checker of `tree`; print one JSON line."""
    sys.path[:0] = [str(tree)]
    import cProfile  # noqa: PLC0415 - the tree's own code must come first on the path
    import time  # noqa: PLC0415

    from argus.analyzers import check_source, kernel_timeout, list_kernels  # noqa: PLC0415
    from argus.analyzers.project import SourceSet  # noqa: PLC0415

    from argus_lsp.project_files import FileReader, modules_for_paths  # noqa: PLC0415

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    projects: dict[str, SourceSet] = {}
    check_source("import triton\n@triton.jit\ndef k(x):\n    pass\n")  # warm the imports
    for line in sys.stdin:
        root_s, path_s = line.rstrip("\n").split("\t")
        root, path = Path(root_s), Path(path_s)
        if root_s not in projects:
            projects[root_s] = SourceSet(
                modules_for_paths(package_files(root)),
                FileReader(),
                lambda p, root=root: Path(p).relative_to(root).as_posix(),
            )
        text = path.read_text(encoding="utf-8")
        kernels = len(list_kernels(text))
        prof = cProfile.Profile() if profile_dir is not None else None
        c0 = time.process_time()
        if prof is not None:
            prof.enable()
        with kernel_timeout(KERNEL_TIMEOUT_S):
            findings = check_source(text, str(path), project=projects[root_s])
        if prof is not None:
            prof.disable()
        cpu = time.process_time() - c0
        if prof is not None:
            prof.dump_stats(
                str(profile_dir / (path.relative_to(root).as_posix().replace("/", "__") + ".prof"))
            )
        digest = hashlib.blake2b(digest_size=8)
        for f in findings:
            # the whole finding: code, kernel, span, message, severity, witness, fix, related
            digest.update(repr(f).encode())
        row = {
            "file": path_s,
            "kernels": kernels,
            "cpu_s": cpu,
            "findings": len(findings),
            "digest": digest.hexdigest(),
        }
        print(json.dumps(row), flush=True)
    return 0


class Worker:
    """A worker subprocess for one tree, fed one file at a time."""

    def __init__(self, tree: Path, profile_dir: Path | None = None) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(tree)]
        if profile_dir is not None:
            cmd += ["--profile", str(profile_dir)]
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=tempfile.gettempdir()
        )

    def check(self, root: Path, path: Path) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{root}\t{path}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the worker stopped on {path} (exit {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=FILE_TIMEOUT_S)


def keep_fastest(rows: list[dict], i: int, row: dict) -> None:
    """Row i is the file's fastest pass: CPU time on a shared machine only ever grows with the
    neighbours' load (caches, memory bandwidth), so the least of a few passes is the estimate.
    A pass whose findings differ from the first one's is an error of the checker."""
    if i == len(rows):
        rows.append(row)
        return
    if row["digest"] != rows[i]["digest"]:
        raise SystemExit(f"findings of {row['file']} changed between passes of one tree")
    if row["cpu_s"] < rows[i]["cpu_s"]:
        rows[i] = row


# --- figures --------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else 0.0


def per_kernel_ms(rows: list[dict]) -> list[float]:
    out: list[float] = []
    for r in rows:
        n = r["kernels"]
        out += [r["cpu_s"] * 1000 / n] * n if n else []
    return out


def figures(rows: list[dict]) -> dict:
    ms = per_kernel_ms(rows)
    return {
        "median": statistics.median(ms) if ms else 0.0,
        "p95": percentile(ms, 0.95),
        "total_s": sum(r["cpu_s"] for r in rows),
    }


def report(label_new: str, new: list[dict], label_base: str, base: list[dict]) -> dict:
    fn, fb = figures(new), figures(base)
    kernels = sum(r["kernels"] for r in new)
    print(
        f"{len(new)} files, {kernels} kernels, CPU ms per kernel on one core (a file's time split over its kernels)"
    )
    print(f"{'':>12} {'median':>9} {'p95':>9} {'total s':>9}")
    for label, f in ((label_base, fb), (label_new, fn)):
        print(f"{label:>12} {f['median']:9.1f} {f['p95']:9.1f} {f['total_s']:9.2f}")
    ratio = {k: (fb[k] / fn[k] if fn[k] else float("inf")) for k in fn}
    print(f"{'base / new':>12} {ratio['median']:8.2f}x {ratio['p95']:8.2f}x {ratio['total_s']:8.2f}x")
    changed = [n["file"] for n, b in zip(new, base, strict=True) if n["digest"] != b["digest"]]
    print(f"findings: {'identical in every file' if not changed else f'{len(changed)} files differ'}")
    for c in changed:
        print(f"  differs: {c}")
    by_ratio = sorted(zip(new, base, strict=True), key=lambda nb: nb[1]["cpu_s"], reverse=True)
    print("slowest files in the baseline (base ms / new ms per kernel):")
    for n, b in by_ratio[:8]:
        k = max(n["kernels"], 1)
        print(
            f"  {b['cpu_s'] * 1000 / k:8.0f} / {n['cpu_s'] * 1000 / k:6.0f}  {Path(n['file']).name} ({k} kernels)"
        )
    return {"new": fn, "base": fb, "ratio": ratio, "changed": changed, "files": len(new), "kernels": kernels}


def compare_results(old_path: Path, new_path: Path) -> int:
    """The kernels whose findings differ between two `realworld.py --json` files (the same
    packages): `-`/`+` lines per finding; exit 1 when any differ. Timing is not compared."""
    sys.path.insert(0, str(HERE))
    from realworld import read_results  # noqa: PLC0415 - only this mode needs it

    old, new = read_results(old_path), read_results(new_path)
    differ = 0
    for label in sorted(set(old) & set(new)):
        kernels = {}
        for side, results in (("old", old[label]), ("new", new[label])):
            for f in results["files"]:
                for k in f["kernels"]:
                    key = (f["path"], k["name"], k["line"])
                    rows = sorted(json.dumps(x, sort_keys=True) for x in k["findings"])
                    kernels.setdefault(key, {})[side] = (f["status"], rows)
        for (path, name, line), sides in sorted(kernels.items()):
            if sides.get("old") == sides.get("new"):
                continue
            differ += 1
            print(f"{label} {path}:{line} {name}")
            o, n = sides.get("old", ("absent", [])), sides.get("new", ("absent", []))
            if o[0] != n[0]:
                print(f"  status {o[0]} -> {n[0]}")
            for row in sorted(set(o[1]) - set(n[1])):
                print(f"  - {row}")
            for row in sorted(set(n[1]) - set(o[1])):
                print(f"  + {row}")
        print(f"{label}: {len(kernels)} kernels compared")
    print("identical findings" if not differ else f"{differ} kernels differ")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument(
        "--repeat", type=int, default=3, help="passes over the sample; each file's fastest is kept"
    )
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--packages", default=DEFAULT_PACKAGES, help="unpacked package folder prefixes")
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--baseline-rev", default="main", help="git revision of the baseline (default main)")
    ap.add_argument("--baseline-path", type=Path, help="a source tree to use as the baseline instead")
    ap.add_argument("--no-baseline", action="store_true", help="time this tree only")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--paths", type=Path, help="time the files listed in this file (one a line) instead of the sample"
    )
    ap.add_argument("--profile", type=Path, help="write a cProfile of this tree per file here")
    ap.add_argument(
        "--compare", nargs=2, type=Path, metavar=("OLD", "NEW"), help="diff two realworld.py --json files"
    )
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker is not None:
        return worker(args.worker, args.profile)
    if args.compare:
        return compare_results(*args.compare)
    src = args.dir.resolve() / "src"
    if args.paths is not None:
        chosen = listed_files(src, args.paths)
    else:
        chosen = sample_files(src, args.packages.split(","), args.files, args.seed)
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    new_w = Worker(ROOT, args.profile)
    base_w = None
    if not args.no_baseline:
        base_tree = args.baseline_path or export_revision(args.baseline_rev, Path(tempfile.gettempdir()))
        base_w = Worker(base_tree.resolve())
    new_rows: list[dict] = []
    base_rows: list[dict] = []
    for rep in range(args.repeat):
        for i, (root, path) in enumerate(chosen):
            print(
                f"[pass {rep + 1}, {i + 1}/{len(chosen)}] {path.relative_to(root)}",
                file=sys.stderr,
                flush=True,
            )
            # alternate which tree goes first, so that drift in the machine's load falls on both
            if base_w is not None and i % 2:
                keep_fastest(base_rows, i, base_w.check(root, path))
            keep_fastest(new_rows, i, new_w.check(root, path))
            if base_w is not None and not i % 2:
                keep_fastest(base_rows, i, base_w.check(root, path))
    new_w.close()
    if base_w is None:
        f = figures(new_rows)
        print(f"{len(new_rows)} files: CPU ms per kernel median {f['median']:.1f}, p95 {f['p95']:.1f}")
        result = {"new": f}
    else:
        base_w.close()
        result = report(
            "this tree",
            new_rows,
            args.baseline_path.name if args.baseline_path else args.baseline_rev,
            base_rows,
        )
    if args.json:
        args.json.write_text(
            json.dumps({**result, "rows_new": new_rows, "rows_base": base_rows}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
