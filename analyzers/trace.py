"""Hover's interpretation: one kernel, its first probe and first program, with a trace.

The kernel runs through the same stages as a check (module view, kernel setup, launch binding)
for the `ragged` probe of its first config and program (0, 0, 0), recording the value of every
assignment; the value a name holds at a given line is what hover describes (describe.py).
"""

from __future__ import annotations

from typing import Any

from argus.analyzers.frontend.queries import KernelSite
from argus.analyzers.interp.facts import FactSink
from argus.analyzers.interp.interpreter import Interpreter
from argus.analyzers.interp.ops_core import Retype
from argus.analyzers.kernel_setup import parse_kernel, set_up_kernel
from argus.analyzers.model.launch import LaunchBinder
from argus.analyzers.module_view import ModuleView

MAX_RETYPES = 6


def trace_kernel(
    view: ModuleView, site: KernelSite, name: str, row: int
) -> tuple[Any, str, tuple[int, ...]] | None:
    """The value `name` holds at 0-based file row `row` (its last assignment at or above it, or
    its parameter value), with the probe's sizes and program id; None when unknown."""
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
    cursor_line = row - smap.row0 + 1
    found = [(line, v) for (n, line), v in (interp.trace or {}).items() if n == name and line <= cursor_line]
    value = max(found, key=lambda x: x[0])[1] if found else env.get(name)
    if value is None:
        return None
    return value, launch.describe_sizes(), interp.pid[: max(launch.grid_axes, 1)]
