"""The long-running processes' collector settings (argus_lsp/gc_pause.py), in a fresh
interpreter: start-up's objects frozen, and a young generation large enough that a check's
temporaries are freed before a collection promotes them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import gc, json
import argus_lsp.check_worker
from argus_lsp.gc_pause import YOUNG, freeze_start_up
before = gc.get_threshold()
freeze_start_up()
print(json.dumps([before, gc.get_threshold(), YOUNG, gc.get_freeze_count()]))
"""


def test_freeze_start_up_freezes_and_widens_the_young_generation() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=REPO, capture_output=True, text=True, check=True, timeout=120
    )
    before, after, young, frozen = json.loads(out.stdout.strip().splitlines()[-1])
    assert after == [young, before[1], before[2]]
    assert young > 10 * before[0]
    assert frozen > 10_000  # the imported modules' objects


_CYCLE_AT_EXIT = """
from argus_lsp.gc_pause import freeze_start_up

class Noisy:
    def __del__(self):
        print("collected at exit", flush=True)

a, b = Noisy(), Noisy()
a.other, b.other = b, a
freeze_start_up()  # the cycle is alive now: frozen with everything else
del a, b
"""


def test_what_was_frozen_is_given_back_to_the_collector_at_exit() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CYCLE_AT_EXIT], cwd=REPO, capture_output=True, text=True, check=True, timeout=120
    )
    assert "collected at exit" in out.stdout
