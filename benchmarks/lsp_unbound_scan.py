"""Which real kernels the unbound-name rule (analyzers/unbound_names.py) reports: it should be none.

Usage: python benchmarks/lsp_unbound_scan.py DIR [DIR ...]
  e.g. (cd benchmarks/.realworld/src && python ../../lsp_unbound_scan.py liger_kernel-0.8.5 fla_core-0.6.0 flag_gems-5.0.2)

For every kernel the pipeline checks on its own in every .py file with a jit kernel under each
DIR, runs the pipeline's two calls of the rule: the one before interpretation (code every launch
compiles, and the launchers) and, after the launch is bound (no interpretation), the one under
each launch's constexprs. Prints each kernel reported and a count; exits 1 when any is."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.analyzers.frontend.parse import parse  # noqa: E402
from argus.analyzers.imports import qualify_triton_names  # noqa: E402
from argus.analyzers.interpretation import ProbeRun  # noqa: E402
from argus.analyzers.kernel_setup import parse_kernel, set_up_kernel  # noqa: E402
from argus.analyzers.module_view import build_module_view  # noqa: E402
from argus.analyzers.pipeline import _checked_sites, _unbound_name, _unbound_under_launch  # noqa: E402


def scan(path: Path) -> tuple[int, list[str], int]:
    src = path.read_bytes()
    view = build_module_view(src, parse(src))
    kernels, reported, errors = 0, [], 0
    for site, _ in _checked_sites(view, {}):
        try:
            func, smap = parse_kernel(view, site)
            qualify_triton_names(func, view.imports())
            kernels += 1
            found = _unbound_name(view, site, func, smap)
            if found is None:
                setup = set_up_kernel(view, site, func, smap)
                found = _unbound_under_launch(view, setup, ProbeRun(setup, view.consts, {}))
        except Exception:  # a kernel the pipeline would report as AR001/AR002 itself
            errors += 1
            continue
        if found is not None:
            reported.append(f"{path}:{found.span.start_point[0] + 1}: {site.name}: {found.message}")
    return kernels, reported, errors


def main(roots: list[str]) -> int:
    cpu = time.process_time()
    files = kernels = errors = 0
    reported: list[str] = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            if b"triton.jit" not in path.read_bytes():
                continue
            files += 1
            n, found, bad = scan(path)
            kernels, errors = kernels + n, errors + bad
            reported += found
            for line in found:
                print(line, flush=True)
    print(
        f"{files} files, {kernels} kernels, {len(reported)} reported, {errors} errors, {time.process_time() - cpu:.1f} s CPU"
    )
    return 1 if reported else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
