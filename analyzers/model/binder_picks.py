"""Values a probe picks where the code does not establish them, each one named.

Three launcher constructs give a kernel a value no reading of the code can fix:
- a constexpr an autotune decorator (`triton.autotune`, flag-gems' `libtuner`) supplies from
  configs the checker cannot read (`runtime.get_tuned_config("mm")` reads a yaml the package
  ships; a filtered list): the tuner picks one on the machine;
- a constexpr flag the launch passes from a value the evaluator does not know (a module flag
  computed at import, `IS_GATHER_SUPPORTED`; a comparison of values it cannot compute): either
  branch is a launch some machine or some call makes;
- a grid axis of a device property (binder_grid.py);
- a launcher input the user's call decides (binder_inputs.py): an axis argument (`dim`), a
  `normalized_shape`, a `size` list;
- a runtime scalar the launcher computes from what only the running program knows (a random
  generator's state, `value.item()`) that the kernel computes only data from (data_params.py):
  no verdict depends on its value, so it is named in each finding's sizes, not varied.

The probe picks a value and names it (`ProbeLaunch.choices`). Kernels with picked constexprs or
flags are probed twice: the second probe (`SECOND_PICK`) halves every picked size and flips
every picked flag. A fact both probes see does not rest on the picks that differ; one that only
one of them sees is at most a hint naming the pick (`FactSink.add`, `judge.py`). Nothing here is
an AR001: the value is modelled as "one of the values the machine picks".
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.model.binder_grid import program_axes_read
from argus.analyzers.model.binder_inputs import LauncherInputs
from argus.analyzers.model.host_values import Opaque
from argus.analyzers.model.nodes import subtree
from argus.analyzers.model.pick_tests import branch_values, second_pick
from argus.analyzers.model.runtime_values import RunTimeValue

PICKED_TILE = 32  # a tuned `tl.arange` extent the configs do not show (>= 16 for `tl.dot`)
PICKED_COUNT = 4  # a tuned count the configs do not show (warps per row, stages, a group size)
# the config of the second probe: every picked size halved (cheaper than doubled, and still
# >= 16), every picked flag flipped (an empty mapping, told apart by identity)
SECOND_PICK: dict[str, Any] = {}


class PickedValues(LauncherInputs):
    """The picks of one probe launch (see the module's docstring)."""

    def first_config(self) -> dict[str, Any] | None:
        tuner = self.kernel.autotune
        return dict(tuner.configs[0]) if tuner and tuner.configs else None

    def _tuned_picks(self, kargs: dict[str, Any], divisor: int = 1) -> dict[str, int]:
        """Constexprs an autotune decorator supplies from configs the checker cannot read: the
        launch does not pass them and no default or heuristic gives them. A tile size for an
        `arange` extent and a small count otherwise, divided by `divisor`."""
        tuner = self.kernel.autotune
        if (tuner is None or tuner.configs) and not self.unreadable_heuristics():
            return {}
        flags = self.kernel.cached("branch_flags", lambda: branch_flags(self.kernel.func))
        tested = self.kernel.cached("branch_values", lambda: branch_values(self.kernel.func))
        return {
            # a flag (`if SAME_H:`, from `SAME_H = OH == IH` in a table the checker cannot read) is
            # True, then False in the second probe: no count stands in for it
            p.name: (divisor == 1)
            if p.name in flags
            else self._picked_size(p.name, divisor, tested)
            for p in self.kernel.params
            if p.constexpr
            and p.name not in kargs
            and p.default is None
            and p.name not in self.kernel.heuristics
        }

    def _picked_size(self, name: str, divisor: int, tested: dict[str, int]) -> int:
        """A tile size or a count; the second probe takes the value a test of the kernel names
        (`if SPLIT_K == 1:`: pick_tests.py), so each side of that branch is seen by one probe."""
        first = PICKED_TILE if name in self.scan.arange_params else PICKED_COUNT
        return first if divisor == 1 else second_pick(name, first, first // divisor, tested)

    def unreadable_heuristics(self) -> bool:
        """`@triton.heuristics(runtime.get_heuristic_config("dropout"))`: values from a table
        the package reads at run time, like autotune configs the checker cannot read."""
        return self.kernel.cached("unreadable_heuristics", lambda: _unreadable_heuristics(self.kernel.func))

    def _flag_picks(self, kargs: dict[str, Any], value: bool) -> dict[str, bool]:
        """Constexpr flags (a parameter the kernel branches on by itself: `if USE_GATHER:`)
        that the launch passes from a value the evaluator does not know."""
        flags = self.kernel.cached("branch_flags", lambda: branch_flags(self.kernel.func))
        return {
            p.name: value
            for p in self.kernel.params
            if p.constexpr and p.name in flags and isinstance(kargs.get(p.name), Opaque)
        }

    def wants_second_pick(self) -> bool:
        """Whether the kernel's probes pick values a second probe should vary."""
        return self.site is not None and bool(self.picked_params or self.input_choices or self.runtime_params)

    def named_picks(self, picks: dict[str, int], flags: dict[str, bool]) -> tuple[str, ...]:
        tuner = self.kernel.autotune
        source = "autotune configs" if tuner is not None and not tuner.configs else "heuristics"
        out = [f"`{k}` ({source} not readable) = {v}" for k, v in picks.items()]
        out += [f"`{k}` (a flag the code does not fix) = {v}" for k, v in flags.items()]
        return tuple(out)

    def _counted_axes(self) -> set[int]:
        """Grid axes whose size the kernel reads (`tl.num_programs(0)`)."""
        return self.kernel.cached(
            "counted_axes", lambda: program_axes_read(self.kernel.func, ("num_programs",))
        )

    def note_picked_params(self, kargs: dict[str, Any]) -> None:
        """After the first pass: the parameters this launch leaves to picks (wants_second_pick)."""
        self.picked_params = set(self._tuned_picks(kargs)) | set(self._flag_picks(kargs, True))
        for p in self.kernel.params:
            v = kargs.get(p.name)
            if isinstance(v, Opaque) and p.name not in self.scan.pointers:
                data = None if p.constexpr else self.data_pick(p.name, v.what)
                if data is None and isinstance(v, RunTimeValue) and p.name not in self.kernel.heuristics:
                    self.runtime_params.add(p.name)  # picked and varied (runtime_values.py)

    def all_choices(self, picks: dict[str, int], flags: dict[str, bool]) -> tuple[str, ...]:
        """Every value this probe picked, named (ProbeLaunch.choices)."""
        return self.named_picks(picks, flags) + tuple(self.input_choices.values())


def _unreadable_heuristics(func: ast.FunctionDef) -> bool:
    for dec in func.decorator_list:
        if isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("heuristics"):
            h = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "values"), None)
            if not isinstance(h, ast.Dict):
                return True
    return False


def branch_flags(func: ast.FunctionDef) -> set[str]:
    """Names the kernel branches on by themselves: `if FLAG:`, `if not FLAG:`, `x if FLAG else
    y`, `if A and B:`. A flag only ever compared (`if MODE == 2`) is a number, not a flag."""
    out: set[str] = set()
    for n in subtree(func):
        if isinstance(n, ast.If | ast.IfExp | ast.While):
            out |= _flag_names(n.test)
    return out


def _flag_names(test: ast.expr) -> set[str]:
    if isinstance(test, ast.Name):
        return {test.id}
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _flag_names(test.operand)
    if isinstance(test, ast.BoolOp):
        return set().union(*(_flag_names(v) for v in test.values))
    return set()
