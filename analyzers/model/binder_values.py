"""The values a probe launch passes to the kernel: host tensors become `TensorInfo`s (shape,
strides, dimension names, dtype), sizes become ints, unknown values become named stand-ins, and
`@triton.heuristics` are evaluated over the bound arguments (binder_heuristics.py)."""

from __future__ import annotations

import ast
import re
from typing import Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.interp.values import TensorInfo, norm_dtype
from argus.analyzers.model.binder_callers import caller_guard
from argus.analyzers.model.binder_heuristics import HeuristicValues
from argus.analyzers.model.host_values import HostTensor, Opaque, SymInt
from argus.analyzers.model.launch_later import written_later
from argus.analyzers.model.launch_shared import passed_before
from argus.analyzers.model.persistent import grid_counts, persistent_strides
from argus.analyzers.model.runtime_values import RunTimeValue
from argus.analyzers.model.unsized_args import may_stand_in, unsized_tensor


class KernelValues(HeuristicValues):
    """Turns the host values of a launch's arguments into the kernel's parameter values."""

    def _to_kernel_values(
        self, kargs: dict[str, Any], config: dict[str, Any] | None
    ) -> tuple[dict[str, Any], set[str], list[TensorInfo]]:
        args: dict[str, Any] = {}
        runtime: set[str] = set()
        tensors: list[TensorInfo] = []
        established = self._passed_roots(kargs)
        self._stand_in_bound = self._guessed_bound(kargs, config)
        self._unnamed_sizes = self._unnamed_size_roots(kargs)
        for p in self.kernel.params:
            if p.name in kargs:
                v = kargs[p.name]
            elif config and p.name in config:
                v = config[p.name]
            elif p.default is not None:
                try:
                    v = ast.literal_eval(p.default)
                except (ValueError, SyntaxError):
                    v = Opaque(ast.unparse(p.default))
            elif p.name in self.kernel.heuristics:
                continue
            else:
                v = Opaque("missing argument")
            if p.name in self.scan.sole_pointers and _plain_number(v):
                v = Opaque("a number where the kernel reads memory")  # Triton loads from pointers only
            if isinstance(v, Opaque) and p.name in self.scan.pointers:
                if not may_stand_in(v.what):
                    raise Unevaluable(f"the tensor passed as `{p.name}` ({v.what})")
                tensors.append(unsized_tensor(len(tensors), p.name, v.what))  # unsized_args.py
                args[p.name] = tensors[-1]
                continue
            if isinstance(v, Opaque) and p.name not in self.kernel.heuristics:
                picked = None if p.constexpr else self.data_pick(p.name, v.what)
                if picked is not None:
                    v = picked  # only data derives from it: a pick the second probe varies
                elif isinstance(v, RunTimeValue):
                    v = self.runtime_pick(p.name, v, p.constexpr)  # a count `.item()` read back
                else:
                    # a device property or a call's result (`num_sms(device)`): a small stand-in value
                    self.assumed_values[p.name] = (v.what, 4 if p.constexpr else 3)
                    v = 4 if p.constexpr else 3
            if isinstance(v, HostTensor):
                ti = self._tensor_info(len(tensors), p.name, v, established)
                tensors.append(ti)
                args[p.name] = ti
            elif isinstance(v, tuple) and v and v[0] == "desc":
                # a host-side TensorDescriptor: the tensor it covers and its block shape
                t = v[1]
                block = v[2]
                if not isinstance(block, list) or not all(isinstance(b, int) for b in block):
                    raise Unevaluable(f"the block shape of the tensor descriptor `{p.name}`")
                ti = self._tensor_info(len(tensors), p.name, t, established, grid=False)
                tensors.append(ti)
                args[p.name] = ("desc", ti, tuple(int(b) for b in block))
            elif isinstance(v, tuple) and v and v[0] == "dtype":
                args[p.name] = v
            else:
                args[p.name] = int(v) if isinstance(v, SymInt) else v
                if not p.constexpr:
                    runtime.add(p.name)
                    if self._fixed_value(p.name, v):
                        self.fixed_runtime.add(p.name)
        if config:
            for k, v in config.items():
                if k not in args and self.kernel.param(k) is not None:
                    args[k] = v
        self._apply_heuristics(args, kargs)  # binder_heuristics.py
        return args, runtime, tensors

    def _fixed_value(self, param: str, v: Any) -> bool:
        """A number the problem sizes do not change: a literal in the launch call, or a size
        whose dimension classes all have fixed values (`idx.shape[1]` of `torch.empty(T, 8)`).
        MB003 reads it: a growing index times a fixed factor wraps only when that one index is
        huge. A computed plain number (a stride) is not known to be fixed."""
        if isinstance(v, SymInt):
            roots = self._roots_of(v.sym)
            return bool(roots) and all(r in self.dims.allowed for r in roots)
        if self.site is None or isinstance(v, bool) or not isinstance(v, int):
            return False
        arg = dict(self._call_pairs()).get(param)
        return isinstance(arg, ast.Constant) and isinstance(arg.value, int)

    def _tensor_info(
        self, index: int, name: str, t: HostTensor, established: set[str], grid: bool = True
    ) -> TensorInfo:
        """The probe's view of one host tensor. Its bounds are judged only where the launcher
        establishes every extent (see `_extent_established`)."""
        return TensorInfo(
            index,
            name,
            tuple(t.shape),
            tuple(t.strides),
            tuple(self.symbol_name(s) for s in t.symbols),
            norm_dtype(t.dtype) if t.dtype_known else "fp16?",
            created=t.created and not self._passed_before(name),
            # a stand-in bound (L2) leaves the tensor's tags unjudged too: tile sizes and
            # extents guessed together make reductions look short or transposed
            sized=t.sized
            and not self._stand_in_bound & self._pointer_params_used(name)
            and all(self._extent_established(s, established) for s in t.symbols)
            and not self._bound_by_other_unnamed(name, t),
            bounds_unjudged=self._bounds_unjudged(name),
            grid_tiled=grid
            and not self._passed_before(name)
            and t.storage not in self.initialized_storages
            and bool(t.symbols)
            and all(self._roots_of(s) and self._roots_of(s) <= set(self.grid_tiled_roots) for s in t.symbols),
        )

    def _passed_before(self, param: str) -> bool:
        """An allocation an earlier call of the launcher received (model/launch_shared.py), or
        one a later launch of it writes into too (model/launch_later.py): either may write
        part of it, so this kernel alone need not write it whole."""
        arg = dict(self._call_pairs()).get(param) if self.site is not None else None
        return isinstance(arg, ast.Name) and (passed_before(self.site, arg.id) or written_later(self.site, arg.id))

    def _bounds_unjudged(self, pointer: str) -> str:
        """Why the bounds of the tensor passed as `pointer` are not judged though its shape is
        stated (its tags still are): "" when they are."""
        guard = self._caller_guard()
        if guard is not None:
            return f"the launch runs only where its callers find `{guard}`, which the probes do not honour"
        used = sorted(self._stand_in_bound & self._pointer_params_used(pointer))
        if used:
            return f"its addresses depend on `{used[0]}`, whose launcher value is not known (a stand-in is used)"
        return ""

    def _guessed_bound(self, kargs: dict[str, Any], config: dict[str, Any] | None) -> set[str]:
        """Parameters that bound the kernel's indices (compared with offsets, sizing a tile)
        whose launcher values the binder cannot compute (`M = math.prod(v.shape[:-1])`, a
        package helper's block size, a missing argument): the probes use a stand-in, so no
        bound that depends on one is judged (cause L2; the AR001 note names the value)."""
        # (also a stride or offset the addresses are computed from: `x + i_n * stride_x_n` with
        # a stand-in `stride_x_n` reads wherever the stand-in says, so no bound of `x` is judged)
        bounding = self.scan.tiled | self.scan.arange_params | self._address_params()
        if self.site is not None:  # a persistent kernel's program count (persistent.py)
            strides = self.kernel.cached("persistent_strides", lambda: persistent_strides(self.kernel.func))
            self.persistent_counts = grid_counts(self.site.grid_node, self._call_pairs(), strides)
            bounding = bounding - self.persistent_counts
        out: set[str] = set()
        for p in self.kernel.params:
            if p.name not in bounding or p.name in self.kernel.heuristics or (config and p.name in config):
                continue
            if p.name in kargs:
                v = kargs[p.name]
            elif p.default is not None:
                continue
            else:
                v = Opaque("missing argument")
            if isinstance(v, Opaque):
                out.add(p.name)
        return out

    def _address_params(self) -> set[str]:
        """The parameters any pointer's addresses are computed from (`_pointer_params_used`)."""
        if not hasattr(self, "_address_memo"):
            self._address_memo: set[str] = set()
            for pointer in self.scan.pointers:
                self._address_memo |= self._pointer_params_used(pointer)
        return self._address_memo

    def _pointer_params_used(self, pointer: str) -> set[str]:
        """The parameters the kernel's addresses into `pointer` are computed from: its stride
        parameters and whatever its index variables and their bounds derive from (scan_axes)."""
        params = {p.name for p in self.kernel.params}
        # `loss_ptr += row_idx` of a `row_idx = pid + ROW_OFFSET`: the pointer itself moves
        out: set[str] = (self.scan.derived.get(pointer, set()) & params) - {pointer}
        for stride, keys in self.scan.axis_keys.get(pointer, {}).items():
            if stride:
                out.add(stride)
            for key in keys:
                if key.startswith("="):
                    out |= self.scan.derived.get(key[1:], set())
                else:
                    for name in re.findall(r"[A-Za-z_]\w*", key[1:]):
                        out |= {name} & params or self.scan.derived.get(name, set())
        return out

    def _caller_guard(self) -> str | None:
        """The size relation every caller tests before calling the launch's function (L6,
        binder_callers.py): the probes do not honour it, so no bound of the launch is judged."""
        if not hasattr(self, "_guard_memo"):
            self._guard_memo = caller_guard(self.site)
        return self._guard_memo

    def _unnamed_size_roots(self, kargs: dict[str, Any]) -> dict[str, set[str]]:
        """Size arguments made of dimensions the launcher never names (`SIZE=dtable.numel()` of
        a `dtable = torch.empty_like(readout_table)` never unpacked): param -> those roots."""
        out: dict[str, set[str]] = {}
        for name, v in kargs.items():
            if isinstance(v, SymInt):
                roots = {r for r in self._roots_of(v.sym) if self._unnamed(r)}
                if roots:
                    out[name] = roots
        return out

    def _unnamed(self, root: str) -> bool:
        """A tensor's dimension no launcher variable names and no fixed value gives."""
        fixed = len(self.dims.allowed.get(root, ())) == 1
        return "." in root and not root.startswith("(") and root not in self.display and not fixed

    def _bound_by_other_unnamed(self, pointer: str, t: HostTensor) -> bool:
        """The addresses into `pointer` depend on a size made of another tensor's unnamed
        dimensions: the kernel measures that tensor by it, but nothing the code says ties it
        to this one's extents (fla's cyfa reduce: `partials` (S, H, C, M) walked in rows of
        `SIZE = dtable.numel()`), so the probe's free choice of it is no bound of this tensor."""
        own = {r for s in t.symbols for r in self._roots_of(s)}
        used = self._pointer_params_used(pointer)
        return any(roots - own for p, roots in self._unnamed_sizes.items() if p in used)

    def _passed_roots(self, kargs: dict[str, Any]) -> set[str]:
        """Dimension classes the launch passes to the kernel as sizes (`x.shape[1]` as `n_cols`):
        the kernel's masks measure the tensor by them, so they are established."""
        out: set[str] = set()
        for v in kargs.values():
            if isinstance(v, SymInt):
                out |= self._roots_of(v.sym)
        return out

    def _extent_established(self, sym: str, established: set[str]) -> bool:
        """A dimension whose size the code states: named by the launcher (`M, K = a.shape`),
        related to one that is (an assert, `empty_like`, a shared class), tiled or walked by the
        grid, allocated from a value, or passed to the kernel. A dimension of a tensor the
        launcher never unpacks (`y_true` beside an unpacked `y_pred`) is none of these: its size
        would be the probe's free choice, and a bound judged on it a guess (issue 12, rule 1)."""
        return not any(self._anonymous(r) and r not in established for r in self._roots_of(sym))


def _plain_number(v: Any) -> bool:
    """A number bound to a parameter the kernel reads memory through: the launcher evaluation
    lost the tensor passed there (a loop over tensors, `torch.tensor(x.shape)` read as the list
    it is made from, `x != 0` of a tensor read as a bool)."""
    if isinstance(v, list | tuple):
        return bool(v) and len(v) <= 8 and all(_plain_number(x) for x in v)
    return isinstance(v, int | float | SymInt) and not isinstance(v, Opaque)
