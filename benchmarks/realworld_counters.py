"""Where a check's CPU goes, counted: per probe kind and per phase, over real Triton files.

    python benchmarks/realworld_counters.py [--files 40] [--seed 5] [--packages liger_kernel,fla_core]
                                            [--dir benchmarks/.realworld] [--kernel-timeout 600] [FILE ...]

`realworld_speed.py` says how fast the checker is; this says why, in the terms its cost is made
of (issue 12: programs x probes x statements x lanes): for each probe kind (`ragged`, `one`,
`half`, `exact`, `big`; `ragged+` for the further autotune configs) the probes interpreted,
the programs they ran, the statements executed and the CPU they took; and the CPU of the phases
around the interpreter (kernel set-up and scan, launch binding per probe, the caller-guard
search of binder_callers.py), and the probe runs restarted because a tensor held integers. The sample is `realworld_speed.py`'s seeded one, or the files
named (paths under a package root of `--dir`/src). Counting wraps a few functions of this tree
in this process (the figures are slower than a plain check's, and only their proportions
matter); no finding is changed by it.
"""

from __future__ import annotations

import argparse
import collections
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realworld_speed import DEFAULT_DIR, DEFAULT_PACKAGES, package_files, sample_files  # noqa: E402

#: (module, attribute path) of each phase timed; a phase nested in itself is timed once
PHASES = (
    ("argus.analyzers.kernel_setup", "set_up_kernel"),
    ("argus.analyzers.interpretation", "ProbeRun._bound_launch"),
    ("argus.analyzers.interpretation", "ProbeRun._probe"),
    ("argus.analyzers.interpretation", "ProbeRun._interpret"),
    ("argus.analyzers.model.binder_callers", "caller_guard"),
)
#: modules that imported a phase's function by name, and must see the counting one
IMPORTERS = {
    "set_up_kernel": ("argus.analyzers.pipeline",),
    "caller_guard": ("argus.analyzers.model.binder_values",),
}


class Counters:
    """Probe-kind rows ([probes, programs, statements, cpu s]) and phase CPU, for one run."""

    def __init__(self) -> None:
        self.kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0, 0, 0.0])
        self.phase_s: collections.Counter[str] = collections.Counter()
        self.phase_calls: collections.Counter[str] = collections.Counter()
        self.statements = 0
        self.restarts = 0  # probe runs restarted with one more tensor typed as integers
        self.restart_s = 0.0  # the CPU those runs took before they restarted

    def install(self) -> None:
        """Wrap the interpreter's statement step, its probe run and the phases."""
        import importlib  # noqa: PLC0415

        from argus.analyzers.interp import interpreter, statements  # noqa: PLC0415
        from argus.analyzers.interp.ops_core import Retype  # noqa: PLC0415

        exec_stmt = statements.exec_stmt

        def counted_stmt(interp: Any, st: Any, env: Any) -> None:
            self.statements += 1
            exec_stmt(interp, st, env)

        statements.exec_stmt = counted_stmt
        run = interpreter.Interpreter.run

        def counted_run(interp: Any) -> None:
            s0, c0 = self.statements, time.process_time()
            try:
                run(interp)
            except Retype:
                self.restarts += 1
                self.restart_s += time.process_time() - c0
                raise
            finally:
                kind = interp.launch.kind + ("+" if interp.launch.sampled else "")
                row = self.kinds[kind]
                row[0] += 1
                row[1] += len(interp.program_ids)
                row[2] += self.statements - s0
                row[3] += time.process_time() - c0

        interpreter.Interpreter.run = counted_run  # type: ignore[method-assign]
        for module_name, path in PHASES:
            owner: Any = importlib.import_module(module_name)
            *outer, last = path.split(".")
            for part in outer:
                owner = getattr(owner, part)
            timed = self._timed(path, getattr(owner, last))
            setattr(owner, last, timed)
            for importer in IMPORTERS.get(path, ()):
                setattr(importlib.import_module(importer), last, timed)

    def _timed(self, label: str, func: Callable[..., Any]) -> Callable[..., Any]:
        depth = [0]

        @functools.wraps(func)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return func(*args, **kwargs)
            depth[0] += 1
            c0 = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                self.phase_s[label] += time.process_time() - c0
                self.phase_calls[label] += 1
                depth[0] -= 1

        return timed


def check_files(files: list[tuple[Path, Path]], kernel_timeout_s: float) -> list[float]:
    """Check each (package root, file) with its package at hand; CPU ms per kernel, per kernel."""
    from argus.analyzers import check_source, kernel_timeout, list_kernels  # noqa: PLC0415
    from argus.analyzers.project import SourceSet  # noqa: PLC0415

    from argus_lsp.project_files import FileReader, modules_for_paths  # noqa: PLC0415

    projects: dict[Path, SourceSet] = {}
    per_kernel: list[float] = []
    for root, path in files:
        if root not in projects:
            projects[root] = SourceSet(
                modules_for_paths(package_files(root)),
                FileReader(),
                lambda p, root=root: Path(p).relative_to(root).as_posix(),
            )
        text = path.read_text(encoding="utf-8")
        c0 = time.process_time()
        with kernel_timeout(kernel_timeout_s):
            check_source(text, str(path), project=projects[root])
        cpu_ms = (time.process_time() - c0) * 1000
        kernels = len(list_kernels(text))
        per_kernel += [cpu_ms / kernels] * kernels
    return per_kernel


def report(counters: Counters, per_kernel: list[float], files: int) -> None:
    total = sum(per_kernel) / 1000
    median = statistics.median(per_kernel) if per_kernel else 0.0
    print(f"{files} files, {len(per_kernel)} kernels, {total:.2f} s CPU (counting), median {median:.1f} ms")
    print(
        f"{'probe kind':>10} {'probes':>7} {'programs':>9} {'stmts':>9} {'stmt/prog':>9} {'cpu s':>8} {'us/stmt':>8}"
    )
    for kind, (probes, programs, stmts, cpu) in sorted(counters.kinds.items(), key=lambda kv: -kv[1][3]):
        per_prog = stmts / programs if programs else 0.0
        per_stmt = cpu * 1e6 / stmts if stmts else 0.0
        print(f"{kind:>10} {probes:7d} {programs:9d} {stmts:9d} {per_prog:9.0f} {cpu:8.2f} {per_stmt:8.0f}")
    print(
        f"restarted probe runs (Retype): {counters.restarts}, {counters.restart_s:.2f} s CPU before the restart"
    )
    print("phases (CPU s, share of the total, calls):")
    for label, cpu in counters.phase_s.most_common():
        share = 100 * cpu / total if total else 0.0
        print(f"  {label:<28} {cpu:8.2f} {share:4.0f}% {counters.phase_calls[label]:6d}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help="files under a package root of DIR/src")
    ap.add_argument("--files-count", "--files", dest="count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--packages", default=DEFAULT_PACKAGES)
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    ap.add_argument(
        "--kernel-timeout",
        dest="kernel_timeout_s",
        type=float,
        default=600.0,
        help="each kernel's budget (CPU s; 600: the findings do not depend on the load)",
    )
    args = ap.parse_args(argv)
    src = args.dir.resolve() / "src"
    if args.files:
        roots = sorted(p for p in src.iterdir() if p.is_dir())
        chosen = []
        for f in args.files:
            f = f.resolve()
            root = next((r for r in roots if f.is_relative_to(r)), None)
            if root is None:
                raise SystemExit(f"{f} is not under a package root of {src}")
            chosen.append((root, f))
    else:
        chosen = sample_files(src, args.packages.split(","), args.count, args.seed)
    from argus.analyzers import check_source  # noqa: PLC0415

    check_source("import triton\n@triton.jit\ndef k(x):\n    pass\n")  # warm the imports (uncounted)
    counters = Counters()
    counters.install()
    per_kernel = check_files(chosen, args.kernel_timeout_s)
    report(counters, per_kernel, len(chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
