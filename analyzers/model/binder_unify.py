"""Dimension classes the launcher does not relate by an assert but that measure the same
extent: suffixed names (`K2` beside `K`), unnamed dimensions of tensors of the same rank, and
products that differ in one unnamed factor."""

from __future__ import annotations

import ast
import contextlib
import re

from argus.analyzers.model.binder_state import BinderState
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_values import HostTensor
from argus.analyzers.model.scan_axes import UNIT

ADDRESSED = -1  # the key of `_axis_keys` that marks a tensor the kernel addresses at all


class DimUnification(BinderState):
    """Joins dimension classes that the launcher's names and shapes show to be one extent."""

    def _unify_suffixed_names(self) -> None:
        """`E, K2, N = w.shape` next to `M, K = a.shape`: K2 names the same extent as K (the
        digit only avoids rebinding), asserted or not."""
        by_name = {name: root for root, name in self.display.items()}
        for root, name in list(self.display.items()):
            m = re.fullmatch(r"([A-Za-z][A-Za-z_]*?)_?\d+", name)
            if m and m.group(1) in by_name and by_name[m.group(1)] != root:
                self.dims.union(by_name[m.group(1)], root)
                keep = self.dims.find(root)
                self.display[keep] = m.group(1)

    def _unify_anonymous(self, ev: HostEval) -> None:
        """A dimension the launcher never names (`_, S, H, _ = k.shape`, or never read) is taken
        to match the same position of another parameter tensor of the same rank only where the
        kernel's own code ties the two axes: both are walked by the same index (`off_h` for q and
        k, `offs_d` on both unit strides), by indices it bounds by the same size (`offs_m <
        N_CTX`, `offs_n < N_CTX`), or from one prefix-sum row start (`seq_start + ...`). Where
        the kernel indexes both axes by nothing in common (a `(N, HC, HC)` table beside `(N, HC,
        C)`), the axis stays unnamed and its tensor's bounds are not judged (issue 12, rule 1).
        An axis the scan cannot read (addresses computed from sizes, `q + (bos * H + i_h) * K`,
        with no stride parameter) keeps the join: dropping it leaves one operand of a dot
        without coordinate tags, and the other's then look transposed (fla's gdn2 `Aqk`). A
        tensor the kernel never addresses (passed but unused, or not passed) ties nothing."""
        tensors = [v for v in ev.env.values() if isinstance(v, HostTensor) and not v.created]
        keys = self._axis_keys(ev)
        self._unify_bounded_axes(ev, tensors, keys)
        named = {self.dims.find(s) for s in self.display}
        for i, t in enumerate(tensors):
            for u in tensors[i + 1 :]:
                if len(t.shape) != len(u.shape) or len(t.shape) < 3 or t.storage == u.storage:
                    continue
                for pos, (a, b) in enumerate(zip(t.symbols, u.symbols, strict=True)):
                    ra, rb = self.dims.find(a), self.dims.find(b)
                    if ra == rb or (ra in named and rb in named):
                        continue
                    if ra.startswith("(") or rb.startswith("("):
                        continue
                    if (id(t), ADDRESSED) not in keys or (id(u), ADDRESSED) not in keys:
                        continue  # a tensor the kernel never addresses ties nothing
                    ka, kb = keys.get((id(t), pos)), keys.get((id(u), pos))
                    if ka and kb and not ka & kb:
                        continue  # both axes indexed, by nothing in common
                    self.dims.union(a, b)
                    keep = self.dims.find(a)
                    if keep not in self.display:
                        name = self.display.get(ra) or self.display.get(rb)
                        if name:
                            self.display[keep] = name
                    named = {self.dims.find(s) for s in self.display}

    def _unify_bounded_axes(
        self, ev: HostEval, tensors: list[HostTensor], keys: dict[tuple[int, int], frozenset[str]]
    ) -> None:
        """An axis the launcher never names, walked by an index the kernel bounds by one size
        parameter (`offs_k < K` walking B's rows, `K` passed as A's named `K`), has that extent
        by the kernel's own code: the axis joins that dimension (flag-gems' `bmm`/`baddbmm`:
        `_, _, N = B.shape`, B's rows are A's `K`, not the `M` a positional join would give).
        Only for a tensor the launcher unpacks in part (`_` for the axes it skips)."""
        if self.site is None:
            return
        args = dict(self._call_pairs())
        named = {self.dims.find(s) for s in self.display}
        for t in tensors:
            if not any(self.dims.find(s) in named for s in t.symbols):
                continue  # a tensor never unpacked at all (L1) keeps its free sizes
            for pos, sym in enumerate(t.symbols):
                if self.dims.find(sym) in named or sym.startswith("("):
                    continue
                roots = set()
                for k in keys.get((id(t), pos), frozenset()):
                    arg = args.get(k[1:]) if k.startswith("<") else None
                    val = ev.env.get(arg.id) if isinstance(arg, ast.Name) else None
                    if isinstance(getattr(val, "sym", None), str):
                        roots.add(self.dims.find(val.sym))  # type: ignore[union-attr]
                if len(roots) == 1 and next(iter(roots)) in named:
                    root = next(iter(roots))
                    self.dims.union(root, sym)
                    self.display.setdefault(self.dims.find(root), self.display.get(root, root))
                    named = {self.dims.find(s) for s in self.display}

    def _axis_keys(self, ev: HostEval) -> dict[tuple[int, int], frozenset[str]]:
        """(id of a host tensor, axis) -> what indexes that axis in the kernel, through the
        launch's arguments: the tensor passed to pointer `K`, `k.stride(1)` passed as
        `stride_kh`, and the last axis for the kernel's unit-stride term when its stride is not
        passed (scan_axes.py)."""
        if self.site is None:
            return {}
        pairs = self._call_pairs()
        strides: dict[str, tuple[str, int]] = {}  # stride param -> (host name, axis)
        for param, arg in pairs:
            if (
                isinstance(arg, ast.Call)
                and isinstance(arg.func, ast.Attribute)
                and arg.func.attr == "stride"
                and isinstance(arg.func.value, ast.Name)
                and len(arg.args) == 1
                and isinstance(arg.args[0], ast.Constant | ast.UnaryOp)
            ):
                with contextlib.suppress(ValueError, TypeError):
                    strides[param] = (arg.func.value.id, int(ast.literal_eval(arg.args[0])))
        out: dict[tuple[int, int], frozenset[str]] = {}
        args = dict(pairs)
        for param, arg in pairs:
            axes = self.scan.axis_keys.get(param)
            t = ev.env.get(arg.id) if isinstance(arg, ast.Name) else None
            if not axes or not isinstance(t, HostTensor) or not t.shape:
                continue
            rank = len(t.shape)
            out[(id(t), ADDRESSED)] = frozenset()
            passed: set[int] = set()
            for stride, index_keys in axes.items():
                host = strides.get(stride)
                if stride == UNIT or host is None or host[0] != arg.id:
                    continue
                pos = host[1] % rank if -rank <= host[1] < rank else None
                if pos is not None:
                    passed.add(pos)
                    out[(id(t), pos)] = out.get((id(t), pos), frozenset()) | index_keys
            if UNIT in axes and rank - 1 not in passed:
                out[(id(t), rank - 1)] = out.get((id(t), rank - 1), frozenset()) | axes[UNIT]
            row = self._row_axis_keys(ev, t, axes, passed, args)
            if row:
                out[(id(t), rank - 2)] = out.get((id(t), rank - 2), frozenset()) | row
        return out

    def _row_axis_keys(
        self,
        ev: HostEval,
        t: HostTensor,
        axes: dict[str, frozenset[str]],
        passed: set[int],
        args: dict[str, ast.expr],
    ) -> frozenset[str]:
        """A contiguous tensor addressed as `B + offs_k[:, None] * N + offs_n[None, :]`, where the
        launcher passes as `N` the tensor's own last dimension: `offs_k` walks the axis before the
        last (row-major layout), as plainly as a passed `b.stride(-2)` would say. (flag-gems'
        `baddbmm`: B's middle axis is walked by `offs_k`, A's by `offs_m`; joined by position
        alone, B's rows were taken to be A's `M`.)"""
        rank = len(t.shape)
        if rank < 2 or rank - 2 in passed or UNIT not in axes:
            return frozenset()
        last = self.dims.find(t.symbols[-1])
        keys: frozenset[str] = frozenset()
        for param, index_keys in axes.items():
            arg = args.get(param)
            val = ev.env.get(arg.id) if isinstance(arg, ast.Name) else None
            sym = getattr(val, "sym", None)
            if param != UNIT and isinstance(sym, str) and self.dims.find(sym) == last:
                keys |= index_keys
        return keys

    def _unify_product_factors(self) -> None:
        """`topk_ids.numel()` passed as a count next to `torch.empty((T * top_k, N))`: two
        products that share every factor but one, where the other factor of one of them is a
        dimension the launcher never names, measure the same thing; the unnamed factor is T.
        Left apart, the count would be sized independently of the output it indexes."""
        products: list[list[str]] = []
        for sym in self.dims.derived:
            m = re.fullmatch(r"\(([^()]+)\)", sym)
            if m and "*" in m.group(1) and not re.search(r"[-+/%]", m.group(1)):
                products.append(m.group(1).split("*"))
        named = {self.dims.find(s) for s in self.display} | set(self.tiled) | set(self.bare)
        for i, p in enumerate(products):
            for q in products[i + 1 :]:
                if len(p) != len(q):
                    continue
                rp = [self.dims.find(x) for x in p]
                rq = [self.dims.find(x) for x in q]
                only_p = [x for x in rp if x not in rq]
                only_q = [x for x in rq if x not in rp]
                if (
                    len(only_p) != 1
                    or len(only_q) != 1
                    or sorted(set(rp) - {only_p[0]}) != sorted(set(rq) - {only_q[0]})
                ):
                    continue
                a, b = only_p[0], only_q[0]
                if (a in named) == (b in named) or a.startswith("(") or b.startswith("("):
                    continue
                anonymous, known = (a, b) if b in named else (b, a)
                if "." not in anonymous:
                    continue
                self.dims.union(known, anonymous)
                keep = self.dims.find(known)
                self.display.setdefault(keep, self.display.get(known) or self.display.get(anonymous, keep))
