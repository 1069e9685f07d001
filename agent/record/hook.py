"""The launch hook that `argus record` installs in the user's Python processes.

It wraps `run` of Triton's `JITFunction` (compiled launches) and of `InterpretedFunction`
(`TRITON_INTERPRET=1`): both are what `kernel[grid](...)` calls, with the positional and
keyword arguments as the user passed them, in every Triton from 3.0 to 3.9, and autotuned or
heuristic kernels reach them too (with the chosen config's constexprs as keywords). A launch
hook of Triton's own (`knobs.runtime.launch_enter_hook`) would see only compiled launches and
their lowered arguments, not the interpreter's, which is what CI has.

What it keeps per kernel and distinct call signature: the grid, constexpr and scalar values,
each tensor's shape, strides, dtype, storage offset and extent, which argument shares storage
with which, and the first place in the user's code that launched it. The wrapper never changes
what the launch does: all recording is inside a `try` that swallows its own errors, the
original `run` is called with the same arguments, and a grid given as a function is evaluated
on a copy of the arguments.

This file is loaded by path (never imported as part of a package) into the user's process, so
it uses the standard library only and does not put any of Argus's names on the user's path.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import sys
import threading
import time
from typing import Any

FORMAT = "argus-launches"
VERSION = 1
MAX_SIGNATURES_PER_KERNEL = 32  # bounded file size and memory whatever the command does
MAX_TUPLE = 16
MAX_STACK = 4  # user frames kept per launch origin

_HERE = os.path.dirname(os.path.abspath(__file__))


class Recorder:
    """Launches seen in this process, written to one part file after each new signature."""

    def __init__(self, part_dir: str) -> None:
        self.part_dir = part_dir
        self.pid = -1
        self.part_path = ""
        self.entries: dict[str, dict[str, Any]] = {}
        self.per_kernel: dict[str, int] = {}
        self.dropped = 0
        self.lock = threading.Lock()
        self.errors: list[str] = []
        self._signatures: dict[int, list[inspect.Parameter]] = {}
        self.fast: dict[tuple[Any, ...], str] = {}  # cheap key of a launch -> its entry's key

    def observe(self, jit: Any, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> None:
        fn = getattr(jit, "fn", None)
        code = getattr(fn, "__code__", None)
        if code is None:
            return
        params = self.signature(fn)
        names = [p.name for p in params]
        bound: dict[str, Any] = {}
        for name, value in zip(names, args, strict=False):
            bound[name] = value
        for k, v in kwargs.items():
            if k in names:
                bound[k] = v
        for p in params:
            if p.name not in bound and p.default is not inspect.Parameter.empty:
                bound[p.name] = p.default
        grid_value = _grid_value(grid, bound)
        fast = _fast_key(fn, grid_value, names, bound)
        with self.lock:
            if self.pid not in (-1, os.getpid()):  # a forked child: its parent writes its own
                self.entries, self.per_kernel, self.fast, self.pid = {}, {}, {}, -1
            seen = self.fast.get(fast)
            if seen is not None:  # a repeated signature: one tuple built and looked up
                self.entries[seen]["calls"] += 1
                return
        constexprs = _constexpr_names(jit, fn)
        described = _describe_args(names, bound, constexprs)
        entry = {
            "kernel": {"name": fn.__name__, "file": code.co_filename, "line": code.co_firstlineno},
            "grid": grid_value,
            "args": described,
            "origin": _origin(),
        }
        key = json.dumps([entry["kernel"], entry["grid"], entry["args"]], sort_keys=True, default=str)
        kernel_key = f"{code.co_filename}::{fn.__name__}"
        with self.lock:
            if key in self.entries:
                self.fast[fast] = key
                self.entries[key]["calls"] += 1
                return
            if self.per_kernel.get(kernel_key, 0) >= MAX_SIGNATURES_PER_KERNEL:
                self.dropped += 1
                return
            self.per_kernel[kernel_key] = self.per_kernel.get(kernel_key, 0) + 1
            entry["calls"] = 1
            self.entries[key] = entry
            self.fast[fast] = key
            self.flush_locked()

    def signature(self, fn: Any) -> list[inspect.Parameter]:
        key = id(fn)
        if key not in self._signatures:
            self._signatures[key] = list(inspect.signature(fn).parameters.values())
        return self._signatures[key]

    def flush(self) -> None:
        with self.lock:
            self.flush_locked()

    def flush_locked(self) -> None:
        """Write every entry to the part file atomically (a crash leaves the last whole file).
        A forked child gets a part file of its own and starts with its parent's entries."""
        if self.pid != os.getpid():
            self.pid = os.getpid()
            stamp = int(time.time() * 1000)
            self.part_path = os.path.join(self.part_dir, f"part-{self.pid}-{stamp}.json")
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "pid": os.getpid(),
            "dropped_launches": self.dropped,
            "errors": self.errors[:20],
            "launches": list(self.entries.values()),
        }
        tmp = f"{self.part_path}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        os.replace(tmp, self.part_path)


def _fast_key(fn: Any, grid: Any, names: list[str], bound: dict[str, Any]) -> tuple[Any, ...]:
    """What tells two launches apart, cheaply: per tensor its shape, strides, dtype and the first
    argument starting at the same address; per scalar its value."""
    parts: list[Any] = [id(fn), str(grid)]
    first_at: dict[int, int] = {}
    for i, name in enumerate(names):
        v = bound.get(name)
        data_ptr = getattr(v, "data_ptr", None)
        if data_ptr is not None and hasattr(v, "stride"):
            parts.append((v.shape, v.stride(), v.dtype, first_at.setdefault(data_ptr(), i)))
        elif v is None or isinstance(v, int | float | str):
            parts.append((type(v), v))
        else:
            parts.append(str(v)[:200])
    return tuple(parts)


def _constexpr_names(jit: Any, fn: Any) -> set[str]:
    out = {p.name for p in getattr(jit, "params", []) if getattr(p, "is_constexpr", False)}
    for name, ann in getattr(fn, "__annotations__", {}).items():
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
        if "constexpr" in str(text):
            out.add(name)
    return out


def _describe_args(names: list[str], bound: dict[str, Any], constexprs: set[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    storages: dict[int, str] = {}
    for name in names:
        if name not in bound:
            continue
        out.append(_describe(name, bound[name], name in constexprs, storages))
    return out


def _describe(name: str, value: Any, constexpr: bool, storages: dict[int, str]) -> dict[str, Any]:
    inner = getattr(value, "value", None) if type(value).__name__ == "constexpr" else None
    if inner is not None:
        value = inner
    if hasattr(value, "data_ptr") and hasattr(value, "stride") and hasattr(value, "shape"):
        return _describe_tensor(name, value, storages)
    if isinstance(value, bool) or value is None:
        return {
            "name": name,
            "kind": "bool" if value is not None else "none",
            "value": value,
            "constexpr": constexpr,
        }
    if isinstance(value, int):
        return {"name": name, "kind": "int", "value": value, "constexpr": constexpr}
    if isinstance(value, float):
        return {
            "name": name,
            "kind": "float",
            "value": value if value == value else "nan",
            "constexpr": constexpr,
        }
    if isinstance(value, str):
        return {"name": name, "kind": "str", "value": value[:200], "constexpr": constexpr}
    if isinstance(value, tuple) and len(value) <= MAX_TUPLE:
        return {
            "name": name,
            "kind": "tuple",
            "constexpr": constexpr,
            "items": [_describe(f"{name}[{i}]", v, constexpr, storages) for i, v in enumerate(value)],
        }
    text = str(value)
    if text.startswith("torch.") or text.startswith("tl.") or "dtype" in type(value).__name__.lower():
        return {"name": name, "kind": "dtype", "value": text, "constexpr": constexpr}
    return {"name": name, "kind": "other", "type": type(value).__name__, "constexpr": constexpr}


def _describe_tensor(name: str, t: Any, storages: dict[int, str]) -> dict[str, Any]:
    shape = [int(s) for s in t.shape]
    strides = [int(s) for s in t.stride()]
    entry: dict[str, Any] = {
        "name": name,
        "kind": "tensor",
        "shape": shape,
        "strides": strides,
        "dtype": str(t.dtype).replace("torch.", ""),
    }
    try:
        storage = t.untyped_storage()
        size = max(int(t.element_size()), 1)
        entry["storage_offset"] = int(t.storage_offset())
        entry["storage_elements"] = int(storage.nbytes()) // size
        base = int(storage.data_ptr())
    except (AttributeError, RuntimeError, TypeError):
        base = int(t.data_ptr())
    if base and base in storages:
        entry["alias_of"] = storages[base]
    elif base:
        storages[base] = name
    return entry


def _grid_value(grid: Any, bound: dict[str, Any]) -> list[int] | str:
    try:
        g = grid(dict(bound)) if callable(grid) else grid
        if isinstance(g, int):
            g = (g,)
        dims = [int(x) for x in g]
        return dims + [1] * (3 - len(dims))
    except Exception as exc:  # noqa: BLE001 - a grid we cannot evaluate is recorded as such
        return f"unknown ({type(exc).__name__})"


def _origin() -> dict[str, Any] | None:
    """The innermost frame of the user's code (outside Triton, torch and this hook), with the
    user frames that called it (a generic launch helper says little on its own)."""
    frame = sys._getframe(2)
    user: list[Any] = []
    while frame is not None and len(user) < MAX_STACK:
        if not _foreign(frame.f_code.co_filename):
            user.append(frame)
        frame = frame.f_back
    if not user:
        return None
    first = user[0]
    out: dict[str, Any] = {
        "file": first.f_code.co_filename,
        "line": first.f_lineno,
        "function": first.f_code.co_name,
    }
    out["stack"] = [f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}" for f in user[1:]]
    return out


def _foreign(path: str) -> bool:
    p = path.replace("\\", "/")
    return "/triton/" in p or p.startswith(_HERE.replace("\\", "/")) or p.startswith("<") or "/torch/" in p


_RECORDER: Recorder | None = None


def _wrap(cls: Any) -> None:
    original = cls.__dict__.get("run")
    if original is None or getattr(original, "_argus_wrapped", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        # the arguments pass through untouched: `grid` and `warmup` are keywords in every
        # Triton since 3.0, but a version or subclass that defaults them must not break
        if not kwargs.get("warmup", False) and _RECORDER is not None and "grid" in kwargs:
            try:
                meta = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
                _RECORDER.observe(self, args, meta, kwargs["grid"])
            except Exception as exc:  # noqa: BLE001 - recording must never change the launch
                if len(_RECORDER.errors) < 20:
                    _RECORDER.errors.append(f"{type(exc).__name__}: {exc}")
        return original(self, *args, **kwargs)

    run._argus_wrapped = True  # type: ignore[attr-defined]
    run.__wrapped__ = original  # type: ignore[attr-defined]
    run.__doc__ = original.__doc__
    cls.run = run


def patch_module(module: Any) -> None:
    """Wrap the launch entry points that `module` defines (triton.runtime.jit or .interpreter)."""
    for cls_name in ("JITFunction", "InterpretedFunction"):
        cls = getattr(module, cls_name, None)
        if isinstance(cls, type):
            _wrap(cls)


class _PatchOnImport:
    """A meta-path finder that patches Triton's runtime modules right after they execute, so
    the hook costs nothing in processes that never import Triton."""

    targets = ("triton.runtime.jit", "triton.runtime.interpreter")

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.targets:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None and spec.loader is not None:
                _wrap_loader(spec)
                return spec
        return None


def _wrap_loader(spec: Any) -> None:
    loader = spec.loader
    exec_module = getattr(loader, "exec_module", None)
    if exec_module is None:
        return

    def patched_exec(module: Any) -> None:
        exec_module(module)
        with contextlib.suppress(Exception):  # never break the user's import
            patch_module(module)

    try:
        loader.exec_module = patched_exec
    except AttributeError:
        return


def install(part_dir: str) -> None:
    """Start recording into `part_dir` (one part file per process)."""
    global _RECORDER
    if _RECORDER is not None:
        return
    os.makedirs(part_dir, exist_ok=True)
    _RECORDER = Recorder(part_dir)
    for name in _PatchOnImport.targets:
        if name in sys.modules:
            patch_module(sys.modules[name])
    sys.meta_path.insert(0, _PatchOnImport())
    import atexit

    atexit.register(_flush_at_exit)


def _flush_at_exit() -> None:
    if _RECORDER is not None and _RECORDER.entries:
        with contextlib.suppress(OSError):
            _RECORDER.flush()  # the call counts since the last new signature
