"""What the launch binder knows about one kernel and its launch: the dimension classes and
their readable names, which classes the grid tiles, and the pairing of launch arguments with
kernel parameters. The binder's other parts (unification, grid, sizes, values) build on it."""

from __future__ import annotations

import ast
import contextlib
from typing import Any

from argus.analyzers.model.data_params import data_only_params
from argus.analyzers.model.host_values import DimClasses
from argus.analyzers.model.kernel import KernelModel
from argus.analyzers.model.launch_args import keyword_exprs, positional_exprs
from argus.analyzers.model.launch_site import LaunchSite
from argus.analyzers.model.runtime_values import RunTimeValue, runtime_choice, runtime_pick_value
from argus.analyzers.model.scan import KernelScan

DATA_PICKS = (3, 5)  # a data-only runtime scalar (data_params.py): first probe, second probe


class BinderState:
    """The state shared by the parts of `LaunchBinder`, and the lookups they all use."""

    def __init__(self, kernel: KernelModel, scan: KernelScan, site: LaunchSite | None) -> None:
        self.kernel = kernel
        self.scan = scan
        self.site = site
        self.dims = DimClasses()
        self.display: dict[str, str] = {}
        self.tiled: dict[str, int] = {}  # class -> block that tiles it
        self.bare: set[str] = set()
        self.grid_tiled_roots: set[str] = set()  # classes the launch grid walks (cdiv or bare)
        self.bare_axes: set[int] = set()
        self.padded_layout: set[str] = set()
        self.recorded = False
        self.error: str | None = None
        self.block_driving: dict[str, int] = {}  # class -> the capped block it drives (launch.py)
        self.assumed_values: dict[str, tuple[str, int]] = {}  # param -> (what it was, stand-in)
        # runtime params passed the unknown value of a grid axis: that axis's pick (binder_grid.py)
        self.grid_sized: set[str] = set()
        self.persistent_counts: set[str] = set()  # of those, a persistent loop's stride (persistent.py)
        self.anonymous_cap = 0  # the size of unstated dimensions in a shrunk probe (0: not shrunk)
        self.kernel_groups: set[tuple[str, str]] = set()  # divisibility only the kernel implies
        self.initialized_storages: set[int] = set()  # the probe's `torch.zeros` outputs (HostEval.initialized)
        self._ranks: dict[str, int] | None = None
        self._rank_unknown: set[str] = set()  # launcher tensors indexed only from the back
        self.partitioned: dict[str, int] = {}  # rows split by a prefix-sum table -> rows to give them
        self.prefix_lengths: set[str] = set()  # lengths of prefix-sum tables (groups + 1)
        self.fixed_runtime: set[str] = set()  # runtime numbers no problem size changes (MB003)
        self._contains_memo: dict[tuple[int, int], tuple[Any, Any, bool]] = {}
        self._stand_in_bound: set[str] = set()  # bounding parameters with stand-in values (L2)
        self._unnamed_sizes: dict[str, set[str]] = {}  # size arguments of unnamed dimensions (binder_values)
        self.picked_params: set[str] = set()  # constexprs the launch leaves to picks (binder_picks.py)
        self.second_probe = False  # the probe being bound is the second pick (binder_picks.SECOND_PICK)
        self.input_choices: dict[str, str] = {}  # launcher inputs the probes pick, named (binder_inputs.py)
        self.data_picks: dict[str, int] = {}  # data-only runtime scalars the probes pick (data_params.py)
        self.runtime_params: set[str] = set()  # params given values the run decides (runtime_values.py)
        self.runtime_choices: dict[str, str] = {}  # their picks, named

    def symbol_name(self, sym: str) -> str:
        """A readable name for a dimension class (`(a.0*topk_ids.1)` -> `(T*top_k)`)."""
        if not sym.startswith("("):
            root = self.dims.find(sym)
            return self.display.get(root, root)
        out = sym
        for tok in sorted(
            set(
                sym.replace("(", " ")
                .replace(")", " ")
                .replace("*", " ")
                .replace("+", " ")
                .replace("-", " ")
                .replace("/", " ")
                .replace("%", " ")
                .split()
            ),
            key=len,
            reverse=True,
        ):
            if tok in self.dims.parent:
                out = out.replace(tok, self.display.get(self.dims.find(tok), self.dims.find(tok)))
        return out

    def data_params(self) -> frozenset[str]:
        """Runtime scalars of the kernel that only data is computed from (data_params.py)."""
        return self.kernel.cached("data_params", lambda: data_only_params(self.kernel.func, self.scan))

    def data_pick(self, name: str, what: str) -> int | None:
        """The value a probe picks for the data-only runtime scalar `name` whose launcher value
        (`what`) is not known; None where the parameter steers anything (then a stand-in and
        an AR001). No address, mask, branch, loop or tile shape depends on it, so no bound,
        race, coverage or undefined-lane verdict can: the pick is named in every finding's
        sizes (`ProbeLaunch.sizes`) rather than made a choice a second probe must confirm."""
        if name not in self.data_params():
            return None
        value = DATA_PICKS[1 if self.second_probe else 0]
        self.data_picks[name] = value
        return value

    def runtime_pick(self, name: str, value: RunTimeValue, constexpr: bool) -> int:
        """The value a probe picks for the parameter `name` that the launch passes a value only
        the run knows (a count `.item()` reads back, a generator's seed) and that steers
        something: named in the probe's choices and varied by the second probe, so a finding
        that rests on it is at most a hint (runtime_values.py)."""
        picked = runtime_pick_value(constexpr, self.second_probe)
        self.runtime_choices[name] = runtime_choice(name, value, picked)
        return picked

    def sizes_known(self) -> bool:
        return self.recorded

    def _pointer_arg_names(self) -> set[str]:
        """Host names that appear in the arguments passed to pointer parameters."""
        return {
            n.id
            for param, arg in self._call_pairs()
            if param in self.scan.pointers
            for n in ast.walk(arg)
            if isinstance(n, ast.Name)
        }

    def _call_pairs(self) -> list[tuple[str, ast.expr]]:
        """(kernel parameter, host expression) for every argument of the launch call."""
        assert self.site is not None
        params = [p.name for p in self.kernel.params]
        pairs = list(zip(params, positional_exprs(self.site), strict=False))
        return pairs + keyword_exprs(self.site)

    def _address_rank_hints(self) -> dict[str, int]:
        """Host tensors passed straight to a pointer parameter (`k` for `K`), with the rank the
        kernel's addresses imply (strides it multiplies by, plus a unit-stride term)."""
        return {
            a.id: self.scan.address_ranks[p]
            for p, a in self._call_pairs()
            if isinstance(a, ast.Name) and p in self.scan.address_ranks
        }

    def _roots_of(self, sym: str) -> set[str]:
        if not sym.startswith("("):
            return {self.dims.find(sym)}
        out = set()
        for tok in (
            sym.replace("(", " ")
            .replace(")", " ")
            .replace("*", " ")
            .replace("+", " ")
            .replace("-", " ")
            .replace("//", " ")
            .replace("%", " ")
            .split()
        ):
            if tok in self.dims.parent:
                out.add(self.dims.find(tok))
        return out

    def _anonymous(self, root: str) -> bool:
        if root in self.display or root in self.tiled or root in self.bare or root in self.dims.allowed:
            return False
        return "." in root and not root.startswith("(")

    def _constexpr_env(self, kargs: dict[str, Any], config: dict[str, Any] | None) -> dict[str, Any]:
        env: dict[str, Any] = {}
        for p in self.kernel.params:
            if p.default is not None:
                with contextlib.suppress(ValueError, SyntaxError):
                    env[p.name] = ast.literal_eval(p.default)
        for k, v in kargs.items():
            p = self.kernel.param(k)
            if isinstance(v, int | float | bool) and (p is None or p.constexpr):
                env[k] = v
        if config:
            env.update(config)
        return env
