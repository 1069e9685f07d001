"""Hover's interpretation: one kernel, its first probe and first program, with a trace.

The kernel runs through the same stages as a check (module view, kernel setup, launch binding)
for the `ragged` probe of its first config and program (0, 0, 0), recording the value of every
assignment; the value a name holds at a given line is what hover describes (describe.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from argus.analyzers.cache import KernelCache, cache_key
from argus.analyzers.frontend.queries import KernelSite
from argus.analyzers.interp.facts import FactSink
from argus.analyzers.interp.interpreter import Interpreter
from argus.analyzers.interp.ops_core import Retype
from argus.analyzers.kernel_setup import parse_kernel, set_up_kernel
from argus.analyzers.model.launch import LaunchBinder
from argus.analyzers.module_view import ModuleView

MAX_RETYPES = 6


@dataclass(frozen=True)
class KernelTrace:
    """One run of a kernel's first program with every assignment recorded: all a hover on any
    name of that kernel needs, so a second hover in the same kernel interprets nothing."""

    values: dict[tuple[str, int], Any]  # (name, kernel-relative line) -> first value assigned
    params: dict[str, Any]  # the names bound when the program ended (parameters among them)
    sizes: str
    pid: tuple[int, ...]


def trace_kernel(
    view: ModuleView, site: KernelSite, name: str, row: int, memo: KernelCache | None = None
) -> tuple[Any, str, tuple[int, ...]] | None:
    """The value `name` holds at 0-based file row `row` (its last assignment at or above it, or
    its parameter value), with the probe's sizes and program id; None when unknown. `memo`
    keeps each kernel's trace by the exact text it was computed from (`trace_key`)."""
    key = trace_key(view, site) if memo is not None else ""
    traced = memo.get(key) if memo is not None else None
    if traced is None:
        traced = _run_trace(view, site)
        if traced is None:
            return None
        if memo is not None:
            memo.put(key, traced)
    cursor_line = row - site.node.start_point[0] + 1
    found = [(line, v) for (n, line), v in traced.values.items() if n == name and line <= cursor_line]
    value = max(found, key=lambda x: x[0])[1] if found else traced.params.get(name)
    if value is None:
        return None
    return value, traced.sizes, traced.pid


def trace_key(view: ModuleView, site: KernelSite) -> str:
    """The kernel's, its launchers' and its helpers' text as they are (blank lines included:
    the trace's lines are relative to the kernel's first), the module's constants and the other
    modules' texts the kernel reads."""
    src = view.source
    helpers = view.reachable_helpers(site)
    nodes = [site.node, *view.launcher_nodes(site.name)]
    nodes += [h.node for h in view.sites if h is not site and h.name in helpers]
    foreign = view.foreign_texts(site)
    return cache_key(
        b"trace",
        view.const_text,
        *[p.encode() + b"\0" + text for p, text in sorted(foreign.items())],
        *[src[n.start_byte : n.end_byte] + b"@" + str(n.start_point[1]).encode() for n in nodes],
    )


def _run_trace(view: ModuleView, site: KernelSite) -> KernelTrace | None:
    try:
        func, smap = parse_kernel(view, site)
        setup = set_up_kernel(view, site, func, smap)
        kernel = setup.kernel
        binder = LaunchBinder(kernel, setup.scan, setup.launch_sites[0] if setup.launch_sites else None)
        binder.record()
        config = kernel.autotune.configs[0] if kernel.autotune and kernel.autotune.configs else None
        launch = binder.probe("ragged", config)
        int_tensors: set[str] = set()
        for _ in range(MAX_RETYPES):
            interp = Interpreter(
                kernel, setup.scan, launch, setup.helpers, view.consts, FactSink(), int_tensors
            )
            interp.trace = {}
            interp.program_ids = [(0, 0, 0)]
            env = interp.bind_params()
            try:
                interp.block(kernel.func.body, env)
                break
            except Retype as r:
                int_tensors.add(r.name)
            except Exception:  # noqa: BLE001 - the trace up to the failure is still useful
                break
    except Exception:  # noqa: BLE001 - hover must never fail the server
        return None
    # the trace's lines count from the kernel's first row (`smap.row0`, its start row)
    pid = interp.pid[: max(launch.grid_axes, 1)]
    return KernelTrace(dict(interp.trace or {}), dict(env), launch.describe_sizes(), pid)
