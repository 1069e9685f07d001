"""Stage 4 of the pipeline: bind the launch, run the interpreter under every probe, collect facts.

A launch that cannot be bound falls back to assumed sizes (contiguous tensors, a grid that
covers them) and says so in an AR001 note; an interpreter run that meets an integer tensor read
as floats restarts with it typed as integers (`Retype`); a construct the interpreter does not
model ends the kernel's runs, keeping what the runs so far established about single programs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from argus.analyzers.errors import CANNOT_EVALUATE, HOST_ERRORS, NoLaunch, Unevaluable
from argus.analyzers.interp.facts import Fact, FactSink
from argus.analyzers.interp.interpreter import Interpreter
from argus.analyzers.interp.ops_core import Retype
from argus.analyzers.kernel_setup import KernelSetup
from argus.analyzers.model.binder_picks import SECOND_PICK
from argus.analyzers.model.launch import LaunchBinder, ProbeLaunch
from argus.analyzers.model.launch_file import RecordedLaunch
from argus.analyzers.model.recorded import bind_recorded
from argus.analyzers.probes import oversized, probe_configs, probe_kinds
from argus.analyzers.tag_asserts import TagAssertion

MAX_RETYPES = 6  # restarts of one probe, each with one more tensor typed as integers

#: asked between programs and probe runs; True stops the check (its caller no longer wants it)
StopCheck = Callable[[], bool]


class Cancelled(Exception):
    """The caller's `should_stop` answered True: the check stopped between two programs.

    Not a finding and not an internal error: nothing in the analyzers catches it."""


@dataclass
class ProbeStep:
    """One probe of the plan: its launch (None: skipped or unbindable, said in `notes`), the
    notes it adds and the binder as it stands after it (a launch that cannot be bound falls
    back to an unbound binder for the probes after it)."""

    launch: ProbeLaunch | None
    notes: list[Fact]
    binder: LaunchBinder


def _note_text(fact: Fact) -> str:
    skip = {"node", "smap", "probe", "related"}
    return repr([(f.name, getattr(fact, f.name)) for f in fields(fact) if f.name not in skip])


def _launch_text(launch: ProbeLaunch | None) -> str:
    if launch is None:
        return "-"
    return repr(
        (
            launch.kind,
            list(launch.args.items()),
            sorted(launch.runtime),
            launch.grid,
            launch.grid_axes,
            list(launch.sizes.items()),
            launch.config,
            launch.assumed,
            launch.notes,
            launch.choices,
            launch.guards,
            launch.loops,
            launch.grid_picks,
            launch.sampled,
            sorted(launch.bare_axes),
            launch.site is None,
        )
    )


def _run_key(launch: ProbeLaunch) -> str:
    """What the interpreter reads of a launch. Autotune configs that differ only in launch
    options (`num_warps`, `num_stages`: the interpreter never reads them, and facts leave them
    out of the config they name) give the same key, and the second of two such runs could only
    repeat the first one's facts: the sink keeps the first fact per kind and place, the
    interpreter is deterministic given the launch and the tensors known to hold integers, and
    what it reads of the sink only holds facts back (`first_time`), except `grid-decomposition`,
    whose presence changes whether output coverage is judged (a run is repeated while the sink
    holds one)."""
    if not launch.config:
        return _launch_text(launch)
    # (an empty config left is still a config: a fact names it, empty, where None names none)
    config = {k: v for k, v in launch.config.items() if not k.startswith("num_")}
    return _launch_text(replace(launch, config=config))


class ProbeRun:
    """The interpretation of one kernel under all its probes; `facts()` is its result."""

    def __init__(
        self,
        setup: KernelSetup,
        consts: dict[str, Any],
        assertions: dict[int, TagAssertion],
        recorded: list[RecordedLaunch] | None = None,
        should_stop: StopCheck | None = None,
    ) -> None:
        self.setup = setup
        self.should_stop = should_stop
        self.consts = consts
        self.assertions = assertions
        self.sink = FactSink()
        self.notes: list[Fact] = []
        self.aborted: Fact | None = None
        # tensors whose loaded values bound the program's work or groups hold integers: known
        # before the first run, which then need not restart when it meets them (the rest, and
        # lengths, which an argmax over float data also looks like, are found by Retype)
        self.int_tensors: set[str] = {
            name for name, pol in setup.scan.policies.items() if pol.work_bound or pol.prefix
        }
        self.binder = self._bound_launch()
        self._plan: list[ProbeStep] | None = None
        # what the interpreter reads of each launch run since the sink was last cleared (_run_key)
        self._interpreted: set[str] = set()
        #: the note findings carry when the launch came from `argus record` (None: the source's own)
        self.from_recording: str | None = None
        if self.binder.site is None and recorded:  # no launcher in the file, or one not understood
            self.binder, self.from_recording, self.notes = bind_recorded(
                setup.kernel, setup.scan, recorded, setup.smap, setup.site, self.binder, self.notes, setup.func
            )

    def note(self, what: str, **data: Any) -> None:
        self.notes.append(Fact("unmodelled", self.setup.func, self.setup.smap, {"what": what, **data}))

    def _unbound(self) -> LaunchBinder:
        binder = LaunchBinder(self.setup.kernel, self.setup.scan, None)
        binder.record()
        return binder

    def _bound_launch(self) -> LaunchBinder:
        s = self.setup
        binder = LaunchBinder(s.kernel, s.scan, s.launch_sites[0] if s.launch_sites else None)
        try:
            binder.record()
        except Unevaluable as e:
            self.note(f"the launch ({e})")
            return self._unbound()
        except HOST_ERRORS as e:
            self.note(f"the launch site (host code: {type(e).__name__})")
            return self._unbound()
        return binder

    def plan(self) -> list[ProbeStep]:
        """Every probe launch of the run, bound before any is interpreted (the binding does not
        depend on what the interpretation finds), with the notes each one adds. Computed once;
        `run` replays it, and the pipeline's cache keys kernels by it (`fingerprint`)."""
        if self._plan is not None:
            return self._plan
        s = self.setup
        steps: list[ProbeStep] = []
        for ci, config in enumerate(probe_configs(s.kernel, self.binder)):
            if config is SECOND_PICK and self.binder.site is None:
                continue  # the launch fell back to assumptions: it picks nothing to vary
            for kind in probe_kinds(s.kernel, s.scan, self.binder, ci == 0):
                self._stop_if_asked()  # binding a probe runs the launcher: a superseded check stops
                before = len(self.notes)
                try:
                    launch = self._probe(kind, config)
                except NoLaunch:  # these sizes launch nothing: no probe, nothing missing
                    steps.append(ProbeStep(None, [], self.binder))
                    continue
                unbindable = launch is None
                if launch is not None:
                    launch.sampled = ci > 0
                    biggest = oversized(launch)
                    if biggest is not None:
                        self.note(f"the {kind} probe ({biggest:,} elements in one tensor)")
                        launch = None
                steps.append(ProbeStep(launch, self.notes[before:], self.binder))
                del self.notes[before:]
                if unbindable:
                    break  # the config's other kinds would fail alike
        self._plan = steps
        return steps

    def run(self) -> list[Fact]:
        for step in self.plan():
            self.notes.extend(step.notes)
            self.binder = step.binder
            if step.launch is None:
                continue
            key = _run_key(step.launch)
            if key in self._interpreted and not self.sink.has("grid-decomposition"):
                continue  # the same launch again: its facts are in the sink already
            self._stop_if_asked()
            self._interpret(step.launch)
            self._interpreted.add(key)
            if self.aborted is not None:
                return self.facts()
        return self.facts()

    def fingerprint(self) -> str:
        """What the interpretation reads of the launch, as text: every probe launch (its kind,
        arguments, sizes, grid, constexprs, notes) and every note of the binding. Two launchers
        with the same fingerprint give the kernel's interpretation the same input; positions
        in the launcher are not in it (the pipeline keeps findings that point there apart)."""
        parts = [repr(self.from_recording), *map(_note_text, self.notes)]
        for step in self.plan():
            parts += [*map(_note_text, step.notes), _launch_text(step.launch)]
            site = step.binder.site
            parts.append(f"{type(site).__name__} {step.binder.assumed_values!r}")
        return "\n".join(parts)

    def _probe(self, kind: str, config: dict[str, Any] | None) -> ProbeLaunch | None:
        """The launch of one probe; on a launch that cannot be bound, the assumed one (None when
        there was no launch site to begin with: the remaining kinds would fail alike)."""
        try:
            return self.binder.probe(kind, config)
        except NoLaunch:
            raise
        except CANNOT_EVALUATE as e:
            what = (
                str(e) if isinstance(e, Unevaluable) else f"the launch site (host code: {type(e).__name__})"
            )
            if self.binder.site is None:
                self.note(what)
                return None
            # keep checking what does not need the launch: as if it had no launch site
            self.note(what, fallback=True)
            self.binder = self._unbound()
            try:
                return self.binder.probe(kind, config)
            except CANNOT_EVALUATE as again:  # the assumed launch fails too: nothing to run
                self.note(str(again) if isinstance(again, Unevaluable) else what)
                return None

    def _interpret(self, launch: ProbeLaunch) -> None:
        s = self.setup
        for attempt in range(MAX_RETYPES):
            if attempt:
                self._stop_if_asked()
            interp = Interpreter(
                s.kernel, s.scan, launch, s.helpers, self.consts, self.sink, self.int_tensors
            )
            interp.assertions = self.assertions
            self._stop_between_programs(interp)
            try:
                interp.run()
                return
            except Retype as r:
                if r.name in self.int_tensors:
                    self.aborted = Fact("unmodelled", s.func, s.smap, {"what": f"the contents of `{r.name}`"})
                    return
                self.int_tensors.add(r.name)
                self.sink.facts.clear()  # every fact of the run may rest on the wrong type
                self._interpreted.clear()  # (and a launch run before now runs on other types)
            except Unevaluable as u:
                node = u.node if isinstance(u.node, ast.AST) else s.func
                smap = (interp.smap if u.smap is None else u.smap) if u.node is not None else s.smap
                self.aborted = Fact("unmodelled", node, smap, {"what": u.what})
                self._drop_global()
                return
            except (*HOST_ERRORS, AssertionError) as e:
                what = f"part of this kernel (internal: {type(e).__name__}: {e})"
                self.aborted = Fact("unmodelled", s.func, s.smap, {"what": what})
                self._drop_global()
                return

    def _stop_between_programs(self, interp: Interpreter) -> None:
        """Ask `should_stop` before each program of the run too: one probe of a large kernel runs
        for hundreds of milliseconds, its programs for a few each. (This wraps the instance's
        `run_program` rather than teaching the interpreter about callers that may stop it.)"""
        if self.should_stop is None:
            return
        run_program = interp.run_program

        def stoppable(address_only: bool) -> None:
            self._stop_if_asked()
            run_program(address_only)

        interp.run_program = stoppable  # type: ignore[method-assign]

    def _stop_if_asked(self) -> None:
        if self.should_stop is not None and self.should_stop():
            raise Cancelled

    def _drop_global(self) -> None:
        """Facts judged over all programs (coverage, races) do not stand when a run stops."""
        for k in [k for k, f in self.sink.facts.items() if f.global_]:
            del self.sink.facts[k]

    def facts(self) -> list[Fact]:
        for name, (what, value) in self.binder.assumed_values.items():
            self.note(f"`{name}` ({what})", assumed=value)
        facts = list(self.sink.facts.values())
        if self.aborted is not None:
            facts.append(self.aborted)
        return facts + self.notes
