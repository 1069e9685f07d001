"""Launches the record fixture's kernels on a GPU (not under the interpreter), so that
`argus record` is seen observing `JITFunction.run` of the installed Triton:

    argus record --out /tmp/l.json -- python tests/record/drivers/cuda_driver.py

Shapes differ from the fixture's own tests (which run on the CPU) but, like them, stay clear of
the seeded bugs: the recorded facts must still let `argus check --launches` find both."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures" / "record_project"))
from mini_ops import ops  # noqa: E402 - the fixture project is not installed

DEVICE = "cuda"


def main() -> int:
    x, y = torch.randn(4096, device=DEVICE), torch.randn(4096, device=DEVICE)
    torch.testing.assert_close(ops.add(x, y), x + y)
    m = torch.randn(16, 300, device=DEVICE)
    torch.testing.assert_close(ops.softmax(m), torch.softmax(m, dim=1))
    layer = ops.RowScale(hidden=256).to(DEVICE)
    h = torch.randn(4, 256, device=DEVICE)
    with torch.no_grad():
        torch.testing.assert_close(layer(h), h * layer.weight)
    c = torch.randn(64, 512, device=DEVICE)
    torch.testing.assert_close(ops.column_sum(c, ops.ColumnSumConfig()), c.sum(dim=0))
    print("cuda driver: 4 ops checked against torch on", torch.cuda.get_device_name())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
