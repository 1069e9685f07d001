"""The other modules of the kernel's package: helpers imported from them, launches made in them.

Real packages spread a kernel over several files. flag-gems calls `tle.program_id(0)` after
`from flag_gems.utils import triton_lang_extension as tle`; fla-core and liger-kernel write
`from .utils import helper`; and a third of real kernels are launched from another module
(`from .kernels import my_kernel`, then `my_kernel[grid](...)`). A file checked alone judges
those kernels on guesses. `SourceSet` lets the checker read the other modules' *source* (never
import or run them) so that such helpers are inlined like same-file ones and such launches bind.

The caller decides which files exist and how to read them (a module name -> path table and a
read function): analyzers/ stays "source in, findings out" and does no I/O of its own. The CLI
builds the table over the checked paths and their package roots, the server over the workspace.

What is resolved (by import statements at the top of a module, or in a top-level `try`/`if`):
`import a.b as c` (then `c.f(...)`), `from a import b as c` where `b` is a module or a
`@triton.jit` function, relative imports (`from .x import f`, `from .. import m`), and names a
module only re-exports (`from .impl import f` in an `__init__.py`), a few levels deep. Helpers
are kept in one flat table under the name the calling code writes (`tle.program_id`,
`helper`); the kernel's own file wins a clash of names.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from argus.analyzers.errors import UNPARSABLE
from argus.analyzers.findings import Finding, Span
from argus.analyzers.frontend.parse import PY_LANGUAGE, first_error, parse, text_of
from argus.analyzers.frontend.queries import KernelSite, called_names
from argus.analyzers.host_sources import ModuleFunctions
from argus.analyzers.imports import ImportRef, qualify_triton_names, read_imports
from argus.analyzers.model.host import dotted_name
from argus.analyzers.model.host_functions import LaunchFunctions, gather_functions
from argus.analyzers.model.kernel import Helper, SourceMap, parse_snippet
from argus.analyzers.model.kernel_aliases import launches_of
from argus.analyzers.model.launch import LaunchSite
from argus.analyzers.model.nodes import subtree
from argus.analyzers.model.recorded import RecordedSourceMap
from argus.analyzers.module_view import KernelContext, ModuleView, build_module_view
from tree_sitter import Node, Query, QueryCursor

#: dotted references `a.f(...)` and `a.f` passed as an argument (a combine function)
_DOTTED = Query(PY_LANGUAGE, "(call function: (attribute) @d) (argument_list (attribute) @d)")
_SUBSCRIPTED = re.compile(rb"(?<![\w])([A-Za-z_]\w*)\s*\[")  # `name[` : a launch, or any subscript
MAX_FOREIGN_HELPERS = 64  # per kernel: a helper library's whole call graph is never inlined
MAX_REEXPORT_DEPTH = 4  # `__init__.py` re-exporting a re-export ...
MAX_LAUNCH_FILES = 8  # other files that launch one kernel, tried in path order


@dataclass
class Loaded:
    """One module of the set, read and viewed once per text."""

    module: str
    path: str
    view: ModuleView
    imports: dict[str, ImportRef]
    by_name: dict[str, KernelSite]
    shown: str = ""  # the path as findings name it


@dataclass
class ForeignHelper(Helper):
    """A `@triton.jit` helper of another module. Its findings cannot point into a file the
    client did not ask about, so the interpreter maps them to the call in the kernel's file
    (`pinned_map`); `origin` ("path:line") says where the helper is."""

    origin: str = ""
    # its own module's constants: the names it reads resolve there, as Python's globals do
    consts: dict[str, Any] | None = None

    def pinned_map(self, caller: SourceMap, call: ast.AST) -> SourceMap:
        return RecordedSourceMap(caller, caller.span(call))


@dataclass
class ForeignLaunchSite(LaunchSite):
    """A launch of the kernel made in another module; `origin` ("path:line") is named in the
    findings bound from it."""

    origin: str = ""


class SourceSet:
    """The modules a check may read besides the file itself: dotted module name -> path, and a
    function that reads a path (None when it cannot, or will not: too large, not a file).

    Texts are re-read on every lookup (the read function may cache by modification time); the
    view of a module is rebuilt only when its text changed."""

    def __init__(
        self,
        modules: Mapping[str, str],
        read: Callable[[str], bytes | None],
        display: Callable[[str], str] | None = None,
        loaded: dict[str, tuple[bytes, Loaded]] | None = None,
        words: dict[str, tuple[bytes, frozenset[str]]] | None = None,
    ) -> None:
        self.modules = {name: _norm(path) for name, path in modules.items()}
        self._by_path = {path: name for name, path in self.modules.items()}
        self._read = read
        self._display = display or (lambda path: path)
        # views by module, kept while the text is the same (`loaded`: shared between sets)
        self._loaded: dict[str, tuple[bytes, Loaded]] = {} if loaded is None else loaded
        self._words: dict[str, tuple[bytes, frozenset[str]]] = {} if words is None else words
        self._index: dict[str, list[str]] | None = None
        self._functions: dict[str, tuple[bytes, ModuleFunctions]] = {}

    def module_of(self, path: str) -> str | None:
        return self._by_path.get(_norm(path))

    def text_of(self, path: str) -> bytes | None:
        return self._read(path)

    def load(self, module: str, text: bytes | None = None, view: ModuleView | None = None) -> Loaded | None:
        """The module's view; `text` (and its `view`) when the caller already holds them (the
        file being checked: its unsaved text is the one that counts)."""
        path = self.modules.get(module)
        if path is None:
            return None
        if text is None:
            text = self._read(path)
            if text is None:
                return None
        held = self._loaded.get(module)
        if held is not None and held[0] == text and (view is None or held[1].view is view):
            return held[1]
        if view is None:
            view = build_module_view(text, parse(text))
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        loaded = Loaded(module, path, view, read_imports(text, view.tree.root_node, package), {})
        loaded.by_name = {s.name: s for s in view.sites}
        loaded.shown = self._display(path)
        self._loaded[module] = (text, loaded)
        return loaded

    # ---- helpers ---------------------------------------------------------------------------
    def kernel_context(self, view: ModuleView, path: str, site: KernelSite) -> KernelContext:
        """The helpers `site` calls (directly or through each other) that live in other modules."""
        ctx = KernelContext()
        module = self.module_of(path)
        home = self.load(module, view.source, view) if module is not None else None
        if home is None:
            return ctx
        local = {s.name for s in view.sites}
        todo: list[tuple[Loaded, Node]] = [(home, site.function)]
        for name in view.reachable_helpers(site):
            if name in home.by_name:
                todo.append((home, home.by_name[name].function))
        by_origin: dict[str, ForeignHelper] = {}
        while todo and len(by_origin) < MAX_FOREIGN_HELPERS:
            where, fn = todo.pop()
            for ref_name in sorted(_references(where, fn)):
                if ref_name in local or ref_name in ctx.helpers:
                    continue
                found = self._resolve_reference(where, ref_name)
                if found is None or found[0] is home:
                    continue
                owner, target = found
                origin = _origin(owner, target)
                helper = by_origin.get(origin)
                if helper is None:
                    helper = _parse_helper(owner, target)
                    if helper is None:
                        continue
                    by_origin[origin] = helper
                    ctx.texts[owner.path] = owner.view.source
                    todo.append((owner, target.function))
                ctx.helpers[ref_name] = helper
        return ctx

    def _resolve_reference(self, where: Loaded, ref: str) -> tuple[Loaded, KernelSite] | None:
        """`f` or `m.f` as written in module `where` -> the jit function it names, if another
        module of the set (or, from a foreign module, that module itself) defines it."""
        head, _, tail = ref.partition(".")
        if not tail:
            if head in where.by_name:
                return where, where.by_name[head]
            imp = where.imports.get(head)
            return None if imp is None or imp.attr is None else self._function(imp.module, imp.attr, 0)
        imp = where.imports.get(head)
        if imp is None or "." in tail:
            return None
        target = imp.module if imp.attr is None else f"{imp.module}.{imp.attr}"
        return self._function(target, tail, 0)

    def _function(self, module: str, name: str, depth: int) -> tuple[Loaded, KernelSite] | None:
        """The jit function `name` of `module`, following re-exports a few levels deep."""
        loaded = self.load(module)
        if loaded is None or depth > MAX_REEXPORT_DEPTH:
            return None
        if name in loaded.by_name:
            return loaded, loaded.by_name[name]
        imp = loaded.imports.get(name)
        if imp is None or imp.attr is None:
            return None
        return self._function(imp.module, imp.attr, depth + 1)

    # ---- host functions --------------------------------------------------------------------
    def functions_of(self, module: str) -> ModuleFunctions | None:
        """The plain functions and constants of `module`, as a launcher's calls resolve them."""
        loaded = self.load(module)
        if loaded is None:
            return None
        held = self._functions.get(module)
        if held is None or held[0] != loaded.view.source:
            held = (loaded.view.source, ModuleFunctions(loaded.view, loaded.path, loaded.shown, loaded.imports, self))
            self._functions[module] = held
        return held[1]

    def host_function(
        self, module: str, name: str, depth: int = 0
    ) -> tuple[ast.FunctionDef, ModuleFunctions, str] | None:
        """The plain function `name` of `module`, following re-exports a few levels deep."""
        src = self.functions_of(module)
        if src is None or depth > MAX_REEXPORT_DEPTH:
            return None
        found = src.local(name)
        if found is not None:
            return found
        imp = src.imports.get(name)
        if imp is None or imp.attr is None:
            return None
        return self.host_function(imp.module, imp.attr, depth + 1)

    # ---- launches --------------------------------------------------------------------------
    def launch_sites(self, path: str, kernel: str) -> tuple[list[ForeignLaunchSite], dict[str, bytes]]:
        """Launches of `kernel` (defined in `path`) made in other modules of the set that import
        it from that module, in path order then line order; with the texts of the files read."""
        module = self.module_of(path)
        if module is None:
            return [], {}
        sites: list[ForeignLaunchSite] = []
        texts: dict[str, bytes] = {}
        helper_texts: dict[str, bytes] = {}  # modules of the host functions those launchers call
        for other in self._launchers_index().get(kernel, []):
            if other == module or len(texts) >= MAX_LAUNCH_FILES:
                continue
            other_path = self.modules[other]
            text = self._read(other_path)
            loaded = self.load(other, text) if text is not None else None
            if loaded is None or not self._imports_kernel(loaded, module, kernel):
                continue
            found = _launches_in(loaded, kernel, self, helper_texts)
            if found:
                texts[other_path] = text  # type: ignore[assignment]  # not None: loaded
                sites.extend(found)
        return sites, {**helper_texts, **texts}

    def _launchers_index(self) -> dict[str, list[str]]:
        """Name -> the modules (in path order) where `name[` occurs: built once per set, from
        word lists kept per text, so a package of a thousand files is scanned once per check."""
        if self._index is None:
            index: dict[str, list[str]] = {}
            for module, path in sorted(self.modules.items(), key=lambda kv: kv[1]):
                text = self._read(path)
                if text is None:
                    continue
                held = self._words.get(path)
                if held is None or held[0] != text:
                    held = (text, frozenset(m.decode() for m in _SUBSCRIPTED.findall(text)))
                    self._words[path] = held
                for name in held[1]:
                    index.setdefault(name, []).append(module)
            self._index = index
        return self._index

    def _imports_kernel(self, loaded: Loaded, module: str, kernel: str) -> bool:
        """Does the launching file's `kernel` (or `m.kernel`) name the kernel of `module`?"""
        imp = loaded.imports.get(kernel)
        if imp is not None and imp.attr is not None:
            found = self._function(imp.module, imp.attr, 0)
            if found is not None and found[0].module == module:
                return True
        text = loaded.view.source
        for alias, ref in loaded.imports.items():
            target = ref.module if ref.attr is None else f"{ref.module}.{ref.attr}"
            if target == module and f"{alias}.{kernel}".encode() in text:
                return True
        return False


def _norm(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def _origin(owner: Loaded, site: KernelSite) -> str:
    return f"{owner.shown}:{site.function.start_point[0] + 1}"


def _references(where: Loaded, fn: Node) -> set[str]:
    """Names a function calls (or passes on): bare ones and `module.name` ones."""
    names = set(called_names(fn))
    caps = QueryCursor(_DOTTED).captures(fn)
    for node in caps.get("d", []):
        text = text_of(node)
        if text.count(".") == 1 and text.split(".")[0] in where.imports:
            names.add(text)
    return names


def _parse_helper(owner: Loaded, site: KernelSite) -> ForeignHelper | None:
    if first_error(site.node) is not None:
        return None
    view = owner.view
    try:
        mod, smap = parse_snippet(
            view.source, site.node.start_byte, site.node.end_byte, view.starts, site.node.start_point[0]
        )
    except UNPARSABLE:
        return None
    fn = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None:
        return None
    qualify_triton_names(fn, owner.imports)  # `tldevice.tanh` of that module's imports
    return ForeignHelper(fn, smap, _origin(owner, site), view.consts)


def _launches_in(
    loaded: Loaded, kernel: str, project: SourceSet, texts: dict[str, bytes]
) -> list[ForeignLaunchSite]:
    """The kernel's launches in function bodies of another module (script-style launches at
    module level are left out: their setup is that module's business)."""
    view = loaded.view
    out: list[ForeignLaunchSite] = []
    for node, mod, smap, func in view.parsed_launchers(kernel):
        if node.type != "function_definition" or func is None:
            continue
        mod, calls = launches_of(mod, kernel)  # `fn = kernel[grid]; fn(...)`: kernel_aliases.py
        func = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), func)
        for call in calls:
            origin = f"{loaded.shown}:{smap.row0 + call.lineno}"
            fns = loaded_functions(loaded, func.body, project)
            texts.update({k: v for k, v in fns.texts.items() if k != loaded.path})
            out.append(ForeignLaunchSite(call, func, func.body, smap, origin, functions=fns.table))
    return out


def pin_launch(site: ForeignLaunchSite, anchor: Span) -> ForeignLaunchSite:
    """The launch with every position mapped to `anchor` (the kernel's name in its own file)."""
    return ForeignLaunchSite(
        site.call,
        site.host_func,
        site.body,
        RecordedSourceMap(site.smap, anchor),
        site.origin,
        functions=site.functions,
    )


def first_binding(
    sites: list[ForeignLaunchSite], bind: Callable[[ForeignLaunchSite], bool]
) -> list[ForeignLaunchSite]:
    """The first launch `bind` accepts (records without an error), alone; none when none does:
    a launch from another file that cannot be bound is no better than no launch."""
    return next(([s] for s in sites if bind(s)), [])


def mark_foreign_launch(findings: list[Finding], origin: str) -> list[Finding]:
    """Findings bound from a launch in another file name it: in the witness, and in the AR001
    notes about that launch."""
    note = f"bound from the launch at {origin}"
    out = []
    for f in findings:
        if f.witness is not None:
            witness = {**f.witness, "launch": note}
            if witness.get("summary"):  # the line editors and the concise output show
                witness["summary"] = f"{witness['summary']}; {note}"
            f = replace(f, witness=witness)
        if f.code == "AR001" and f.message.startswith("the launch"):
            f = replace(f, message=f"{f.message} (the launch at {origin})")
        out.append(f)
    return out


def note_foreign_helpers(
    findings: list[Finding], calls: list[tuple[ast.AST, SourceMap]], helpers: Mapping[str, Helper]
) -> list[Finding]:
    """A finding inside another module's helper sits on the call in this file: say which helper
    (and where it is), and drop a quick fix, which would edit the call instead of the helper."""
    at: dict[tuple[int, int], str] = {}
    for root, smap in calls:
        for node in subtree(root):
            if not isinstance(node, ast.Call):
                continue
            helper = helpers.get(dotted_name(node.func))
            if isinstance(helper, ForeignHelper):
                span = smap.span(node)
                at.setdefault(
                    (span.start_byte, span.end_byte), f"`{ast.unparse(node.func)}` at {helper.origin}"
                )
    if not at:
        return findings
    out = []
    for f in findings:
        where = at.get((f.span.start_byte, f.span.end_byte))
        out.append(f if where is None else replace(f, message=f"{f.message} (inside {where})", fix=None))
    return out


def loaded_functions(loaded: Loaded, body: list[ast.stmt], project: SourceSet | None = None) -> LaunchFunctions:
    """The functions a launcher body in module `loaded` calls (model/host_functions.py)."""
    src = ModuleFunctions(loaded.view, loaded.path, loaded.shown, loaded.imports, project)
    return gather_functions(body, src)
