"""`argus check`: the gate, with ruff's command-line conventions.

Its exit status is the contract of DESIGN.md: 0 clean, 1 when an error or warning was found, 2
when the run itself went wrong. Usage errors (a bad flag, an unknown or empty selection, a bad
`[tool.argus]`) stop before anything is checked; problems with single inputs (a missing path, an
unreadable file, a crash on one file, a file that changed before its fix was written) are named
on stderr, the other files are still checked and reported, and the status is 2 at the end. It
never prints a traceback unless ARGUS_DEBUG is set.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from argus.analyzers import Finding, KernelCache, Severity, check_source, kernel_timeout, list_kernels
from argus.analyzers.project import SourceSet
from argus.analyzers.suppressions import suppressed_lines

from argus_lsp import cli_record, fixing
from argus_lsp.cli import tool_version
from argus_lsp.cli_progress import STREAMED, Progress, Stream, add_progress_arguments, progress_wanted
from argus_lsp.config import ConfigError, ConfigFinder, ProjectConfig
from argus_lsp.discover import (
    STDIN,
    Candidate,
    NotRegular,
    candidates,
    mentions_triton,
    missing_paths,
    read_regular,
)
from argus_lsp.gc_pause import freeze_once
from argus_lsp.project_files import project_for_paths
from argus_lsp.render import RENDERERS, STATISTICS, Report
from argus_lsp.settings import Settings, code_problems, empty_selection_problem, split_codes, timeout_problem

USAGE_ERROR = 2


class UsageError(Exception):
    """Bad usage, found before anything is checked: exit 2 with this message."""


def _err(message: str) -> None:
    print(f"argus: {message}", file=sys.stderr)


# --- flags ---------------------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (folders: *.py files); - reads stdin"
    )
    p.add_argument(
        "--output-format",
        "--format",
        dest="format",
        choices=sorted(RENDERERS),
        default="concise",
        metavar="FORMAT",
        help=f"{', '.join(sorted(RENDERERS))} (default: concise; text is its old name; --format too)",
    )
    p.add_argument("--select", metavar="CODES", help="comma-separated code prefixes to report, e.g. DF,MB001")
    p.add_argument("--ignore", metavar="CODES", help="comma-separated code prefixes to leave out")
    p.add_argument(
        "-v", "--verbose", action="store_true", help="the full witness, code frame and fix (= full)"
    )
    p.add_argument(
        "--statistics", action="store_true", help="count findings per code instead of listing them"
    )
    p.add_argument(
        "--single-file",
        action="store_true",
        help="check each file alone: do not read the other modules of its package (imported "
        "helpers, launches made elsewhere)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--fix", action="store_true", help="apply the unambiguous quick fixes, then report the rest"
    )
    mode.add_argument(
        "--diff", action="store_true", help="print the quick fixes as a unified diff; write nothing"
    )
    p.add_argument(
        "--stdin-filename", metavar="PATH", help="the name of the text read from `-` (paths, config)"
    )
    p.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the text formats: auto (a terminal without NO_COLOR), always or never",
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when errors or warnings are found")
    p.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument(
        "--kernel-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds of analysis per kernel before it is reported as AR001 budget exceeded "
        "(default: [tool.argus] kernel-timeout, else 10)",
    )
    add_progress_arguments(p)


@dataclass(frozen=True)
class Selection:
    """`--select`/`--ignore` as given; None where the flag was not given (the project's applies)."""

    select: tuple[str, ...] | None
    ignore: tuple[str, ...] | None
    kernel_timeout: float | None = None

    def over(self, project: Settings) -> Settings:
        out = project
        if self.kernel_timeout is not None:
            out = replace(out, kernel_timeout=self.kernel_timeout)
        if self.select is not None:
            out = replace(out, select=self.select)
        if self.ignore is not None:
            out = replace(out, ignore=self.ignore)
        return out


def _flag_codes(flag: str, value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    codes = split_codes(value) or []
    problems = code_problems(codes, flag)
    if problems:
        raise UsageError(problems[0])
    return tuple(codes)


def validate(args: argparse.Namespace) -> Selection:
    """Everything about the flags that can be judged before reading a file."""
    if args.kernel_timeout is not None and (bad := timeout_problem(args.kernel_timeout, "--kernel-timeout")):
        raise UsageError(bad)
    selection = Selection(
        _flag_codes("--select", args.select), _flag_codes("--ignore", args.ignore), args.kernel_timeout
    )
    if selection.select == ():
        raise UsageError(empty_selection_problem(f"--select {args.select!r}"))
    if args.statistics and args.format not in STATISTICS:
        raise UsageError(f"--statistics prints text or json, not {args.format}")
    if args.stdin_filename is not None and args.paths and STDIN not in args.paths:
        raise UsageError("--stdin-filename names the text read from `-`; add `-` to the paths")
    if args.fix and (STDIN in args.paths or (args.stdin_filename is not None and not args.paths)):
        raise UsageError("--fix cannot write back to stdin; use --diff to see the fixes")
    return selection


def _paths(args: argparse.Namespace) -> list[str]:
    if args.paths:
        return list(args.paths)
    return [STDIN] if args.stdin_filename is not None else ["."]


# --- one file ------------------------------------------------------------------------------------


@dataclass
class RunProblems:
    """What kept a check from being complete; any of these makes the exit status 2."""

    missing: int = 0
    unreadable: int = 0
    internal: int = 0
    unwritten: int = 0

    @property
    def any(self) -> bool:
        return bool(self.missing or self.unreadable or self.internal or self.unwritten)


def _decode_error(display: str, data: bytes, exc: UnicodeDecodeError) -> str:
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return f"cannot read {display}: not UTF-8 (byte 0x{data[exc.start]:02x} at line {line}, byte {column})"


def read_text(cand: Candidate, problems: RunProblems) -> bytes | None:
    """The file's bytes if they mention triton and are UTF-8; None otherwise (errors reported)."""
    try:
        data = sys.stdin.buffer.read() if cand.from_stdin else read_regular(cand.path)
    except NotRegular as exc:
        _err(f"skipping {cand.display}: {exc}")
        problems.unreadable += 1
        return None
    except OSError as exc:
        _err(f"cannot read {cand.display}: {exc.strerror or exc}")
        problems.unreadable += 1
        return None
    if not mentions_triton(data):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _err(_decode_error(cand.display, data, exc))
        problems.unreadable += 1
        return None
    return data


def with_levels(findings: list[Finding], settings: Settings) -> list[Finding]:
    """The project's `severity` levels applied: `off` drops a finding, a level replaces its own."""
    out = []
    for f in findings:
        level = settings.level_for(f.code, f.severity.value)
        if level != "off":
            out.append(f if level == f.severity.value else replace(f, severity=Severity(level)))
    return out


def check_text(
    data: bytes,
    display: str,
    settings: Settings,
    launches: dict | None = None,
    progress: Progress | None = None,
    project: SourceSet | None = None,
) -> tuple[int, list[Finding]]:
    """(how many kernels, the findings as the settings select and grade them); `launches` are the
    recorded launches of this file's kernels (`--launches`), by kernel name. Each kernel gets
    the settings' time budget; `progress` reports how far a long file has got; `project` holds
    the other modules of the file's package (`project_files`), where helpers and launches are
    looked up."""
    kernels = list_kernels(data)
    if not kernels:
        return 0, []
    sel = list(settings.select) if settings.select is not None else None
    cache: KernelCache | None = progress.cache_for(display, len(kernels)) if progress else None
    with kernel_timeout(settings.kernel_timeout):
        found = check_source(
            data,
            display,
            select=sel,
            ignore=list(settings.ignore) or None,
            launches=launches,
            cache=cache,
            project=project,
        )
    return len(kernels), with_levels(found, settings)


def suppression_warnings(display: str, data: bytes) -> list[str]:
    """`# argus: ignore[XX999]` names a code that does not exist: it silences nothing."""
    out = []
    for row, codes in sorted(suppressed_lines(data).items()):
        out += code_problems(sorted(codes or ()), f"`# argus: ignore[...]` at {display}:{row + 1}")
    return out


# --- the run -------------------------------------------------------------------------------------


@dataclass
class CheckRun:
    args: argparse.Namespace
    selection: Selection
    report: Report = field(default_factory=lambda: Report(tool_version=tool_version()))
    problems: RunProblems = field(default_factory=RunProblems)
    diffs: list[str] = field(default_factory=list)
    launches: cli_record.LaunchOption = field(default_factory=lambda: cli_record.LaunchOption(None))
    progress: Progress = field(default_factory=lambda: Progress(False, 0))
    project: SourceSet | None = None  # the checked files' packages (None: --single-file)

    def file(self, cand: Candidate, config: ProjectConfig) -> None:
        data = read_text(cand, self.problems)
        if data is None:
            return
        settings = self.selection.over(config.settings)
        try:
            recorded = self.launches.for_file(cand.path, cand.display, data) if list_kernels(data) else None
            self._launched_elsewhere(cand)
            kernels, findings = check_text(
                data, cand.display, settings, recorded, self.progress, self.project
            )
            self.progress.file_done(cand.display, kernels)
            if self.args.fix or self.args.diff:
                data, kernels, findings = self._fix(cand, data, kernels, findings, settings, recorded)
        except Exception as exc:  # one file's crash must not hide the other files' findings
            _err(f"internal error while checking {cand.display}: {type(exc).__name__}: {exc}")
            if os.environ.get("ARGUS_DEBUG"):
                traceback.print_exc()
            self.problems.internal += 1
            return
        for warning in suppression_warnings(cand.display, data):
            _err(f"warning: {warning}")
        fixable = fixing.plan(findings, len(data)).fixed if not self.args.fix else 0
        self.report.add_file(cand.display, data, kernels, findings, fixable=fixable)

    def _launched_elsewhere(self, cand: Candidate) -> None:
        """Kernels launched from another module of the package are not "without a launch" (the
        stderr note): drop them from the file's entry the launch option just made."""
        unbound = self.launches.unbound
        if self.project is None or not unbound or unbound[-1][0] != cand.display:
            return
        path = str(cand.path)
        left = [k for k in unbound[-1][1] if not self.project.launch_sites(path, k)[0]]
        if left:
            unbound[-1] = (cand.display, left)
        else:
            unbound.pop()

    def _fix(
        self,
        cand: Candidate,
        data: bytes,
        kernels: int,
        findings: list[Finding],
        settings: Settings,
        recorded: dict | None = None,
    ) -> tuple[bytes, int, list[Finding]]:
        """--diff: collect the diff and report as checked; --fix: write, then re-check the result."""
        plan = fixing.plan(findings, len(data))
        if not plan.edits:
            return data, kernels, findings
        fixed = fixing.apply(data, plan.edits)
        if self.args.diff:
            self.diffs.append(fixing.unified_diff(cand.display, data, fixed))
            self.report.summary.fixed += plan.fixed
            return data, kernels, findings
        try:
            fixing.write_if_unchanged(cand.path, data, fixed)
        except (fixing.FileChanged, OSError) as exc:
            _err(f"not fixing {cand.display}: {exc}")
            self.problems.unwritten += 1
            return data, kernels, findings
        self.report.summary.fixed += plan.fixed
        kernels, findings = check_text(fixed, cand.display, settings, recorded, project=self.project)
        return fixed, kernels, findings


def _configs(cands: list[Candidate]) -> list[ProjectConfig]:
    """Each file's project settings; every problem in any of them is one usage error."""
    finder = ConfigFinder()
    found: list[ProjectConfig] = []
    problems: list[str] = []
    for cand in cands:
        try:
            config = finder.for_file(cand.path)
        except ConfigError as exc:
            problems += [p for p in exc.problems if p not in problems]
            continue
        problems += [p for p in config.problems if p not in problems]
        found.append(config)
    if problems:
        raise UsageError("\n".join(problems))
    return found


def _use_colour(args: argparse.Namespace) -> bool:
    if args.color != "auto":
        return args.color == "always"
    return args.output is None and not os.environ.get("NO_COLOR") and sys.stdout.isatty()


def _format(args: argparse.Namespace) -> str:
    return "full" if args.verbose and args.format in ("concise", "text") else args.format


def _stream(args: argparse.Namespace) -> Stream | None:
    """Results file by file: the text formats on stdout (not --diff, --statistics, --output)."""
    if args.diff or args.statistics or args.output is not None or _format(args) not in STREAMED:
        return None
    return Stream(_format(args), _use_colour(args))


def _output(run: CheckRun) -> str:
    args = run.args
    if args.diff:
        return "".join(run.diffs)
    fmt = _format(args)
    renderers = STATISTICS if args.statistics else RENDERERS
    return renderers[fmt](run.report, color=_use_colour(args))


def _emit(text: str, output: str | None) -> bool:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return True
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        _err(f"cannot write {output}: {exc.strerror or exc}")
        return False
    return True


def run(args: argparse.Namespace) -> int:
    try:
        selection = validate(args)
        paths = _paths(args)
        skipped: list[str] = []
        cands = list(candidates(paths, args.stdin_filename, skipped))
        configs = _configs(cands)
        launches = cli_record.LaunchOption.from_args(args)
    except (UsageError, ValueError) as exc:
        _err(str(exc))
        return USAGE_ERROR
    freeze_once()  # gc_pause.py: a check's temporaries die young; imported modules never rescanned
    check = CheckRun(args, selection, launches=launches)
    check.progress = Progress(progress_wanted(args, sys.stderr), len(cands))
    if not args.single_file:
        check.project = project_for_paths(c.path for c in cands)
    for path in missing_paths(paths):
        _err(f"no such file or directory: {path}")
        check.problems.missing += 1
    for message in skipped:  # FIFOs, sockets, devices (discover.py): reading them could block
        _err(message)
        check.problems.unreadable += 1
    stream = _stream(args)
    for cand, config in zip(cands, configs, strict=True):
        check.file(cand, config)
        if stream is not None:
            stream.flush(check.report)
    launches.report_unbound(sys.stderr)
    if not _emit(stream.tail(check.report) if stream is not None else _output(check), args.output):
        return USAGE_ERROR
    if args.diff:
        fixed = check.report.summary.fixed
        print(f"Would fix {fixed} problem{'s' if fixed != 1 else ''}.", file=sys.stderr)
    if check.problems.any:
        return USAGE_ERROR
    if args.diff:
        return 1 if check.diffs and not args.exit_zero else 0
    return 1 if check.report.failed and not args.exit_zero else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="argus check",
        description="Check every Triton kernel in the given files and folders (default: the current folder).",
    )
    add_arguments(parser)
    cli_record.add_launches_option(parser)
    return parser


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors (2) and --help (0)
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    return run(args)
