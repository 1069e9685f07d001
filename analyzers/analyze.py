"""Per-module driver: kernels -> models -> probe launches -> interpreter -> facts -> findings.

Each kernel is independent: a syntax error, an unmodelled construct or an internal error in one
kernel becomes a finding (AR002/AR001) for that kernel only, never an exception.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node, Tree

from analyzers.engine import KernelCache, cache_key
from analyzers.findings import Finding, Span
from analyzers.frontend.parse import first_error, parse, span_of
from analyzers.frontend.queries import KernelSite, called_names, find_kernels, launch_calls
from analyzers.interp.facts import Fact, FactSink
from analyzers.interp.interpreter import Helper, Interpreter
from analyzers.interp.ops import Retype
from analyzers.interp.values import TensorInfo, Unmodelled
from analyzers.model.kernel import KernelModel, build_kernel_model, line_starts, parse_snippet
from analyzers.model.launch import LaunchBinder, LaunchSite, Unbindable, find_launch_calls
from analyzers.model.launch_file import RecordedLaunch
from analyzers.model.nodes import subtree
from analyzers.model.recorded import bind_recorded, mark_recorded
from analyzers.model.scan import KernelScan, scan_kernel
from analyzers.registry import RULES
from analyzers.rules import REGISTRY, RuleContext
from analyzers.tag_asserts import parse_assertions

MAX_CONFIGS = 4
MAX_PROBE_ELEMENTS = 1 << 23  # a probe whose tensors are larger is skipped (named in AR001)


@dataclass
class ModuleView:
    """What every kernel of one file shares: source, line table, tree, helpers, constants."""

    source: bytes
    starts: list[int]
    tree: Tree
    sites: list[KernelSite]
    consts: dict[str, Any]
    const_nodes: dict[str, ast.expr]
    const_text: bytes
    launchers: dict[str, list[Node]] | None = None
    calls: dict[int, set[str]] = field(default_factory=dict)


def analyze_module(
    source: bytes,
    cache: KernelCache | None = None,
    tree: Tree | None = None,
    launches: dict[str, list[RecordedLaunch]] | None = None,
) -> list[Finding]:
    tree = tree or parse(source)
    view = _module_view(source, tree)
    out: list[Finding] = []
    called = _called_names(view)
    for site in view.sites:
        launchers = _launcher_nodes(view, site.name)
        recorded = (launches or {}).get(site.name, [])
        if not launchers and not recorded and site.name in called:
            continue  # a @triton.jit helper: checked through the kernels that call it
        # the key holds what the kernel's analysis reads, relative to where it sits: an edit
        # elsewhere, or one that only moves the kernel, reuses the cached findings, shifted
        helpers = _reachable_helpers(view, site)
        base = site.node.start_byte, site.node.start_point[0]
        key = cache_key(
            source[site.node.start_byte : site.node.end_byte],
            view.const_text,
            *[
                source[h.node.start_byte : h.node.end_byte]
                for h in view.sites
                if h is not site and h.name in helpers
            ],
            *[
                source[n.start_byte : n.end_byte] + b"@" + str(n.start_byte - base[0]).encode()
                for n in launchers
            ],
            repr(recorded).encode(),
        )
        cached = cache.get(key) if cache is not None else None
        if cached is None:
            found = analyze_kernel(view, site, launchers, recorded)
            if cache is not None:
                cache.put(key, (found, base))
            out.extend(found)
        else:
            found, old = cached
            out.extend(shift_findings(found, base[0] - old[0], base[1] - old[1]))
    return out


def shift_findings(findings: list[Finding], dbyte: int, drow: int) -> list[Finding]:
    """Move cached findings with their kernel (rows and bytes shift; columns do not)."""
    if not dbyte and not drow:
        return findings
    from dataclasses import replace

    from analyzers.findings import Fix, Related, TextEdit

    def sp(s: Span) -> Span:
        return Span(
            s.start_byte + dbyte,
            s.end_byte + dbyte,
            (s.start_point[0] + drow, s.start_point[1]),
            (s.end_point[0] + drow, s.end_point[1]),
        )

    out = []
    for f in findings:
        fix = None
        if f.fix is not None:
            fix = Fix(
                f.fix.title,
                tuple(TextEdit(e.start_byte + dbyte, e.end_byte + dbyte, e.new_text) for e in f.fix.edits),
            )
        out.append(
            replace(
                f, span=sp(f.span), fix=fix, related=tuple(Related(sp(r.span), r.message) for r in f.related)
            )
        )
    return out


def _called_names(view: ModuleView, only: KernelSite | None = None) -> set[str]:
    """Names called (or passed as combine functions) inside any kernel, or inside `only`
    (one query per kernel per check, remembered on the view)."""
    out: set[str] = set()
    for site in [only] if only is not None else view.sites:
        key = id(site.function)
        if key not in view.calls:
            view.calls[key] = called_names(site.function)
        out |= view.calls[key]
    return out


def _module_view(source: bytes, tree: Tree) -> ModuleView:
    starts = line_starts(source)
    consts: dict[str, Any] = {}
    const_nodes: dict[str, ast.expr] = {}
    parts: list[bytes] = []
    for child in tree.root_node.children:
        if child.type == "function_definition":
            _record_returning_function(source, child, const_nodes, parts)
            continue
        if child.type != "expression_statement" or not child.named_children:
            continue
        stmt = child.named_children[0]
        if stmt.type != "assignment":
            continue
        text = source[child.start_byte : child.end_byte]
        try:
            mod = ast.parse(text.decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        st = mod.body[0] if mod.body else None
        if isinstance(st, ast.Assign | ast.AnnAssign):
            target = st.targets[0] if isinstance(st, ast.Assign) else st.target
            value = st.value
            if isinstance(target, ast.Name) and value is not None:
                const_nodes[target.id] = value
                v = _const_value(value)
                if v is not None:
                    consts[target.id] = v
                    parts.append(text)
    return ModuleView(
        source, starts, tree, find_kernels(tree.root_node), consts, const_nodes, b"\n".join(parts)
    )


def _record_returning_function(
    source: bytes, node: Node, const_nodes: dict[str, ast.expr], parts: list[bytes]
) -> None:
    """`def get_configs(): return [...]`: remember the returned expression (autotune configs)."""
    params = node.child_by_field_name("parameters")
    positional = ("identifier", "typed_parameter", "default_parameter", "typed_default_parameter")
    if params is not None and any(c.type in positional for c in params.named_children):
        return  # takes arguments: not a config list (and not worth parsing)
    text = source[node.start_byte : node.end_byte]
    if len(text) > 20000:
        return
    try:
        mod = ast.parse(text.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    fn = mod.body[0] if mod.body and isinstance(mod.body[0], ast.FunctionDef) else None
    if fn is None or fn.args.args:
        return
    ret = next((st.value for st in fn.body if isinstance(st, ast.Return) and st.value is not None), None)
    if ret is not None:
        # literal locals the returned expression may iterate over (`shapes = [(128, 64, 8), ...]`)
        local = {
            t.id: st.value
            for st in fn.body
            if isinstance(st, ast.Assign)
            for t in st.targets
            if isinstance(t, ast.Name)
        }
        const_nodes[f"{fn.name}()"] = ret
        const_nodes[f"{fn.name}().locals"] = local  # type: ignore[assignment]
        # other returns (`if interpreting(): return [...]`) stand in when the main one is built
        # imperatively (a loop appending configs)
        const_nodes[f"{fn.name}().alternatives"] = [  # type: ignore[assignment]
            st.value
            for st in ast.walk(fn)
            if isinstance(st, ast.Return) and st.value is not None and st.value is not ret
        ]
        parts.append(text)


def _const_value(node: ast.expr) -> Any:
    from analyzers.interp.values import scalar

    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("constexpr") and node.args:
        node = node.args[0]
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        try:
            v = (
                eval(compile(ast.Expression(node), "<const>", "eval"), {"__builtins__": {}}, {})
                if _is_arith(node)
                else None
            )
        except Exception:  # noqa: BLE001 - only literal arithmetic reaches eval
            v = None
    if isinstance(v, bool | int | float):
        return scalar(v, constexpr=True)
    return None


def _is_arith(node: ast.expr) -> bool:
    return all(
        isinstance(n, ast.BinOp | ast.UnaryOp | ast.Constant | ast.operator | ast.unaryop)
        for n in ast.walk(node)
    )


def _launcher_nodes(view: ModuleView, kernel: str) -> list[Node]:
    """Function definitions (or module statements) containing `kernel[grid](...)`."""
    if view.launchers is None:
        view.launchers = _all_launchers(view)
    return view.launchers.get(kernel, [])


def _all_launchers(view: ModuleView) -> dict[str, list[Node]]:
    """One query over the module: kernel name -> the functions (or statements) that launch it."""
    out: dict[str, list[Node]] = {}
    for name, call in launch_calls(view.tree.root_node):
        owner = call
        while (
            owner.parent is not None and owner.type != "function_definition" and owner.parent.type != "module"
        ):
            owner = owner.parent
        nodes = out.setdefault(name, [])
        if owner not in nodes:
            nodes.append(owner)
    return out


def _finding(code: str, kernel: str, span: Span, message: str) -> Finding:
    info = RULES[code]
    return Finding(code, info.name, info.severity, kernel, span, message)


def analyze_kernel(
    view: ModuleView, site: KernelSite, launchers: list[Node], recorded: list[RecordedLaunch] | None = None
) -> list[Finding]:
    err = first_error(site.node)
    if err is not None:
        return [
            _finding(
                "AR002",
                site.name,
                span_of(err),
                f"kernel `{site.name}` does not parse here; nothing else is reported for it",
            )
        ]
    try:
        module, smap = parse_snippet(
            view.source, site.node.start_byte, site.node.end_byte, view.starts, site.node.start_point[0]
        )
        func = next(n for n in module.body if isinstance(n, ast.FunctionDef))
    except (SyntaxError, StopIteration, UnicodeDecodeError, ValueError) as e:
        line = getattr(e, "lineno", 1) or 1
        row = site.node.start_point[0] + line - 1
        start = view.starts[min(row, len(view.starts) - 1)]
        return [
            _finding(
                "AR002",
                site.name,
                Span(start, start, (row, 0), (row, 0)),
                f"kernel `{site.name}` does not parse: {e}",
            )
        ]
    try:
        return _interpret(view, site, func, smap, launchers, recorded or [])
    except RecursionError:
        return [
            _finding(
                "AR001",
                site.name,
                span_of(site.function.child_by_field_name("name") or site.function),
                "the kernel nests too deeply to be analyzed",
            )
        ]


def _reachable_helpers(view: ModuleView, site: KernelSite) -> set[str]:
    """Names of the @triton.jit functions the kernel calls, directly or through each other."""
    by_name = {s.name: s for s in view.sites}
    seen: set[str] = set()
    todo = [site]
    while todo:
        for name in _called_names(view, todo.pop()):
            if name in by_name and name not in seen and by_name[name] is not site:
                seen.add(name)
                todo.append(by_name[name])
    return seen


def _helpers(view: ModuleView, site: KernelSite) -> dict[str, Helper]:
    out: dict[str, Helper] = {}
    wanted = _reachable_helpers(view, site)
    for other in view.sites:
        if other is site or other.name not in wanted or first_error(other.node) is not None:
            continue
        try:
            mod, smap = parse_snippet(
                view.source,
                other.node.start_byte,
                other.node.end_byte,
                view.starts,
                other.node.start_point[0],
            )
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        fn = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), None)
        if fn is not None:
            out[fn.name] = Helper(fn, smap)
    return out


def _launch_sites(view: ModuleView, kernel: str, launchers: list[Node]) -> list[LaunchSite]:
    out = []
    for node in launchers:
        try:
            mod, smap = parse_snippet(
                view.source, node.start_byte, node.end_byte, view.starts, node.start_point[0]
            )
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        func = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), None)
        body = func.body if func is not None else mod.body
        if func is None and node.parent is not None and node.parent.type == "module":
            # a script-style launch: the module statements before it set up its arguments
            body = _module_prefix(view, node) + body
        for call in find_launch_calls(mod, kernel):
            out.append(LaunchSite(call, func, body, smap))
    return out


def _module_prefix(view: ModuleView, upto: Node) -> list[ast.stmt]:
    """Top-level assignments, asserts and ifs before `upto`, each parsed on its own (one that
    does not parse is skipped); definitions and imports are left out."""
    out: list[ast.stmt] = []
    for child in view.tree.root_node.children:
        if child.start_byte >= upto.start_byte:
            break
        if child.type not in ("expression_statement", "assert_statement", "if_statement"):
            continue
        try:
            mod = ast.parse(view.source[child.start_byte : child.end_byte].decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        out.extend(mod.body)
    return out


def _interpret(
    view: ModuleView,
    site: KernelSite,
    func: ast.FunctionDef,
    smap: Any,
    launchers: list[Node],
    recorded: list[RecordedLaunch],
) -> list[Finding]:
    kernel = build_kernel_model(func, smap, view.const_nodes)
    helpers = _helpers(view, site)
    scan = scan_kernel(func, [p.name for p in kernel.params], {k: h.func for k, h in helpers.items()})
    sites = _launch_sites(view, site.name, launchers)
    sink = FactSink()
    notes: list[Fact] = []
    binder = LaunchBinder(kernel, scan, sites[0] if sites else None)
    from_recording: str | None = None
    try:
        binder.record()
    except Unbindable as e:
        notes.append(Fact("unmodelled", func, smap, {"what": f"the launch ({e})"}))
        binder = LaunchBinder(kernel, scan, None)
        binder.record()
    except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
        notes.append(
            Fact("unmodelled", func, smap, {"what": f"the launch site (host code: {type(e).__name__})"})
        )
        binder = LaunchBinder(kernel, scan, None)
        binder.record()
    if binder.site is None and recorded:  # no launcher in the file, or one not understood
        binder, from_recording, notes = bind_recorded(kernel, scan, recorded, smap, site, binder, notes, func)
    configs: list[dict[str, Any] | None] = (
        list(kernel.autotune.configs[:MAX_CONFIGS]) if kernel.autotune and kernel.autotune.configs else [None]
    )
    # tensors whose loaded values bound the program's work or groups hold integers: known
    # before the first run, which then need not restart when it meets them (the rest, and
    # lengths, which an argmax over float data also looks like, are found by Retype)
    int_tensors: set[str] = {name for name, pol in scan.policies.items() if pol.work_bound or pol.prefix}
    aborted: Fact | None = None
    assertions = parse_assertions(view.source, site.node.start_point[0], site.node.end_point[0])
    for ci, config in enumerate(configs):
        for kind in binder.probe_kinds(_branches(kernel, scan, binder)) if ci == 0 else ("ragged",):
            try:
                launch = binder.probe(kind, config)
            except (
                Unbindable,
                ArithmeticError,
                TypeError,
                ValueError,
                KeyError,
                IndexError,
                AttributeError,
            ) as e:
                what = (
                    str(e)
                    if isinstance(e, Unbindable)
                    else f"the launch site (host code: {type(e).__name__})"
                )
                if binder.site is None:
                    notes.append(Fact("unmodelled", func, smap, {"what": what}))
                    break
                # keep checking what does not need the launch: as if it had no launch site
                notes.append(
                    Fact(
                        "unmodelled",
                        func,
                        smap,
                        {"what": what, "fallback": True},
                    )
                )
                binder = LaunchBinder(kernel, scan, None)
                binder.record()
                launch = binder.probe(kind, config)
            launch.sampled = ci > 0
            biggest = max((v.extent for v in launch.args.values() if isinstance(v, TensorInfo)), default=0)
            if biggest > MAX_PROBE_ELEMENTS:
                notes.append(
                    Fact(
                        "unmodelled",
                        func,
                        smap,
                        {"what": f"the {kind} probe ({biggest:,} elements in one tensor)"},
                    )
                )
                continue
            for _attempt in range(6):
                interp = Interpreter(kernel, scan, launch, helpers, view.consts, sink, int_tensors)
                interp.assertions = assertions
                try:
                    interp.run()
                    break
                except Retype as r:
                    if r.name in int_tensors:
                        aborted = Fact("unmodelled", func, smap, {"what": f"the contents of `{r.name}`"})
                        break
                    int_tensors.add(r.name)
                    _drop_local(sink)
                    continue
                except Unmodelled as u:
                    node = u.node if isinstance(u.node, ast.AST) else func
                    aborted = Fact(
                        "unmodelled", node, interp.smap if u.node is not None else smap, {"what": u.what}
                    )
                    _drop_global(sink)
                    break
                except (
                    ArithmeticError,
                    TypeError,
                    ValueError,
                    KeyError,
                    IndexError,
                    AttributeError,
                    AssertionError,
                ) as e:
                    aborted = Fact(
                        "unmodelled",
                        func,
                        smap,
                        {"what": f"part of this kernel (internal: {type(e).__name__}: {e})"},
                    )
                    _drop_global(sink)
                    break
            if aborted is not None:
                break
        if aborted is not None:
            break
    for name, (what, value) in binder.assumed_values.items():
        notes.append(Fact("unmodelled", func, smap, {"what": f"`{name}` ({what})", "assumed": value}))
    facts = list(sink.facts.values())
    if aborted is not None:
        facts.append(aborted)
    facts.extend(notes)
    if any(f.kind in ("grid-axis", "grid-decomposition") for f in facts):
        facts = [f for f in facts if f.kind != "uncovered"]  # one root cause: the grid
    if any(f.kind in ("dot-mismatch", "pointer-step") for f in facts):
        facts = [f for f in facts if f.kind != "coverage"]  # the operands, not the loop bounds
    ctx = RuleContext(site.name, view.source)
    by_kind: dict[str, list[Any]] = {}
    for rule in REGISTRY:
        for k in rule.reads:
            by_kind.setdefault(k, []).append(rule)
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for fact in facts:
        fact.data.setdefault("_func", func)
        for rule in by_kind.get(fact.kind, []):
            for f in rule.check(fact, ctx):
                key = (f.code, f.span.start_byte)
                if key not in seen:
                    seen.add(key)
                    findings.append(f)
    return mark_recorded(findings, from_recording) if from_recording else findings


def _branches(kernel: KernelModel, scan: KernelScan, binder: LaunchBinder) -> bool:
    """Ragged sizes and size 1 always; exact and half-tile multiples only where the kernel
    branches on its sizes (heuristics such as EVEN_K, `if K % BLOCK_K == 0`, a constexpr the
    launcher derives from a size), where they take a different path. Branches on flags
    (`if MUL_ROUTED_WEIGHT`) or on loaded data (`if pid_m * BM >= num_tokens_post_padded`)
    take the same path at every size, so those probes would repeat the ragged one."""
    if kernel.heuristics:
        return True
    params = {p.name: p for p in kernel.params}
    size_driven: set[str] | None = None
    for n in subtree(kernel.func):
        if not isinstance(n, ast.If | ast.IfExp):
            continue
        names = {x.id for x in ast.walk(n.test) if isinstance(x, ast.Name)}
        roots = set().union(*(scan.derived.get(x, {x}) for x in names)) if names else set()
        if roots & scan.pointers:
            continue  # decided by loaded data
        for r in roots:
            p = params.get(r)
            if p is None:
                continue
            if not p.constexpr:
                return True
            if size_driven is None:
                size_driven = binder.size_driven_constexprs()
            if size_driven is None or r in size_driven:
                return True
    return False


def _drop_local(sink: FactSink) -> None:
    sink.facts.clear()


def _drop_global(sink: FactSink) -> None:
    for k in [k for k, f in sink.facts.items() if f.global_]:
        del sink.facts[k]


def describe_variable(source: bytes, byte_offset: int) -> str | None:
    from analyzers.describe import describe

    return describe(source, byte_offset)
