"""Stage 3 of the pipeline: which probe launches a kernel is interpreted under.

A probe is one set of problem sizes (`ragged`: one more than a tile, `exact`: whole tiles, `half`,
`one`: size 1, `big`: past a launcher's cap on a block size) and one autotune config. The first
config runs every probe kind the kernel needs; further configs (at most `MAX_CONFIGS`) run the
ragged sizes only. Launch binding (model/launch.py) computes the sizes of a kind; this module
decides which kinds are worth running.
"""

from __future__ import annotations

import ast
from typing import Any

from argus.analyzers.interp.values import TensorInfo
from argus.analyzers.model.binder_picks import SECOND_PICK
from argus.analyzers.model.kernel import KernelModel
from argus.analyzers.model.launch import LaunchBinder, ProbeLaunch
from argus.analyzers.model.nodes import subtree
from argus.analyzers.model.scan import KernelScan

MAX_CONFIGS = 4
MAX_PROBE_ELEMENTS = 1 << 23  # a probe whose tensors are larger is skipped (named in AR001)


def probe_configs(kernel: KernelModel, binder: LaunchBinder | None = None) -> list[dict[str, Any] | None]:
    """The autotune configs probed (the first few), or one `None` for an untuned kernel. A
    launch that picks values the code does not establish (`binder.wants_second_pick()`, see
    model/binder_picks.py) adds a probe with every pick varied (`SECOND_PICK`)."""
    configs: list[dict[str, Any] | None] = [None]
    if kernel.autotune and kernel.autotune.configs:
        configs = list(kernel.autotune.configs[:MAX_CONFIGS])
    if binder is not None and binder.wants_second_pick():
        configs.append(SECOND_PICK)
    return configs


def probe_kinds(
    kernel: KernelModel, scan: KernelScan, binder: LaunchBinder, first_config: bool
) -> tuple[str, ...]:
    """The size kinds probed for one config: all that can take another path for the first one,
    the ragged sizes alone for the others; `big` wherever a launcher caps a block size."""
    if not first_config:
        return ("ragged",)
    kinds = ("ragged", "half", "exact", "one") if _branches(kernel, scan, binder) else ("ragged", "one")
    return kinds + (("big",) if binder.block_driving else ())


def oversized(launch: ProbeLaunch) -> int | None:
    """The element count of the largest tensor, when it is too large to interpret."""
    biggest = max((v.extent for v in launch.args.values() if isinstance(v, TensorInfo)), default=0)
    return biggest if biggest > MAX_PROBE_ELEMENTS else None


def _branches(kernel: KernelModel, scan: KernelScan, binder: LaunchBinder) -> bool:
    """Ragged sizes and size 1 always; exact and half-tile multiples only where the kernel
    branches on its sizes (heuristics such as EVEN_K, `if K % BLOCK_K == 0`, a constexpr the
    launcher derives from a size), where they take a different path. Branches on flags
    (`if MUL_ROUTED_WEIGHT`) or on loaded data (`if pid_m * BM >= num_tokens_post_padded`)
    take the same path at every size, so those probes would repeat the ragged one."""
    if kernel.heuristics:
        return True
    params = {p.name: p for p in kernel.params}
    size_driven: set[str] | None = None
    for n in subtree(kernel.func):
        if not isinstance(n, ast.If | ast.IfExp):
            continue
        names = {x.id for x in ast.walk(n.test) if isinstance(x, ast.Name)}
        roots = set().union(*(scan.derived.get(x, {x}) for x in names)) if names else set()
        if roots & scan.pointers:
            continue  # decided by loaded data
        for r in roots:
            p = params.get(r)
            if p is None:
                continue
            if not p.constexpr:
                return True
            if size_driven is None:
                size_driven = binder.size_driven_constexprs()
            if size_driven is None or r in size_driven:
                return True
    return False
