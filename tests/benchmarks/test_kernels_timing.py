"""benchmarks/kernels_timing.py's bookkeeping, on the CPU: which samples feed which median and ratio.

The timed loops themselves need CUDA events (they run on the H200 through scripts/gpu/kernels_h200.sh);
what is checked here is the part that turns the interleaved samples into the table's numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: benchmarks/ is no package

from benchmarks.kernels_timing import Timing, _reps  # noqa: E402


def test_medians_and_halves_follow_the_repetition_order() -> None:
    # ours (side 0) is slow on even repetitions only; the library (side 1) is steady
    ours = [2.0 if i % 2 == 0 else 1.0 for i in range(41)]
    base = [1.5] * 41
    t = Timing([ours, base])
    assert t.median == [2.0, 1.5]  # 21 of the 41 samples are 2.0
    assert t.even == [2.0, 1.5] and t.odd == [1.0, 1.5]
    full, even, odd = t.ratio(1)
    assert full == pytest.approx(0.75) and even == pytest.approx(0.75) and odd == pytest.approx(1.5)
    assert t.ratio(0, 1)[0] == pytest.approx(2.0 / 1.5)  # cuDNN / variant, as the sweeps ask it


def test_spread_is_the_20th_to_80th_percentile() -> None:
    t = Timing([[float(i) for i in range(1, 101)]])
    low, high = t.spread(0)
    assert 19.0 <= low <= 21.0 and 79.0 <= high <= 81.0


def test_repetitions_fill_the_time_and_stay_bounded() -> None:
    assert _reps([0.01, 0.01], 300.0, 40, 3000) == 1363  # 300 ms over two 0.11 ms calls
    assert _reps([30.0, 25.0], 300.0, 40, 3000) == 40  # long rows: the floor
    assert _reps([1e-3, 1e-3], 1e6, 40, 3000) == 3000  # the cap
