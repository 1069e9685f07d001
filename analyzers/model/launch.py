"""Launch sites (`kernel[grid](...)` in the same file) and the probe launches made from them.

A probe launch is one concrete instance of the kernel: sizes for every dimension class, the
tensors with their strides, the constexprs (autotune config, heuristics, defaults) and the grid.
Sizes are adversarial around tile edges: ragged (2B+r), exact multiples (2B), half tiles (1.5B)
and 1; batch-like dimensions get small distinct primes, so `pid // H` with a grid of Z programs
cannot pass by accident.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import operator
import re
from dataclasses import dataclass, field
from typing import Any

from argus.analyzers.errors import CANNOT_EVALUATE, Unevaluable
from argus.analyzers.findings import Span
from argus.analyzers.interp.values import TensorInfo, norm_dtype
from argus.analyzers.model.elementwise import elementwise
from argus.analyzers.model.host import DimClasses, HostEval, HostTensor, Opaque, SymInt, contiguous_strides
from argus.analyzers.model.kernel import KernelModel, SourceMap
from argus.analyzers.model.nodes import subtree
from argus.analyzers.model.scan import KernelScan

PRIMES = [2, 3, 5, 7, 11, 13]
HEURISTIC_STAND_IN = 4  # a heuristic's value the binder cannot evaluate (as other opaque constexprs)
ROW_PAD = 3  # gap after each row (in elements) of padded probe layouts: overreads land in a gap


@dataclass
class LaunchSite:
    call: ast.Call
    host_func: ast.FunctionDef | None
    body: list[ast.stmt]
    smap: SourceMap

    @functools.cached_property
    def body_nodes(self) -> list[ast.AST]:
        """Every node of the launcher body, in `ast.walk` order (looked through repeatedly)."""
        return subtree(ast.Module(body=self.body, type_ignores=[]))

    @property
    def grid_node(self) -> ast.expr:
        sub = self.call.func
        assert isinstance(sub, ast.Subscript)
        return sub.slice


@dataclass
class ProbeLaunch:
    kind: str
    args: dict[str, Any]  # param -> TensorInfo | int | float | bool
    runtime: set[str]  # params that are runtime (not constexpr) values
    grid: tuple[int, int, int]
    grid_axes: int
    sizes: dict[str, int]  # display name -> value
    config: dict[str, Any] | None
    site: LaunchSite | None
    assumed: bool
    grid_span: Span | None = None
    notes: list[str] = field(default_factory=list)
    sampled: bool = False  # run only edge programs (further autotune configs)
    bare_axes: frozenset[int] = frozenset()  # grid axes that count batch or head indices only

    def describe_sizes(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.sizes.items())


def find_launch_calls(tree: ast.AST, kernel: str) -> list[ast.Call]:
    out = []
    for n in subtree(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
            v = n.func.value
            name = v.id if isinstance(v, ast.Name) else (v.attr if isinstance(v, ast.Attribute) else None)
            if name == kernel:
                out.append(n)
    return out


def _stride_users(site: LaunchSite) -> set[str]:
    """Host names whose `.stride(...)` the launch passes (their layout is communicated)."""
    out = set()
    for n in subtree(site.host_func) if site.host_func else site.body_nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "stride":
            if isinstance(n.func.value, ast.Name):
                out.add(n.func.value.id)
    return out


def _shape_read_names(func: ast.FunctionDef) -> set[str]:
    """Host names whose `.shape`, `.size()`, `.dim()`/`.ndim` or `.numel()` the launcher reads."""
    out: set[str] = set()
    for n in subtree(func):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            if n.attr in ("shape", "size", "dim", "ndim", "numel"):
                out.add(n.value.id)
    return out


def _tensor_param_ranks(func: ast.FunctionDef) -> dict[str, int]:
    """Host parameters used as tensors, with the rank their use implies."""
    names = {a.arg for a in func.args.args + func.args.kwonlyargs}
    ranks: dict[str, int] = {}
    same: list[tuple[str, str]] = []
    for n in subtree(func):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
            base = n.value.value
            if isinstance(base, ast.Name) and base.id in names and isinstance(n.targets[0], ast.Tuple):
                ranks[base.id] = max(ranks.get(base.id, 0), len(n.targets[0].elts))
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
            base = n.value.value
            if (
                isinstance(base, ast.Name)
                and base.id in names
                and isinstance(n.slice, ast.Constant)
                and isinstance(n.slice.value, int)
            ):
                i = n.slice.value
                ranks[base.id] = max(ranks.get(base.id, 1), i + 1 if i >= 0 else -i)
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("stride", "size")
        ):
            base = n.func.value
            if (
                isinstance(base, ast.Name)
                and base.id in names
                and n.args
                and isinstance(n.args[0], ast.Constant)
                and isinstance(n.args[0].value, int)
            ):
                i = n.args[0].value
                ranks[base.id] = max(ranks.get(base.id, 1), i + 1 if i >= 0 else -i)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in names:
            if n.attr in (
                "shape",
                "stride",
                "numel",
                "dtype",
                "device",
                "is_contiguous",
                "T",
                "t",
                "size",
                "contiguous",
                "view",
                "reshape",
                "transpose",
                "permute",
                "element_size",
            ):
                ranks.setdefault(n.value.id, 1)
        if isinstance(n, ast.Compare) and all(isinstance(o, ast.Eq) for o in n.ops):
            # `x.shape == (a, b, c)` fixes the rank; chained comparisons pair up neighbours
            operands = [n.left, *n.comparators]
            for lhs_, rhs_ in zip(operands, operands[1:], strict=False):
                for sh, lit in ((lhs_, rhs_), (rhs_, lhs_)):
                    if (
                        isinstance(sh, ast.Attribute)
                        and sh.attr == "shape"
                        and isinstance(sh.value, ast.Name)
                        and sh.value.id in names
                        and isinstance(lit, ast.Tuple)
                    ):
                        ranks[sh.value.id] = max(ranks.get(sh.value.id, 0), len(lit.elts))
                if (
                    isinstance(lhs_, ast.Attribute)
                    and lhs_.attr == "shape"
                    and isinstance(rhs_, ast.Attribute)
                    and rhs_.attr == "shape"
                    and isinstance(lhs_.value, ast.Name)
                    and isinstance(rhs_.value, ast.Name)
                ):
                    same.append((lhs_.value.id, rhs_.value.id))
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq):
            lhs, rhs = n.left, n.comparators[0]
            if (
                isinstance(lhs, ast.Attribute)
                and lhs.attr == "shape"
                and isinstance(rhs, ast.Attribute)
                and rhs.attr == "shape"
                and isinstance(lhs.value, ast.Name)
                and isinstance(rhs.value, ast.Name)
            ):
                same.append((lhs.value.id, rhs.value.id))
    for _ in range(3):
        for a, b in same:
            r = max(ranks.get(a, 0), ranks.get(b, 0))
            if r:
                ranks[a] = ranks[b] = r
    return ranks


class LaunchBinder:
    """Builds probe launches for one kernel from its launch site (or assumptions without one)."""

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
        self.block_driving: set[str] = set()
        self.assumed_values: dict[str, tuple[str, int]] = {}  # param -> (what it was, stand-in)
        self._ranks: dict[str, int] | None = None
        self.partitioned: dict[str, int] = {}  # rows split by a prefix-sum table -> rows to give them
        self.prefix_lengths: set[str] = set()  # lengths of prefix-sum tables (groups + 1)
        self._contains_memo: dict[tuple[int, int], bool] = {}

    # ---- host parameter binding ------------------------------------------------------------
    def _bind_params(self, ev: HostEval) -> None:
        assert self.site is not None
        func = self.site.host_func
        if func is None:
            return
        if self._ranks is None:
            self._ranks = _tensor_param_ranks(func)
            shape_read = _shape_read_names(func)
            # a tensor whose shape the launcher never reads, only strides: the kernel's
            # addresses tell its rank (k.stride(0), k.stride(1) passed, `+ offs_d` unit stride)
            for name, rank in self._address_rank_hints().items():
                if name in self._ranks and name not in shape_read and rank > self._ranks[name]:
                    self._ranks[name] = rank
        ranks = self._ranks
        kernel_ptr_args = self._pointer_arg_names()
        args = func.args.posonlyargs + func.args.args
        defaults = [None] * (len(args) - len(func.args.defaults)) + list(func.args.defaults)
        pairs = list(zip(args, defaults, strict=True)) + list(
            zip(func.args.kwonlyargs, func.args.kw_defaults, strict=True)
        )
        for a, d in pairs:
            name = a.arg
            if name in ("self", "ctx"):
                ev.env[name] = Opaque(name)
                continue
            is_tensor = name in ranks or name in kernel_ptr_args
            if d is not None:
                ev.env[name] = ev.expr(d)
                continue
            if is_tensor:
                rank = ranks.get(name, 1)
                shape = [ev.dim(f"{name}.{i}") for i in range(rank)]
                t = ev.new_tensor(shape, "fp16", name, False)
                t.sized = name in ranks
                if self.sizes_known() and name in self.padded_layout:
                    t.strides = padded_strides(t.shape)
                ev.env[name] = t
            elif d is None:
                ev.env[name] = ev.dim(name)

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
        pairs = [(params[i], a) for i, a in enumerate(self.site.call.args) if i < len(params)]
        return pairs + [(k.arg, k.value) for k in self.site.call.keywords if k.arg]

    def _address_rank_hints(self) -> dict[str, int]:
        """Host tensors passed straight to a pointer parameter (`k` for `K`), with the rank the
        kernel's addresses imply (strides it multiplies by, plus a unit-stride term)."""
        return {
            a.id: self.scan.address_ranks[p]
            for p, a in self._call_pairs()
            if isinstance(a, ast.Name) and p in self.scan.address_ranks
        }

    def _run_host(self, sizes: dict[str, int] | None) -> HostEval:
        assert self.site is not None
        ev = HostEval(self.dims, sizes, recording=sizes is None, contains_memo=self._contains_memo)
        self._bind_params(ev)
        ev.run_block(self.site.body, self.site.call)
        # remember readable names of dimension classes (`M, K = a.shape` -> "M", "K")
        for k, v in ev.env.items():
            if k.startswith("_"):
                continue
            if isinstance(v, SymInt) and not v.sym.startswith("("):
                root = self.dims.find(v.sym)
                cur = self.display.get(root)
                if cur is None or (len(k) < len(cur) and not k.startswith("_")):
                    self.display[root] = k
        return ev

    def _kernel_args(self, ev: HostEval) -> dict[str, Any]:
        assert self.site is not None
        params = [p.name for p in self.kernel.params]
        out: dict[str, Any] = {}
        for i, a in enumerate(self.site.call.args):
            if isinstance(a, ast.Starred):
                raise Unevaluable("a *args launch")
            if i < len(params):
                out[params[i]] = ev.expr(a)
        for k in self.site.call.keywords:
            if k.arg is None:
                raise Unevaluable("a **kwargs launch")
            out[k.arg] = ev.expr(k.value)
        return out

    def record(self) -> None:
        """First pass: learn dimension classes, tiling and layouts from placeholder sizes."""
        if self.site is None:
            self.recorded = True
            return
        ev = self._run_host(None)
        self._unify_suffixed_names()
        self._unify_anonymous(ev)
        self.padded_layout = _stride_users(self.site)
        kargs = self._kernel_args(ev)
        self._unify_product_factors()  # after the call's arguments: `t.numel()` is often one
        first_config = (
            self.kernel.autotune.configs[0] if self.kernel.autotune and self.kernel.autotune.configs else None
        )
        constexpr_env = self._constexpr_env(kargs, first_config)
        # sizes passed as constexprs (HEAD_DIM=D) size aranges: keep them powers of two
        for p in self.kernel.params:
            v = kargs.get(p.name)
            if p.constexpr and isinstance(v, SymInt) and not v.sym.startswith("("):
                root = self.dims.find(v.sym)
                # a tile extent (tl.arange) needs >= 16 for tl.dot; a count (heads, top_k) stays small
                self.dims.allowed.setdefault(root, [16, 32] if p.name in self.scan.arange_params else [2, 4])
        # tiling from the grid: cdiv(X, B) tiles X's class by B; bare names are batch-like
        self._grid_roles(ev, self.site.grid_node, constexpr_env)
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
        for p in self.scan.tiled:
            v = kargs.get(p)
            if isinstance(v, SymInt):
                for root in self._roots_of(v.sym):
                    if root not in self.bare:  # a batch-like grid axis stays small
                        self.tiled.setdefault(root, bmax)
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

    def _size_driven_blocks(self, base_args: dict[str, Any]) -> set[str]:
        """Tiled dimensions from which the launcher computes a constexpr (`BLOCK_V =
        min(1024, next_power_of_2(V))`): at small sizes one tile covers them and a loop over
        them never iterates twice, so a `big` probe makes them exceed the cap."""
        consts = {p.name for p in self.kernel.params if p.constexpr}
        base = {k: v for k, v in base_args.items() if k in consts and isinstance(v, int)}
        out: set[str] = set()
        if not base or not self.tiled:
            return out
        # one run with every tiled dimension large first: usually no constexpr moves at all
        with contextlib.suppress(*CANNOT_EVALUATE):
            args = self._kernel_args(self._run_host(dict.fromkeys(self.tiled, 5000)))
            if all(args.get(k) == v for k, v in base.items()):
                return out
        for root in list(self.tiled):
            try:
                ev = self._run_host({root: 5000})
                args = self._kernel_args(ev)
            except CANNOT_EVALUATE:
                continue
            # only a capped block (at most half the dimension) makes the loop iterate twice
            if any(
                isinstance(args.get(k), int)
                and args.get(k) != v
                and 0 < args[k] <= 2500
                and args[k] & (args[k] - 1) == 0
                for k, v in base.items()
            ):
                out.add(root)
        return out

    def size_driven_constexprs(self) -> set[str] | None:
        """Constexpr arguments whose launcher values change with the problem sizes
        (`BLOCK_D=next_power_of_2(D)`, `EVEN_K=K % 32 == 0`); None when there is no launch to
        ask."""
        if self.site is None:
            return None
        try:
            a = self._kernel_args(self._run_host(self.choose_sizes("ragged")))
            b = self._kernel_args(self._run_host(self.choose_sizes("exact")))
        except CANNOT_EVALUATE:
            return None
        consts = {p.name for p in self.kernel.params if p.constexpr}
        return {k for k in consts if a.get(k) != b.get(k)}

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
        """Dimensions the launcher never names (`_, S, H, _ = k.shape`, or never read) are taken
        to match the same position of another parameter tensor of the same rank: q, k and v share
        batch and head dims. Unifying what differs only makes probes less varied; leaving apart
        what matches would invent out-of-bounds reads, so doubt goes this way."""
        tensors = [v for v in ev.env.values() if isinstance(v, HostTensor) and not v.created]
        named = {self.dims.find(s) for s in self.display}
        for i, t in enumerate(tensors):
            for u in tensors[i + 1 :]:
                if len(t.shape) != len(u.shape) or len(t.shape) < 3 or t.storage == u.storage:
                    continue
                for a, b in zip(t.symbols, u.symbols, strict=True):
                    ra, rb = self.dims.find(a), self.dims.find(b)
                    if ra == rb or (ra in named and rb in named):
                        continue
                    if ra.startswith("(") or rb.startswith("("):
                        continue
                    self.dims.union(a, b)
                    keep = self.dims.find(a)
                    if keep not in self.display:
                        name = self.display.get(ra) or self.display.get(rb)
                        if name:
                            self.display[keep] = name
                    named = {self.dims.find(s) for s in self.display}

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

    def _grid_roles(self, ev: HostEval, grid: ast.expr, meta: dict[str, Any]) -> None:
        expr = grid
        if isinstance(grid, ast.Name) and isinstance(ev.env.get(grid.id), tuple):
            val = ev.env[grid.id]
            if val and val[0] == "lambda":
                expr = val[1].body
            elif val and val[0] == "func":
                expr = next(
                    (s.value for s in ast.walk(val[1]) if isinstance(s, ast.Return) and s.value is not None),
                    grid,
                )
        elif isinstance(grid, ast.Lambda):
            expr = grid.body
        if isinstance(grid, ast.Name) and self.site is not None:
            for st in self.site.body_nodes:
                if isinstance(st, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == grid.id for t in st.targets
                ):
                    if st.lineno <= self.site.call.lineno:
                        expr = st.value.body if isinstance(st.value, ast.Lambda) else st.value
        sub = HostEval(self.dims, None, recording=True)
        sub.env = dict(ev.env)
        for n in (
            ast.walk(grid) if not isinstance(grid, ast.Name) else self.site.body_nodes if self.site else []
        ):
            if isinstance(n, ast.Lambda | ast.FunctionDef):
                for a in n.args.args:
                    sub.env[a.arg] = dict(meta)
        if isinstance(expr, ast.Name):
            return
        # find a grid assignment made earlier in the host body when the launch names a variable
        cdiv_first: set[int] = set()
        for n in ast.walk(expr):
            pair = None
            if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("cdiv") and len(n.args) == 2:
                pair = (n.args[0], n.args[1])
            elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv):
                pair = (n.left, n.right)  # `M // BLOCK_M` tiles M too (and drops its tail)
            if pair is not None:
                x = sub.expr(pair[0])
                b = sub.expr(pair[1])
                for m in ast.walk(pair[0]):
                    cdiv_first.add(id(m))
                if isinstance(x, SymInt) and isinstance(b, int):
                    # `cdiv(C * H * W, BLOCK)`: one factor carries the ragged tail, the others
                    # stay small (all of them ragged would make the tensor cubic in the block)
                    roots = sorted(self._roots_of(x.sym))
                    if roots:
                        self.tiled[roots[0]] = int(b)
                        self.bare |= set(roots[1:])
        for n in ast.walk(expr):
            if isinstance(n, ast.Name) and id(n) not in cdiv_first:
                v = sub.env.get(n.id)
                if isinstance(v, SymInt) and "//" not in v.sym:
                    self.bare |= self._roots_of(v.sym)
                # `num_tiles = cdiv(M, BM) * cdiv(N, BN)` computed earlier: tiled, not batch-like
        # an axis that counts only batch/head indices (`Z * H`, `B`): its programs see the same
        # tile geometry, so edge programs stand for the others
        if isinstance(expr, ast.Tuple):
            for i, el in enumerate(expr.elts):
                names = [n for n in ast.walk(el) if isinstance(n, ast.Name)]
                calls = [n for n in ast.walk(el) if isinstance(n, ast.Call)]
                if names and not calls and all(isinstance(sub.env.get(n.id), SymInt) for n in names):
                    self.bare_axes.add(i)

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

    # ---- probes ------------------------------------------------------------------------------
    def choose_sizes(self, kind: str) -> dict[str, int]:
        roots = sorted({self.dims.find(s) for s in self.dims.parent if not s.startswith("(")})
        sizes: dict[str, int] = {}
        prime_i = 0
        tiled_i = 0
        anonymous = [r for r in roots if self._anonymous(r)]
        for r in roots:
            if r in anonymous:
                continue
            if r in self.dims.allowed:
                vals = self.dims.allowed[r]
                sizes[r] = vals[0] if kind != "exact" else vals[-1] if vals[-1] <= 128 else vals[0]
                continue
            mult = self.dims.multiple_of.get(r, 1)
            if r in self.prefix_lengths:
                v = 2 if kind == "one" else 5
            elif r in self.partitioned:
                rows = self.partitioned[r]
                v = {"ragged": rows + 1, "exact": rows, "half": rows + rows // 4, "one": 1, "big": rows + 1}[
                    kind
                ]
            elif r in self.tiled:
                b = max(self.tiled[r], 1)
                if kind == "big":
                    v = 4097 + 2 * tiled_i if r in self.block_driving else b + 1 + 2 * tiled_i
                else:
                    v = {"ragged": b + 1 + 2 * tiled_i, "exact": 2 * b, "half": b + max(b // 2, 1), "one": 1}[
                        kind
                    ]
                tiled_i += 1
            else:
                v = 1 if kind == "one" else PRIMES[prime_i % len(PRIMES)]
                prime_i += 1
            if mult > 1:
                v = max(mult, ((v + mult - 1) // mult) * mult)
            sizes[r] = v
        # a dimension nothing names or relates (`weight` of a norm, `cos` of rotary): as large as
        # any other size, so the kernel's own bounds decide, not our guess of its extent
        self._apply_divisibility(sizes, kind)
        self._size_derived_roots(sizes)
        big = max([v for v in sizes.values()] + [2])
        for r in anonymous:
            sizes[r] = big  # (in the size-1 probe too: a guess of 1 would invent overreads)
        return sizes

    def _size_derived_roots(self, sizes: dict[str, int]) -> None:
        """A class whose representative is an expression (`assert offsets.numel() == E + 1`
        makes the offsets' length the class `(E+1)`) takes the expression's value, not a size
        of its own."""
        for r in list(sizes):
            if not r.startswith("("):
                continue

            def size_of(m: re.Match[str], derived: str = r) -> str:
                root = self.dims.find(m.group(0))
                if root == derived or root not in sizes:
                    raise KeyError(m.group(0))
                return str(sizes[root])

            try:
                text = re.sub(r"[A-Za-z_][\w.]*", size_of, r)
                value = _int_expr(ast.parse(text, mode="eval").body)
            except (KeyError, SyntaxError, ValueError, ZeroDivisionError):
                continue
            if value > 0:
                sizes[r] = value

    def _apply_divisibility(self, sizes: dict[str, int], kind: str) -> None:
        """`assert H % H_KV == 0`: H is a whole number of groups of H_KV. Probes take groups
        larger than the divisor (H_KV = 2, H = 8), a real configuration (many query heads on few
        KV heads) in which mixing up the group size and the group count leaves the tensor."""
        for a, b in self.dims.divisible_by.items():
            ra, rb = self.dims.find(a), self.dims.find(b)
            if ra == rb or ra not in sizes or rb not in sizes:
                continue
            group = 1 if kind == "one" else 2 * sizes[rb]
            sizes[ra] = sizes[rb] * group

    def _anonymous(self, root: str) -> bool:
        if root in self.display or root in self.tiled or root in self.bare or root in self.dims.allowed:
            return False
        return "." in root and not root.startswith("(")

    def probe(self, kind: str, config: dict[str, Any] | None) -> ProbeLaunch:
        if self.site is None:
            return self._assumed_probe(kind, config)
        sizes = self.choose_sizes(kind)
        ev = self._run_host(sizes)
        kargs = self._kernel_args(ev)
        args, runtime, tensors = self._to_kernel_values(kargs, config)
        grid, axes = self._grid(ev, args)
        shown = {}
        for root, v in sizes.items():
            if (root.startswith("_") or "." in root) and root not in self.display:
                continue
            shown[self.display.get(root, root)] = v
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
        )

    def _to_kernel_values(
        self, kargs: dict[str, Any], config: dict[str, Any] | None
    ) -> tuple[dict[str, Any], set[str], list[TensorInfo]]:
        args: dict[str, Any] = {}
        runtime: set[str] = set()
        tensors: list[TensorInfo] = []
        storage_index: dict[int, TensorInfo] = {}
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
            if isinstance(v, Opaque) and p.name in self.scan.pointers:
                raise Unevaluable(f"the tensor passed as `{p.name}` ({v.what})")
            if isinstance(v, Opaque) and p.name not in self.kernel.heuristics:
                # a device property or a call's result (`num_sms(device)`): a small stand-in value
                self.assumed_values[p.name] = (v.what, 4 if p.constexpr else 3)
                v = 4 if p.constexpr else 3
            if isinstance(v, HostTensor):
                ti = TensorInfo(
                    len(tensors),
                    p.name,
                    tuple(v.shape),
                    tuple(v.strides),
                    tuple(self.symbol_name(s) for s in v.symbols),
                    norm_dtype(v.dtype) if v.dtype_known else "fp16?",
                    created=v.created,
                    sized=v.sized,
                    grid_tiled=bool(v.symbols)
                    and all(
                        self._roots_of(s) and self._roots_of(s) <= set(self.grid_tiled_roots)
                        for s in v.symbols
                    ),
                )
                storage_index[v.storage] = ti
                tensors.append(ti)
                args[p.name] = ti
            elif isinstance(v, tuple) and v and v[0] == "desc":
                # a host-side TensorDescriptor: the tensor it covers and its block shape
                t = v[1]
                block = v[2]
                if not isinstance(block, list) or not all(isinstance(b, int) for b in block):
                    raise Unevaluable(f"the block shape of the tensor descriptor `{p.name}`")
                ti = TensorInfo(
                    len(tensors),
                    p.name,
                    tuple(t.shape),
                    tuple(t.strides),
                    tuple(self.symbol_name(s) for s in t.symbols),
                    norm_dtype(t.dtype) if t.dtype_known else "fp16?",
                    created=t.created,
                    sized=t.sized,
                )
                tensors.append(ti)
                args[p.name] = ("desc", ti, tuple(int(b) for b in block))
            elif isinstance(v, tuple) and v and v[0] == "dtype":
                args[p.name] = v
            else:
                args[p.name] = int(v) if isinstance(v, SymInt) else v
                if not p.constexpr:
                    runtime.add(p.name)
        if config:
            for k, v in config.items():
                if k not in args and self.kernel.param(k) is not None:
                    args[k] = v
        self._apply_heuristics(args)
        return args, runtime, tensors

    def _apply_heuristics(self, args: dict[str, Any]) -> None:
        """Values of `@triton.heuristics`. One the binder cannot evaluate (a named function, a
        lambda on dtypes) is unknown, like any opaque launcher value: the probes use a stand-in
        and the AR001 note names it, instead of the whole kernel going unchecked."""
        for name, fn in self.kernel.heuristics.items():
            ev = HostEval(self.dims, {}, recording=False)
            view = {
                k: (v if isinstance(v, int | float | bool) or v is None else Opaque(k))
                for k, v in args.items()
            }
            if isinstance(fn, ast.Lambda) and fn.args.args:
                ev.env[fn.args.args[0].arg] = view
                try:
                    val = ev.expr(fn.body)
                except CANNOT_EVALUATE:
                    val = Opaque("heuristic")
            else:
                val = Opaque("heuristic")
            if isinstance(val, Opaque):
                self.assumed_values[name] = ("a heuristic the checker cannot evaluate", HEURISTIC_STAND_IN)
                val = HEURISTIC_STAND_IN
            args[name] = val

    def _grid(self, ev: HostEval, args: dict[str, Any]) -> tuple[tuple[int, int, int], int]:
        assert self.site is not None
        g = self.site.grid_node
        meta = {k: v for k, v in args.items() if isinstance(v, int | float | bool)}
        val = ev.expr(g)
        if isinstance(val, tuple) and val and val[0] == "lambda":
            lam = val[1]
            sub = HostEval(self.dims, {}, recording=False)
            sub.env = dict(val[2])
            if lam.args.args:
                sub.env[lam.args.args[0].arg] = meta
            val = sub.expr(lam.body)
        elif isinstance(val, tuple) and val and val[0] == "func":
            fn = val[1]
            sub = HostEval(self.dims, {}, recording=False)
            sub.env = dict(ev.env)
            if fn.args.args:
                sub.env[fn.args.args[0].arg] = meta
            ret = None
            for st in fn.body:
                if isinstance(st, ast.Return) and st.value is not None:
                    ret = sub.expr(st.value)
                    break
                sub.stmt(st)
            val = ret
        if isinstance(val, int) and not isinstance(val, bool):
            val = (val,)
        if isinstance(val, list):
            val = tuple(val)
        if (
            not isinstance(val, tuple)
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in val)
            or not 1 <= len(val) <= 3
        ):
            raise Unevaluable(f"the grid `{ast.unparse(g)}`")
        dims = tuple(int(x) for x in val) + (1,) * (3 - len(val))
        return (dims[0], dims[1], dims[2]), len(val)

    def _assumed_probe(self, kind: str, config: dict[str, Any] | None) -> ProbeLaunch:
        """No launch in the file. Tensors are contiguous; when the kernel bounds its offsets by a
        single size (an elementwise kernel: `offsets < n_elements`), every tensor holds that many
        elements and the grid covers it with the widest tile; otherwise extents are unknown and
        bounds are not judged. Races and coverage are never judged without a launch."""
        args: dict[str, Any] = {}
        runtime: set[str] = set()
        consts = self._constexpr_env({}, config)
        bmax = max(
            [v for v in consts.values() if isinstance(v, int) and not isinstance(v, bool) and 2 <= v <= 1024]
            or [16]
        )
        tiled = [p.name for p in self.kernel.params if p.name in self.scan.tiled and not p.constexpr]
        sizes: dict[str, int] = {}
        i = 0
        for p in self.kernel.params:
            if p.name in self.scan.pointers or p.constexpr or p.name in consts:
                continue
            if p.name in self.scan.tiled:
                v = {"ragged": 2 * bmax + 1, "exact": 2 * bmax, "half": bmax + bmax // 2, "one": 1}[kind]
            elif p.name.startswith("stride"):
                v = 1 if p.name.endswith(("n", "k", "d", "1", "col", "cols")) else 64 * (i + 1)
            else:
                v = PRIMES[i % len(PRIMES)]
            i += 1
            args[p.name] = v
            runtime.add(p.name)
            sizes[p.name] = v
        strided = any("stride" in p.name for p in self.kernel.params)
        single = len(tiled) == 1 and not strided and elementwise(self.kernel, self.scan, tiled[0], consts)
        n_t = 0
        for p in self.kernel.params:
            if p.name in self.scan.pointers:
                if single:
                    n = int(args[tiled[0]])
                    args[p.name] = TensorInfo(n_t, p.name, (n,), (1,), (tiled[0],), "fp16?", sized=True)
                else:
                    args[p.name] = TensorInfo(
                        n_t, p.name, (1 << 16,), (1,), (f"{p.name}.0",), "fp16?", sized=False
                    )
                n_t += 1
            elif p.constexpr or p.name in consts:
                if p.name in consts:
                    args[p.name] = consts[p.name]
                elif p.constexpr and p.name not in self.kernel.heuristics:
                    args[p.name] = 16  # an unbound tile size: a small power of two
        self._apply_heuristics(args)
        if single:
            n = int(args[tiled[0]])
            grid, note = (
                (max(1, -(-n // bmax)), 1, 1),
                f"no launch site in this file: tensors of {tiled[0]} elements and a grid of cdiv({tiled[0]}, {bmax}) programs assumed",
            )
        else:
            grid, note = (
                (2, 2, 2),
                "no launch site in this file: tensors assumed contiguous and the grid assumed to cover the sizes",
            )
        return ProbeLaunch(
            kind, args, runtime, grid, 3 if not single else 1, sizes, config, None, True, notes=[note]
        )


def _int_expr(e: ast.expr) -> int:
    """Value of an integer expression of literals and + - * // % (a derived dimension)."""
    if isinstance(e, ast.Constant) and isinstance(e.value, int):
        return e.value
    if isinstance(e, ast.BinOp) and type(e.op) in _INT_OPS:
        return _INT_OPS[type(e.op)](_int_expr(e.left), _int_expr(e.right))
    raise ValueError(ast.dump(e))


_INT_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def padded_strides(shape: list[int]) -> list[int]:
    """Row-major strides with ROW_PAD elements of gap after each row of every inner dimension."""
    strides, acc = [], 1
    for i, s in enumerate(reversed(shape)):
        strides.append(acc)
        acc *= max(int(s), 1) + (ROW_PAD if i == 0 and len(shape) > 1 else 0)
    return list(reversed(strides))


__all__ = [
    "LaunchBinder",
    "LaunchSite",
    "ProbeLaunch",
    "contiguous_strides",
    "find_launch_calls",
]
