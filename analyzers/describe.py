"""Hover: what the interpreter knows about a kernel variable.

The kernel under the cursor is interpreted for its first probe launch and first program with a
trace of every assignment; the value the name holds at the cursor's line is described: shape,
dtype, the tensor and coordinates its lanes carry (as ranges per dimension), masked lanes, and
for pointers which tensor they address.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from analyzers.frontend.parse import parse
from analyzers.interp.values import Ptr, TensorInfo, Val


def _span_text(arr: np.ndarray) -> str:
    vals = arr[~np.isnan(arr)] if arr.dtype.kind == "f" else arr.reshape(-1)
    if vals.size == 0:
        return "none (all lanes masked)"
    lo, hi = int(vals.min()), int(vals.max())
    return str(lo) if lo == hi else f"{lo}..{hi}"


def _axes(arr: np.ndarray) -> str:
    from analyzers.interp.tags import varies

    along = [str(ax) for ax in range(arr.ndim) if varies(arr, ax)]
    return f" along axis {', '.join(along)}" if along else ""


def describe_value(name: str, v: Any, sizes: str, pid: tuple[int, ...]) -> str:
    head = f"**{name}**"
    where = f"\n\n_at {sizes}, program_id={pid if len(pid) > 1 else pid[0]}_"
    if isinstance(v, Ptr):
        t = v.tensor
        coords, valid = t.unravel(np.asarray(v.offsets))
        dims = ", ".join(
            f"{s}: {_span_text(np.where(valid, coords[..., d], np.nan).astype(float))}"
            for d, s in enumerate(t.symbols)
        )
        return f"{head}: pointer tile {tuple(v.offsets.shape)} into `{t.name}` {tuple(t.shape)}\n\n- addresses {dims}{where}"
    if isinstance(v, Val):
        lines = [f"{head}: {'scalar' if v.is_scalar else 'tile ' + str(tuple(v.shape))} of {v.dtype}"]
        if v.is_scalar and not v.tags:
            lines.append(f"- value {v.item()}")
        for k, arr in v.tags.items():
            lines.append(
                f"- {k} = {_span_text(np.asarray(arr, dtype=float))}{_axes(np.asarray(arr, dtype=float))}"
                + (" (through a loaded index)" if k in v.index_tags else "")
            )
        if v.undef is not None and np.any(v.undef):
            lines.append(f"- {int(np.sum(v.undef))} lanes undefined (masked load without `other=`)")
        if v.pad is not None and np.any(v.pad):
            lines.append(f"- {int(np.sum(v.pad))} lanes outside the data (masked, filled with `other=`)")
        if v.dtype == "int1" and not v.is_scalar:
            lines.append(f"- {int(np.sum(v.data))} of {v.data.size} lanes true")
        if v.grows and v.dtype.startswith(("int", "uint")) and v.dtype != "int1":
            lines.append("- grows with the problem size" + (" (int32)" if v.dtype == "int32" else ""))
        if v.scale is not None and v.scale != "any":
            lines.append("- relative to a running max (online softmax scale tag)")
        return "\n".join(lines) + where
    if isinstance(v, TensorInfo):
        return f"{head}: tensor `{v.name}` of shape {v.shape}{where}"
    return f"{head}: {type(v).__name__}"


def describe(source: bytes, byte_offset: int) -> str | None:
    from analyzers import analyze as A
    from analyzers.interp.facts import FactSink
    from analyzers.interp.interpreter import Interpreter
    from analyzers.model.kernel import build_kernel_model, parse_snippet
    from analyzers.model.launch import LaunchBinder
    from analyzers.model.scan import scan_kernel

    tree = parse(source)
    node = tree.root_node.descendant_for_byte_range(byte_offset, byte_offset)
    if node is None or node.type != "identifier":
        return None
    name = node.text.decode("utf-8", "replace") if node.text else ""
    view = A._module_view(source, tree)
    site = next((s for s in view.sites if s.node.start_byte <= byte_offset < s.node.end_byte), None)
    if site is None:
        return None
    try:
        module, smap = parse_snippet(
            source, site.node.start_byte, site.node.end_byte, view.starts, site.node.start_point[0]
        )
        func = next(n for n in module.body if isinstance(n, ast.FunctionDef))
        kernel = build_kernel_model(func, smap, view.const_nodes)
        helpers = A._helpers(view, site)
        scan = scan_kernel(func, [p.name for p in kernel.params], {k: h.func for k, h in helpers.items()})
        sites = A._launch_sites(view, site.name, A._launcher_nodes(view, site.name))
        binder = LaunchBinder(kernel, scan, sites[0] if sites else None)
        binder.record()
        config = kernel.autotune.configs[0] if kernel.autotune and kernel.autotune.configs else None
        launch = binder.probe("ragged", config)
        int_tensors: set[str] = set()
        for _ in range(6):
            interp = Interpreter(kernel, scan, launch, helpers, view.consts, FactSink(), int_tensors)
            interp.trace = {}
            interp.program_ids = [(0, 0, 0)]
            env = interp.bind_params()
            try:
                interp.block(kernel.func.body, env)
                break
            except A.Retype as r:
                int_tensors.add(r.name)
            except Exception:  # noqa: BLE001 - the trace up to the failure is still useful
                break
    except Exception:  # noqa: BLE001 - hover must never fail the server
        return None
    cursor_line = node.start_point[0] - smap.row0 + 1
    found = [(line, v) for (n, line), v in (interp.trace or {}).items() if n == name and line <= cursor_line]
    value = max(found, key=lambda x: x[0])[1] if found else env.get(name)
    if value is None:
        return None
    return describe_value(name, value, launch.describe_sizes(), interp.pid[: max(launch.grid_axes, 1)])
