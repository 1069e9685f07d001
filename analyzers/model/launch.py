"""The launch binder: probe launches for one kernel from its launch site (or, without one,
from assumptions). It evaluates the launcher twice: once with placeholder sizes to learn the
dimension classes, tiling and layouts (`record`), then once per probe with concrete sizes.

Its parts, one job each: `binder_state` (what is known), `binder_unify` (classes that measure
one extent), `binder_grid` (the grid), `binder_sizes` (sizes per probe kind), `binder_values`
(kernel argument values, heuristics), `binder_assumed` (no launch site), `binder_constexprs` (constexprs that move with the sizes,
picks and stand-ins named).
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.errors import CANNOT_EVALUATE, Unevaluable
from argus.analyzers.model.assert_search import accepted_sizes
from argus.analyzers.model.binder_assumed import AssumedProbes
from argus.analyzers.model.binder_constexprs import ConstexprChoices
from argus.analyzers.model.binder_ctx import STORE_PREFIX, AttributeTable, ctx_param, forward_copy, table_from
from argus.analyzers.model.binder_grid import GridBinding
from argus.analyzers.model.binder_picks import SECOND_PICK, branch_flags
from argus.analyzers.model.binder_sizes import SizeChoice
from argus.analyzers.model.binder_unify import DimUnification
from argus.analyzers.model.caller_layouts import contiguous_from_callers
from argus.analyzers.model.caller_literals import caller_literals, caller_pick
from argus.analyzers.model.device_picks import DEVICE_COUNT, SECOND_DEVICE_COUNT
from argus.analyzers.model.guard_pins import guard_pins, pin_computed
from argus.analyzers.model.guard_ranks import apply_rank_wants, rank_aliases
from argus.analyzers.model.helper_picks import HelperPicks
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_asserts import ORDERINGS
from argus.analyzers.model.host_caller_args import bind_caller_args, caller_input, caller_reads
from argus.analyzers.model.host_values import DimClasses, HostTensor, Opaque, SymInt, contiguous_strides
from argus.analyzers.model.launch_args import evaluate_launch_args
from argus.analyzers.model.launch_guards import empty_range, unsettled_guards
from argus.analyzers.model.launch_site import LaunchSite, ProbeLaunch, find_launch_calls, padded_strides
from argus.analyzers.model.launcher_reads import (
    ranks_through_calls,
    rows_arguments,
    shape_read_names,
    tensor_param_ranks,
    unguarded_tensor_uses,
)
from argus.analyzers.model.launcher_shapes import ranks_unpacked_later
from argus.analyzers.model.launcher_strides import strides_read
from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.persistent import (
    grid_counts,
    persistent_strides,
    picked_program_count,
    size_divisions,
)
from argus.analyzers.model.shrunk_probe import shrunk_size

#: the "tile" of a size that only counts loop iterations: its ragged probe runs 5, 7, ... of them
COUNT_BLOCK = 4


class LaunchBinder(DimUnification, GridBinding, SizeChoice, AssumedProbes, HelperPicks, ConstexprChoices):
    """Builds probe launches for one kernel from its launch site (or assumptions without one)."""

    # launcher parameters used as tensors outside any test of them (set with the ranks)
    _unguarded: frozenset[str] | set[str] = frozenset()
    _pins: dict[str, Any] | None = None  # launcher parameters the tests around the launch fix
    _ctx_table: AttributeTable | None = None  # a backward's `ctx`, as its forward filled it
    _forward: ast.FunctionDef | None = None  # that forward, rewritten (binder_ctx.forward_copy)
    _forward_ranks: dict[str, int] = {}
    _rank_aliases: dict[str, ast.expr] | None = None  # names assigned a rank (guard_ranks.py)
    _callers: dict[str, list[Any]] = {}  # literals the module's calls pass (caller_literals.py)
    _padded_dims: dict[str, frozenset[int] | None] = {}  # the strides each padded tensor passes

    def _bind_params(self, ev: HostEval) -> None:
        assert self.site is not None
        func = self.site.host_func
        if func is None:
            return
        if self._ranks is None:
            at_least: set[str] = set()  # ranks only bounded below by an index (`q.shape[2]`)
            rows_kept: set[str] = set()  # ... save that the launch passes `x.shape[0]` on
            self._ranks = tensor_param_ranks(func, self._rank_unknown, at_least, rows_kept)
            at_least |= self._rows_not_measuring(func, rows_kept)
            self._unguarded = unguarded_tensor_uses(func)
            # a parameter only handed on to a host function: that function's uses say it is a tensor
            passed_unknown: set[str] = set()
            for name, rank in ranks_through_calls(func, self.site.functions, passed_unknown).items():
                if name not in self._ranks:
                    self._ranks[name] = rank
                    if name in passed_unknown:
                        self._rank_unknown.add(name)
            shape_read = shape_read_names(func)
            # a tensor whose shape the launcher never reads, only strides: the kernel's
            # addresses tell its rank (k.stride(0), k.stride(1) passed, `+ offs_d` unit stride)
            for name, rank in self._address_rank_hints().items():
                if name in self._ranks and (name not in shape_read or name in at_least) and rank > self._ranks[name]:
                    self._ranks[name] = rank
                    at_least.discard(name)  # the kernel's addresses give the rest
            # a rank the launcher bounds only from below, that the addresses do not complete,
            # is a guess: bounds on that tensor are not judged
            self._rank_unknown |= at_least
        ranks = self._ranks
        kernel_ptr_args = self._pointer_arg_names()
        args = func.args.posonlyargs + func.args.args
        defaults = [None] * (len(args) - len(func.args.defaults)) + list(func.args.defaults)
        pairs = list(zip(args, defaults, strict=True)) + list(
            zip(func.args.kwonlyargs, func.args.kw_defaults, strict=True)
        )
        ev.saved_tensor = lambda name: self._param_tensor(ev, name, ranks)
        if self._pins is None:  # `elif ord == 0: kernel[...]`: the probe takes ord = 0 (guard_pins.py)
            # and the literal every call in the module passes (`unique_in0=False`, caller_literals.py)
            self._callers = caller_literals(self.site)
            self._pins = guard_pins(self.site.body, self.site.call, {a.arg for a, _ in pairs})
        for a, d in pairs:
            name = a.arg
            if name in self._pins and name not in ranks and name not in kernel_ptr_args:
                ev.env[name] = self._pins[name]
                continue
            if name in self._callers and name not in ranks and name not in kernel_ptr_args:
                ev.env[name], chosen = caller_pick(name, self._callers[name])
                if chosen is not None:
                    self.input_choices[name] = chosen
                continue
            if name == "ctx" and self._ctx_table is not None:
                ev.env[name] = self._ctx_table  # what the forward stored (binder_ctx.py)
                continue
            if name == "ctx" or (name == "self" and name not in ranks and name not in kernel_ptr_args):
                ev.env[name] = Opaque(name)  # a method's receiver; `self` used as a tensor is one (aten's `relu(self)`)
                continue
            is_tensor = name in ranks or name in kernel_ptr_args
            if isinstance(d, ast.Constant) and d.value is None and name in self._unguarded:
                d = None  # `beta=None` but `beta.shape[2]` read unguarded: a tensor is passed
            picked = None if is_tensor else self.input_pick(ev, name, d)
            if picked is not None:  # `dim`, `normalized_shape`, `size`: the caller's (binder_inputs.py)
                ev.env[name] = picked
                continue
            if d is not None:
                ev.env[name] = ev.expr(d)
                continue
            if is_tensor:
                ev.env[name] = self._param_tensor(ev, name, ranks)
            elif d is None:
                ev.env[name] = ev.dim(name)
        reads = caller_reads(func)
        if reads is not None:  # `def neg_(*args, **kwargs): x = args[0]` (host_caller_args.py)
            bind_caller_args(ev.env, reads, lambda n: caller_input(self, ev, n, ranks, kernel_ptr_args))

    def _rows_not_measuring(self, func: ast.FunctionDef, rows_kept: set[str]) -> set[str]:
        """Of the tensors read only as `x.shape[0]`, the ones whose row count this launch hands
        only to constexprs and loop counts (`SPLIT=partial.shape[0]` for `tl.static_range(1,
        SPLIT)`): no mask compares the kernel's offsets with it, so it says nothing of x's other
        dimensions, and a rank of 1 would be a guess (unsloth's `_split_sum_kernel` read a
        (split, M, N) buffer "out of bounds" of a 1-D one)."""
        if not rows_kept or self.site is None:
            return set()
        params = [p.name for p in self.kernel.params]
        constexprs = {p.name for p in self.kernel.params if p.constexpr}
        out: set[str] = set()
        for name, slots in rows_arguments(func, self.site.call).items():
            if name not in rows_kept:
                continue
            got = [params[s] if isinstance(s, int) and s < len(params) else s for s in slots]
            if got and all(isinstance(p, str) and (p in constexprs or p in self.scan.counted) for p in got):
                out.add(name)
        return out

    def _param_tensor(self, ev: HostEval, name: str, ranks: dict[str, int]) -> HostTensor:
        """The host tensor a launcher parameter (or a tensor `ctx.saved_tensors` gives) is."""
        rank = ranks.get(name, 1)
        shape = [ev.dim(f"{name}.{i}") for i in range(rank)]
        t = ev.new_tensor(shape, "fp16", name, False)
        # a tensor read only as `v.shape[-1]` has a rank the launcher does not give:
        # its extents are not judged (no bound stands on a guessed rank)
        t.sized = name in ranks and name not in self._rank_unknown
        if self.sizes_known() and name in self.padded_layout:
            t.strides = padded_strides(t.shape, self._padded_dims.get(name))
        return t

    def _run_host(self, sizes: dict[str, int] | None) -> HostEval:
        assert self.site is not None
        ev = HostEval(self.dims, sizes, recording=sizes is None, contains_memo=self._contains_memo)
        if sizes is not None:
            ev.free_roots = {r for r in sizes if self._anonymous(r)}
        ev.device_count = SECOND_DEVICE_COUNT if self.second_probe else DEVICE_COUNT
        ev.second_pick = self.second_probe
        if self._rank_aliases is None:
            self._rank_aliases = rank_aliases(self.site.host_func)
        ev.rank_alias_map = self._rank_aliases  # `ndim = x.dim()` (guard_ranks.py)
        ev.env.update(self.site.functions)  # the module's functions and constants; params shadow them
        self._ctx_table = self._replay_forward(ev)  # binder_ctx.py
        self._bind_params(ev)
        ev.run_block(self.site.body, self.site.call)
        for query, text in ev.device_choices.items():  # named, and varied by a second probe
            if ev.device_uses.get(query, 0) > 0:
                self.input_choices[query] = text
        self._remember_names(ev.env)
        return ev

    def _remember_names(self, env: dict[str, Any]) -> None:
        """Readable names of dimension classes (`M, K = a.shape` -> "M", "K")."""
        for k, v in env.items():
            if k.startswith("_"):
                continue
            if isinstance(v, SymInt) and not v.sym.startswith("("):
                root = self.dims.find(v.sym)
                cur = self.display.get(root)
                if cur is None or (len(k) < len(cur) and not k.startswith("_")):
                    self.display[root] = k

    def _replay_forward(self, ev: HostEval) -> AttributeTable | None:
        """A launch in an autograd `backward`: run the `forward` beside it first, in the same
        evaluator, and return the `ctx` it fills (binder_ctx.py); None for any other launch, or
        a forward the evaluator cannot run."""
        assert self.site is not None
        fwd = self.site.forward
        fwd_ctx = ctx_param(fwd)
        if fwd is None or fwd_ctx is None or ctx_param(self.site.host_func) is None:
            return None
        if self._forward is None:
            backward = self.site.host_func
            assert backward is not None
            self._forward, self._forward_ranks = _forward_and_ranks(fwd, fwd_ctx, backward, self.site.functions)
        outer = ev.env
        ev.env = dict(outer)
        try:
            for a in (self._forward.args.posonlyargs + self._forward.args.args)[1:] + self._forward.args.kwonlyargs:
                if a.arg in self._forward_ranks:
                    ev.env[a.arg] = self._param_tensor(ev, a.arg, self._forward_ranks)
                else:
                    ev.env[a.arg] = ev.dim(a.arg)
            ev.run_block(self._forward.body)
        except CANNOT_EVALUATE:
            return None
        finally:
            inner, ev.env = ev.env, outer
        self._remember_names(inner)
        table = table_from(inner)
        saved = table.get("saved_tensors")
        if not isinstance(saved, tuple) or not all(isinstance(t, HostTensor) or t is None for t in saved):
            table.pop("saved_tensors", None)  # what the backward unpacks stays its own (saved_tensor)
        return table

    def _kernel_args(self, ev: HostEval) -> dict[str, Any]:
        assert self.site is not None
        return evaluate_launch_args(ev, self.site, self.kernel)

    def record(self) -> None:
        """First pass: learn dimension classes, tiling and layouts from placeholder sizes."""
        if self.site is None:
            self.recorded = True
            return
        ev = self._rerecorded(self._run_host(None))
        self._unify_suffixed_names()
        self._unify_anonymous(ev)
        # (less what every caller in the module hands over contiguous: caller_layouts.py)
        self._padded_dims = strides_read(self.site)
        self.padded_layout = set(self._padded_dims) - contiguous_from_callers(self.site)
        kargs = self._kernel_args(ev)
        self.note_picked_params(kargs)
        self.picked_params |= set(self._helper_picks(kargs))  # helper_picks.py
        # heuristics the evaluator cannot compute that pick a tile or a flag (binder_heuristics.py)
        flags = self.kernel.cached("branch_flags", lambda: branch_flags(self.kernel.func))
        self.picked_params |= {
            h for h in self.unevaluable_heuristics(kargs) if h in flags or h in self.scan.arange_params
        }
        self._unify_product_factors()  # after the call's arguments: `t.numel()` is often one
        self._kernel_divisions(kargs)
        first_config = (
            self.kernel.autotune.configs[0] if self.kernel.autotune and self.kernel.autotune.configs else None
        )
        constexpr_env = self._constexpr_env(kargs, {**self._tuned_picks(kargs), **(first_config or {})})
        # sizes passed as constexprs (HEAD_DIM=D) size aranges: keep them powers of two
        for p in self.kernel.params:
            v = kargs.get(p.name)
            if p.constexpr and isinstance(v, SymInt) and not v.sym.startswith("("):
                root = self.dims.find(v.sym)
                # a tile extent (tl.arange) needs >= 16 for tl.dot; a count (heads, top_k) stays small;
                # a size the launcher requires to be a multiple (`if K % 64 != 0: raise`) is one
                mult = self.dims.multiple_of.get(root, 1)
                small = [16, 32] if p.name in self.scan.arange_params else [2, 4]
                self.dims.allowed.setdefault(root, [mult, 2 * mult] if 1 < mult <= 1024 else small)
        # tiling from the grid: cdiv(X, B) tiles X's class by B; bare names are batch-like
        self._grid_roles(ev, self.site.grid_node, constexpr_env)
        for stop in self._persistent_stops():  # a persistent loop's task count is its grid
            self._grid_roles(ev, stop, constexpr_env)
        self.grid_tiled_roots = set(self.tiled) | set(self.bare)
        bmax = max(
            [
                v
                for v in constexpr_env.values()
                if isinstance(v, int) and not isinstance(v, bool) and 2 <= v <= 1024
            ]
            or [16]
        )
        if any(p.work_bound for p in self.scan.policies.values()):
            # routed kernels (MoE) rely on padded index arrays: lengths are whole tiles
            for root, block in self.tiled.items():
                self.dims.multiple_of[root] = max(self.dims.multiple_of.get(root, 1), block)
        for p in sorted(self.scan.tiled, key=lambda p: p in self.scan.counted):
            v = kargs.get(p)
            if isinstance(v, SymInt):
                # an iteration count (`range(passes)`) walks its bound one unit at a time; tiled
                # by the largest block, randperm's `passes = cdiv(bits, 4)` ran 257 passes of a
                # 1024-lane tile in every program
                block = COUNT_BLOCK if p in self.scan.counted else bmax
                for root in self._roots_of(v.sym):
                    if root not in self.bare:  # a batch-like grid axis stays small
                        self.tiled.setdefault(root, block)
        self.block_driving = self._size_driven_blocks(kargs)
        if any(p.prefix for p in self.scan.policies.values()):
            # a prefix-sum table holds several groups (first, empty, one row, the rest) ...
            tables = {name for name, p in self.scan.policies.items() if p.prefix}
            for name, arg in self._call_pairs():
                host = ev.env.get(arg.id) if name in tables and isinstance(arg, ast.Name) else None
                if isinstance(host, HostTensor) and host.symbols:
                    self.prefix_lengths.add(self.dims.find(host.symbols[0]))
            # ... of rows (packed sequences, tokens grouped by expert) sized so that the first
            # group spans a tile of the largest block and one row more
            for v in ev.env.values():
                if isinstance(v, HostTensor) and not v.created and len(v.symbols) >= 2:
                    root = self.dims.find(v.symbols[0])
                    if root not in self.tiled and root not in self.bare and root not in self.dims.allowed:
                        self.partitioned[root] = 2 * bmax
        self.recorded = True

    def _rerecorded(self, ev: HostEval) -> HostEval:
        """The first pass again, at the ranks and values the tests on the launch's path want
        (guard_ranks.py, guard_pins.pin_computed), until they want no other (three times at most)."""
        assert self.site is not None
        for _ in range(3):
            ranked = self._ranks is not None and apply_rank_wants(ev.rank_wants, self._ranks, self._rank_unknown)
            func = self.site.host_func
            pinned = func is not None and self._pins is not None and pin_computed(func, self._pins, self._ranks, ev)
            if not (pinned or ranked):
                break
            self.dims, self.display = DimClasses(), {}
            self.input_choices.clear()  # (a pinned input is no pick: the run names its own)
            ev = self._run_host(None)
        return ev

    def probe(self, kind: str, config: dict[str, Any] | None) -> ProbeLaunch:
        if self.site is None:
            return self._assumed_probe(kind, config)
        self.second_probe = config is SECOND_PICK  # the picks of binder_inputs / data_params vary
        try:
            return self._site_probe(kind, config)
        finally:
            self.second_probe = False

    def _site_probe(self, kind: str, config: dict[str, Any] | None) -> ProbeLaunch:
        sizes = self.choose_sizes(kind)
        ev = self._run_host(sizes)
        sizes, ev = self._shrunk(kind, sizes, ev)
        if ev.broken_asserts:  # a nearby size the launcher accepts (assert_search.py)
            sizes, ev = accepted_sizes(sizes, ev, self._run_host)
        broken_order = _only_orderings(ev.broken_asserts)
        if ev.broken_asserts and broken_order is None:  # sizes no real launch has: not judged
            test = ev.broken_asserts[0]
            raise Unevaluable(f"a probe size consistent with the launcher's {_refusal(test)}", test)
        kargs = self._kernel_args(ev)
        empty = empty_range(self.kernel.func, kargs, self.scan.arange_params)
        if empty is not None:  # sizes at which Triton would not compile the kernel
            raise Unevaluable(f"a probe size consistent with the kernel's ranges ({empty})", self.site.call)
        second = config is SECOND_PICK
        config = self.first_config() if second else config
        picks = self._tuned_picks(kargs, 2 if second else 1)
        flags = self._flag_picks(kargs, not second)
        helper = self._helper_picks(kargs, 2 if second else 1)
        helper_named = self.named_helper_picks(helper, kargs)
        unknown = {k: kargs[k] for k in helper}  # the grid reads the pick where it reads them
        kargs = {**kargs, **flags, **helper}
        self.initialized_storages = ev.initialized
        args, runtime, tensors = self._to_kernel_values(kargs, {**picks, **(config or {})} or None)
        self._persistent_counts(args)
        grid, axes, grid_picks = self._grid(ev, args, {**kargs, **unknown})
        picked_axes = {axis for axis, _ in grid_picks}
        shown = {}
        for root, v in sizes.items():
            if (root.startswith("_") or "." in root) and root not in self.display:
                continue
            shown[self.display.get(root, root)] = v
        shown.update(self.data_picks)  # data-only scalars the probe picked (data_params.py)
        return ProbeLaunch(
            kind,
            args,
            runtime,
            grid,
            axes,
            shown,
            config,
            self.site,
            False,
            grid_span=self.site.smap.span(self.site.grid_node),
            bare_axes=frozenset(self.bare_axes),
            fixed_runtime=frozenset(self.fixed_runtime),
            choices=self._named_choices(picks, flags)
            + helper_named
            + tuple(self.input_choices.values())
            + tuple(self.runtime_choices.values())
            + self.heuristic_choices
            + self._constexpr_stand_ins()
            + broken_order,
            guards=unsettled_guards(ev),
            loops=tuple(dict.fromkeys(ev.launch_loops)),
            grid_picks=tuple(grid_picks),
            counted_axes=frozenset(a for a in picked_axes if a in self._counted_axes()),
            stand_ins=frozenset(self.assumed_values) | frozenset(self.grid_sized) | frozenset(self.runtime_choices),
        )


    def _shrunk(self, kind: str, sizes: dict[str, int], ev: HostEval) -> tuple[dict[str, int], HostEval]:
        """The probe again with its unstated dimensions smaller, where at their full size a
        tensor would pass the probe's cap (shrunk_probe.py); else the probe as it was."""
        anonymous = {r for r in sizes if self._anonymous(r)}
        if not anonymous or ev.broken_asserts:
            return sizes, ev
        tensors = [v for v in ev.env.values() if isinstance(v, HostTensor)]
        small = shrunk_size(tensors, anonymous, self.dims.find, max(sizes[r] for r in anonymous))
        if small is None:
            return sizes, ev
        self.anonymous_cap = small
        try:
            sizes = self.choose_sizes(kind)
        finally:
            self.anonymous_cap = 0
        return sizes, self._run_host(sizes)

    def _kernel_divisions(self, kargs: dict[str, Any]) -> None:
        """`i_h // (HV // H)`: a kernel that divides one size parameter by another counts
        groups of the divisor (grouped heads), so the probe takes the dividend a multiple of it
        (as for the launcher's `assert HV % H == 0`, binder_sizes.py); a probe with HV = 3 and
        H = 2 breaks a relation the kernel assumes, and what it shows is no fact of the code."""
        for a, b in self.kernel.cached("size_divisions", lambda: size_divisions(self.kernel.func)):
            x, y = kargs.get(a), kargs.get(b)
            if isinstance(x, SymInt) and isinstance(y, SymInt) and x.sym not in self.dims.divisible_by:
                if self.dims.find(x.sym) != self.dims.find(y.sym):
                    self.dims.divisible_by[x.sym] = y.sym
                    self.kernel_groups.add((self.dims.find(x.sym), self.dims.find(y.sym)))

    def _persistent_stops(self) -> list[ast.expr]:
        """The launch's expressions for the task counts of persistent loops whose stride is the
        grid's program count (`task_num=NT * B * HV`): they tile and batch the problem as a grid
        expression does (`NT` of `cdiv(T, BT)` ragged, `B` and `HV` batch-like, small)."""
        assert self.site is not None
        strides = self.kernel.cached("persistent_strides", lambda: persistent_strides(self.kernel.func))
        pairs = self._call_pairs()
        stops = {strides[c] for c in grid_counts(self.site.grid_node, pairs, strides)}
        return [arg for p, arg in pairs if p in stops]

    def _persistent_counts(self, args: dict[str, Any]) -> None:
        """A program count the kernel strides its tasks by and the code leaves to the device:
        picked to give each program a few tasks (persistent.py)."""
        strides = self.kernel.cached("persistent_strides", lambda: persistent_strides(self.kernel.func))
        for name in [n for n in self.assumed_values if n in strides and isinstance(args.get(n), int)]:
            what, stand_in = self.assumed_values[name]
            args[name] = picked_program_count(name, strides, args, stand_in)
            self.assumed_values[name] = (what, args[name])


def _forward_and_ranks(
    fwd: ast.FunctionDef, fwd_ctx: str, backward: ast.FunctionDef, functions: dict[str, Any]
) -> tuple[ast.FunctionDef, dict[str, int]]:
    """The forward rewritten for the replay (binder_ctx.forward_copy) and the ranks of its
    tensor parameters, as the backward's ctx reads them. Each part is kept on the trees it
    reads (node_memo.py): the copy on the forward, so that an edit of the backward, or of
    anything else, neither copies the forward again nor reads its ranks again; never edited."""
    copied = on_node(fwd, ("forward_copy", fwd_ctx), lambda: forward_copy(fwd, fwd_ctx))
    ranks = tensor_param_ranks(copied, set(), set())
    for name, rank in ranks_through_calls(copied, functions, set()).items():
        ranks.setdefault(name, rank)
    later = on_node(copied, "unpacked_later", lambda: ranks_unpacked_later(copied, backward, STORE_PREFIX), backward)
    for name, rank in later.items():
        ranks[name] = max(ranks.get(name, 0), rank)  # `B, L = ctx.shape`
    return copied, ranks


def _only_orderings(broken: list[ast.AST]) -> tuple[str, ...] | None:
    """Where every assert the probe's sizes break is an ordering between sizes (`assert d > dv`)
    that no nearby size keeps (assert_search.py): the probe runs, and what it finds is at most
    a hint naming the assert, as it is for any value the code does not establish; () where
    nothing is broken; None where an equality or a refusal is (the launch is then not judged)."""
    if not broken:
        return ()
    if all(isinstance(t, ast.Compare) and isinstance(t.ops[0], ORDERINGS) for t in broken):
        return (f"the probe's sizes, at which the launcher's `assert {ast.unparse(broken[0])}` does not hold",)
    return None


def _refusal(node: ast.AST) -> str:
    """How the launcher refuses the probe's sizes, as its code says it."""
    if isinstance(node, ast.If) and not (node.body and isinstance(node.body[-1], ast.Raise)):
        return f"`if {ast.unparse(node.test)}:` that the launch is under (host.py's launch guards)"
    if isinstance(node, ast.If):
        return f"`if {ast.unparse(node.test)}: raise`"
    if isinstance(node, ast.Call):
        return f"checks inside `{ast.unparse(node.func)}(...)`"
    return f"`assert {ast.unparse(node)}`"


__all__ = [
    "LaunchBinder",
    "LaunchSite",
    "ProbeLaunch",
    "contiguous_strides",
    "find_launch_calls",
]
