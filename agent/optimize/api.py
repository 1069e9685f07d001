"""The one entry point of the agent: `optimize(request)`; and `evaluate_candidate` for one source.

    from argus.agent.optimize.api import optimize, OptimizeRequest
    result = optimize(OptimizeRequest("examples/naive_matmul.py::matmul_kernel", policy="knowledge"),
                      progress=lambda stage, n: print(stage, n), cancel=threading.Event())
    result.status      # "improved" | "no-better" | "unmeasured" | "cancelled"
    result.patch       # unified diff of the user's file (empty unless improved or unmeasured-verified)

User and candidate code runs only in worker subprocesses with timeouts (runners.py); this process reads
sources with `ast` and the checker and never imports torch or triton.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from argus.agent.optimize import gate_correctness as g2
from argus.agent.optimize import gate_performance as g3
from argus.agent.optimize.diagnose import diagnose
from argus.agent.optimize.gate_invariants import check_invariants
from argus.agent.optimize.history import History
from argus.agent.optimize.policies import PolicyContext, make_policy
from argus.agent.optimize.retrieve import cards_for
from argus.agent.optimize.runners import LocalRunner, RayRunner, RunOutcome
from argus.agent.optimize.splice import unified_diff
from argus.agent.optimize.stop import StopRule
from argus.agent.optimize.types import (
    Attempt,
    Candidate,
    GateResult,
    OptimizeError,
    OptimizeRequest,
    OptimizeResult,
)
from argus.agent.task import Task, TaskError, load_task

ProgressFn = Callable[[str, int], None]
#: A replacement for gate 3's measurement (tests only): candidate (None = the user's kernel) -> ms per shape.
Timer = Callable[[Candidate | None], dict[str, float]]

__all__ = ["OptimizeRequest", "OptimizeResult", "OptimizeError", "optimize", "evaluate_candidate", "load_request_task"]


def load_request_task(request: OptimizeRequest) -> Task:
    """The task for FILE::KERNEL, from --task SIDECAR when given, else the file's own sidecar/KernelBench."""
    try:
        if request.task:
            from argus.agent.task import _load_sidecar, parse_target  # the same reader profiling uses

            path, kernel = parse_target(request.target)
            tasks = _load_sidecar(path, Path(request.task))
            match = [t for t in tasks if kernel is None or t.kernel == kernel]
            if not match:
                raise TaskError(f"{request.task}: no task for kernel {kernel!r}")
            return match[0]
        return load_task(request.target)
    except TaskError as exc:
        raise OptimizeError(str(exc)) from None


class Evaluator:
    """Runs the three gates for candidates of one task; holds the baseline and the runner."""

    def __init__(self, task: Task, source: str, request: OptimizeRequest, *, timer: Timer | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.task, self.source, self.request, self.timer = task, source, request, timer
        self.base = g2.base_request(task, source, backend=request.backend, seed=request.seed)
        if request.ray_address:
            self.runner = RayRunner(request.ray_address, request.timeout_s, python=task.python)
        elif request.runner.startswith("ssh://"):
            from argus.agent.optimize.runners_ssh import SshRunner

            self.runner = SshRunner(request.runner, request.timeout_s, python=task.python, cancel=cancel,
                                    **request.ssh)
        elif request.runner == "local":
            self.runner = LocalRunner(request.timeout_s, python=task.python, cancel=cancel)
        else:
            raise OptimizeError(f"--target {request.runner!r}: use local or ssh://[user@]host[:port]")
        self.on_gpu = False
        self.device = ""
        self.baseline_ms: dict[str, float] = {}
        self.baseline: dict = {}
        self.gpu_seconds = 0.0
        self.dtype = task.dtype or "float16"

    def _account(self, outcome: RunOutcome) -> None:
        if outcome.env.get("device") == "cuda":
            self.gpu_seconds += outcome.seconds

    def measure_baseline(self) -> dict:
        """Gate 2 on the user's own kernel (it must match its reference) and, on a GPU, its times."""
        req = g2.correctness_request(self.task, self.base, None, on_gpu=False, seed=self.request.seed)
        req["time_shapes"] = g3.timing_request(self.task, self.base, None, compare=self.request.compare, baseline=True)["time_shapes"]
        req["compare"] = self.request.compare
        outcome = self.runner([req])[0]
        self._account(outcome)
        if outcome.failure():
            raise OptimizeError(f"{self.task.name}: the user's kernel did not run: {outcome.failure()}\n{outcome.stderr_tail[-1500:]}")
        self.device = outcome.env.get("name", "")
        self.on_gpu = outcome.env.get("device") == "cuda"
        check = g2.verdict(outcome)
        rows = outcome.result.get("timing", [])
        self.baseline_ms = {r["shape"]: r["baseline_ms"] for r in rows if "baseline_ms" in r}
        if self.timer is not None:
            self.baseline_ms = self.timer(None)
        for r in rows:
            r["pct_roofline"] = g3.roofline_pct(r.get("baseline_ms", 0), r, self.device, self.dtype)
        self.baseline = {"device": self.device, "correct": check.passed, "check_reason": check.reason,
                         "timing": rows, "baseline_ms": self.baseline_ms}
        return self.baseline

    def gate1(self, candidate: Candidate) -> GateResult:
        protected = tuple(n for n in (self.task.reference,) if n)
        required = tuple(n for n in (self.task.launcher,) if n)
        return check_invariants(self.source, candidate, str(self.task.path), protected, required)

    def gates23(self, candidates: list[Candidate], seed: int) -> list[list[GateResult]]:
        """Gate 2 and (on a GPU) gate 3 for each candidate, in one worker process per candidate."""
        reqs = []
        for c in candidates:
            req = g2.correctness_request(self.task, self.base, c, on_gpu=self.on_gpu, seed=seed)
            if self.on_gpu and self.timer is None:
                req["time_shapes"] = g3.timing_request(self.task, self.base, c, compare=[], baseline=False)["time_shapes"]
                req["time_baseline"] = False
            reqs.append(req)
        outs = self.runner(reqs)
        results = []
        for c, outcome in zip(candidates, outs, strict=True):
            self._account(outcome)
            gate2 = g2.verdict(outcome)
            if not gate2.passed:
                results.append([gate2])
                continue
            if self.timer is not None:
                times = self.timer(c)
                rows = [{"shape": k, "candidate_ms": v} for k, v in times.items()]
                gate3 = g3.verdict(rows, self.baseline_ms, self.device, self.dtype)
                gate3.details["timer"] = "injected (tests only)"
            elif self.on_gpu:
                gate3 = g3.from_outcome(outcome, self.baseline_ms, self.dtype)
            else:
                gate3 = g3.unmeasured()
            results.append([gate2, gate3])
        return results

    def evaluate(self, candidates: list[Candidate], seed: int) -> list[Attempt]:
        attempts, runnable = [], []
        for c in candidates:
            t0 = time.monotonic()
            a = Attempt(c, [self.gate1(c)])
            a.seconds = time.monotonic() - t0
            attempts.append(a)
            if a.gates[0].passed:
                runnable.append(a)
        if runnable:
            t0 = time.monotonic()
            for a, gates in zip(runnable, self.gates23([a.candidate for a in runnable], seed), strict=True):
                a.gates.extend(gates)
                a.seconds += (time.monotonic() - t0) / len(runnable)
                perf = gates[-1] if gates[-1].gate == "performance" else None
                if perf is not None and perf.measured:
                    a.speedup = perf.details.get("speedup")
                    a.pct_roofline = perf.details.get("pct_roofline")
        return attempts

    def reverify(self, attempt: Attempt) -> dict:
        """The accepted kernel again, on new inputs (a new seed), in a fresh worker process."""
        seed = self.request.seed + 104729
        req = g2.correctness_request(self.task, self.base, attempt.candidate, on_gpu=self.on_gpu, seed=seed)
        outcome = self.runner([req])[0]
        self._account(outcome)
        v = g2.verdict(outcome)
        return {"candidate": attempt.candidate.id, "passed": v.passed, "reason": v.reason, "seed": seed,
                "shapes": [r.get("shape") for r in v.details.get("shapes", [])]}


def evaluate_candidate(
    target: str,
    candidate_source: str,
    *,
    task: str | None = None,
    backend: str = "auto",
    seed: int = 0,
    timeout_s: float = 600.0,
    timer: Timer | None = None,
) -> Attempt:
    """Gates 1-3 for one candidate source of FILE::KERNEL (the coding-agent / MCP entry point).

    Gate 1 runs here; gates 2 and 3 in a worker subprocess (gate 3 only on a GPU or with `timer`).
    Returns the Attempt: `.gates` (GateResult per gate run, with `.feedback`), `.passed`, `.speedup`.
    """
    request = OptimizeRequest(target=target, task=task, backend=backend, seed=seed, timeout_s=timeout_s)
    t = load_request_task(request)
    source = Path(t.path).read_text(encoding="utf-8")
    ev = Evaluator(t, source, request, timer=timer)
    ev.measure_baseline()
    return ev.evaluate([Candidate("candidate", candidate_source, "external")], seed)[0]


def optimize(
    request: OptimizeRequest,
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    timer: Timer | None = None,
) -> OptimizeResult:
    """Diagnose, retrieve, propose, gate, learn, stop, output. Raises OptimizeError on bad requests."""
    t_start = time.monotonic()
    report = progress or (lambda stage, n: None)
    task = load_request_task(request)
    source = Path(task.path).read_text(encoding="utf-8")
    policy = make_policy(request)  # an unreachable endpoint fails here, before any GPU time
    if hasattr(policy, "preflight"):
        policy.preflight()
    report("baseline", 0)
    ev = Evaluator(task, source, request, timer=timer, cancel=cancel)
    baseline = ev.measure_baseline()
    if not baseline["correct"]:
        notes = [f"the user's own kernel fails gate 2 ({baseline['check_reason']}): candidates are judged against "
                 "the reference, not against it"]
    else:
        notes = []
    report("diagnose", 0)
    diag = diagnose(source, task.kernel, str(task.path))
    base_rows = [r for r in baseline["timing"] if r.get("pct_roofline")]
    if base_rows:
        from argus.agent.profile.peaks import find_peak
        from argus.agent.profile.roofline import classify

        r0 = base_rows[0]
        roof = classify(r0["baseline_ms"] * 1e-3, r0.get("flops"), r0.get("bytes"), find_peak(ev.device), ev.dtype)
        diag.bound, diag.pct_roofline = roof.bound, roof.pct_of_roof
    report("retrieve", 0)
    hits = cards_for(diag)
    ctx = PolicyContext(source=source, path=str(task.path), kernel=task.kernel, launcher=task.launcher or "",
                        diagnosis=diag, cards=hits, on_gpu=ev.on_gpu, profile=baseline, seed=request.seed)
    history = History()
    stop = StopRule(request.budget, request.minutes, request.near_roofline_pct, started=t_start)
    result = OptimizeResult(status="no-better", target=request.target, policy=request.policy,
                            diagnosis=diag.to_json(), cards=[h.to_dict() for h in hits], baseline=baseline,
                            device=ev.device, notes=notes)
    parallel = 4 if request.ray_address else 1
    while (why := stop.reason(history, cancel)) is None:
        report("propose", len(history.attempts))
        room = min(parallel, request.budget - len(history.attempts))
        try:
            candidates = policy.propose(ctx, history, room)
        except OptimizeError:
            raise
        if not candidates:
            why = "the policy has nothing more to propose"
            break
        report("gates", len(history.attempts) + len(candidates))
        for attempt in ev.evaluate(candidates, request.seed + len(history.attempts) + 1):
            history.add(attempt)
    result.stop_reason = why
    result.attempts = history.attempts
    result.llm_usage = policy.usage()
    if why == "cancelled":
        result.status = "cancelled"
    else:
        _choose(result, ev, history, source, task, report)
    if not ev.on_gpu:
        result.notes.append("no GPU: gates 1 and 2 ran under the Triton interpreter; performance was not measured")
    if timer is not None:
        result.notes.append("gate 3 used an injected timer (tests only): the speedups are not measurements")
    result.gpu_seconds = ev.gpu_seconds
    result.seconds = time.monotonic() - t_start
    report("done", len(history.attempts))
    return result


def _choose(result: OptimizeResult, ev: Evaluator, history: History, source: str, task: Task,
            report: ProgressFn) -> None:
    """The best candidate that passed every gate and re-verifies in a fresh process, or none."""
    passed = sorted((a for a in history.attempts if a.passed), key=lambda a: -(a.speedup or 0))
    for attempt in passed:
        report("reverify", len(history.attempts))
        check = ev.reverify(attempt)
        result.reverify = check
        if check["passed"]:
            result.status, result.best = "improved", attempt
            break
        result.notes.append(f"{attempt.candidate.id} passed the gates but failed re-verification: {check['reason']}")
    if result.best is None and not ev.on_gpu and ev.timer is None:
        verified = history.best_verified()
        if verified is not None:
            result.status, result.best = "unmeasured", verified
    if result.best is not None:
        result.new_source = result.best.candidate.source
        result.patch = unified_diff(source, result.new_source, task.path.name)
