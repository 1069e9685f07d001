"""How long one full garbage collection holds the interpreter lock in the language server's
process, before and after `argus_lsp.gc_pause.freeze_start_up` (CPU and wall time, 5 runs each).

Usage: python benchmarks/lsp_gc_pause.py
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed_collections(runs: int = 5) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(runs):
        c, w = time.process_time(), time.perf_counter()
        gc.collect()
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def main() -> int:
    import argus_lsp.check_worker  # noqa: F401  (what the server and its worker import)
    import argus_lsp.features.traces  # noqa: F401
    import argus_lsp.server  # noqa: F401
    from argus_lsp.gc_pause import freeze_start_up

    tracked = len(gc.get_objects())
    before = timed_collections()
    freeze_start_up()
    after = timed_collections()
    print(f"objects tracked after the imports: {tracked:,}")
    print(f"one full collection, median of 5: before {before[0]:.1f} ms CPU / {before[1]:.1f} ms wall")
    print(f"                      after freeze: {after[0]:.1f} ms CPU / {after[1]:.1f} ms wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
