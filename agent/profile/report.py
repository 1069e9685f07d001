"""Reports: a rich table for the terminal, a roofline plot (PNG) and an HTML page around it.

matplotlib is imported lazily and with the Agg backend, so the table works without it and the
plot works on a headless host.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path

from argus.agent.profile.peaks import find_peak, peak_by_name
from argus.agent.profile.result import ProfileResult, _fmt_time


def _num(value: float | None, fmt: str, suffix: str = "") -> str:
    return "-" if value is None else format(value, fmt) + suffix


def table(results: Sequence[ProfileResult]):
    """A rich Table: one column per profiled task."""
    from rich.table import Table

    t = Table(title="argus profile", show_lines=False)
    t.add_column("", style="bold")
    for r in results:
        t.add_column(r.task)
    rows: list[tuple[str, list[str]]] = [
        ("target", [r.target for r in results]),
        ("device", [r.device for r in results]),
        ("sizes", [" ".join(f"{k}={v}" for k, v in r.sizes.items()) or "-" for r in results]),
        ("dtype", [r.dtype or "-" for r in results]),
        ("time (median)", [_fmt_time(r.median_ms) + f"  (n={int(r.timing.get('n', 0))})" for r in results]),
        (
            "p10 / p90",
            [
                f"{_fmt_time(r.timing.get('p10_ms', 0))} / {_fmt_time(r.timing.get('p90_ms', 0))}"
                for r in results
            ],
        ),
        ("TFLOP/s", [_num(r.roofline.tflops, ".1f") for r in results]),
        ("TB/s", [_num(r.roofline.tbs, ".3f") for r in results]),
        ("FLOP / byte", [_num(r.roofline.intensity, ".1f") for r in results]),
        (
            "peak",
            [
                f"{r.peak}: {_num(r.roofline.peak_tflops, '.0f')} TFLOP/s, {_num(r.roofline.peak_tbs, '.2f')} TB/s"
                if r.peak
                else "-"
                for r in results
            ],
        ),
        ("% of compute peak", [_num(r.roofline.pct_compute, ".1f", "%") for r in results]),
        ("% of HBM peak", [_num(r.roofline.pct_memory, ".1f", "%") for r in results]),
        ("% of roofline", [_num(r.roofline.pct_of_roof, ".1f", "%") for r in results]),
        ("bound", [r.roofline.bound for r in results]),
        ("rel. error vs reference", [_num(r.rel_error, ".2e") for r in results]),
    ]
    if any(r.do_bench_ms is not None for r in results):
        rows.append(
            (
                "do_bench (median)",
                [
                    f"{_fmt_time(r.do_bench_ms)} ({100 * (r.median_ms / r.do_bench_ms - 1):+.1f}%)"
                    if r.do_bench_ms
                    else "-"
                    for r in results
                ],
            )
        )
    if any(r.counters for r in results):
        rows += _counter_rows(results)
    for label, cells in rows:
        t.add_row(label, *cells)
    return t


def _counter_rows(results: Sequence[ProfileResult]) -> list[tuple[str, list[str]]]:
    def cell(r: ProfileResult, fn) -> str:
        c = r.counters or {}
        if not c:
            return "-"
        if c.get("error"):
            return "error: " + str(c["error"])[:80]
        return fn(c)

    return [
        ("counters", [cell(r, lambda c: c.get("tool", "?")) for r in results]),
        (
            "  kernel time",
            [
                cell(
                    r,
                    lambda c: (
                        _fmt_time(c["duration_s"] * 1e3)
                        if c.get("duration_s")
                        else (_fmt_time(c["median_ns"] / 1e6) if c.get("median_ns") else "-")
                    ),
                )
                for r in results
            ],
        ),
        ("  SM throughput", [cell(r, lambda c: _num(c.get("sm_pct"), ".1f", "%")) for r in results]),
        (
            "  FLOPs / ncu time",
            [
                cell(r, lambda c: _num(c.get("compute_pct_of_table_peak"), ".1f", "% of table peak"))
                for r in results
            ],
        ),
        (
            "  SM clock",
            [
                cell(r, lambda c: _num((c.get("sm_clock_hz") or 0) / 1e9 or None, ".2f", " GHz"))
                for r in results
            ],
        ),
        (
            "  DRAM throughput",
            [
                cell(
                    r,
                    lambda c: (
                        _num(c.get("dram_pct"), ".1f", "%")
                        + f" ({_num(c.get('dram_tbs'), '.2f')} TB/s, "
                        + _num(c.get("dram_pct_of_table_peak"), ".1f", "% of table peak)")
                    ),
                )
                for r in results
            ],
        ),
        ("  tensor pipe", [cell(r, lambda c: _num(c.get("tensor_pct"), ".1f", "%")) for r in results]),
        ("  occupancy", [cell(r, lambda c: _num(c.get("occupancy_pct"), ".1f", "%")) for r in results]),
    ]


def roofline_png(results: Sequence[ProfileResult], path: str | Path | None = None) -> bytes:
    """A log-log roofline (per-dtype compute roofs, HBM roof) with each kernel marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.2), dpi=120)
    gpu = [r for r in results if not r.is_cpu]
    peak = next((peak_by_name(r.peak) for r in gpu if r.peak), None) or (
        find_peak(gpu[0].device) if gpu else None
    )
    xs = [r.roofline.intensity for r in results if r.roofline.intensity]
    lo = min([0.1, *[x / 4 for x in xs]])
    hi = max([2000.0, *[x * 4 for x in xs]])
    if peak is not None:
        bw = peak.bytes_per_s / 1e12
        styles = {"fp8": ":", "bf16": "-", "tf32": "-.", "fp32": "--"}
        for dt, style in styles.items():
            p = peak.tflops.get(dt)
            if not p:
                continue
            ridge = p / bw
            ax.plot(
                [lo, ridge, hi],
                [lo * bw, p, p],
                style,
                color="0.35" if dt != "bf16" else "black",
                lw=1.2 if dt != "bf16" else 2.0,
                label=f"{peak.name} {dt} {p:.0f} TFLOP/s",
            )
        ax.text(
            lo * 1.3, lo * 1.3 * bw * 1.25, f"HBM {peak.hbm_tbs} TB/s", rotation=0, fontsize=8, color="0.3"
        )
    for r in results:
        if not (r.roofline.intensity and r.roofline.tflops):
            continue
        ax.plot(r.roofline.intensity, r.roofline.tflops, "o", ms=9, label=f"{r.task}: {r.lens_text()}")
        ax.annotate(
            r.kernel,
            (r.roofline.intensity, r.roofline.tflops),
            textcoords="offset points",
            xytext=(6, -12),
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP / byte of HBM traffic)")
    ax.set_ylabel("TFLOP/s")
    title = f"Roofline: {gpu[0].device}" if gpu else "Roofline"
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    data = buf.getvalue()
    if path is not None:
        Path(path).write_bytes(data)
    return data


def html_report(results: Sequence[ProfileResult], path: str | Path) -> None:
    """A self-contained HTML page: the table, the roofline (inline PNG) and the raw JSON."""
    from rich.console import Console

    console = Console(record=True, width=140, file=io.StringIO())
    console.print(table(results))
    png = base64.b64encode(roofline_png(results)).decode()
    body = json.dumps([r.to_json() for r in results], indent=2)
    Path(path).write_text(
        "<!doctype html><meta charset='utf-8'><title>argus profile</title>"
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
        "pre{background:#f6f6f6;padding:1em;overflow:auto}</style>"
        "<h1>argus profile</h1>"
        + "".join(f"<p><b>{html.escape(r.task)}</b>: {html.escape(r.lens_text())}</p>" for r in results)
        + f"<img alt='roofline' src='data:image/png;base64,{png}'>"
        + f"<pre>{html.escape(console.export_text())}</pre>"
        + "".join(f"<p>note: {html.escape(n)}</p>" for r in results for n in r.notes)
        + f"<details><summary>JSON</summary><pre>{html.escape(body)}</pre></details>",
        encoding="utf-8",
    )


def write_report(results: Sequence[ProfileResult], path: str | Path) -> None:
    """PNG or HTML by the file's suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".png":
        roofline_png(results, path)
    elif suffix in (".html", ".htm"):
        html_report(results, path)
    else:
        raise ValueError(f"--report {path}: use a .png or .html file name")
