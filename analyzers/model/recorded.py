"""Launch sites made from recorded launches (`argus record`), for kernels whose own launcher is
missing, in another module, or not understood.

A recording gives concrete facts of real calls. They become host code that the launch binder
evaluates like any launcher, so the probes still vary sizes around the tiles (ragged tails, one
tile, many tiles) instead of repeating the one size the run used:
- axes of the kernel's tensors whose sizes are equal in every recorded call form one dimension
  class (`n_rows, n_cols = x_ptr.shape`, and an `assert` for each repetition);
- a scalar argument equal to a class in every call is that class; one equal to a tensor's
  stride is that stride (`x_ptr.stride(0)`, which the binder pads so an overread lands in a
  gap), one equal to a tensor's element count is its `numel()`; other values stay literal;
- a constexpr that is the next power of two of a class the kernel masks against is derived from
  it (`triton.next_power_of_2(n_cols)`); other constexprs (tile sizes) stay literal;
- each grid axis is written as the launcher evidently computed it (`triton.cdiv(n, BLOCK)`
  with a literal tile, a class, a product of two classes, 1), checked against every call; a
  grid that no such formula explains makes the recording unusable for that kernel (said so).
Tensors keep their dtype and their layout when it is a permutation of a contiguous one.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, replace
from typing import Any

from argus.analyzers.errors import Unevaluable
from argus.analyzers.findings import Finding, Span
from argus.analyzers.frontend.parse import first_error, parse, span_of
from argus.analyzers.frontend.queries import (
    KernelSite,
    alias_assignments,
    called_names,
    find_kernels,
    launch_calls,
)
from argus.analyzers.interp.facts import Fact, Unmodelled
from argus.analyzers.interp.values import TensorInfo
from argus.analyzers.model.kernel import (
    KernelModel,
    SourceMap,
    build_kernel_model,
    line_starts,
    parse_snippet,
)
from argus.analyzers.model.launch import LaunchBinder, LaunchSite, find_launch_calls
from argus.analyzers.model.launch_file import RecordedArg, RecordedLaunch
from argus.analyzers.model.scan import KernelScan, scan_kernel

TORCH_DTYPES = {
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float64": "float64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "bool": "bool",
}
TRITON_DTYPE_NAMES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}
AXIS_LETTERS = "abcdefgh"


class RecordingUnusable(ValueError):
    """The recording does not determine a launch the binder can vary (the reason is shown)."""


class RecordedSourceMap(SourceMap):
    """Positions inside generated host code all map to the kernel's name: a finding about the
    grid of a recorded launch points at the kernel it launched."""

    def __init__(self, base: SourceMap, anchor: Span) -> None:
        super().__init__(base.source, base.line_starts, base.row0, base.indent)
        self.anchor = anchor

    def offset(self, lineno: int, col: int) -> int:
        return self.anchor.start_byte

    def span(self, node: ast.AST) -> Span:
        return self.anchor


@dataclass
class RecordedSite:
    site: LaunchSite
    note: str  # "bound from a recorded launch (...)", for the witness
    host_source: str  # the generated launcher (tests/record/drivers/bound_report.py --show)


def bind_recorded(
    kernel: KernelModel,
    scan: KernelScan,
    recorded: list[RecordedLaunch],
    smap: SourceMap,
    site: KernelSite,
    fallback: LaunchBinder,
    notes: list[Fact],
    func: ast.FunctionDef,
) -> tuple[LaunchBinder, str | None, list[Fact]]:
    """A binder over the recorded launches, with the note findings carry; or `fallback` (no
    launch) with a note saying why the recording could not be used."""
    anchor = span_of(site.function.child_by_field_name("name") or site.function)
    try:
        rs = recorded_site(kernel, scan, recorded, smap, anchor)
        binder = LaunchBinder(kernel, scan, rs.site)
        binder.record()
    except (
        RecordingUnusable,
        Unevaluable,
        SyntaxError,
        ArithmeticError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        ValueError,
    ) as e:
        notes.append(Fact("unmodelled", func, smap, {"what": f"the recorded launch ({e})"}))
        return fallback, None, notes
    # the file's own launcher, if it failed, no longer limits what is judged
    kept = [n for n in notes if not (isinstance(n, Unmodelled) and n.what.startswith("the launch"))]
    return binder, rs.note, kept


def mark_recorded(findings: list[Finding], note: str) -> list[Finding]:
    """Findings bound from a recording say so in their witness."""
    return [f if f.witness is None else replace(f, witness={**f.witness, "recorded": note}) for f in findings]


def recorded_site(
    kernel: KernelModel, scan: KernelScan, launches: list[RecordedLaunch], smap: SourceMap, anchor: Span
) -> RecordedSite:
    """A launch site for `kernel` from its recorded calls (the first is the template; relations
    must hold in all of them). Raises RecordingUnusable."""
    usable = [lr for lr in launches if lr.grid is not None]
    if not usable:
        raise RecordingUnusable("the recorded grid could not be evaluated")
    template = usable[0]
    same = [lr for lr in usable if _compatible(template, lr)]
    try:
        text = _HostWriter(kernel, scan, same).write()
    except RecordingUnusable:
        if len(same) == 1:
            raise
        same = [template]  # the calls disagree on a formula: the first call's own relations
        text = _HostWriter(kernel, scan, same).write()
    module = ast.parse(text)
    func = module.body[0]
    assert isinstance(func, ast.FunctionDef)
    calls = find_launch_calls(module, kernel.name)
    site = LaunchSite(calls[0], func, func.body, RecordedSourceMap(smap, anchor))
    total = sum(lr.calls for lr in same)
    where = f" at {template.origin}" if template.origin else ""
    note = (
        f"bound from {len(same)} recorded launch signature{'s' if len(same) > 1 else ''} "
        f"({total} call{'s' if total > 1 else ''}, first{where}); probes vary the sizes around them"
    )
    return RecordedSite(site, note, text)


def _compatible(a: RecordedLaunch, b: RecordedLaunch) -> bool:
    """Same arguments with the same kinds and tensor ranks (relations are compared across them)."""
    if [x.name for x in a.args] != [y.name for y in b.args]:
        return False
    return all(x.kind == y.kind and len(x.shape) == len(y.shape) for x, y in zip(a.args, b.args, strict=True))


class _HostWriter:
    """Writes the host function whose evaluation gives the recorded relations."""

    def __init__(self, kernel: KernelModel, scan: KernelScan, launches: list[RecordedLaunch]) -> None:
        self.kernel = kernel
        self.scan = scan
        self.launches = launches
        self.template = launches[0]
        self.params = {p.name: p for p in kernel.params}
        self.tensors = [a for a in self.template.args if a.is_tensor and a.name in self.params]
        self.classes: dict[tuple[int, ...], str] = {}  # sizes over all calls -> class name
        self._bound: set[str] = set()  # classes already unpacked from a shape
        self._asserts: list[str] = []

    # ---- values of one argument over every recorded call ----------------------------------
    def values(self, name: str) -> tuple[Any, ...]:
        return tuple(_arg(lr, name).value for lr in self.launches)

    def sizes(self, name: str, axis: int) -> tuple[int, ...]:
        return tuple(_arg(lr, name).shape[axis] for lr in self.launches)

    def strides(self, name: str, axis: int) -> tuple[int, ...]:
        return tuple(_arg(lr, name).strides[axis] for lr in self.launches)

    def numels(self, name: str) -> tuple[int, ...]:
        return tuple(math.prod(_arg(lr, name).shape) for lr in self.launches)

    # ---- the host function -----------------------------------------------------------------
    def write(self) -> str:
        scalars = [
            a
            for a in self.template.args
            if a.kind == "int" and not self._constexpr(a) and a.name in self.params
        ]
        for a in self.template.args:
            if a.name in self.scan.pointers and not a.is_tensor and a.kind != "none":
                raise RecordingUnusable(f"`{a.name}` was recorded as {a.kind}, not a tensor")
        self._name_classes(scalars)
        body: list[str] = []
        aliases = self._aliases()
        for t in self.tensors:
            if t.name in aliases:
                body.append(f"{t.name} = {aliases[t.name]}")  # in place: the same tensor
            else:
                body.extend(self._tensor_lines(t))
        kwargs: list[str] = []  # every argument by name: constexprs sit between runtime ones
        for a in self.template.args:
            if a.name not in self.params:
                continue
            expr = self._arg_expr(a)
            if self._constexpr(a):
                body.append(f"{a.name} = {expr}")  # a host name, as launchers write the grid with it
                expr = a.name
            kwargs.append(f"{a.name}={expr}")
        grid = self._grid()
        params = ", ".join(t.name for t in self.tensors if t.name not in aliases)
        call = f"{self.kernel.name}[{grid}]({', '.join(kwargs)})"
        lines = [f"def __argus_recorded_launch__({params}):", *[f"    {b}" for b in body], f"    {call}"]
        return "\n".join(lines) + "\n"

    def _aliases(self) -> dict[str, str]:
        """Tensors that are another argument in every call (same storage, offset, shape and
        strides: an in-place launch) -> that argument."""
        out: dict[str, str] = {}
        for t in self.tensors:
            if t.alias_of is None or t.alias_of in out:
                continue
            if all(_same_view(_arg(lr, t.name), lr.arg(t.alias_of)) for lr in self.launches):
                out[t.name] = t.alias_of
        return out

    def _constexpr(self, a: RecordedArg) -> bool:
        p = self.params.get(a.name)
        return bool(p is not None and p.constexpr) or a.constexpr

    def _name_classes(self, scalars: list[RecordedArg]) -> None:
        """One name per class of equal sizes: a scalar argument's name when one carries it."""
        taken = set(self.params)
        scalars = sorted(scalars, key=lambda s: s.name not in self.scan.tiled)  # mask bounds first
        for t in self.tensors:
            for axis in range(len(t.shape)):
                key = self.sizes(t.name, axis)
                if key in self.classes:
                    continue
                named = next(
                    (s.name for s in scalars if self.values(s.name) == key and "stride" not in s.name), None
                )
                if named is None:
                    stem = t.name.removesuffix("_ptr")
                    named = f"{stem}_{AXIS_LETTERS[axis % len(AXIS_LETTERS)]}"
                    while named in taken:
                        named += "_"
                taken.add(named)
                self.classes[key] = named

    def _tensor_lines(self, t: RecordedArg) -> list[str]:
        out: list[str] = []
        if any(s == 0 for s in t.strides) and any(
            d > 1 for d, s in zip(t.shape, t.strides, strict=True) if s == 0
        ):
            raise RecordingUnusable(f"`{t.name}` is a broadcast view (stride 0)")
        dtype = TORCH_DTYPES.get(t.dtype)
        if dtype is not None:
            out.append(f"{t.name} = {t.name}.to(torch.{dtype})")
        order = _physical_order(t)
        if not t.shape:
            return out
        names = []
        for axis in order:
            cls = self.classes[self.sizes(t.name, axis)]
            if cls in self._bound:
                local = f"_{t.name}_{axis}"
                names.append(local)
                self._asserts.append(f"assert {local} == {cls}")
            else:
                self._bound.add(cls)
                names.append(cls)
        target = ", ".join(names) + ("," if len(names) == 1 else "")
        out.append(f"{target} = {t.name}.shape")
        out.extend(self._asserts)
        self._asserts = []
        if order != list(range(len(t.shape))):
            inverse = [order.index(i) for i in range(len(order))]
            out.append(f"{t.name} = {t.name}.permute({', '.join(map(str, inverse))})")
        return out

    def _arg_expr(self, a: RecordedArg) -> str:
        if a.is_tensor:
            return a.name
        if a.kind == "int":
            return self._int_expr(a)
        if a.kind in ("float", "bool", "none"):
            return repr(a.value) if a.value != "nan" else "float('nan')"
        if a.kind == "dtype" and isinstance(a.value, str):
            name = a.value.removeprefix("torch.")
            name = TRITON_DTYPE_NAMES.get(name, name)  # `tl.float16` prints as fp16
            return f"torch.{name}" if name in TORCH_DTYPES else "None"
        if a.kind == "str" and isinstance(a.value, str):
            return repr(a.value)
        return "None"

    def _int_expr(self, a: RecordedArg) -> str:
        vals = self.values(a.name)
        if self._constexpr(a):
            return self._constexpr_expr(a, vals)
        if "stride" in a.name.lower():
            s = self._stride_of(vals, a.name)
            if s:
                return s
        if vals in self.classes:
            return self.classes[vals]
        for t in self.tensors:
            if self.numels(t.name) == vals and len(t.shape) > 1:
                return f"{t.name}.numel()"
        s = self._stride_of(vals)
        if s and any(v > 1 for v in vals):
            return s
        return repr(vals[0])

    def _stride_of(self, vals: tuple[int, ...], param: str = "") -> str | None:
        """A tensor stride with these values; the tensor the parameter is named after first
        (`stride_out_row` -> `out_ptr`), as equal strides of two tensors are common."""
        words = set(param.lower().split("_"))
        ranked = sorted(self.tensors, key=lambda t: t.name.removesuffix("_ptr").lower() not in words)
        for t in ranked:
            order = _physical_order(t)
            for axis in range(len(t.shape)):
                if self.strides(t.name, axis) == vals and (axis != order[-1] or all(v == 1 for v in vals)):
                    return f"{t.name}.stride({axis})"
        return None

    def _constexpr_expr(self, a: RecordedArg, vals: tuple[int, ...]) -> str:
        """A power of two covering a class the kernel masks against is derived from it; a
        constexpr equal to a class is that class; everything else stays literal."""
        masked = {self.values(s) for s in self.scan.tiled if self._scalar_present(s)}
        for key, name in self.classes.items():
            if key in masked and all(v == _next_pow2(k) for v, k in zip(vals, key, strict=True)):
                return f"triton.next_power_of_2({name})"
        if vals in self.classes and a.name in self.scan.arange_params and vals not in masked:
            return self.classes[vals]
        return repr(vals[0])

    def _scalar_present(self, name: str) -> bool:
        a = self.template.arg(name)
        return a is not None and a.kind == "int"

    def _grid(self) -> str:
        grids = [lr.grid for lr in self.launches]
        axes = max([i + 1 for g in grids if g is not None for i in range(3) if g[i] != 1] or [1])
        read = _program_id_axes(self.kernel.func)
        axes = max(axes, max(read, default=0) + 1)
        used: set[str] = set()
        parts = [
            self._grid_axis(i, tuple(g[i] for g in grids if g is not None), i in read, used)
            for i in range(axes)
        ]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def _grid_axis(self, axis: int, vals: tuple[int, ...], read: bool, used: set[str]) -> str:
        """The formula for one grid axis; classes and tiles another axis used come last (a
        launcher rarely tiles two axes by one block, or one size on two axes)."""
        expr = self._grid_formula(axis, vals, read, used)
        used.update(w.strip("(),") for w in expr.replace(",", " ").split())
        return expr

    def _grid_formula(self, axis: int, vals: tuple[int, ...], read: bool, used: set[str]) -> str:
        if all(v == 1 for v in vals) and not read:
            return "1"
        tiles = [
            (a.name, a.value)
            for a in self.template.args
            if a.kind == "int"
            and self._constexpr(a)
            and isinstance(a.value, int)
            and a.value > 1
            and self._constexpr_expr(a, self.values(a.name)).isdigit()
        ]
        pairs = [(key, name, tname) for key, name in self.classes.items() for tname, _ in tiles]
        pairs.sort(key=lambda p: (p[1] in used) + (p[2] in used))
        for key, name, tname in pairs:
            tv = self.values(tname)
            if all(-(-k // b) == v for k, b, v in zip(key, tv, vals, strict=True)):
                return f"triton.cdiv({name}, {tname})"
        if vals in self.classes:
            return self.classes[vals]
        for t in self.tensors:
            for tname, _ in tiles:
                tv = self.values(tname)
                if all(-(-n // b) == v for n, b, v in zip(self.numels(t.name), tv, vals, strict=True)):
                    return f"triton.cdiv({t.name}.numel(), {tname})"
        keys = list(self.classes.items())
        for i, (ka, na) in enumerate(keys):
            for kb, nb in keys[i:]:
                if all(x * y == v for x, y, v in zip(ka, kb, vals, strict=True)):
                    return f"{na} * {nb}"
        if all(v == 1 for v in vals):
            return "1"
        raise RecordingUnusable(
            f"grid axis {axis} ({', '.join(map(str, vals))}) is not a function of the recorded sizes"
        )


def unlaunched_kernels(source: bytes) -> list[str]:
    """Kernels of a module that nothing in it launches, that no kernel calls as a helper, and
    whose bounds the checker cannot judge without a launch (an elementwise kernel bounded by
    one size is judged as it is): the ones only a recording, or a launcher in another module
    the checker does not follow, can bind."""
    root = parse(source).root_node
    sites = find_kernels(root)
    launched = {name for name, _ in launch_calls(root)}
    for alias, names, node in alias_assignments(root):  # `k2 = k1; k2[grid](...)`: kernel_aliases.py
        value = node.child_by_field_name("right")
        if alias in launched or (value is not None and value.type == "subscript"):
            launched.update(names)
    helpers: set[str] = set()
    for s in sites:
        helpers |= called_names(s.function)
    starts = line_starts(source)
    out = []
    for s in sites:
        if s.name in launched or s.name in helpers or first_error(s.node) is not None:
            continue
        try:
            mod, smap = parse_snippet(
                source, s.node.start_byte, s.node.end_byte, starts, s.node.start_point[0]
            )
            func = next(n for n in mod.body if isinstance(n, ast.FunctionDef))
            kernel = build_kernel_model(func, smap, {})
            scan = scan_kernel(func, [p.name for p in kernel.params], {})
            probe = LaunchBinder(kernel, scan, None).probe("ragged", None)
        except Exception:  # noqa: BLE001 - a kernel the model cannot read is reported elsewhere
            continue
        tensors = [v for v in probe.args.values() if isinstance(v, TensorInfo)]
        if not tensors or not all(t.sized for t in tensors):
            out.append(s.name)
    return out


def _arg(lr: RecordedLaunch, name: str) -> RecordedArg:
    a = lr.arg(name)
    assert a is not None
    return a


def _same_view(a: RecordedArg, b: RecordedArg | None) -> bool:
    return (
        b is not None
        and a.alias_of == b.name
        and (a.shape, a.strides, a.storage_offset, a.dtype) == (b.shape, b.strides, b.storage_offset, b.dtype)
    )


def _physical_order(t: RecordedArg) -> list[int]:
    """Axes from the outermost in memory to the innermost, when the layout is a permutation
    of a contiguous one; the logical order otherwise (taken as contiguous)."""
    order = sorted(range(len(t.shape)), key=lambda i: (-t.strides[i], i))
    acc = 1
    for axis in reversed(order):
        if t.shape[axis] > 1 and t.strides[axis] != acc:
            return list(range(len(t.shape)))
        acc *= max(t.shape[axis], 1)
    return order


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _program_id_axes(func: ast.FunctionDef) -> set[int]:
    out: set[int] = set()
    for n in ast.walk(func):
        if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("program_id"):
            axis = n.args[0] if n.args else next((k.value for k in n.keywords if k.arg == "axis"), None)
            if isinstance(axis, ast.Constant) and isinstance(axis.value, int):
                out.add(axis.value)
    return out
