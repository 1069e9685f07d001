"""For every kernel a launch file recorded: is it bound by its own file's launcher, by the
recording, or by neither (and why); and what `check` finds with and without the recording.

    python tests/record/drivers/bound_report.py /tmp/liger.json [--show]

`--show` prints the launcher each recording became.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from argus.analyzers import check_source
from argus.analyzers.errors import HOST_ERRORS as BUILTIN_ERRORS
from argus.analyzers.errors import Unevaluable
from argus.analyzers.frontend.parse import parse
from argus.analyzers.kernel_setup import parse_kernel, set_up_kernel
from argus.analyzers.model.launch import LaunchBinder
from argus.analyzers.model.launch_file import read_launch_file
from argus.analyzers.model.recorded import RecordingUnusable, recorded_site
from argus.analyzers.module_view import build_module_view

HOST_ERRORS = (Unevaluable, *BUILTIN_ERRORS)


def source_binding(view, site) -> str:  # type: ignore[no-untyped-def]
    func, smap = parse_kernel(view, site)
    setup = set_up_kernel(view, site, func, smap)
    kernel, scan, sites = setup.kernel, setup.scan, setup.launch_sites
    if not sites:
        status = "no launch site in its file"
    else:
        try:
            LaunchBinder(kernel, scan, sites[0]).record()
            status = "bound by its file's launcher"
        except HOST_ERRORS as e:
            status = f"launcher not understood ({e})"
    return status, kernel, scan, smap


def main(path: str) -> int:
    lf = read_launch_file(path)
    by_file: dict[str, set[str]] = defaultdict(set)
    for lr in lf.launches:
        by_file[lr.file].add(lr.kernel)
    totals: dict[str, int] = defaultdict(int)
    for file, names in sorted(by_file.items()):
        source = Path(file).read_bytes()
        view = build_module_view(source, parse(source))
        launches = {n: lf.for_kernel(n, file) for n in names}
        before = _gating(check_source(source, file))
        after = _gating(check_source(source, file, launches=launches))
        for site in view.sites:
            if site.name not in names:
                continue
            status, kernel, scan, smap = source_binding(view, site)
            if status.startswith("bound"):
                rec = "not needed"
            else:
                try:
                    rs = recorded_site(kernel, scan, launches[site.name], smap, None)  # type: ignore[arg-type]
                    LaunchBinder(kernel, scan, rs.site).record()
                    rec = "bound from the recording"
                    if "--show" in sys.argv:
                        print(rs.host_source)
                    totals["newly bound"] += 1
                except (RecordingUnusable, *HOST_ERRORS) as e:
                    rec = f"recording unusable ({e})"
            totals[status.split(" (")[0]] += 1
            b, a = before.get(site.name, []), after.get(site.name, [])
            print(f"{file.split('/ops/')[-1]}::{site.name}: {status}; {rec}")
            print(f"    findings without: {b or '-'}; with: {a or '-'}")
    for k, v in sorted(totals.items()):
        print(f"{k}: {v}")
    return 0


def _gating(findings: list) -> dict[str, list[str]]:  # type: ignore[type-arg]
    out: dict[str, list[str]] = defaultdict(list)
    for f in findings:
        if f.severity.value in ("error", "warning"):
            out[f.kernel].append(f"{f.code}@{f.span.start_point[0] + 1}")
    return out


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
