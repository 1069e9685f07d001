"""Shared by the CLI tests: kernel texts and `run_argus`, which runs the real command.

Every test runs `python -m argus_lsp` (the console script's code) in a temporary folder with no
pyproject.toml above it, so the repository's own settings never leak into a test. (A module with
its own name, not conftest, so that test modules can import it next to other test folders.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"
if not CORPUS.is_dir():  # CI lays shared/ beside the clone; a session has it at /work/shared
    CORPUS = Path("/work/shared/corpus")

GOOD_KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def fill_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
"""

# Two kernels; the second is being typed (an unclosed call), so only it gets AR002.
HALF_TYPED = (
    GOOD_KERNEL
    + """

@triton.jit
def unfinished_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0,
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
"""
)
HALF_TYPED_ERROR_LINE = 15

NO_KERNEL = '''\
"""Mentions triton in a docstring but defines no kernel."""


def helper(x):
    return x + 1
'''


class Result:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self) -> Any:
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"rc={self.rc}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def run_argus(
    *args: str | os.PathLike[str], cwd: Path, env: dict[str, str] | None = None, stdin: str = ""
) -> Result:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env.pop("ARGUS_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "argus_lsp", *map(str, args)],
        cwd=cwd,
        env=full_env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Result(proc)

# The store has no mask while the load of the same offsets has one: MB002, with a quick fix that
# adds the load's mask (the only mask the kernel uses on these offsets, so it is unambiguous).
UNMASKED_STORE = """\
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * factor)


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, out, n, factor, BLOCK=256)
    return out
"""
UNMASKED_STORE_FIXED = UNMASKED_STORE.replace("x * factor)", "x * factor, mask=mask)")
UNMASKED_STORE_LINE = 12
