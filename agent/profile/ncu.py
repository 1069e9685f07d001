"""Nsight Compute (`ncu --csv`) output: parse it, and summarise the task's kernel.

Why a hand parser: ncu's CSV mixes the profiled program's own output and `==PROF==` notes into
stdout, prints numbers with thousands separators ("1,234,567") and writes `n/a` where a metric
does not apply. We find the header row and read from there with the csv module.
"""

from __future__ import annotations

import csv
import io
import statistics
from dataclasses import dataclass, field

# Unit names as ncu prints them, to SI base units (bytes, seconds, 1/s). "%" and counts pass through.
_UNIT_SCALE = {
    "nsecond": 1e-9,
    "usecond": 1e-6,
    "msecond": 1e-3,
    "second": 1.0,
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "byte": 1.0,
    "Kbyte": 1e3,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "Tbyte": 1e12,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "cycle/nsecond": 1e9,
    "cycle/usecond": 1e6,
    "cycle/second": 1.0,
    "hz": 1.0,
    "Khz": 1e3,
    "Mhz": 1e6,
    "Ghz": 1e9,
    "Hz": 1.0,
    "KHz": 1e3,
    "MHz": 1e6,
    "GHz": 1e9,
    "byte/second": 1.0,
    "Kbyte/second": 1e3,
    "Mbyte/second": 1e6,
    "Gbyte/second": 1e9,
    "Tbyte/second": 1e12,
}


def number(text: str) -> float | None:
    """ "1,234.5" -> 1234.5; "n/a", "" and other non-numbers -> None."""
    t = text.strip().replace(",", "")
    if not t or t.lower() in ("n/a", "nan", "-"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


@dataclass
class NcuKernel:
    """One profiled launch: its name, launch shape and metrics (value in SI base units, unit)."""

    id: int
    name: str
    block: str = ""
    grid: str = ""
    device: str = ""
    metrics: dict[str, float | None] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def get(self, metric: str) -> float | None:
        return self.metrics.get(metric)


def parse_ncu_csv(text: str) -> list[NcuKernel]:
    """Every launch in an `ncu --csv` (details page) output, in profiling order."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID","Process ID"')), None)
    if start is None:
        return []
    rows = [ln for ln in lines[start:] if ln.startswith('"')]
    kernels: dict[int, NcuKernel] = {}
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        try:
            kid = int(row["ID"])
        except (KeyError, ValueError, TypeError):
            continue
        k = kernels.get(kid)
        if k is None:
            k = kernels[kid] = NcuKernel(
                kid,
                row.get("Kernel Name", ""),
                row.get("Block Size", ""),
                row.get("Grid Size", ""),
                row.get("Device", ""),
            )
        name = row.get("Metric Name")
        if not name:
            continue
        unit = (row.get("Metric Unit") or "").strip()
        value = number(row.get("Metric Value", ""))
        if value is not None:
            value *= _UNIT_SCALE.get(unit, 1.0)
        k.metrics[name] = value
        k.units[name] = unit
    return [kernels[i] for i in sorted(kernels)]


@dataclass
class NcuSummary:
    """The task's kernel as ncu saw it: duration, ncu's own % of peak, DRAM traffic."""

    kernels: int
    names: list[str]
    duration_s: float | None
    sm_pct: float | None  # sm__throughput, % of peak sustained
    dram_pct: float | None  # dram__throughput, % of peak sustained
    mem_pct: float | None  # gpu__compute_memory_throughput
    dram_bytes: float | None
    dram_tbs: float | None  # measured DRAM bytes over ncu's duration
    tensor_pct: float | None
    occupancy_pct: float | None
    sm_clock_hz: float | None
    registers: float | None

    def to_json(self) -> dict:
        return dict(self.__dict__)


def summarize(kernels: list[NcuKernel], kernel_name: str | None) -> NcuSummary | None:
    """Sum durations and traffic over the launches of `kernel_name` (all launches if none match).

    Percentages are duration-weighted means, so a launcher that runs two kernels reports the
    share of the whole call, as the timing does.
    """
    chosen = [k for k in kernels if kernel_name and kernel_name in k.name] or kernels
    if not chosen:
        return None

    def total(metric: str) -> float | None:
        vals = [k.get(metric) for k in chosen]
        return sum(v for v in vals if v is not None) if any(v is not None for v in vals) else None

    duration = total("gpu__time_duration.sum")

    def weighted(metric: str) -> float | None:
        pairs = [(k.get(metric), k.get("gpu__time_duration.sum") or 0.0) for k in chosen]
        pairs = [(v, w) for v, w in pairs if v is not None]
        if not pairs:
            return None
        wsum = sum(w for _, w in pairs)
        return sum(v * w for v, w in pairs) / wsum if wsum else statistics.mean(v for v, _ in pairs)

    reads, writes = total("dram__bytes_read.sum"), total("dram__bytes_write.sum")
    dram = (reads or 0.0) + (writes or 0.0) if reads is not None or writes is not None else None
    regs = [k.get("launch__registers_per_thread") for k in chosen]
    return NcuSummary(
        kernels=len(chosen),
        names=sorted({k.name for k in chosen}),
        duration_s=duration,
        sm_pct=weighted("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        dram_pct=weighted("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        mem_pct=weighted("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        dram_bytes=dram,
        dram_tbs=dram / duration / 1e12 if dram and duration else None,
        tensor_pct=_max(
            weighted("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
            weighted("sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"),
        ),
        occupancy_pct=weighted("sm__warps_active.avg.pct_of_peak_sustained_active"),
        sm_clock_hz=weighted("sm__cycles_elapsed.avg.per_second"),
        registers=max((r for r in regs if r is not None), default=None),
    )


def _max(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None
