"""`argus record [--out FILE] -- CMD...` and `argus check --launches FILE`.

`record` is one of the three commands that run the user's code (with `optimize` and `profile`),
and only because someone asked: it runs CMD once with the launch hook of `agent/record` and
exits with CMD's own status, so `argus record -- pytest` fails exactly when the tests do.
`--launches` makes `check` bind kernels from that file wherever their launcher is missing from
the file being checked (or not understood); kernels that neither a launcher nor the file binds
are named on stderr, with the way to bind them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from argus.analyzers.model.launch_file import (
    LaunchFile,
    LaunchFileError,
    RecordedLaunch,
    read_launch_file,
    same_file,
)
from argus.analyzers.model.recorded import unlaunched_kernels

DEFAULT_OUT = Path(".argus") / "launches.json"
USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="argus record",
        description=(
            "Run a command once (e.g. your tests) and record every Triton kernel launch it makes: "
            "grid, constexprs, scalars, tensor shapes, strides and dtypes. `argus check --launches "
            "FILE` then binds kernels whose launcher the source alone does not show."
        ),
        usage="argus record [--out FILE] -- CMD [ARG ...]",
    )
    parser.add_argument(
        "--out", metavar="FILE", default=str(DEFAULT_OUT), help=f"the launch file (default: {DEFAULT_OUT})"
    )
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="CMD", help="the command to run, after --")
    return parser


def main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        print("argus record: no command given (usage: argus record [--out FILE] -- CMD ...)", file=sys.stderr)
        return USAGE_ERROR
    from argus.agent.record.runner import record  # only now: `check` never loads the recorder

    out = Path(args.out)
    try:
        result = record(cmd, out)
    except ValueError as exc:
        print(f"argus record: {exc}", file=sys.stderr)
        return USAGE_ERROR
    what = (
        f"{result.launches} launch signature{'s' if result.launches != 1 else ''} of {result.kernels} kernel"
    )
    what += "s" if result.kernels != 1 else ""
    if result.crashed:
        print(
            f"argus record: the command exited with status {result.exit_status}; the {what} recorded "
            f"until then are kept in {out}",
            file=sys.stderr,
        )
    else:
        print(
            f"argus record: {what} written to {out}; check with `argus check --launches {out}`",
            file=sys.stderr,
        )
    if result.dropped:
        print(
            f"argus record: {result.dropped} launches were not kept (at most 32 signatures per kernel)",
            file=sys.stderr,
        )
    for err in result.hook_errors[:3]:
        print(f"argus record: the hook could not describe a launch: {err}", file=sys.stderr)
    return result.exit_status


# --- argus check --launches --------------------------------------------------------------------


def add_launches_option(check: argparse.ArgumentParser) -> None:
    check.add_argument(
        "--launches",
        metavar="FILE",
        help="bind kernels from launches recorded by `argus record` (where the source has no launcher)",
    )


class LaunchOption:
    """The launch file of one `check` run, and the kernels nothing bound (for the note)."""

    def __init__(self, launches: LaunchFile | None) -> None:
        self.file = launches
        self.unbound: list[tuple[str, list[str]]] = []

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> LaunchOption:
        """Raises ValueError (a usage error) when the file is missing or invalid."""
        path = getattr(args, "launches", None)
        if path is None:
            return cls(None)
        try:
            return cls(read_launch_file(path))
        except LaunchFileError as exc:
            raise ValueError(str(exc)) from exc

    def for_file(self, path: Path, display: str, data: bytes) -> dict[str, list[RecordedLaunch]]:
        """Recorded launches of the kernels defined in `path`, by kernel name; remembers the
        kernels left without a launch of any kind."""
        by_kernel: dict[str, list[RecordedLaunch]] = {}
        if self.file is not None:
            for lr in self.file.launches:
                if same_file(lr.file, str(path)):
                    by_kernel.setdefault(lr.kernel, []).append(lr)
        try:
            missing = [k for k in unlaunched_kernels(data) if k not in by_kernel]
        except (ValueError, RecursionError):
            missing = []
        if missing:
            self.unbound.append((display, missing))
        return by_kernel

    def report_unbound(self, stream: TextIO) -> None:
        if not self.unbound:
            return
        n = sum(len(names) for _, names in self.unbound)
        listed = "; ".join(f"{path}: {', '.join(names)}" for path, names in self.unbound[:5])
        more = f"; and {len(self.unbound) - 5} more files" if len(self.unbound) > 5 else ""
        how = (
            "record their launches with `argus record -- pytest` and check with `--launches FILE` (docs/record.md)"
            if self.file is None
            else "the launch file has no launch of them"
        )
        print(
            f"argus: {n} kernel{'s' if n != 1 else ''} with no launch site in {'their' if n != 1 else 'its'} "
            f"file, checked without a launch (races and coverage not judged, bounds only where one "
            f"size bounds every tensor): {listed}{more}; {how}",
            file=stream,
        )
