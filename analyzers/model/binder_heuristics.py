"""The values `@triton.heuristics({...})` gives a kernel, evaluated over the probe's arguments.

Triton calls each entry of the table with the launch's arguments by name (`args["N"]`, the
tensors themselves: `args["x"].dtype`), in the table's order, each entry seeing the ones before
it. An entry is a lambda or a function of the package (`"BLOCK_M": heur_block_m`, defined in
the kernel's module or imported from another one): both are evaluated by the host evaluator,
a named function through the launch's table of module functions (`LaunchSite.functions`).

An entry the evaluator cannot compute (it reads the device, a runtime config, a value the
probe does not know) is not a fact. Where the kernel uses the value only as a tile size (a
`tl.arange` extent) or as a flag it branches on, it is one of the values the package picks on
some machine: the probe picks it like an autotune value it cannot read (binder_picks.py: a
tile of PICKED_TILE, halved in the second probe; a flag True, then False) and names it, so what
the probe finds is at most a hint naming the pick. Any other value keeps a stand-in with its
AR001 note, and is named too: a finding resting on a stand-in is at most a hint (cause L8, a
`SPLIT_K` stand-in that made GR004 errors). An entry that tests an argument's type
(`isinstance(args["block_counts"], torch.Tensor)`) is computed, but the type is the probe's
choice of what the caller passes (a tensor where an int would do), so it is named as well.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.errors import CANNOT_EVALUATE
from argus.analyzers.model.binder_picks import PICKED_TILE, branch_flags
from argus.analyzers.model.binder_state import BinderState
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_functions import HostFunction
from argus.analyzers.model.host_values import HostTensor, Opaque

HEURISTIC_STAND_IN = 4  # a heuristic's value the binder cannot evaluate (as other opaque constexprs)
_UNEVALUABLE = "a heuristic the checker cannot evaluate"


class HeuristicValues(BinderState):
    """Evaluates a kernel's heuristics table for one probe (see the module's docstring)."""

    # named picks of the last probe's heuristics (ProbeLaunch.choices)
    heuristic_choices: tuple[str, ...] = ()

    def _apply_heuristics(self, args: dict[str, Any], kargs: dict[str, Any] | None = None) -> None:
        """Adds each heuristic's value to `args` (the kernel's parameter values); `kargs` are the
        launch's host values (tensors keep their dtype and shape for `args["x"].dtype`)."""
        choices: list[str] = []
        view = self._heuristic_view(args, kargs or {})
        for name, fn in self.kernel.heuristics.items():
            val = self._heuristic_value(fn, view)
            if self.kernel.param(name) is None:
                # `num_warps`, `num_stages`: a launch option, which the interpreter never reads
                view[name] = val if val is not None else Opaque(name)
                continue
            if val is None:
                val, text = self._heuristic_pick(name)
                choices.append(text)
            elif self._reads_a_pick(fn):
                # `K % args["TILE_K"] == 0` of a tile the probe picked: the value rests on the pick
                choices.append(f"`{name}` (a heuristic of values the probe picked)")
            elif self._tests_a_type(fn):
                # `isinstance(args["block_counts"], torch.Tensor)`: the probe chose what the caller
                # passes (a tensor, not an int), so the path it selects is the probe's pick
                choices.append(f"`{name}` (a heuristic on the type of an argument the caller chooses) = {val}")
            args[name] = val
            view[name] = val
        self.heuristic_choices = tuple(choices)

    def _reads_a_pick(self, fn: ast.expr) -> bool:
        """Whether the entry reads `args["X"]` of a value the probes pick (binder_picks.py)."""
        if not self.picked_params:
            return False
        helper = None if isinstance(fn, ast.Lambda) else self._named_heuristic(fn)
        root: ast.AST = helper.node if helper is not None else fn
        return any(
            isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in self.picked_params
            for n in ast.walk(root)
        )

    def _tests_a_type(self, fn: ast.expr) -> bool:
        """Whether the entry tests the type of an argument (`isinstance(args["x"], ...)`)."""
        helper = None if isinstance(fn, ast.Lambda) else self._named_heuristic(fn)
        root: ast.AST = helper.node if helper is not None else fn
        return any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "isinstance"
            for n in ast.walk(root)
        )

    def unevaluable_heuristics(self, kargs: dict[str, Any]) -> set[str]:
        """The heuristics the evaluator cannot compute at the recording pass's values: they are
        picks, which a second probe varies (binder_picks.wants_second_pick)."""
        view = self._heuristic_view({}, kargs)
        out: set[str] = set()
        for name, fn in self.kernel.heuristics.items():
            val = self._heuristic_value(fn, view)
            if val is None and self.kernel.param(name) is not None:
                out.add(name)
                val = HEURISTIC_STAND_IN
            view[name] = val
        return out

    @staticmethod
    def _heuristic_view(args: dict[str, Any], kargs: dict[str, Any]) -> dict[str, Any]:
        """What `args[...]` reads inside a heuristic: numbers as bound, tensors whose dtype the
        launcher states as its host tensors, anything else unknown."""
        view: dict[str, Any] = {}
        for k, v in {**kargs, **args}.items():
            host = kargs.get(k)
            if isinstance(host, HostTensor) and host.dtype_known:
                view[k] = host  # (a tensor of a dtype the launcher does not state stays unknown:
                # `args["x"].dtype == torch.float16` on the probe's fp16 would be a guess)
            elif isinstance(v, int | float | bool) or v is None:
                view[k] = v
            else:
                view[k] = Opaque(k)
        return view

    def _heuristic_value(self, fn: ast.expr, view: dict[str, Any]) -> Any:
        """The entry's value at `view`; None when the evaluator cannot compute a number."""
        ev = HostEval(self.dims, {}, recording=False)
        if self.site is not None:
            ev.env.update(self.site.functions)  # helpers the entry calls
        try:
            if isinstance(fn, ast.Lambda):
                if not fn.args.args:
                    return None
                ev.env[fn.args.args[0].arg] = view
                val = ev.expr(fn.body)
            else:
                helper = self._named_heuristic(fn)
                if helper is None:
                    return None
                call = ast.Call(func=fn, args=[ast.Name(id="args", ctx=ast.Load())], keywords=[])
                val = ev.invoke(helper, [view], {}, call)
        except (*CANNOT_EVALUATE, RecursionError):
            return None
        if isinstance(val, bool):
            return val
        if isinstance(val, int | float) and not isinstance(val, Opaque):
            return int(val) if isinstance(val, int) else val
        return None

    def _named_heuristic(self, fn: ast.expr) -> HostFunction | None:
        """The package function an entry names (`heur_block_m`, `heuristics.block_m`)."""
        if self.site is None or not isinstance(fn, ast.Name | ast.Attribute):
            return None
        text = ast.unparse(fn)
        found = self.site.functions.get(text)
        if found is None and "." in text:
            found = self.site.functions.get(text.rsplit(".", 1)[-1])
        return found if isinstance(found, HostFunction) else None

    def _heuristic_pick(self, name: str) -> tuple[Any, str]:
        """The value a probe gives a heuristic it cannot evaluate, and its name in the probe's
        choices: a picked tile or flag, or a stand-in with its AR001 note."""
        flags = self.kernel.cached("branch_flags", lambda: branch_flags(self.kernel.func))
        if self.site is not None and name in flags:
            # named alike in both probes: the flag is set with the other entries of the table
            # (`DIVISIBLE_K` with `UPGRADE`), so a finding seen under both values may still rest
            # on a combination no launch makes; it stays a hint, as with the stand-in before
            value: Any = not self.second_probe
            return value, f"`{name}` ({_UNEVALUABLE}; true in one probe, false in the other)"
        if self.site is not None and name in self.scan.arange_params:
            tile = PICKED_TILE // (2 if self.second_probe else 1)
            return tile, f"`{name}` ({_UNEVALUABLE}) = {tile}"
        self.assumed_values[name] = (_UNEVALUABLE, HEURISTIC_STAND_IN)
        return HEURISTIC_STAND_IN, f"`{name}` ({_UNEVALUABLE}, a stand-in) = {HEURISTIC_STAND_IN}"
