"""The spine of the checker: every stage, in order, for one source text.

    module view (module_view.py)      the file's kernels, constants, launchers, helpers
    per kernel, cached (cache.py):
      kernel model (kernel_setup.py)   parse, parameters, configs, helpers, scan, launch sites
      launch binding + probes          probes.py chooses the probe kinds; model/launch.py binds
      interpretation                   interpretation.py runs interp/ under each probe -> facts
      rules (judge.py)                 rules/ turn facts into findings, precedence declared there
    suppressions (suppressions.py)     `# argus: ignore[...]`
    selection (registry.py)            --select / --ignore

Each kernel is independent: a syntax error, an unmodelled construct or an internal error in one
kernel becomes a finding (AR002/AR001) for that kernel only, never an exception.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from argus.analyzers.cache import KernelCache
from argus.analyzers.cache_keys import BoundLookup, cached_findings, kernel_key
from argus.analyzers.describe import describe_value
from argus.analyzers.findings import Finding, Span
from argus.analyzers.frontend.parse import first_error, parse, span_of
from argus.analyzers.frontend.queries import KernelSite, find_kernels
from argus.analyzers.interp.expressions import BUILTIN_NAMES, MODULE_NAMES
from argus.analyzers.interpretation import Cancelled, ProbeRun, StopCheck
from argus.analyzers.judge import judge
from argus.analyzers.kernel_setup import KernelSetup, parse_kernel, set_up_kernel
from argus.analyzers.layout import Piece
from argus.analyzers.model.kernel import SourceMap
from argus.analyzers.model.kernel_aliases import launches_of
from argus.analyzers.model.launch_file import RecordedLaunch
from argus.analyzers.model.recorded import mark_recorded
from argus.analyzers.module_view import ModuleView, build_module_view
from argus.analyzers.project import (
    ForeignHelper,
    ForeignLaunchSite,
    SourceSet,
    mark_foreign_launch,
    note_foreign_helpers,
)
from argus.analyzers.registry import RULES, selected
from argus.analyzers.rule_reads import recording
from argus.analyzers.rules import RuleContext
from argus.analyzers.suppressions import apply_suppressions
from argus.analyzers.tag_asserts import parse_assertions
from argus.analyzers.trace import trace_kernel
from argus.analyzers.unbound_names import (
    BUILTINS,
    first_unbound,
    first_unbound_before_launch,
    kernel_bindings,
    launch_env,
    names_read,
)
from tree_sitter import Node, Tree


@dataclass(frozen=True)
class KernelInfo:
    name: str
    span: Span  # the whole decorated definition
    name_span: Span


def _as_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


def list_kernels(text: str | bytes) -> list[KernelInfo]:
    tree = parse(_as_bytes(text))
    out = []
    for site in find_kernels(tree.root_node):
        name_node = site.function.child_by_field_name("name")
        out.append(KernelInfo(site.name, span_of(site.node), span_of(name_node or site.function)))
    return out


def check_source(
    text: str | bytes,
    path: str = "<string>",
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    cache: KernelCache | None = None,
    tree: Tree | None = None,
    launches: dict[str, list[RecordedLaunch]] | None = None,
    should_stop: StopCheck | None = None,
    focus: int | None = None,
    progress: Progress | None = None,
    project: SourceSet | None = None,
) -> list[Finding]:
    """Check every Triton kernel in one Python source text. Never raises on bad kernel code.

    `project` holds the other modules of the file's package (`analyzers.project.SourceSet`, with
    `path` naming this file in it): helpers imported from them are inlined and, for a kernel
    this file does not launch, the first launch in another module that imports it and binds is
    used (its file and line are named in the findings' witness and AR001 notes).

    `launches` maps a kernel name to launches recorded from a real run of it (`argus record`,
    `analyzers.model.launch_file`), which bind kernels whose launcher the source does not show.

    `tree` may be a tree-sitter tree the caller already holds for exactly this text (the language
    server re-parses incrementally and passes it), which saves the parse.

    `should_stop` is asked between kernels and between the programs the interpreter runs; once it answers
    True the check raises `Cancelled` (the language server's way to drop a check of text that
    has changed meanwhile without waiting for a large kernel to finish). Kernels finished before
    that stay in `cache`.

    `focus` (a byte offset) and `progress` serve live diagnostics: the kernel holding `focus` is
    analyzed before the other kernels the cache lacks, and `progress` gets, after each analyzed
    kernel but the last, the findings so far (suppressed, selected, sorted, as returned) and the
    names of the kernels still to analyze."""
    source = _as_bytes(text)
    sel = list(select) if select is not None else None
    ign = list(ignore) if ignore is not None else None

    def shown(findings: list[Finding]) -> list[Finding]:
        kept = [f for f in apply_suppressions(source, findings) if selected(f.code, sel, ign)]
        return sorted(kept, key=Finding.sort_key)

    told = None if progress is None else lambda found, pending: progress(shown(found), pending)
    findings = analyze_module(
        source,
        cache=cache,
        tree=tree,
        launches=launches,
        should_stop=should_stop,
        focus=focus,
        progress=told,
        project=project,
        path=path,
    )
    return shown(findings)


def describe_at(
    text: str | bytes, byte_offset: int, tree: Tree | None = None, memo: KernelCache | None = None
) -> str | None:
    """Markdown describing the kernel variable at `byte_offset` (tag, shape, dtype, mask).
    `tree`: a tree-sitter tree of exactly this text the caller holds (saves the parse); `memo`:
    where each kernel's trace is kept (the language server's), so that hovers after the first
    in a kernel only look up."""
    source = _as_bytes(text)
    found = identifier_in_kernel(source, byte_offset, tree)
    if found is None:
        return None
    node, view, site = found
    name = node.text.decode("utf-8", "replace") if node.text else ""
    traced = trace_kernel(view, site, name, node.start_point[0], memo)
    if traced is None:
        return None
    value, sizes, pid = traced
    return describe_value(name, value, sizes, pid)


def identifier_in_kernel(
    source: bytes, byte_offset: int, tree: Tree | None = None
) -> tuple[Node, ModuleView, KernelSite] | None:
    """The identifier at `byte_offset`, the module view and the kernel it lies in; None when the
    offset is not on a name inside a kernel (what every hover asks first)."""
    tree = tree or parse(source)
    node = tree.root_node.descendant_for_byte_range(byte_offset, byte_offset)
    if node is None or node.type != "identifier":
        return None
    view = build_module_view(source, tree)
    site = next((s for s in view.sites if s.node.start_byte <= byte_offset < s.node.end_byte), None)
    return None if site is None else (node, view, site)


#: told, after each analyzed kernel but the last, the findings so far and the kernels still to do
Progress = Callable[[list[Finding], list[str]], None]
_Todo = tuple[KernelSite, list[RecordedLaunch], str, list[Piece]]


def analyze_module(
    source: bytes,
    cache: KernelCache | None = None,
    tree: Tree | None = None,
    launches: dict[str, list[RecordedLaunch]] | None = None,
    should_stop: StopCheck | None = None,
    focus: int | None = None,
    progress: Progress | None = None,
    project: SourceSet | None = None,
    path: str = "<string>",
) -> list[Finding]:
    """Every kernel's findings: first those the cache holds (cheap), then the others, the kernel
    holding byte `focus` first (the language server passes where the last edit was, so the kernel
    being typed in is judged before the rest of the file)."""
    view = build_module_view(source, tree or parse(source), project, path)
    view.memo = cache.launch_texts if cache is not None else None
    view.snippets = cache.snippets if cache is not None else None
    out: list[Finding] = []
    todo: list[_Todo] = []
    for site, recorded in _checked_sites(view, launches or {}):
        _stop_if_asked(should_stop)
        if cache is None:  # (the key reads every file the kernel depends on: only a cache needs it)
            todo.append((site, recorded, "", []))
            continue
        key, pieces = kernel_key(view, site, view.launcher_nodes(site.name), recorded)
        moved = cached_findings(cache.get(key), pieces)
        if moved is None:
            todo.append((site, recorded, key, pieces))
        else:
            out.extend(moved)
    todo.sort(key=lambda t: focus is None or not t[0].node.start_byte <= focus < t[0].node.end_byte)
    for i, (site, recorded, key, pieces) in enumerate(todo):
        _stop_if_asked(should_stop)
        bound = BoundLookup(cache, view, site, recorded) if cache is not None else None
        found = analyze_kernel(view, site, recorded, should_stop, bound)
        if cache is not None:
            cache.put(key, (found, pieces))
        out.extend(found)
        if progress is not None and i + 1 < len(todo):
            progress(list(out), [t[0].name for t in todo[i + 1 :]])
    return out


def _checked_sites(
    view: ModuleView, launches: dict[str, list[RecordedLaunch]]
) -> Iterator[tuple[KernelSite, list[RecordedLaunch]]]:
    """The kernels checked on their own, with their recorded launches: not the @triton.jit
    helpers that only other kernels call (checked through those)."""
    called = view.called_names()
    for site in view.sites:
        recorded = launches.get(site.name, [])
        if view.launcher_nodes(site.name) or recorded or site.name not in called:
            yield site, recorded


def _stop_if_asked(should_stop: StopCheck | None) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled


def _finding(code: str, kernel: str, span: Span, message: str) -> Finding:
    info = RULES[code]
    return Finding(code, info.name, info.severity, kernel, span, message)


def analyze_kernel(
    view: ModuleView,
    site: KernelSite,
    recorded: list[RecordedLaunch] | None = None,
    should_stop: StopCheck | None = None,
    bound: BoundLookup | None = None,
) -> list[Finding]:
    """One kernel's findings. With `bound`, the launch is bound first and a kernel whose binding
    gave the same probes as a cached analysis gets that analysis back (BoundLookup)."""
    err = first_error(site.node)
    if err is not None:
        message = f"kernel `{site.name}` does not parse here; nothing else is reported for it"
        return [_finding("AR002", site.name, span_of(err), message)]
    try:
        func, smap = parse_kernel(view, site)
    except (SyntaxError, StopIteration, UnicodeDecodeError, ValueError) as e:
        line = getattr(e, "lineno", 1) or 1
        row = site.node.start_point[0] + line - 1
        start = view.starts[min(row, len(view.starts) - 1)]
        span = Span(start, start, (row, 0), (row, 0))
        return [_finding("AR002", site.name, span, f"kernel `{site.name}` does not parse: {e}")]
    unbound = _unbound_name(view, site, func, smap)
    if unbound is not None:
        return [unbound]
    try:
        setup = set_up_kernel(view, site, func, smap)
        assertions = parse_assertions(view.source, site.node.start_point[0], site.node.end_point[0])
        run = ProbeRun(setup, view.consts, assertions, recorded, should_stop)
        if bound is not None:
            reused = bound.get(f"{run.fingerprint()}\n{_module_names_read(view, func)}")
            if reused is not None:
                return reused
        with recording() as reads:  # what the rules read of host code (rule_reads.py)
            blocked = _unbound_under_launch(view, setup, run)
            findings = [blocked] if blocked is not None else _judged(run, view, setup, assertions, should_stop)
        if bound is not None and blocked is None:  # (its message names the launch's line)
            bound.put(findings, reads)
        return findings
    except RecursionError:
        span = span_of(site.function.child_by_field_name("name") or site.function)
        return [_finding("AR001", site.name, span, "the kernel nests too deeply to be analyzed")]


_NOT_BOUND = "not a parameter, local, module-level name, import or builtin"
#: names the interpreter resolves itself (`tl`, `triton`, Triton's helpers it models)
_INTERPRETER_NAMES = frozenset(MODULE_NAMES) | frozenset(BUILTIN_NAMES)


def _unbound_name(
    view: ModuleView, site: KernelSite, func: ast.FunctionDef, smap: SourceMap
) -> Finding | None:
    """AR002 at a name nothing binds (unbound_names.py) that the kernel's compile reads, or that
    one of its launchers reads before it launches it: Triton's compile of the kernel, or the
    launcher, stops there with a NameError, as a kernel that does not parse stops, so nothing else
    is reported for the kernel, as AR002 says, and the kernel is not interpreted."""
    if _in_function(site.node):  # a kernel made inside a function: it may read that function's names
        return None
    known = view.known_names() | _INTERPRETER_NAMES
    what = _NOT_BOUND
    name = first_unbound(func, known, view.module_bindings)
    if name is not None:
        message = f"Triton's compile of `{site.name}` fails here with a NameError"
        return _finding(
            "AR002",
            site.name,
            smap.span(name),
            f"the name `{name.id}` is bound nowhere ({what}): {message}; nothing else is reported for it",
        )
    for node, mod, lsmap, launcher in view.parsed_launchers(site.name):
        if launcher is None or _in_function(node):
            continue
        mod, calls = launches_of(mod, site.name, view.kernel_aliases(site.name))  # kernel_aliases.py
        launcher = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), launcher)
        for call in calls:
            name = first_unbound_before_launch(launcher, call, known, view.module_bindings)
            if name is not None:
                message = f"`{launcher.name}` raises a NameError here before it launches `{site.name}`"
                return _finding(
                    "AR002",
                    site.name,
                    lsmap.span(name),
                    f"the name `{name.id}` is bound nowhere ({what}): {message}; nothing else is reported for the kernel",
                )
    return None


def _module_names_read(view: ModuleView, func: ast.FunctionDef) -> str:
    """The names the kernel reads that the module binds (none of its own): all that
    `_unbound_under_launch` reads of host code, for the cache's second level, whose key leaves
    the host functions' texts out."""
    free = names_read(func) - kernel_bindings(func) - BUILTINS - _INTERPRETER_NAMES
    known = view.known_names()
    bound = {n for n in free if n in known}
    if len(bound) < len(free):
        module = view.module_bindings()
        if module is None:
            return "?"
        bound |= free & module
    return " ".join(sorted(bound))


def _unbound_under_launch(view: ModuleView, setup: KernelSetup, run: ProbeRun) -> Finding | None:
    """AR002 at a name nothing binds that the compile for one of the kernel's launches reads:
    code under `if`s its constexprs settle (unbound_names.py). Only launches whose values the
    code establishes count (a launch of the file, no picked value, no assumed launch)."""
    if _in_function(setup.site.node):
        return None
    known = view.known_names() | _INTERPRETER_NAMES
    seen: set[str] = set()
    for step in run.plan():
        launch = step.launch
        if launch is None or launch.assumed or launch.choices or launch.site is None:
            continue
        env = launch_env(launch.args)
        if repr(env) in seen:  # (probes of one launch differ mostly in sizes, not in constexprs)
            continue
        seen.add(repr(env))
        name = first_unbound(setup.func, known, view.module_bindings, env)
        if name is not None:
            line = launch.site.smap.span(launch.site.call).start_point[0] + 1
            message = (
                f"the name `{name.id}` is bound nowhere ({_NOT_BOUND}): Triton's compile of `{setup.site.name}` "
                f"for the launch at line {line} fails here with a NameError; nothing else is reported for it"
            )
            return _finding("AR002", setup.site.name, setup.smap.span(name), message)
    return None


def _in_function(node: Node) -> bool:
    """Whether a launcher is nested in a function (its free names may be that function's)."""
    up = node.parent
    while up is not None:
        if up.type in ("function_definition", "lambda"):
            return True
        up = up.parent
    return False


def _judged(
    run: ProbeRun, view: ModuleView, setup: KernelSetup, assertions: dict, should_stop: StopCheck | None
) -> list[Finding]:
    """The interpretation's facts judged into findings, with the notes of where launches and
    helpers came from."""
    func, smap = setup.func, setup.smap
    findings = judge(run.run(), func, RuleContext(setup.site.name, view.source))
    if isinstance(run.binder.site, ForeignLaunchSite):
        findings = _foreign_or_unbound(findings, run.binder.site, setup, view, assertions, should_stop)
    local = [(h.func, h.smap) for h in setup.helpers.values() if not isinstance(h, ForeignHelper)]
    findings = note_foreign_helpers(findings, [(func, smap), *local], setup.helpers)
    return mark_recorded(findings, run.from_recording) if run.from_recording else findings


def _foreign_or_unbound(
    findings: list[Finding],
    launch: ForeignLaunchSite,
    setup: KernelSetup,
    view: ModuleView,
    assertions: dict,
    should_stop: StopCheck | None,
) -> list[Finding]:
    """A launch from another module that the interpreter cannot follow to the end (an AR001)
    is dropped when the kernel checked without a launch, as it was before such launches were
    looked for, analyzes in full: the other module's launch is used where it adds facts, never
    where it only takes them away."""
    if any(f.code == "AR001" for f in findings):
        alone = ProbeRun(replace(setup, launch_sites=[]), view.consts, assertions, None, should_stop)
        unbound = judge(alone.run(), setup.func, RuleContext(setup.site.name, view.source))
        if not any(f.code == "AR001" for f in unbound):
            return unbound
    return mark_foreign_launch(findings, launch.origin)
