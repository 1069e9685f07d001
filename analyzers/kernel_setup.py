"""Stage 2 of the pipeline: one kernel, parsed and modelled, ready to be bound and probed.

The kernel model (parameters, autotune configs, heuristics), the helpers it reaches, the
flow-insensitive scan and its launch sites. Both the checker and hover start here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from argus.analyzers.compile_time import compile_time_functions
from argus.analyzers.errors import CANNOT_EVALUATE, NoLaunch
from argus.analyzers.frontend.parse import span_of
from argus.analyzers.frontend.queries import KernelSite
from argus.analyzers.model.kernel import Helper, KernelModel, SourceMap, build_kernel_model
from argus.analyzers.model.launch import LaunchBinder, LaunchSite
from argus.analyzers.model.node_memo import on_node
from argus.analyzers.model.scan import KernelScan, scan_kernel
from argus.analyzers.module_view import ModuleView
from argus.analyzers.probes import probe_configs, probe_kinds
from argus.analyzers.project import first_binding, pin_launch


@dataclass
class KernelSetup:
    """What the probes and the interpreter of one kernel read."""

    site: KernelSite
    func: ast.FunctionDef
    smap: SourceMap
    kernel: KernelModel
    helpers: dict[str, Helper]
    scan: KernelScan
    launch_sites: list[LaunchSite]


def parse_kernel(view: ModuleView, site: KernelSite) -> tuple[ast.FunctionDef, SourceMap]:
    """The kernel's definition as `ast`, its names rewritten by the file's imports (`rsqrt` ->
    `tl.rsqrt`; the check and hover's traces read the same tree); raises SyntaxError,
    StopIteration, UnicodeDecodeError or ValueError when it does not parse on its own."""
    return view.jit_function(site.node)


def set_up_kernel(view: ModuleView, site: KernelSite, func: ast.FunctionDef, smap: SourceMap) -> KernelSetup:
    kernel = build_kernel_model(func, smap, view.const_nodes)
    helpers = view.helpers(site)
    roots = [site.function, *(s.function for s in view.sites if s.name in helpers)]
    for name, fn in compile_time_functions(view, roots).items():
        helpers.setdefault(name, fn)  # a jit helper of the same name wins
    scan = kernel_scan(func, [p.name for p in kernel.params], {k: h.func for k, h in helpers.items()})
    sites = view.launch_sites(site.name) or foreign_launch(view, site, kernel, scan)
    return KernelSetup(site, func, smap, kernel, helpers, scan, sites)


def kernel_scan(func: ast.FunctionDef, params: list[str], helpers: dict[str, ast.FunctionDef]) -> KernelScan:
    """`scan_kernel`, kept on the kernel's tree while its helpers are the same trees
    (model/node_memo.py): the document's trees outlive a check where their text did not change
    (snippet_memo.py), and a launcher edit re-binds kernels whose scan it cannot change. The scan
    is read, never changed, by the binder and the interpreter."""
    names = sorted(helpers)
    return on_node(
        func,
        ("kernel_scan", tuple(params), tuple(names)),
        lambda: scan_kernel(func, params, helpers),
        *[helpers[n] for n in names],
    )


def foreign_launch(
    view: ModuleView, site: KernelSite, kernel: KernelModel, scan: KernelScan
) -> list[LaunchSite]:
    """No launch in the file: the first launch from another module of the package that binds."""
    found, _texts = view.foreign_launch_sites(site.name)
    anchor = span_of(site.function.child_by_field_name("name") or site.function)
    return list(first_binding([pin_launch(s, anchor) for s in found], lambda s: _binds(kernel, scan, s)))


def _binds(kernel: KernelModel, scan: KernelScan, launch: LaunchSite) -> bool:
    """The launch records and gives every probe of the first config without an error: one the
    binder would give up on (and fall back from) is no better than none."""
    try:
        binder = LaunchBinder(kernel, scan, launch)
        binder.record()
        config = probe_configs(kernel)[0]
        for kind in probe_kinds(kernel, scan, binder, True):
            try:
                binder.probe(kind, config)
            except NoLaunch:
                continue  # no launch at these sizes (an empty loop around it): nothing wrong
    except CANNOT_EVALUATE:
        return False
    return True
