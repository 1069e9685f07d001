"""Stop: the candidate budget, the minutes budget, near the roofline, no progress, or a cancel."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from argus.agent.optimize.history import History


@dataclass
class StopRule:
    budget: int
    minutes: float
    near_roofline_pct: float = 90.0
    patience: int = 6  # candidates in a row that did not improve on the best
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.started or time.monotonic()

    def reason(self, history: History, cancel: threading.Event | None = None) -> str | None:
        """Why to stop now, or None to go on."""
        if cancel is not None and cancel.is_set():
            return "cancelled"
        n = len(history.attempts)
        if n >= self.budget:
            return f"budget of {self.budget} candidates spent"
        if time.monotonic() - self.started > self.minutes * 60:
            return f"time budget of {self.minutes:g} minutes spent"
        best = history.best()
        if best and best.pct_roofline and best.pct_roofline >= self.near_roofline_pct:
            return f"near the roofline ({best.pct_roofline:.0f}% >= {self.near_roofline_pct:g}%)"
        if best is not None:
            since = n - 1 - history.attempts.index(best)
            if since >= self.patience:
                return f"no progress in the last {self.patience} candidates"
        return None
