"""Checker throughput: milliseconds per kernel (median, p95) and kernels per second over the
marked corpora, on one core, with a parse-only pass over the same files as the in-run baseline.

    python benchmarks/check_throughput.py [--repeat 3] [--json out.json] [--match attn,moe] [PATH ...]

Defaults to ../shared/corpus and tests/corpus_own. Markers are stripped first, as in the tests.
Each file is checked with a cold cache; a file's time is split evenly over its kernels.
Targets (issue 2): median < 20 ms, p95 < 50 ms per kernel on one core of a 2-core machine.
`--match` keeps the files whose names contain one of the given words (issue 4 asks for the
target on attention-sized kernels: `--match attn,attention,flash,gqa,decode,moe`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "corpus"))

from argus.analyzers import check_source, list_kernels  # noqa: E402
from markers import strip_markers  # noqa: E402


def corpus_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        files = [p] if p.is_file() else sorted(p.rglob("*.py"))
        out += [f for f in files if not f.name.startswith("_") and "triton" in f.read_text(encoding="utf-8")]
    return out


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3, help="runs per file; the median is kept")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--match", default="", help="comma-separated words; keep files whose names contain one")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    paths = args.paths or [ROOT.parent / "shared" / "corpus", ROOT / "tests" / "corpus_own"]
    files = corpus_files([p for p in paths if p.exists()])
    words = [w.strip().lower() for w in args.match.split(",") if w.strip()]
    if words:
        files = [f for f in files if any(w in f.name.lower() for w in words)]
    if not files:
        print("no corpus files found", file=sys.stderr)
        return 2
    texts = [strip_markers(f.read_text(encoding="utf-8")).text for f in files]
    check_source(texts[0])  # warm imports
    per_kernel, per_kernel_parse, slowest = [], [], []
    total_kernels, total_time = 0, 0.0
    for f, text in zip(files, texts, strict=True):
        n = max(len(list_kernels(text)), 1)
        runs, parse_runs = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            check_source(text, str(f))
            runs.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            list_kernels(text)
            parse_runs.append(time.perf_counter() - t0)
        ms = statistics.median(runs) * 1000 / n
        per_kernel += [ms] * n
        per_kernel_parse += [statistics.median(parse_runs) * 1000 / n] * n
        slowest.append((ms, f.name))
        total_kernels += n
        total_time += statistics.median(runs)
    result = {
        "files": len(files),
        "kernels": total_kernels,
        "ms_per_kernel_median": round(statistics.median(per_kernel), 2),
        "ms_per_kernel_p95": round(percentile(per_kernel, 0.95), 2),
        "kernels_per_second": round(total_kernels / total_time, 1),
        "baseline_parse_only_ms_per_kernel_median": round(statistics.median(per_kernel_parse), 3),
        "slowest": [f"{name}: {ms:.1f} ms" for ms, name in sorted(slowest, reverse=True)[:5]],
    }
    print(f"checked {result['kernels']} kernels in {result['files']} files on one core")
    print(
        f"ms per kernel: median {result['ms_per_kernel_median']}, p95 {result['ms_per_kernel_p95']} "
        f"(targets: 20 and 50); {result['kernels_per_second']} kernels/s"
    )
    print(
        f"baseline, parse and find kernels only: median {result['baseline_parse_only_ms_per_kernel_median']} ms per kernel"
    )
    print("slowest:", "; ".join(result["slowest"]))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
