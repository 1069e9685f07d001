"""Where the latency benchmark's edits spend their time, without a server in between.

Usage: python benchmarks/lsp_edit_costs.py [--per-kind 5] [--seed 0] [--top 15] [--file SUBSTRING]
                                          [--files N|A:B]
                                          [--verify] [--kinds launcher-token,kernel-token]

Replays the edit script of `lsp_latency.py --real` (same files, same edits, same seeds) through
`check_source` with one `KernelCache` per file, as the language server does, and times each check
(CPU) and each kernel it had to analyze again (a cache miss, CPU of its thread). Prints the
slowest edits with the kernels they re-analyzed, then every kernel's analysis time: when an edit
is slow because one kernel is slow to interpret, that kernel is named here. `--verify` also checks
every edited text cold (a fresh cache) and counts the edits whose cached result differs from it
(there should be none; the kernel time budget is lifted for this, since a kernel near its budget
could end differently in two runs). The garbage collector is set up as in the server's check
worker (`argus_lsp.gc_pause.freeze_start_up`; `--default-gc` leaves CPython's defaults), and
`--gc-stats` counts the collections and their CPU."""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import argus.analyzers.pipeline as pipeline  # noqa: E402
from argus.analyzers import Finding, KernelCache, check_source, kernel_timeout  # noqa: E402
from lsp_files import STORE, edits_for, pick_files  # noqa: E402

#: (kernel, CPU ms) of each analyze_kernel call since the last reset
analyzed: list[tuple[str, float]] = []
_analyze = pipeline.analyze_kernel


def _timed_analyze(view, site, recorded=None, should_stop=None, bound=None):  # type: ignore[no-untyped-def]
    t = time.thread_time()
    try:
        return _analyze(view, site, recorded, should_stop, bound)
    finally:
        analyzed.append((site.name, (time.thread_time() - t) * 1000))


#: (generation, CPU ms) of each collection, with --gc-stats
collections: list[tuple[int, float]] = []
_started = [0.0]


def _count_collection(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _started[0] = time.process_time()
    else:
        collections.append((info["generation"], (time.process_time() - _started[0]) * 1000))


def apply(text: str, line: int, col: int, insert: str) -> str:
    lines = text.split("\n")
    lines[line] = lines[line][:col] + insert + lines[line][col:]
    return "\n".join(lines)


def timed_check(text: str, path: Path, cache: KernelCache) -> tuple[float, list[tuple[str, float]]]:
    analyzed.clear()
    cpu = time.process_time()
    check_source(text, str(path), cache=cache)
    return (time.process_time() - cpu) * 1000, list(analyzed)


def ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.sort_key(), f.kernel, f.message))


def differs(text: str, path: Path, cache: KernelCache) -> bool:
    """Whether the cached check of `text` differs from a cold one."""
    return ordered(check_source(text, str(path), cache=cache)) != ordered(check_source(text, str(path)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-kind", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--file", default="", help="only files whose path contains this")
    ap.add_argument(
        "--files", default=None, metavar="N|A:B", help="only the first N files, or files A to B-1 (as lsp_latency.py)"
    )
    ap.add_argument("--verify", action="store_true", help="compare every cached result with a cold check")
    ap.add_argument("--kinds", default="", help="only edits of these kinds (comma-separated, e.g. launcher-token)")
    ap.add_argument("--default-gc", action="store_true", help="CPython's collector settings, not the server's")
    ap.add_argument("--gc-stats", action="store_true", help="count the collections and their CPU")
    args = ap.parse_args()
    pipeline.analyze_kernel = _timed_analyze
    if not args.default_gc:
        from argus_lsp.gc_pause import freeze_start_up

        freeze_start_up()
    if args.gc_stats:
        gc.callbacks.append(_count_collection)
    with kernel_timeout(1e6 if args.verify else None):
        return replay(args)


def chosen_files(count: str | None) -> list[Path]:
    """The files `lsp_latency.py --real --files` edits, in its order (its seeds count from the
    first chosen file, so the same option gives the same edits in both benchmarks)."""
    files = pick_files()
    if count is None:
        return files
    lo, _, hi = count.rpartition(":")
    return files[int(lo or 0) : int(hi)]


def replay(args: argparse.Namespace) -> int:
    wrong: list[str] = []
    rows: list[tuple[float, str, list[tuple[str, float]]]] = []
    kernel_ms: dict[str, float] = {}
    for i, path in enumerate(chosen_files(args.files)):
        if args.file not in str(path):
            continue
        text = path.read_text()
        cache = KernelCache()
        cold, per_kernel = timed_check(text, path, cache)
        short = str(path.relative_to(STORE / "src"))
        kernel_ms.update({f"{short}::{k}": ms for k, ms in per_kernel})
        print(f"{cold:8.0f} ms cold, {len(per_kernel)} kernels  {short}", flush=True)
        kinds = set(filter(None, args.kinds.split(",")))
        for e in edits_for(text, args.per_kind, seed=args.seed + i):
            if kinds and e.kind not in kinds:
                continue
            edited = apply(text, e.line, e.col, e.text)
            for label, version in (("", edited), (" (undo)", text)):
                ms, again = timed_check(version, path, cache)
                rows.append((ms, f"{short}:{e.line + 1} {e.kind}{label}", again))
                if args.verify and differs(version, path, cache):
                    wrong.append(rows[-1][1])
    costs = [ms for ms, _, _ in rows]
    print(
        f"\n{len(costs)} edits, CPU per check: median {statistics.median(costs):.1f} ms, "
        f"p95 {sorted(costs)[round(0.95 * (len(costs) - 1))]:.1f} ms, worst {max(costs):.1f} ms"
    )
    for kind in sorted({where.split(" ")[1] for _, where, _ in rows}):
        of = [ms for ms, where, _ in rows if where.split(" ")[1] == kind]
        print(
            f"  {kind:<18} median {statistics.median(of):7.1f} ms, p95 "
            f"{sorted(of)[round(0.95 * (len(of) - 1))]:7.1f} ms, worst {max(of):7.1f} ms  (n={len(of)})"
        )
    print(f"\nslowest {args.top} edits (kernels analyzed again, ms each):")
    for ms, where, again in sorted(rows, key=lambda r: -r[0])[: args.top]:
        kernels = ", ".join(f"{k} {t:.0f}" for k, t in again) or "none"
        print(f"  {ms:7.1f} ms  {where}: {kernels}")
    every = sorted(kernel_ms.values())
    print(
        f"\n{len(every)} kernels, CPU of one kernel's analysis (what a token typed in it costs): "
        f"median {statistics.median(every):.0f} ms, p95 {every[round(0.95 * (len(every) - 1))]:.0f} ms"
    )
    print("slowest kernels (cold analysis, CPU ms):")
    for name, ms in sorted(kernel_ms.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {ms:7.1f}  {name}")
    if args.gc_stats:
        for g in range(3):
            of = [ms for gen, ms in collections if gen == g]
            print(f"collections of generation {g}: {len(of)}, {sum(of):.0f} ms CPU, longest {max(of, default=0):.0f} ms")
    if args.verify:
        print(f"\ncached result differs from a cold check: {len(wrong)} of {len(rows)} edits")
        for where in wrong:
            print(f"  {where}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
