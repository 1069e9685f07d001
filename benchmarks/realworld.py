"""The checker on Triton kernels other people wrote: pinned public packages, every kernel checked.

    python benchmarks/realworld.py [--packages liger-kernel,flag-gems,fla-core] [--json out.json]
                                   [--timeout 60] [--dir benchmarks/.realworld]
    python benchmarks/realworld.py --from-json out.json --sample 50 --seed 12 [--packages ...]

Downloads the wheels pinned in `realworld_fetch.PINS` (`pip download --no-deps`, hash-checked)
into a git-ignored folder, unpacks their Python sources, and checks every file that holds a
`@triton.jit` kernel in-process with `analyzers.check_source`, the call `argus check` makes. Each
file runs under a CPU-time guard (`--timeout`, 60 s; four times that in wall-clock time): a file
past it is counted as a hang, an exception out of the checker as a crash, and the next file goes
on. Progress goes to stderr.

Per package it prints: files and kernels; the share of kernels analyzed without an AR001; the
kernels with an error or warning (MB003 counted apart, since it is a warning about sizes real
tensors may reach, not about the code being wrong); the largest AR001 groups; time per kernel
(a file's time split evenly over its kernels, as in `check_throughput.py`: median and p95, both
wall-clock and this process's CPU time, which a shared machine disturbs less) and
the peak resident memory of one file's check. `--json` writes every finding for triage, and
`--sample N --seed S` draws a reproducible sample of error/warning findings from such a file.
Run it on one core with `nice -n 10`; see docs/realworld.md for the figures and the triage.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from argus.analyzers import check_source, list_kernels  # noqa: E402
from argus.analyzers.project import SourceSet  # noqa: E402
from realworld_fetch import PINS, FetchError, Pin, download, triton_files, unpack_sources  # noqa: E402

from argus_lsp.gc_pause import freeze_start_up  # noqa: E402
from argus_lsp.project_files import FileReader, modules_for_paths  # noqa: E402

DEFAULT_DIR = HERE / ".realworld"
FAILING = ("error", "warning")
APART = "MB003"


# --- one file ---------------------------------------------------------------------------------


class FileTimeout(BaseException):
    """Raised into the checker when a file passes its budget (BaseException: the checker's own
    `except Exception` guards must not swallow it)."""


@contextmanager
def time_limit(cpu_seconds: float, wall_factor: float = 4.0) -> Iterator[None]:
    """Interrupt the block after `cpu_seconds` of this process's CPU time, or `wall_factor` times
    that in wall-clock time (POSIX interval timers, main thread only).

    CPU time is the budget because the checker is CPU-bound and the machine may be shared: a
    file that waits for a core is not hanging. The wall-clock limit catches anything else."""

    armed = True

    def _fire(_signum: int, _frame: object) -> None:
        if armed:  # a signal already pending while the timers are disarmed is dropped
            raise FileTimeout

    old_prof = signal.signal(signal.SIGPROF, _fire)
    old_alrm = signal.signal(signal.SIGALRM, _fire)
    try:  # armed inside the try: a budget so small it fires at once still gets disarmed
        signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
        signal.setitimer(signal.ITIMER_REAL, cpu_seconds * wall_factor)
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_alrm)


def reset_peak_rss() -> bool:
    """Reset the kernel's high-water mark of this process's RSS (Linux >= 4.0); False elsewhere."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    """The RSS high-water mark since the last reset, from /proc (ru_maxrss where there is none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class KernelResult:
    name: str
    line: int
    launched_here: bool  # the file has a `name[...]` launch (a text search)
    findings: list[dict] = field(default_factory=list)


@dataclass
class FileResult:
    path: str  # relative to the package root
    status: str  # ok | crash | hang | unreadable
    kernels: list[KernelResult] = field(default_factory=list)
    seconds: float = 0.0  # wall clock
    cpu_seconds: float = 0.0  # this process's CPU time: steadier on a shared machine
    peak_rss_mb: float = 0.0
    error: str = ""


def _finding_dict(f) -> dict:
    return {
        "code": f.code,
        "severity": str(f.severity),
        "kernel": f.kernel,
        "line": f.line,
        "message": f.message,
    }


def _kernels_of(text: str) -> list[KernelResult]:
    out = []
    for k in list_kernels(text):
        launched = re.search(rf"(?<![\w.]){re.escape(k.name)}\s*\[", text) is not None
        out.append(KernelResult(k.name, k.name_span.line, launched))
    return out


def check_one(path: Path, rel: str, timeout_s: float, project: SourceSet | None = None) -> FileResult:
    """Check one file under the time guard; never raises (except KeyboardInterrupt). `project`
    holds the other modules of its package, as `argus check PACKAGE/` reads them."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return FileResult(rel, "unreadable", error=f"{type(exc).__name__}: {exc}")
    kernels = _kernels_of(text)
    if not kernels:
        return FileResult(rel, "ok")
    measured = reset_peak_rss()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        with time_limit(timeout_s):
            findings = check_source(text, str(path), project=project)
    except FileTimeout:
        cpu = time.process_time() - c0
        return FileResult(
            rel, "hang", kernels, time.perf_counter() - t0, cpu, error=f"over {timeout_s:g} s of CPU"
        )
    except Exception as exc:  # noqa: BLE001 - a crash is a figure of the benchmark, not its end
        return FileResult(
            rel, "crash", kernels, time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}"
        )
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    by_name: dict[str, KernelResult] = {}
    for k in kernels:
        by_name.setdefault(k.name, k)
    for f in findings:
        owner = by_name.get(f.kernel)
        if owner is not None:
            owner.findings.append(_finding_dict(f))
    return FileResult(rel, "ok", kernels, seconds, cpu, peak_rss_mb() if measured else 0.0)


def check_package(
    root: Path, timeout_s: float, label: str = "", single_file: bool = False
) -> list[FileResult]:
    """Every Triton file under `root`; files without kernels are dropped from the result. Each
    file is checked with its package's other modules at hand (helpers imported from them,
    launches made in them), as `argus check` does, unless `single_file`."""
    files = triton_files(root)
    project = None
    if not single_file:
        project = SourceSet(
            modules_for_paths(files), FileReader(), lambda p: Path(p).relative_to(root).as_posix()
        )
    results = []
    for i, path in enumerate(files, 1):
        rel = path.relative_to(root).as_posix()
        print(f"[{label} {i}/{len(files)}] {rel}", file=sys.stderr, flush=True)
        res = check_one(path, rel, timeout_s, project)
        if res.kernels or res.status != "ok":
            results.append(res)
        if res.status != "ok":
            print(f"  {res.status}: {res.error}", file=sys.stderr, flush=True)
    return results


# --- figures ----------------------------------------------------------------------------------

_KEEP = re.compile(r"^(tl|triton|torch|libdevice|math|tle|tdl)\.[\w.]+$")
_BACKTICKED = re.compile(r"`([^`]*)`")


def ar001_group(message: str) -> str:
    """The construct an AR001 names, with the user's own identifiers and numbers taken out, so
    that messages about one construct in different kernels fall into one group (a global name
    the kernel calls but the checker cannot resolve is kept: it is what needs modelling)."""
    head = re.split(r" is not modelled| is not known without running", message, maxsplit=1)[0]
    head = re.sub(r"\(internal: (\w+): .*\)$", r"(internal: \1)", head)

    def _name(m: re.Match[str]) -> str:
        inner = m.group(1)
        if _KEEP.match(inner):
            return f"`{inner}`"
        if re.fullmatch(r"[A-Za-z_]\w*", inner):
            return "`NAME`"
        return "`" + re.sub(r"(?<![\w.])[A-Za-z_]\w*", "x", inner) + "`"

    # An unresolved global (`the name `exp``, a bare `sort`) is itself the construct: keep it.
    if not (head.startswith("the name `") or re.fullmatch(r"`[^`]+`", head)):
        head = _BACKTICKED.sub(_name, head)
    return re.sub(r"(?<![\w.])\d[\d,]*", "N", head)


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else 0.0


def summarize(files: list[FileResult]) -> dict:
    kernels = [(f, k) for f in files for k in f.kernels]
    ok = [(f, k) for f, k in kernels if f.status == "ok"]
    codes = lambda k: {d["code"] for d in k.findings}  # noqa: E731
    failing = lambda k, pred: any(d["severity"] in FAILING and pred(d["code"]) for d in k.findings)  # noqa: E731
    groups: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for _f, k in ok:
        for key in {ar001_group(d["message"]) for d in k.findings if d["code"] == "AR001"}:
            groups[key] += 1
        for d in k.findings:
            if d["code"] == "AR001":
                examples.setdefault(ar001_group(d["message"]), d["message"])
    done = [f for f in files if f.status == "ok"]
    per_kernel_ms = [f.seconds * 1000 / len(f.kernels) for f in done for _ in f.kernels]
    per_kernel_cpu_ms = [f.cpu_seconds * 1000 / len(f.kernels) for f in done for _ in f.kernels]
    by_code: Counter[str] = Counter()
    for _f, k in ok:
        for c in {d["code"] for d in k.findings if d["severity"] in FAILING}:
            by_code[c] += 1
    n = len(kernels)
    return {
        "files": len(files),
        "kernels": n,
        "kernels_checked": len(ok),
        "kernels_launched_in_file": sum(k.launched_here for _f, k in kernels),
        "kernels_without_ar001": sum("AR001" not in codes(k) for _f, k in ok),
        "kernels_error_warning": sum(failing(k, lambda c: c != APART) for _f, k in ok),
        "kernels_mb003": sum(failing(k, lambda c: c == APART) for _f, k in ok),
        "findings_error_warning": sum(
            d["severity"] in FAILING and d["code"] != APART for _f, k in ok for d in k.findings
        ),
        "kernels_by_code": dict(by_code.most_common()),
        "ar001_groups": [
            {"kernels": c, "construct": g, "example": examples[g]} for g, c in groups.most_common()
        ],
        "crashes": [f.path + ": " + f.error for f in files if f.status == "crash"],
        "hangs": [f.path + ": " + f.error for f in files if f.status == "hang"],
        "unreadable": [f.path + ": " + f.error for f in files if f.status == "unreadable"],
        "ms_per_kernel_median": round(statistics.median(per_kernel_ms), 1) if per_kernel_ms else 0.0,
        "ms_per_kernel_p95": round(percentile(per_kernel_ms, 0.95), 1),
        "cpu_ms_per_kernel_median": round(statistics.median(per_kernel_cpu_ms), 1)
        if per_kernel_cpu_ms
        else 0.0,
        "cpu_ms_per_kernel_p95": round(percentile(per_kernel_cpu_ms, 0.95), 1),
        "seconds_total": round(sum(f.seconds for f in files), 1),
        "peak_rss_mb_max": round(max((f.peak_rss_mb for f in files), default=0.0), 1),
        "slowest": [f"{f.path}: {f.seconds:.1f} s" for f in sorted(files, key=lambda f: -f.seconds)[:5]],
    }


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def print_summary(label: str, s: dict, top: int = 12, out=sys.stdout) -> None:
    n = s["kernels"]
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"== {label}: {s['files']} files, {n} kernels ({s['kernels_checked']} checked to the end)")
    p(f"  analyzed without AR001: {s['kernels_without_ar001']} ({_pct(s['kernels_without_ar001'], n)})")
    p(
        f"  kernels with an error/warning (MB003 aside): {s['kernels_error_warning']} "
        f"({_pct(s['kernels_error_warning'], n)}), {s['findings_error_warning']} findings; "
        f"with MB003: {s['kernels_mb003']} ({_pct(s['kernels_mb003'], n)})"
    )
    p("  kernels per code: " + ", ".join(f"{c} {k}" for c, k in s["kernels_by_code"].items()))
    p(
        f"  launched in their own file: {s['kernels_launched_in_file']} ({_pct(s['kernels_launched_in_file'], n)})"
    )
    p(f"  crashes {len(s['crashes'])}, hangs {len(s['hangs'])}, unreadable {len(s['unreadable'])}")
    for line in s["crashes"] + s["hangs"] + s["unreadable"]:
        p(f"    {line}")
    p(
        f"  ms per kernel, wall: median {s['ms_per_kernel_median']}, p95 {s['ms_per_kernel_p95']}; "
        f"CPU: median {s['cpu_ms_per_kernel_median']}, p95 {s['cpu_ms_per_kernel_p95']}; "
        f"total {s['seconds_total']} s; peak RSS of one file's check {s['peak_rss_mb_max']} MB"
    )
    p(f"  slowest: {'; '.join(s['slowest'])}")
    p(f"  top AR001 constructs (kernels): {len(s['ar001_groups'])} groups")
    for g in s["ar001_groups"][:top]:
        p(f"    {g['kernels']:5d}  {g['construct']}")


# --- triage sample ----------------------------------------------------------------------------


def failing_findings(files: list[dict]) -> list[dict]:
    """Every error/warning finding (MB003 aside) of one package's JSON results, in file order."""
    out = []
    for f in files:
        for k in f["kernels"]:
            for d in k["findings"]:
                if d["severity"] in FAILING and d["code"] != APART:
                    out.append({"file": f["path"], **d})
    return out


def sample(findings: list[dict], n: int, seed: int) -> list[dict]:
    """`n` findings drawn without replacement by `random.Random(seed)`, in file order."""
    if n >= len(findings):
        return list(findings)
    picked = sorted(random.Random(seed).sample(range(len(findings)), n))
    return [findings[i] for i in picked]


# --- main -------------------------------------------------------------------------------------


def _pins(names: str) -> list[Pin]:
    by_name = {p.name: p for p in PINS}
    wanted = [n.strip() for n in names.split(",") if n.strip()] if names else list(by_name)
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise SystemExit(f"unknown package(s) {', '.join(unknown)}; pinned: {', '.join(by_name)}")
    return [by_name[n] for n in wanted]


def run_pin(
    pin: Pin, folder: Path, timeout_s: float, pip_args: tuple[str, ...] = (), single_file: bool = False
) -> dict:
    """Fetch, unpack and check one pinned package; its raw results and summary."""
    print(f"fetching {pin.label}", file=sys.stderr, flush=True)
    wheel = download(pin, folder / "wheels", pip_args)
    root = unpack_sources(wheel, folder / "src")
    files = check_package(root, timeout_s, pin.name, single_file)
    return {
        "name": pin.name,
        "version": pin.version,
        "wheel": wheel.name,
        "files": [asdict(f) for f in files],
        "summary": summarize(files),
    }


def run_pins(pins: list[Pin], folder: Path, timeout_s: float, pip_args: tuple[str, ...] = ()) -> dict:
    return {pin.label: run_pin(pin, folder, timeout_s, pip_args) for pin in pins}


def write_results(path: Path, results: dict) -> None:
    data = (json.dumps(results, indent=1) + "\n").encode()
    if path.suffix == ".gz":
        import gzip

        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)


def read_results(path: Path) -> dict:
    """Results written by `--json` (plain, or gzip-compressed when the name ends in `.gz`)."""
    if path.suffix == ".gz":
        import gzip

        return json.loads(gzip.decompress(path.read_bytes()))
    return json.loads(path.read_text())


def _from_dicts(files: list[dict]) -> list[FileResult]:
    return [FileResult(**{**f, "kernels": [KernelResult(**k) for k in f["kernels"]]}) for f in files]


def combined_label(results: dict) -> str:
    return "all packages (" + ", ".join(results) + ")"


def combined_files(results: dict) -> list[FileResult]:
    """Every package's files as one list, for the figures of the whole public set.

    The issue's targets speak of the set, not of one package: the median and p95 of the union
    are not any mean of the packages' own, so they are computed over every kernel at once."""
    return [f for pkg in results.values() for f in _from_dicts(pkg["files"])]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", default="", help="comma-separated registry names (default: all pinned)")
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="download and unpack folder (git-ignored)")
    ap.add_argument(
        "--timeout", type=float, default=60.0, help="CPU seconds per file before it counts as a hang"
    )
    ap.add_argument("--json", type=Path, help="write the raw results (every finding) here (.gz: compressed)")
    ap.add_argument(
        "--from-json", type=Path, action="append", help="read results written by --json (repeatable)"
    )
    ap.add_argument("--sample", type=int, default=0, help="print N error/warning findings per package")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument(
        "--single-file",
        action="store_true",
        help="check each file alone, without its package's other modules (the figures before cross-module resolution)",
    )
    ap.add_argument("--pip-arg", action="append", default=[], help="passed to pip download (repeatable)")
    ap.add_argument(
        "--default-gc",
        action="store_true",
        help="keep CPython's collector settings (default: set it up as `argus check` does, gc_pause.py)",
    )
    args = ap.parse_args(argv)
    if not args.default_gc and not args.from_json:
        freeze_start_up()
    results: dict = {}
    if args.from_json:
        wanted = {n.strip() for n in args.packages.split(",") if n.strip()}
        for path in args.from_json:
            results.update({k: v for k, v in read_results(path).items() if not wanted or v["name"] in wanted})
    else:
        for pin in _pins(args.packages):
            try:
                results[pin.label] = run_pin(
                    pin, args.dir, args.timeout, tuple(args.pip_arg), args.single_file
                )
            except FetchError as exc:
                print(f"realworld: {exc}", file=sys.stderr)
                return 2
            if args.json:  # after each package, so a long run that is stopped keeps what it did
                write_results(args.json, results)
    for label, pkg in results.items():
        print_summary(label, summarize(_from_dicts(pkg["files"])))
    if len(results) > 1:
        print_summary(combined_label(results), summarize(combined_files(results)))
    for label, pkg in results.items() if args.sample else ():
        print(f"\n== sample of {label} (seed {args.seed})")
        for d in sample(failing_findings(pkg["files"]), args.sample, args.seed):
            print(f"{d['file']}:{d['line']}: {d['code']} {d['kernel']}: {d['message'][:160]}")
    return 0


if __name__ == "__main__":
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    sys.exit(main())
