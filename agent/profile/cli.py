"""`argus profile FILE::KERNEL ...`: the command line over agent.profile.api.profile.

Under the table it prints the measured PF hints the editor would show for the same result
(agent.profile.hints); `--json` puts them in each result's "hints" list.

Exit status: 0 profiled, 1 the profile failed (unreachable host, timeout, task error in the
worker), 2 usage error (bad arguments, no task for the kernel).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from argus.agent.profile.api import ProfileError, profile
from argus.agent.profile.hints import hint_json, hints_for_file
from argus.agent.profile.result import ProfileResult
from argus.agent.task import Task, TaskError, load_task


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="argus profile",
        description=(
            "Run a kernel's task on a GPU (local or over SSH) and report time, TFLOP/s, TB/s, "
            "% of the roofline and the bound class. Runs the file's code: only on this request."
        ),
    )
    p.add_argument("targets", nargs="+", metavar="FILE::KERNEL", help="task(s) to profile")
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="K=V,...|SET",
        help="sizes (M=4096,N=4096) or a shape set named in the task; repeatable",
    )
    p.add_argument("--target", default="local", help="local (default) or ssh://[user@]host[:port]")
    p.add_argument(
        "--backend",
        default="auto",
        choices=["auto", "nvidia", "amd", "cpu"],
        help="auto (default: the target's GPU, else the CPU interpreter), nvidia, amd or cpu",
    )
    p.add_argument("--counters", action="store_true", help="also run ncu (NVIDIA) or rocprofv3 (AMD)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--report", metavar="OUT.html|OUT.png", help="write a roofline report")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds per task (600)")
    p.add_argument("--python", metavar="PATH", help="interpreter that has torch+triton on the target")
    p.add_argument("--dtype", help="peak column to compare against (default: the inputs' dtype)")
    p.add_argument("--peak", help="peak table entry to use (H100 SXM, H200, B200, MI300X, MI325X)")
    p.add_argument(
        "--do-bench-check", action="store_true", help="also time with triton.testing.do_bench in the same run"
    )
    p.add_argument("--proton", action="store_true", help="also trace with Triton's Proton")
    p.add_argument("--ssh-config", metavar="FILE", help="ssh -F FILE")
    p.add_argument("-i", "--identity", metavar="KEY", help="ssh -i KEY")
    p.add_argument("-o", "--ssh-option", action="append", default=[], metavar="OPT", help="ssh -o OPT")
    return p


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    from rich.console import Console

    err = Console(stderr=True, soft_wrap=True)  # an error stays one line, however long
    try:
        tasks = [load_task(t) for t in args.targets]
    except TaskError as exc:
        err.print(f"[red]error:[/red] {exc}")
        return 2
    results: list[ProfileResult] = []
    hints = []
    failed = False
    for task in tasks:
        try:
            results.append(_run_one(task, args, err))
        except (ProfileError, TaskError) as exc:
            err.print(f"[red]error:[/red] {exc}")
            failed = True
        else:
            hints.append(hints_for_file(results[-1], task.path, task.line))
    if results:
        if args.json:
            doc = [
                {**r.to_json(), "hints": [hint_json(h) for h in found]}
                for r, found in zip(results, hints, strict=True)
            ]
            print(json.dumps(doc[0] if len(doc) == 1 else doc, indent=2))
        else:
            out = Console()
            out.print(_table(results))
            for r, found in zip(results, hints, strict=True):
                out.print(f"[bold]{r.task}[/bold]: {r.lens_text()}")
                for note in r.notes:
                    out.print(f"  note: {note}")
                for h in found:  # plain text: a message may hold brackets, and must not wrap
                    out.print(
                        f"  hint {h.code} ({h.name}): {h.message}",
                        markup=False,
                        highlight=False,
                        soft_wrap=True,
                    )
        if args.report:
            from argus.agent.profile.report import write_report

            try:
                write_report(results, args.report)
            except ValueError as exc:
                err.print(f"[red]error:[/red] {exc}")
                return 2
            err.print(f"report written to {args.report}")
    return 1 if failed else 0


def _table(results: list[ProfileResult]):
    from argus.agent.profile.report import table

    return table(results)


def _run_one(task: Task, args: argparse.Namespace, err) -> ProfileResult:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[phase]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as bar:
        tid = bar.add_task(task.name, total=None, phase="starting")

        def progress(phase: str, done: int, total: int) -> None:
            bar.update(tid, phase=phase, completed=done, total=total or None)

        return profile(
            task,
            target=args.target,
            backend=args.backend,
            shape=args.shape or None,
            counters=args.counters,
            timeout=args.timeout,
            python=args.python,
            dtype=args.dtype,
            peak=args.peak,
            do_bench_check=args.do_bench_check,
            proton_trace=args.proton,
            ssh_config=args.ssh_config,
            ssh_identity=args.identity,
            ssh_options=args.ssh_option,
            progress=progress,
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
