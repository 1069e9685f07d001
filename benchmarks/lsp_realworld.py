"""Live-diagnostics latency on real files, argus next to ruff's server on the same edits.

Run through `python benchmarks/lsp_latency.py --real` (see that file's usage). Both servers run
pinned to one CPU, each in its own run over the same ten files and the same edit script
(lsp_files.py): every edit is typed and then undone, and each of those didChange notifications
waits for the publishDiagnostics carrying its version. For each one the benchmark records the wall
time from writing the didChange to reading that publish (argus analyzes the kernel holding the
edit first and publishes as soon as it is done, so this is when the edited kernel's diagnostics
are current), the wall time to the last publish of that version (when every kernel the edit
touched is), and the CPU time the server spent from the didChange until it went idle again (all
its threads and its child processes' (the check workers), from /proc schedstat; idle: no CPU used in
three 30 ms windows in a row), so work a check leaves running
after its first publish is counted for the edit that caused it, not for the next one. Then, per
file, the document is reopened under a new name, which makes argus check it from scratch (its
longest check), and hovers on names in kernel bodies are sent one after another until that check
publishes: their latency is "hover while a long check runs". Resident memory is read at start,
with all ten files open after the edits, and after closing them all."""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsp_files import STORE, Edit, edits_for, identifiers_in_kernels, pick_files

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lsp"))  # the one raw client, shared with the tests

from rpc_client import RpcClient  # noqa: E402

IDLE_S = 0.03  # the server used no CPU for IDLE_WINDOWS windows this long in a row: the edit's work is done
# (three, not one: on a loaded machine a check, in a worker process of lower priority especially,
# can wait more than one window for the core while it still has work)
IDLE_WINDOWS = 3


@dataclass
class Samples:
    wall: dict[str, list[float]] = field(default_factory=dict)  # kind -> ms, to the first publish
    complete: dict[str, list[float]] = field(default_factory=dict)  # kind -> ms, to the last one
    cpu: dict[str, list[float]] = field(default_factory=dict)
    worst: tuple[float, str] = (0.0, "")
    hover: list[float] = field(default_factory=list)
    hover_pending: int = 0  # hovers answered "being traced" (the trace took longer than hoverWaitMs)
    long_checks: list[float] = field(default_factory=list)
    rss: dict[str, float] = field(default_factory=dict)
    floods: list[tuple[float, float, int]] = field(default_factory=list)  # (final publish, hover) ms, edits
    edits: list[tuple[float, float, str]] = field(default_factory=list)  # (CPU ms, first publish ms, edit)

    def add(self, kind: str, timed: tuple[float, float, float], where: str) -> None:
        wall, complete, cpu = timed
        self.edits.append((cpu, wall, where))
        self.wall.setdefault(kind, []).append(wall)
        self.complete.setdefault(kind, []).append(complete)
        self.cpu.setdefault(kind, []).append(cpu)
        if cpu > self.worst[0]:
            self.worst = (cpu, where)


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else float("nan")


def utf16(s: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in s)


def _timed_change(
    server: RpcClient, uri: str, version: int, rng: dict, text: str
) -> tuple[float, float, float]:
    """(ms to the first publish of `version`, ms to its last, CPU ms until the server is idle)."""
    cpu0 = server.cpu_ns()
    sent = server.change(uri, version, [{"range": rng, "text": text}])
    first, _ = server.published_timed(uri, version, timeout=300)
    last = first
    quiet = 0
    while quiet < IDLE_WINDOWS:
        before = server.cpu_ns()
        time.sleep(IDLE_S)
        try:
            while True:  # later publishes of the same version: kernels that finished after it
                last, _ = server.published_timed(uri, version, timeout=0)
        except TimeoutError:
            pass
        quiet = quiet + 1 if server.cpu_ns() - before < 1e6 else 0
    return (first - sent) * 1000, (last - sent) * 1000, (server.cpu_ns() - cpu0) / 1e6


def replay_file(server: RpcClient, path: Path, edits: list[Edit], out: Samples, pause: float = 0.0) -> None:
    text = path.read_text()
    lines = text.split("\n")
    uri = path.as_uri()
    server.open(uri, text)
    server.published(uri, 1, timeout=300)
    _settle(server)  # the open's check may publish in parts: its work is not the first edit's
    time.sleep(pause)
    version = 1
    for e in edits:
        col = utf16(lines[e.line][: e.col])
        at = {"line": e.line, "character": col}
        version += 1
        out.add(
            e.kind, _timed_change(server, uri, version, {"start": at, "end": at}, e.text), _where(path, e)
        )
        if "\n" in e.text:
            end = {"line": e.line + 1, "character": utf16(e.text.split("\n", 1)[1])}
        else:
            end = {"line": e.line, "character": col + utf16(e.text)}
        version += 1
        undo = _timed_change(server, uri, version, {"start": at, "end": end}, "")
        out.add(e.kind, undo, _where(path, e) + " (undo)")


def _settle(server: RpcClient) -> None:
    """Wait until the server (and its workers) used no CPU for IDLE_WINDOWS windows of IDLE_S."""
    quiet = 0
    while quiet < IDLE_WINDOWS:
        before = server.cpu_ns()
        time.sleep(IDLE_S)
        quiet = quiet + 1 if server.cpu_ns() - before < 1e6 else 0


def _where(path: Path, e: Edit) -> str:
    return f"{path.name}:{e.line + 1} {e.kind}"


def hover_during_long_check(
    server: RpcClient, path: Path, spots: list[tuple[int, int]], out: Samples
) -> None:
    """Reopen the file under a new name (a cold check) and hover until that check publishes."""
    text = path.read_text()
    uri = path.with_name(f"{path.stem}__cold{path.suffix}").as_uri()
    t0 = server.open(uri, text)
    done = None
    i = 0
    while done is None and spots:
        line, col = spots[i % len(spots)]
        i += 1
        rid, sent = server.request_async(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}}
        )
        got, answer = server.wait_timed(lambda m, rid=rid: m.get("id") == rid, timeout=300)
        out.hover.append((got - sent) * 1000)
        out.hover_pending += _being_traced(answer)
        try:
            done, _ = server.published_timed(uri, 1, timeout=0.001)
        except TimeoutError:
            continue
    if done is None:
        done, _ = server.published_timed(uri, 1, timeout=300)
    out.long_checks.append((done - t0) * 1000)
    server.close_doc(uri)


def _being_traced(answer: dict) -> bool:
    """Whether a hover was answered that its kernel is still being traced (argus_lsp hover.py)."""
    result = answer.get("result") or {}
    contents = result.get("contents") if isinstance(result, dict) else None
    return isinstance(contents, dict) and "is being traced" in str(contents.get("value", ""))


def flood(server: RpcClient, path: Path, edits: list[Edit], out: Samples, gap_s: float = 0.02) -> None:
    """A burst of typing: every edit (typed, then undone) sent `gap_s` apart without waiting; then
    how long until the final version is published, and how long a hover sent at once takes."""
    text = path.read_text()
    lines = text.split("\n")
    uri = path.with_name(f"{path.stem}__flood{path.suffix}").as_uri()
    server.open(uri, text)
    server.published(uri, 1, timeout=300)
    version = 1
    last = 0.0
    for e in edits:
        if "\n" in e.text:
            continue
        at = {"line": e.line, "character": utf16(lines[e.line][: e.col])}
        end = {"line": e.line, "character": at["character"] + 1}
        for rng, new in (({"start": at, "end": at}, e.text), ({"start": at, "end": end}, "")):
            version += 1
            last = server.change(uri, version, [{"range": rng, "text": new}])
            time.sleep(gap_s)
    (line, col), *_ = identifiers_in_kernels(text, 1, 0) or [(0, 0)]
    rid, sent = server.request_async(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}}
    )
    got, _ = server.wait_timed(lambda m: m.get("id") == rid, timeout=300)
    done, _ = server.published_timed(uri, version, timeout=300)
    out.floods.append(((done - last) * 1000, (got - sent) * 1000, version - 1))
    server.close_doc(uri)


def run_server(
    argv: list[str],
    files: list[Path],
    per_kind: int,
    seed: int,
    cpu: int,
    hover: bool,
    env: dict[str, str] | None = None,
    pause: float = 0.0,
) -> Samples:
    out = Samples()
    server = RpcClient(argv, REPO, cpu=cpu, env=env)
    try:
        server.initialize(REPO, None, {"argus": {"debounceMs": 0}})
        time.sleep(0.5)
        out.rss["start"] = server.rss_kib() / 1024
        for i, path in enumerate(files):
            edits = edits_for(path.read_text(), per_kind, seed + i)
            replay_file(server, path, edits, out, pause)
        out.rss["all open, after the edits"] = server.rss_kib() / 1024
        out.rss["its check workers then"] = server.children_rss_kib() / 1024
        if hover:
            for i, path in enumerate(files):
                hover_during_long_check(
                    server, path, identifiers_in_kernels(path.read_text(), 40, seed + i), out
                )
            for i, path in enumerate(files):
                flood(server, path, edits_for(path.read_text(), 10, seed + i), out)
        for path in files:
            server.close_doc(path.as_uri())
        time.sleep(1.0)
        out.rss["after closing all"] = server.rss_kib() / 1024
        out.rss["its check workers then"] = server.children_rss_kib() / 1024
    finally:
        server.close()
    return out


def _row(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:<18} {'-':>8}"
    return (
        f"{name:<18} {statistics.median(values):8.1f} {percentile(values, 0.95):8.1f} {max(values):8.1f}"
        f"  (n={len(values)})"
    )


def report_slowest(name: str, s: Samples, count: int) -> None:
    """The `count` edits that cost the most CPU: those the p95 stands on (the 10th of 180)."""
    print(f"\n{name}: the {count} edits of most CPU (CPU ms, first publish ms)")
    for cpu, wall, where in sorted(s.edits, reverse=True)[:count]:
        print(f"  {cpu:7.1f} {wall:7.1f}  {where}")


def report(name: str, s: Samples) -> None:
    print(f"\n{name}: didChange -> publishDiagnostics, ms     median      p95    worst")
    tables = (
        ("CPU until idle", s.cpu),
        ("wall, first publish of the version", s.wall),
        ("wall, last publish of the version", s.complete),
    )
    for label, table in tables:
        print(f"  {label}")
        for kind in sorted(table):
            print("    " + _row(kind, table[kind]))
        print("    " + _row("all edits", [v for vs in table.values() for v in vs]))
    print(f"  worst CPU: {s.worst[0]:.1f} ms at {s.worst[1]}")
    if s.hover:
        print("  " + _row("hover during check", s.hover).replace("(n=", "ms (n="))
        print(
            f"  hovers answered 'being traced' (the rest with the description): {s.hover_pending} of {len(s.hover)}"
        )
        print(
            f"  cold checks meanwhile: median {statistics.median(s.long_checks):.0f} ms, max {max(s.long_checks):.0f} ms"
        )
    if s.floods:
        finals = [f for f, _, _ in s.floods]
        hovers = [h for _, h, _ in s.floods]
        print(
            f"  bursts of {statistics.median([n for _, _, n in s.floods]):.0f} edits 20 ms apart, per file: "
            f"last edit -> its publish median {statistics.median(finals):.0f} ms, worst {max(finals):.0f} ms; "
            f"a hover sent right after: median {statistics.median(hovers):.0f} ms, worst {max(hovers):.0f} ms"
        )
    print("  RSS: " + ", ".join(f"{k} {v:.0f} MiB" for k, v in s.rss.items()))


def tree_env(tree: Path) -> dict[str, str]:
    """The environment that makes `python -P -m argus_lsp.server` run the code of `tree`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(tree.resolve()), env.get("PYTHONPATH", "")] if p)
    return env


def main(
    per_kind: int,
    seed: int,
    before: Path | None = None,
    pause: float = 0.0,
    count: str | None = None,
    slowest: int = 0,
) -> int:
    files = pick_files()
    if count is not None:
        lo, _, hi = count.rpartition(":")
        files = files[int(lo or 0) : int(hi)]
    cpu = min(os.sched_getaffinity(0))
    print(f"files ({len(files)}), every server pinned to CPU {cpu}, server debounce 0 ms, pause {pause} s:")
    for p in files:
        print(f"  {p.read_text().count(chr(10)):5d} lines  {p.relative_to(STORE)}")
    argv = [sys.executable, "-P", "-m", "argus_lsp.server"]
    runs: list[tuple[str, Samples]] = []
    if before is not None:
        old = run_server(argv, files, per_kind, seed, cpu, True, tree_env(before), pause)
        runs.append((f"argus before ({before})", old))
    runs.append(("argus", run_server(argv, files, per_kind, seed, cpu, True, tree_env(REPO), pause)))
    ruff_exe = Path(sys.executable).with_name("ruff")
    runs.append(("ruff server", run_server([str(ruff_exe), "server"], files, per_kind, seed, cpu, False)))
    for name, samples in runs:
        report(name, samples)
        if slowest:
            report_slowest(name, samples, slowest)
    return 0
