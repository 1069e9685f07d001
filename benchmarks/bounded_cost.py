"""Bounded cost (issue 12 item 4): how long `argus check` takes, and how much memory, on the odd
inputs of tests/fixtures/bounded/ and on a generated 5 MB file of ten thousand kernels.

    python benchmarks/bounded_cost.py [--kernels 10000] [--kernel-timeout 10]

Each input runs as a real `argus check --progress` subprocess; printed per input: wall seconds,
the child's peak RSS, the exit status, the first finding code and, for the big file, the number of
progress lines and the seconds until the first one. Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "bounded"

KERNEL = """

@triton.jit
def fill{i}_kernel(x_ptr, n, BLOCK: tl.constexpr):
    # one of many generated kernels: this file is large on purpose, to measure a check that
    # must print progress and keep memory flat over thousands of kernels in one module; the
    # comment pads each kernel to about five hundred bytes, as real kernels with docs are
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
"""


def big_file(folder: Path, kernels: int) -> Path:
    path = folder / "many_kernels.py"
    head = "import triton\nimport triton.language as tl\n"
    path.write_text(head + "".join(KERNEL.format(i=i) for i in range(kernels)))
    return path


def run(path: Path, timeout_s: float) -> dict:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    argv = [
        sys.executable,
        "-m",
        "argus_lsp",
        "check",
        str(path),
        "--progress",
        f"--kernel-timeout={timeout_s}",
    ]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first_progress = None
    lines = 0
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("argus:"):
            lines += 1
            first_progress = first_progress or time.perf_counter() - start
    out = proc.stdout.read() if proc.stdout else ""
    rc = proc.wait()
    wall = time.perf_counter() - start
    code = next((w for w in out.split() if w[:2].isalpha() and w[2:].isdigit() and len(w) == 5), "-")
    return {"wall": wall, "rc": rc, "code": code, "progress": lines, "first": first_progress}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kernels", type=int, default=10_000)
    p.add_argument("--kernel-timeout", type=float, default=10.0)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for fixture in sorted(FIXTURES.glob("*.py.txt")):
            path = Path(tmp) / fixture.name.removesuffix(".txt")
            path.write_text(fixture.read_text())
            inputs.append(path)
        big = big_file(Path(tmp), args.kernels)
        inputs.append(big)
        print(
            f"{'input':<22} {'bytes':>10} {'wall s':>8} {'rc':>3} {'code':>6} {'progress':>8} {'first s':>8}"
        )
        for path in inputs:
            r = run(path, args.kernel_timeout)
            first = f"{r['first']:.2f}" if r["first"] is not None else "-"
            size = path.stat().st_size
            print(
                f"{path.name:<22} {size:>10,} {r['wall']:>8.2f} {r['rc']:>3} {r['code']:>6} "
                f"{r['progress']:>8} {first:>8}"
            )
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"peak RSS of the largest child: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
