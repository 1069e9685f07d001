"""AMD profiler output: rocprofv3 kernel traces and stats (CSV), rocprof-compute analyze tables.

Why the care with grid sizes: in rocprofv3's kernel trace `Grid_Size_*` counts *work-items*, not
workgroups (HIP's grid is in blocks, the HSA dispatch packet's in work-items), so the number of
Triton programs is Grid_Size / Workgroup_Size per axis. Peaks never come from these tools
(rocprof-compute's "Peak" column uses the highest engine clock): the roofline uses peaks.py.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass


@dataclass
class Dispatch:
    """One kernel dispatch from a rocprofv3 kernel trace."""

    name: str
    start_ns: int
    end_ns: int
    grid: tuple[int, int, int]  # work-items per axis
    workgroup: tuple[int, int, int]
    vgpr: int | None = None
    lds_bytes: int | None = None

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def programs(self) -> int:
        """Workgroups launched, i.e. Triton programs: Grid_Size / Workgroup_Size on each axis."""
        n = 1
        for g, w in zip(self.grid, self.workgroup, strict=True):
            n *= -(-g // max(w, 1))
        return n


def _int(row: dict, *keys: str) -> int | None:
    for key in keys:
        if key in row and str(row[key]).strip() not in ("", "n/a"):
            try:
                return int(float(str(row[key]).replace(",", "")))
            except ValueError:
                return None
    return None


def parse_kernel_trace(text: str) -> list[Dispatch]:
    """Rows of `<prefix>_kernel_trace.csv` (rocprofv3 --kernel-trace --output-format csv)."""
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        name = row.get("Kernel_Name")
        start, end = _int(row, "Start_Timestamp"), _int(row, "End_Timestamp")
        if not name or start is None or end is None:
            continue
        grid = tuple(_int(row, f"Grid_Size_{a}") or 1 for a in "XYZ")
        wg = tuple(_int(row, f"Workgroup_Size_{a}") or 1 for a in "XYZ")
        out.append(
            Dispatch(
                name,
                start,
                end,
                grid,
                wg,  # type: ignore[arg-type]
                vgpr=_int(row, "VGPR_Count", "Vgpr_Count", "Arch_VGPR_Count"),
                lds_bytes=_int(row, "LDS_Block_Size", "Lds_Block_Size"),
            )
        )
    return out


@dataclass
class KernelStat:
    """One row of `<prefix>_kernel_stats.csv` (rocprofv3 --stats)."""

    name: str
    calls: int
    total_ns: float
    average_ns: float
    percentage: float
    min_ns: float
    max_ns: float


def parse_kernel_stats(text: str) -> list[KernelStat]:
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        try:
            out.append(
                KernelStat(
                    row["Name"],
                    int(row["Calls"]),
                    float(row["TotalDurationNs"]),
                    float(row["AverageNs"]),
                    float(row["Percentage"]),
                    float(row["MinNs"]),
                    float(row["MaxNs"]),
                )
            )
        except (KeyError, ValueError):
            continue
    return out


def summarize_trace(dispatches: list[Dispatch], kernel_name: str | None, skip: int = 0) -> dict | None:
    """Median duration and launch shape of the task's kernel, after `skip` warm-up dispatches."""
    chosen = [d for d in dispatches if kernel_name and kernel_name in d.name] or dispatches
    chosen = chosen[skip:] or chosen
    if not chosen:
        return None
    last = chosen[-1]
    return {
        "name": last.name,
        "dispatches": len(chosen),
        "median_ns": statistics.median(d.duration_ns for d in chosen),
        "programs": last.programs,
        "workgroup": list(last.workgroup),
        "grid": list(last.grid),
        "vgpr": last.vgpr,
        "lds_bytes": last.lds_bytes,
    }


# ---------------------------------------------------------------------------------------------
# rocprof-compute analyze: box-drawn tables (tabulate "fancy_grid") under numbered section titles

_SECTION = re.compile(r"^\s*(\d+(?:\.\d+)*)\.?\s+(\S.*?)\s*$")


def parse_compute_analyze(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """{section title: {metric name: {column: cell}}} for every table in `rocprof-compute analyze`.

    Cells wrapped over several lines are joined; the first column (Index / Metric_ID) keys nothing,
    the "Metric" column keys the row, and column names are kept as printed ("Avg" or "Value",
    "Pct of Peak" or "PoP") so both versions of the tool read alike through `sol_metric`.
    """
    sections: dict[str, dict[str, dict[str, str]]] = {}
    title = ""
    header: list[str] | None = None
    pending: list[list[str]] = []

    def flush() -> None:
        if header and pending:
            cells = [" ".join(p.strip() for p in parts if p.strip()) for parts in zip(*pending, strict=True)]
            row = dict(zip(header, cells, strict=True))
            key = row.get("Metric") or row.get("KernelName") or row.get("Kernel_Name") or cells[0]
            if key:
                sections.setdefault(title, {})[key] = row
        pending.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("│"):
            cells = [c for c in stripped.strip("│").split("│")]
            if header is None:
                header = [c.strip() for c in cells]
            elif len(cells) == len(header):
                pending.append(cells)
        elif stripped[:1] in ("╞", "├", "╘"):
            flush()
            if stripped.startswith("╘"):
                header = None
        elif stripped.startswith("╒"):
            header, pending = None, []
        elif _SECTION.match(line) and "│" not in line and not stripped.startswith("-"):
            title = stripped
    return sections


def sol_metric(table: dict[str, dict[str, str]], metric: str) -> dict[str, float | None]:
    """value / peak / pct of one Speed-of-Light row, whichever column names this version uses."""
    row = table.get(metric, {})

    def num(*keys: str) -> float | None:
        for key in keys:
            if row.get(key, "").strip():
                try:
                    return float(row[key])
                except ValueError:
                    return None
        return None

    return {
        "value": num("Avg", "Value"),
        "peak": num("Peak"),
        "pct": num("Pct of Peak", "PoP"),
        "unit": row.get("Unit") or None,
    }  # type: ignore[dict-item]
