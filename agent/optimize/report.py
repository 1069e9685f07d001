"""Output: the report of one optimize run in JSON and markdown, and a roofline plot (matplotlib, if present).

The markdown holds, per run: candidates proposed, rejected at each gate and why, GPU seconds, the
speedup over the user's kernel, % of the roofline, the re-verification, and the command that
reproduces it. Never the API key: the LLM settings appear only as base URL, model and variable name.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from argus.agent.optimize.types import OptimizeResult


def _fmt(v, spec: str = ".3f", none: str = "-") -> str:
    return none if v is None else format(v, spec)


def markdown(result: OptimizeResult, command: str = "") -> str:
    r = result
    counts = r.rejected_counts()
    lines = [
        f"# argus optimize: {r.target}",
        "",
        f"- status: **{r.status}** ({r.stop_reason})",
        f"- policy: {r.policy}; device: {r.device or '?'}",
        f"- candidates proposed: {len(r.attempts)}; rejected at gate 1 (invariants): {counts['invariants']}, "
        f"gate 2 (correctness): {counts['correctness']}, gate 3 (performance): {counts['performance']}",
        f"- GPU time: {r.gpu_seconds / 60:.2f} min; wall time: {r.seconds / 60:.2f} min",
    ]
    if command:
        lines.append(f"- reproduce: `{command}`")
    if r.best is not None:
        perf = (f"speedup {_fmt(r.best.speedup)}x, {_fmt(r.best.pct_roofline, '.1f')}% of roofline"
                if r.best.speedup else "passed gates 1 and 2; performance not measured")
        lines.append(f"- best: {r.best.candidate.id} ({r.best.candidate.origin}: {r.best.candidate.description}), {perf}")
    if r.reverify:
        lines.append(f"- re-verified in a fresh process on new inputs (seed {r.reverify['seed']}): "
                     f"{'passed' if r.reverify['passed'] else 'FAILED: ' + r.reverify['reason']}")
    for note in r.notes:
        lines.append(f"- note: {note}")
    if r.llm_usage:
        u = r.llm_usage
        lines.append(f"- model: {u.get('model')} at {u.get('base_url')}; calls {u.get('calls')}, tokens "
                     f"{u.get('prompt_tokens')} in / {u.get('completion_tokens')} out, cost {u.get('cost_usd', 'unknown')}")
    lines += ["", "## Diagnosis", "",
              f"pattern `{r.diagnosis.get('pattern')}`, bound {r.diagnosis.get('bound') or 'not measured'}; "
              f"findings: {', '.join(sorted({f['code'] for f in r.diagnosis.get('findings', [])})) or 'none'}; "
              f"cards: {', '.join(c['id'] for c in r.cards) or 'none'}", ""]
    lines += _timing_table(r)
    lines += ["", "## Candidates", "", "| id | origin | what | gate 1 | gate 2 | gate 3 | speedup | % roofline | reason |",
              "|---|---|---|---|---|---|---|---|---|"]
    for a in r.attempts:
        marks = []
        for i in range(3):
            g = a.gates[i] if i < len(a.gates) else None
            marks.append("-" if g is None else ("pass" if g.passed else ("n/m" if not g.measured else "FAIL")))
        reason = (a.summary()["reason"] or "").replace("|", "/").replace("\n", " ")[:200]
        lines.append(f"| {a.candidate.id} | {a.candidate.origin} | {a.candidate.description} | {' | '.join(marks)} | "
                     f"{_fmt(a.speedup)} | {_fmt(a.pct_roofline, '.1f')} | {reason} |")
    if r.patch:
        lines += ["", "## Patch", "", "```diff", r.patch.rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def _timing_table(r: OptimizeResult) -> list[str]:
    rows = r.baseline.get("timing", []) if r.baseline else []
    best_rows = {}
    if r.best is not None and r.best.gates and r.best.gates[-1].gate == "performance":
        best_rows = {x["shape"]: x for x in r.best.gates[-1].details.get("rows", [])}
    if not rows:
        return ["No timing: performance was not measured."]
    compare_keys = sorted({k for row in rows for k in row if k.endswith("_ms") and k != "baseline_ms"})
    head = "| shape | sizes | user's kernel ms | best ms | speedup | % roofline | " + " | ".join(
        f"{k[:-3]} ms | best vs {k[:-3]}" for k in compare_keys) + " |"
    out = ["## Timing (served shapes)", "", head, "|" + "---|" * (6 + 2 * len(compare_keys))]
    ratios: dict[str, list[float]] = {k: [] for k in compare_keys}
    for row in rows:
        b = best_rows.get(row["shape"], {})
        cells = [row["shape"], " ".join(f"{k}={v}" for k, v in row.get("sizes", {}).items()),
                 _fmt(row.get("baseline_ms")), _fmt(b.get("candidate_ms")), _fmt(b.get("speedup")),
                 _fmt(b.get("pct_roofline"), ".1f")]
        for k in compare_keys:
            ratio = row[k] / b["candidate_ms"] if b.get("candidate_ms") and row.get(k) else None
            if ratio:
                ratios[k].append(ratio)
            cells += [_fmt(row.get(k)), _fmt(ratio)]
        out.append("| " + " | ".join(cells) + " |")
    for k, vals in ratios.items():
        if vals:
            gm = math.exp(sum(math.log(v) for v in vals) / len(vals))
            out.append(f"\nGeomean speed of the best candidate relative to `{k[:-3]}`: **{gm:.3f}x** "
                       f"(>1 means faster), over {len(vals)} shapes.")
    return out


def roofline_plot(result: OptimizeResult, path: Path) -> Path | None:
    """Achieved TFLOP/s against arithmetic intensity for the user's kernel and the best candidate."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = result.baseline.get("timing", []) if result.baseline else []
    points = []
    best = {}
    if result.best is not None and result.best.gates[-1].gate == "performance":
        best = {x["shape"]: x for x in result.best.gates[-1].details.get("rows", [])}
    for row in rows:
        if row.get("flops") and row.get("bytes") and row.get("baseline_ms"):
            ai = row["flops"] / row["bytes"]
            points.append(("user", ai, row["flops"] / row["baseline_ms"] / 1e9))
            if row["shape"] in best:
                points.append(("best", ai, row["flops"] / best[row["shape"]]["candidate_ms"] / 1e9))
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, color in (("user", "tab:red"), ("best", "tab:green")):
        pts = [(x, y) for lab, x, y in points if lab == label]
        if pts:
            ax.scatter(*zip(*pts, strict=True), label=label, color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOP / byte")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(result.target)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write(result: OptimizeResult, directory: str | Path, command: str = "", stem: str = "optimize") -> list[Path]:
    """report JSON, markdown and (when possible) the roofline plot into `directory`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    data = {**result.to_json(), "command": command}
    paths = [d / f"{stem}.json", d / f"{stem}.md"]
    paths[0].write_text(json.dumps(data, indent=2, default=str))
    paths[1].write_text(markdown(result, command))
    plot = roofline_plot(result, d / f"{stem}-roofline.png")
    if plot:
        paths.append(plot)
    return paths
