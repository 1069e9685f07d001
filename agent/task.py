"""A task: a kernel plus how to run it. Shared by `argus profile` and the optimization agent.

Two sources, both read WITHOUT executing the user's file (the editor asks "which kernels have a
task?" on every open, and opening a file must never run it):

* a sidecar spec `<file>.argus.toml` next to the kernel, with one `[[task]]` table per kernel
  (launcher function, inputs with symbolic shapes and dtypes, FLOP/byte formulas, reference);
* the KernelBench format: the file itself defines `Model`, `get_inputs`, `get_init_inputs` and
  optionally `ModelNew`; this is recognised from the syntax tree (`ast`), not by importing it.

What a task resolves to (`Task.request`) is plain JSON that the subprocess worker consumes; only
that worker ever imports the user's file, torch or triton. docs/profile.md documents the spec.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIDECAR_SUFFIX = ".argus.toml"
_FLOAT_DTYPES = {
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "half",
    "float",
}
_INT_DTYPES = {"int8", "uint8", "int16", "int32", "int64", "bool"}
_KNOWN_DTYPES = _FLOAT_DTYPES | _INT_DTYPES
_INITS = {"randn", "rand", "randint"}


class TaskError(ValueError):
    """A task file that cannot be read or does not describe the kernel asked for."""


@dataclass(frozen=True)
class InputSpec:
    """One launcher argument made fresh for every input set: a random tensor of `shape`."""

    name: str
    shape: tuple[str | int, ...]
    dtype: str
    init: str = "randn"  # randn (normal), rand (uniform [0, 1)), randint ([low, high))
    scale: float = 1.0
    low: int = 0
    high: int = 100


@dataclass
class Task:
    """A kernel and how to run it; see the module docstring for the two formats."""

    path: Path
    kernel: str
    kind: str  # "spec" or "kernelbench"
    launcher: str | None = None
    reference: str | None = None
    inputs: list[InputSpec] = field(default_factory=list)
    args: dict[str, Any] = field(default_factory=dict)
    flops: str | None = None
    bytes: str | None = None
    dtype: str | None = None
    shapes: dict[str, int] = field(default_factory=dict)
    shape_sets: dict[str, dict[str, int]] = field(default_factory=dict)
    python: str | None = None
    line: int | None = None  # where the kernel is defined, for the editor's code lens

    @property
    def name(self) -> str:
        return f"{self.path.name}::{self.kernel}"

    def sizes(self, override: str | list[str] | None = None) -> dict[str, int]:
        """The task's default sizes updated by `--shape` values ("M=1024,N=512" or a set name)."""
        sizes = dict(self.shapes)
        items = [override] if isinstance(override, str) else list(override or [])
        for item in items:
            for part in re.split(r"[,\s]+", item.strip()):
                if not part:
                    continue
                if "=" not in part:
                    if part not in self.shape_sets:
                        known = ", ".join(sorted(self.shape_sets)) or "none"
                        raise TaskError(f"unknown shape set {part!r} (known: {known})")
                    sizes.update(self.shape_sets[part])
                    continue
                key, _, value = part.partition("=")
                try:
                    sizes[key.strip()] = int(value)
                except ValueError:
                    raise TaskError(f"--shape {part!r}: size must be an integer") from None
        return sizes

    def request(self, shape: str | list[str] | None = None) -> dict[str, Any]:
        """The JSON the worker runs: concrete shapes, FLOP and byte counts for these sizes."""
        sizes = self.sizes(shape)
        inputs = []
        for spec in self.inputs:
            dims = [d if isinstance(d, int) else int(evaluate(str(d), sizes)) for d in spec.shape]
            inputs.append(
                {
                    "name": spec.name,
                    "shape": dims,
                    "dtype": spec.dtype,
                    "init": spec.init,
                    "scale": spec.scale,
                    "low": spec.low,
                    "high": spec.high,
                }
            )
        return {
            "kind": self.kind,
            "file": self.path.name,
            "kernel": self.kernel,
            "launcher": self.launcher,
            "reference": self.reference,
            "inputs": inputs,
            "args": self.args,
            "sizes": sizes,
            "flops": evaluate(self.flops, sizes) if self.flops else None,
            "bytes": evaluate(self.bytes, sizes) if self.bytes else None,
            "dtype": self.dtype or next((i.dtype for i in self.inputs if i.dtype in _FLOAT_DTYPES), None),
        }


# ---------------------------------------------------------------------------------------------
# Loading


def parse_target(spec: str) -> tuple[Path, str | None]:
    """Split "path/to/file.py::kernel" into its path and kernel name (None when absent)."""
    path, sep, kernel = spec.partition("::")
    return Path(path), (kernel or None) if sep else None


def load_task(spec: str | Path, kernel: str | None = None) -> Task:
    """The task for FILE::KERNEL; with no kernel named, the file's only task."""
    path, named = parse_target(str(spec)) if kernel is None else (Path(spec), kernel)
    if not path.is_file():
        raise TaskError(f"{path}: no such file")
    tasks = tasks_for_file(path)
    if not tasks:
        raise TaskError(
            f"{path}: no task: write {path.name}{SIDECAR_SUFFIX} (see docs/profile.md) "
            "or use the KernelBench format (Model, get_inputs, get_init_inputs)"
        )
    if named is None:
        if len(tasks) > 1:
            names = ", ".join(t.kernel for t in tasks)
            raise TaskError(f"{path}: several tasks ({names}); name one as {path}::KERNEL")
        return tasks[0]
    for task in tasks:
        if task.kernel == named:
            return task
    if len(tasks) == 1 and tasks[0].kind == "kernelbench":
        task = tasks[0]
        task.kernel = named  # KernelBench: the name picks the kernel whose counters to report
        return task
    raise TaskError(f"{path}: no task for kernel {named!r} (tasks: {', '.join(t.kernel for t in tasks)})")


def tasks_for_file(path: str | Path) -> list[Task]:
    """Every task for a kernel file, from its sidecar spec or its KernelBench shape. Never runs it."""
    path = Path(path)
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    source = _read(path)
    lines = _def_lines(source)
    if sidecar.is_file():
        return [_with_line(t, lines) for t in _load_sidecar(path, sidecar)]
    kb = _kernelbench(path, source)
    return [_with_line(kb, lines)] if kb else []


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: {exc}") from None


def _def_lines(source: str) -> dict[str, int]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    return {n.name: n.lineno for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}


def _with_line(task: Task, lines: dict[str, int]) -> Task:
    task.line = lines.get(task.kernel) or lines.get(task.launcher or "")
    return task


def _load_sidecar(path: Path, sidecar: Path) -> list[Task]:
    try:
        data = tomllib.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TaskError(f"{sidecar}: {exc}") from None
    entries = data.get("task")
    if not isinstance(entries, list) or not entries:
        raise TaskError(f"{sidecar}: expected one or more [[task]] tables")
    return [_task_from_table(path, sidecar, i, t) for i, t in enumerate(entries)]


def _task_from_table(path: Path, sidecar: Path, index: int, t: dict[str, Any]) -> Task:
    where = f"{sidecar}: task {index + 1}"
    known = {
        "kernel",
        "launcher",
        "reference",
        "inputs",
        "args",
        "flops",
        "bytes",
        "dtype",
        "shapes",
        "shape_sets",
        "python",
    }
    if unknown := sorted(set(t) - known):
        raise TaskError(f"{where}: unknown keys {unknown}")
    for key in ("kernel", "launcher"):
        if not isinstance(t.get(key), str) or not t[key].isidentifier():
            raise TaskError(f"{where}: `{key}` must name a function in {path.name}")
    inputs = [_input(where, i) for i in t.get("inputs", [])]
    shapes = _sizes(where, t.get("shapes", {}))
    shape_sets = {k: _sizes(f"{where} shape set {k}", v) for k, v in t.get("shape_sets", {}).items()}
    task = Task(
        path=path,
        kernel=t["kernel"],
        kind="spec",
        launcher=t["launcher"],
        reference=t.get("reference"),
        inputs=inputs,
        args=dict(t.get("args", {})),
        flops=t.get("flops"),
        bytes=t.get("bytes"),
        dtype=t.get("dtype"),
        shapes=shapes,
        shape_sets=shape_sets,
        python=t.get("python"),
    )
    for formula in (task.flops, task.bytes):  # a typo fails when the file is read, not on the GPU
        if formula is not None:
            _check_formula(where, str(formula))
    return task


def _input(where: str, raw: Any) -> InputSpec:
    if not isinstance(raw, dict) or "name" not in raw or "shape" not in raw or "dtype" not in raw:
        raise TaskError(f"{where}: each input needs name, shape and dtype")
    dtype = str(raw["dtype"]).removeprefix("torch.")
    if dtype not in _KNOWN_DTYPES:
        raise TaskError(f"{where}: input {raw['name']}: unknown dtype {dtype!r}")
    init = raw.get("init", "randint" if dtype in _INT_DTYPES else "randn")
    if init not in _INITS:
        raise TaskError(f"{where}: input {raw['name']}: init must be one of {sorted(_INITS)}")
    shape = tuple(raw["shape"])
    for dim in shape:
        if not isinstance(dim, int | str):
            raise TaskError(f"{where}: input {raw['name']}: shape entries are ints or formulas")
        if isinstance(dim, str):
            _check_formula(where, dim)
    return InputSpec(
        name=str(raw["name"]),
        shape=shape,
        dtype=dtype,
        init=init,
        scale=float(raw.get("scale", 1.0)),
        low=int(raw.get("low", 0)),
        high=int(raw.get("high", 100)),
    )


def _sizes(where: str, raw: Any) -> dict[str, int]:
    if not isinstance(raw, dict) or not all(isinstance(v, int) for v in raw.values()):
        raise TaskError(f"{where}: sizes must be a table of integers, e.g. {{ M = 4096 }}")
    return dict(raw)


def _kernelbench(path: Path, source: str) -> Task | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    if not {"Model", "get_inputs", "get_init_inputs"} <= names:
        return None
    model = "ModelNew" if "ModelNew" in names else "Model"
    return Task(
        path=path,
        kernel=model,
        kind="kernelbench",
        launcher=model,
        reference="Model" if model == "ModelNew" else None,
    )


# ---------------------------------------------------------------------------------------------
# Formulas: arithmetic over size names, evaluated without eval()

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}
_FUNCS = {"min": min, "max": max, "ceil": math.ceil, "cdiv": lambda a, b: -(-a // b)}


def evaluate(formula: str | int | float, sizes: dict[str, int]) -> float:
    """Evaluate "2*M*N*K" with `sizes`; only + - * / // % **, numbers, names and min/max/ceil/cdiv."""
    if isinstance(formula, int | float):
        return float(formula)
    try:
        tree = ast.parse(str(formula), mode="eval")
    except SyntaxError as exc:
        raise TaskError(f"formula {formula!r}: {exc.msg}") from None
    return float(_eval(tree.body, sizes, str(formula)))


def _check_formula(where: str, formula: str) -> None:
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError as exc:
        raise TaskError(f"{where}: formula {formula!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(
            node,
            ast.Expression
            | ast.BinOp
            | ast.UnaryOp
            | ast.Constant
            | ast.Name
            | ast.Call
            | ast.Load
            | ast.operator
            | ast.unaryop,
        ):
            raise TaskError(f"{where}: formula {formula!r}: {type(node).__name__} is not allowed")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS):
            raise TaskError(f"{where}: formula {formula!r}: only {', '.join(_FUNCS)} may be called")


def _eval(node: ast.AST, sizes: dict[str, int], text: str) -> float | int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in sizes:
            raise TaskError(f"formula {text!r}: size {node.id!r} is not set (use --shape {node.id}=...)")
        return sizes[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, sizes, text), _eval(node.right, sizes, text))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _eval(node.operand, sizes, text)
        return -value if isinstance(node.op, ast.USub) else value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
    ):
        return _FUNCS[node.func.id](*(_eval(a, sizes, text) for a in node.args))
    raise TaskError(f"formula {text!r}: unsupported expression {ast.dump(node)[:60]}")
