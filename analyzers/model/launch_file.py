"""The launch file that `argus record` writes: its format, reader and validator.

Plain JSON, versioned (`{"format": "argus-launches", "version": 1, ...}`; docs/record.md
describes every field). The checker reads it to bind kernels whose launcher it cannot follow;
this module only reads and validates (it never runs anything), so the checker, the CLI and the
recorder share one definition of what a valid file is. Unknown fields are ignored, so a newer
recorder's extra facts do not break an older checker; a missing or mistyped required field is
an error that names the launch and the field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

FORMAT = "argus-launches"
VERSION = 1
ARG_KINDS = ("tensor", "int", "float", "bool", "none", "str", "dtype", "tuple", "other")


class LaunchFileError(ValueError):
    """The file is not a valid launch file; the message says where and why."""


@dataclass(frozen=True)
class RecordedArg:
    name: str
    kind: str
    value: Any = None
    constexpr: bool = False
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    dtype: str = ""
    storage_offset: int = 0
    storage_elements: int | None = None
    alias_of: str | None = None

    @property
    def is_tensor(self) -> bool:
        return self.kind == "tensor"


@dataclass(frozen=True)
class RecordedLaunch:
    """One kernel with one distinct call signature, as a real run launched it."""

    kernel: str
    file: str
    line: int
    grid: tuple[int, int, int] | None  # None: the recorder could not evaluate it
    args: tuple[RecordedArg, ...]
    calls: int = 1
    origin: str | None = None  # "path:line in function" of the user's code that launched it

    def arg(self, name: str) -> RecordedArg | None:
        return next((a for a in self.args if a.name == name), None)


@dataclass
class LaunchFile:
    version: int
    launches: list[RecordedLaunch]
    command: list[str] = field(default_factory=list)
    exit_status: int | None = None
    source: str = ""

    def for_kernel(self, name: str, path: str | None = None) -> list[RecordedLaunch]:
        """Launches of kernel `name` defined in the file `path` (any file when None)."""
        return [
            lr for lr in self.launches if lr.kernel == name and (path is None or same_file(lr.file, path))
        ]


def same_file(recorded: str, path: str) -> bool:
    """The kernel's recorded file is `path`: the same file on disk, or (a recording made on
    another machine or checkout) the same trailing path components, at least two of them."""
    try:
        if os.path.exists(recorded) and os.path.exists(path) and os.path.samefile(recorded, path):
            return True
    except OSError:
        pass
    a = os.path.normpath(recorded).replace("\\", "/").split("/")
    b = os.path.normpath(os.path.abspath(path)).replace("\\", "/").split("/")
    n = min(len(a), len(b), 2)
    return n >= 1 and a[-n:] == b[-n:] and (n == 2 or len(a) == len(b) == 1)


def read_launch_file(path: str) -> LaunchFile:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise LaunchFileError(f"cannot read the launch file {path}: {exc.strerror or exc}") from exc
    out = parse_launch_file(text, source=path)
    return out


def parse_launch_file(text: str, source: str = "<launches>") -> LaunchFile:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LaunchFileError(f"{source} is not JSON: {exc.msg} at line {exc.lineno}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise LaunchFileError(f'{source} is not an Argus launch file (no "format": "{FORMAT}")')
    version = doc.get("version")
    if version != VERSION:
        raise LaunchFileError(
            f"{source} has launch-file version {version!r}; this Argus reads version {VERSION}"
        )
    raw = doc.get("launches")
    if not isinstance(raw, list):
        raise LaunchFileError(f'{source}: "launches" must be a list')
    launches = [_launch(item, f"{source}: launches[{i}]") for i, item in enumerate(raw)]
    command = doc.get("command") if isinstance(doc.get("command"), list) else []
    status = doc.get("exit_status") if isinstance(doc.get("exit_status"), int) else None
    return LaunchFile(version, launches, [str(c) for c in command], status, source)


def _need(d: dict[str, Any], key: str, types: type | tuple[type, ...], where: str) -> Any:
    if key not in d:
        raise LaunchFileError(f'{where}: missing "{key}"')
    v = d[key]
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in _as_tuple(types)):
        raise LaunchFileError(f'{where}: "{key}" has the wrong type ({type(v).__name__})')
    return v


def _as_tuple(t: type | tuple[type, ...]) -> tuple[type, ...]:
    return t if isinstance(t, tuple) else (t,)


def _ints(v: Any, where: str, key: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise LaunchFileError(f'{where}: "{key}" must be a list of integers')
    return tuple(v)


def _launch(item: Any, where: str) -> RecordedLaunch:
    if not isinstance(item, dict):
        raise LaunchFileError(f"{where} must be an object")
    k = _need(item, "kernel", dict, where)
    name = _need(k, "name", str, f"{where}.kernel")
    file = _need(k, "file", str, f"{where}.kernel")
    line = k.get("line") if isinstance(k.get("line"), int) else 0
    grid_raw = item.get("grid")
    grid: tuple[int, int, int] | None = None
    if isinstance(grid_raw, list):
        g = _ints(grid_raw, where, "grid")
        if not 1 <= len(g) <= 3 or any(x < 0 for x in g):
            raise LaunchFileError(f'{where}: "grid" must have 1 to 3 non-negative sizes')
        padded = tuple(g) + (1,) * (3 - len(g))
        grid = (padded[0], padded[1], padded[2])
    args_raw = _need(item, "args", list, where)
    args = tuple(_arg(a, f"{where}.args[{i}]") for i, a in enumerate(args_raw))
    origin = item.get("origin")
    where_from = None
    if isinstance(origin, dict) and isinstance(origin.get("file"), str):
        where_from = f"{origin['file']}:{origin.get('line', '?')}"
        if isinstance(origin.get("function"), str):
            where_from += f" in {origin['function']}"
        stack = origin.get("stack")
        if isinstance(stack, list) and stack and isinstance(stack[0], str):
            where_from += f", called from {stack[0]}"
    calls = item.get("calls") if isinstance(item.get("calls"), int) else 1
    return RecordedLaunch(name, file, line, grid, args, calls, where_from)


def _arg(a: Any, where: str) -> RecordedArg:
    if not isinstance(a, dict):
        raise LaunchFileError(f"{where} must be an object")
    name = _need(a, "name", str, where)
    kind = _need(a, "kind", str, where)
    if kind not in ARG_KINDS:
        raise LaunchFileError(f'{where}: unknown "kind" {kind!r} (one of {", ".join(ARG_KINDS)})')
    constexpr = bool(a.get("constexpr", False))
    if kind != "tensor":
        return RecordedArg(name, kind, a.get("value"), constexpr)
    shape = _ints(_need(a, "shape", list, where), where, "shape")
    strides = _ints(_need(a, "strides", list, where), where, "strides")
    if len(shape) != len(strides):
        raise LaunchFileError(f"{where}: shape and strides differ in length")
    if any(s < 0 for s in shape):
        raise LaunchFileError(f"{where}: negative size in shape")
    extent = a.get("storage_elements")
    offset = a.get("storage_offset", 0)
    alias = a.get("alias_of")
    return RecordedArg(
        name,
        kind,
        None,
        constexpr,
        shape,
        strides,
        str(a.get("dtype", "")),
        offset if isinstance(offset, int) else 0,
        extent if isinstance(extent, int) else None,
        alias if isinstance(alias, str) else None,
    )
