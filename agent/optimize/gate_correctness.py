"""Gate 2, correctness: what the worker checks (see worker.py) and how its answer becomes a verdict.

Shapes: the task's shape sets whose names start with `check` are the correctness shapes (small, with
ragged tails); the other sets are the served shapes, checked too on a GPU and timed by gate 3. Without
`check` sets the task's default sizes are used. Under the Triton interpreter (no GPU) only the check
shapes run: served shapes are too large to interpret in reasonable time, and the report says so.
"""

from __future__ import annotations

from pathlib import Path

from argus.agent.optimize.runners import RunOutcome
from argus.agent.optimize.types import Candidate, GateResult
from argus.agent.task import Task


def shape_entry(task: Task, name: str | None) -> dict:
    """One shape for the worker: concrete input specs, args, FLOP and byte counts."""
    req = task.request(name)
    return {
        "name": name or "default",
        "sizes": req["sizes"],
        "inputs": req["inputs"],
        "args": req["args"],
        "flops": req["flops"],
        "bytes": req["bytes"],
    }


def check_shape_names(task: Task) -> list[str | None]:
    names = [n for n in task.shape_sets if n.startswith("check")]
    return names or [None]


def served_shape_names(task: Task) -> list[str | None]:
    names = [n for n in task.shape_sets if not n.startswith("check")]
    return names or [None]


def base_request(task: Task, original_source: str, *, backend: str, seed: int) -> dict:
    """The part of every worker request that does not depend on the candidate."""
    if not task.launcher:
        raise ValueError(f"{task.name}: the task names no launcher")
    return {
        "file_name": task.path.name,
        "original_source": original_source,
        "search_path": [str(Path(task.path).resolve().parent)],
        "launcher": task.launcher,
        "reference": task.reference,
        "backend": backend,
        "seed": seed,
    }


def correctness_request(task: Task, base: dict, candidate: Candidate | None, *, on_gpu: bool, seed: int) -> dict:
    names = check_shape_names(task) + ([n for n in served_shape_names(task) if n is not None] if on_gpu else [])
    return {
        **base,
        "seed": seed,
        "candidate_source": candidate.source if candidate else None,
        "check_shapes": [shape_entry(task, n) for n in dict.fromkeys(names)],
        "time_shapes": [],
    }


def verdict(outcome: RunOutcome) -> GateResult:
    """Gate 2's result from one worker run: the first failing shape's reason, or a pass."""
    failure = outcome.failure()
    if failure:
        return GateResult("correctness", False, f"did not run: {failure}",
                          feedback=[{"code": "RUNTIME", "message": failure[:600]}],
                          details={"stderr": outcome.stderr_tail[-1500:]})
    rows = outcome.result.get("check", []) if outcome.result else []
    bad = next((r for r in rows if not r.get("ok")), None)
    details = {"shapes": rows, "seconds": round(outcome.seconds, 2), "device": outcome.env.get("name"),
               "runner": outcome.runner}
    if bad is not None:
        reason = f"shape {bad['shape']} {bad.get('sizes', {})}: {bad['reason']}"
        return GateResult("correctness", False, reason, feedback=[{"code": "WRONG", "message": reason}], details=details)
    if not rows:
        return GateResult("correctness", False, "no shape was checked", details=details)
    return GateResult("correctness", True, details=details)
