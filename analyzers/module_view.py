"""Stage 1 of the pipeline: what every kernel of one file shares.

The module view holds the source, its line table and tree, the kernel sites, the module-level
constants (and returned config lists), and answers, once per file, which kernels are launched
where and which helpers each kernel reaches. Everything here reads the text only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from argus.analyzers.cache import cache_key
from argus.analyzers.errors import UNPARSABLE
from argus.analyzers.frontend.parse import first_error, text_of
from argus.analyzers.frontend.queries import (
    KernelSite,
    alias_assignments,
    alias_owners,
    called_names,
    find_kernels,
    launch_calls,
)
from argus.analyzers.imports import ImportRef, qualify_triton_names, read_imports
from argus.analyzers.launch_texts import LaunchDeps, LaunchTextMemo, RecordingFunctions, recording_reads
from argus.analyzers.layout import piece_of
from argus.analyzers.model.binder_ctx import ctx_param, forward_node
from argus.analyzers.model.binder_heuristic_names import heuristic_seeds
from argus.analyzers.model.host_functions import LaunchFunctions, gather_functions
from argus.analyzers.model.kernel import Helper, SourceMap, line_starts, parse_snippet
from argus.analyzers.model.kernel_aliases import launches_of, module_aliases
from argus.analyzers.model.launch import LaunchSite
from argus.analyzers.model.launch_later import (
    KernelWrites,
    kernel_writes,
    module_kernel_writes,
    subscripted_names,
)
from argus.analyzers.module_ast import remember_split
from argus.analyzers.module_bindings import module_bindings
from argus.analyzers.module_constants import read_module_constants
from argus.analyzers.snippet_memo import SnippetMemo
from argus.analyzers.statement_bindings import top_level_spans
from tree_sitter import Node, Tree

if TYPE_CHECKING:  # project.py builds views itself: imported only for the annotations
    from argus.analyzers.project import ForeignLaunchSite, SourceSet



@dataclass
class KernelContext:
    """What one kernel reads from other modules of its package (`project.SourceSet`): the
    helpers it reaches there, by the name the calling code writes, and the texts they came from
    (path -> text, for the cache key)."""

    helpers: dict[str, Helper] = field(default_factory=dict)
    texts: dict[str, bytes] = field(default_factory=dict)


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
    _by_name: dict[str, KernelSite] | None = field(default=None, repr=False)
    #: the other modules of the package (None: the file is checked alone), and this file's path
    project: SourceSet | None = field(default=None, repr=False)
    path: str = "<string>"
    _contexts: dict[int, KernelContext] = field(default_factory=dict, repr=False)
    _imports: dict[str, ImportRef] | None = field(default=None, repr=False)
    _foreign_launches: dict[str, tuple[list[ForeignLaunchSite], dict[str, bytes]]] = field(
        default_factory=dict, repr=False
    )
    _launch_functions: dict[tuple[int, int], LaunchFunctions] = field(default_factory=dict, repr=False)
    # each launcher node parsed once (the cache key and the kernel's setup both read them)
    _parsed: dict[tuple[int, int], tuple[ast.Module, SourceMap] | None] = field(
        default_factory=dict, repr=False
    )
    #: launchers' key texts kept between checks of one document (the cache's), and per launcher
    #: node in this view: its key texts and what they were gathered from
    memo: LaunchTextMemo | None = field(default=None, repr=False)
    #: launcher, host-function, kernel and helper trees kept between checks of one document
    #: (the cache's; snippet_memo.py)
    snippets: SnippetMemo | None = field(default=None, repr=False)
    _imports_key: str | None = field(default=None, repr=False)  # the imports' text, for that memo
    plain_defs: dict[str, Node] | None = field(default=None, repr=False)
    _other_texts: dict[tuple[int, int], dict[str, bytes]] = field(default_factory=dict, repr=False)
    _deps: dict[tuple[int, int], LaunchDeps] = field(default_factory=dict, repr=False)
    _bindings: tuple[frozenset[str] | None] | None = field(default=None, repr=False)
    _heuristic_seeds: list[ast.stmt] | None = field(default=None, repr=False)
    # names bound to a kernel (model/kernel_aliases.py): module-level ones per kernel, and the
    # launcher nodes found through any alias, per kernel
    _aliases: dict[str, list[str]] | None = field(default=None, repr=False)
    _launcher_nodes: dict[str, list[Node]] = field(default_factory=dict, repr=False)
    _assignments: list[tuple[str, list[str], Node]] | None = field(default=None, repr=False)
    # each autograd `forward` parsed once: every kernel its backward launches shares the tree
    # (and what model/node_memo.py keeps on it)
    _forwards: dict[tuple[int, int], ast.FunctionDef | None] = field(default_factory=dict, repr=False)
    _kernel_writes: KernelWrites | None = field(default=None, repr=False)

    def module_bindings(self) -> frozenset[str] | None:
        """Every name the module binds at its level (unbound_names.py), parsed once per view and
        only when a kernel reads a name the cheaper tables do not hold; None: not knowable."""
        if self._bindings is None:
            self._bindings = (module_bindings(self.source, top_level_spans(self.tree)),)
        return self._bindings[0]

    def known_names(self) -> set[str]:
        """Names bound by the module that the view already holds without a parse of the module:
        constants and simple assignments, imports, kernels and helpers."""
        return {*self.const_nodes, *self.consts, *self.imports(), *(s.name for s in self.sites)}

    def called_names(self, only: KernelSite | None = None) -> set[str]:
        """Names called (or passed as combine functions) inside any kernel, or inside `only`
        (one query per kernel per check, remembered on the view)."""
        out: set[str] = set()
        for site in [only] if only is not None else self.sites:
            key = id(site.function)
            if key not in self.calls:
                self.calls[key] = called_names(site.function)
            out |= self.calls[key]
        return out

    def launcher_nodes(self, kernel: str) -> list[Node]:
        """Function definitions (or module statements) containing `kernel[grid](...)`, also
        under a name bound to the kernel (`k2 = k1`, `fn = kernel[grid]`: kernel_aliases.py)."""
        if self.launchers is None:
            self.launchers = _all_launchers(self.tree)
        if kernel not in self._launcher_nodes:
            nodes = list(self.launchers.get(kernel, []))
            for alias in self.kernel_aliases(kernel):
                nodes.extend(n for n in self.launchers.get(alias, []) if n not in nodes)
            if self._assignments is None:
                self._assignments = alias_assignments(self.tree.root_node)
            found = alias_owners(self._assignments, kernel, set(self.launchers))
            nodes.extend(n for n in found if n not in nodes)
            nodes.sort(key=lambda n: n.start_byte)  # the file's order, whatever found them
            self._launcher_nodes[kernel] = nodes
        return self._launcher_nodes[kernel]

    def kernel_aliases(self, kernel: str) -> list[str]:
        """Module-level names bound to `kernel` (`threshold__triton_kernel = threshold_`)."""
        if self._aliases is None:
            self._aliases = module_aliases(self.const_nodes, [s.name for s in self.sites])
        return self._aliases.get(kernel, [])

    def reachable_helpers(self, site: KernelSite) -> set[str]:
        """Names of the @triton.jit functions the kernel calls, directly or through each other."""
        if self._by_name is None:  # once per file: per kernel, a file of many kernels was quadratic
            self._by_name = {s.name: s for s in self.sites}
        by_name = self._by_name
        seen: set[str] = set()
        todo = [site]
        while todo:
            for name in self.called_names(todo.pop()):
                if name in by_name and name not in seen and by_name[name] is not site:
                    seen.add(name)
                    todo.append(by_name[name])
        return seen

    def helpers(self, site: KernelSite) -> dict[str, Helper]:
        """The reachable helpers that parse, each with its own source map."""
        out: dict[str, Helper] = {}
        wanted = self.reachable_helpers(site)
        for other in self.sites:
            if other is site or other.name not in wanted or first_error(other.node) is not None:
                continue
            try:
                fn, smap = self.jit_function(other.node)
            except (*UNPARSABLE, StopIteration):
                continue
            out[fn.name] = Helper(fn, smap)
        for name, helper in self.kernel_context(site).helpers.items():
            out.setdefault(name, helper)  # the file's own function wins a clash of names
        return out

    def jit_function(self, node: Node) -> tuple[ast.FunctionDef, SourceMap]:
        """A `@triton.jit` definition (a kernel or a helper) parsed alone, its names rewritten by
        the file's imports (`from triton.language.math import rsqrt`); raises as `parse_snippet`
        does, or StopIteration when it defines no function. The document's last tree of the same
        text, row and imports where there is one (snippet_memo.py)."""

        def build() -> tuple[ast.FunctionDef, SourceMap]:
            mod, smap = parse_snippet(self.source, node.start_byte, node.end_byte, self.starts, node.start_point[0])
            fn = next(n for n in mod.body if isinstance(n, ast.FunctionDef))
            qualify_triton_names(fn, self.imports())
            return fn, smap

        if self.snippets is None:
            return build()
        if self._imports_key is None:
            self._imports_key = repr(sorted(self.imports().items()))
        return self.snippets.jit_function(
            self.source, node.end_byte, self.starts, node.start_point[0], self._imports_key, build
        )

    def imports(self) -> dict[str, ImportRef]:
        """What the file's import statements bind (relative ones unresolved: no package here)."""
        if self._imports is None:
            self._imports = read_imports(self.source, self.tree.root_node, "")
        return self._imports

    def kernel_context(self, site: KernelSite) -> KernelContext:
        """The helpers `site` reaches in other modules of the package (none without a project)."""
        key = id(site.function)
        if key not in self._contexts:
            self._contexts[key] = (
                KernelContext()
                if self.project is None
                else self.project.kernel_context(self, self.path, site)
            )
        return self._contexts[key]

    def foreign_launch_sites(self, kernel: str) -> tuple[list[ForeignLaunchSite], dict[str, bytes]]:
        """Launches of `kernel` made in other modules of the package that import it (none when
        this file launches it, or without a project), with the texts of the files they are in."""
        if self.project is None or self.launcher_nodes(kernel):
            return [], {}
        if kernel not in self._foreign_launches:
            self._foreign_launches[kernel] = self.project.launch_sites(self.path, kernel)
        return self._foreign_launches[kernel]

    def foreign_texts(self, site: KernelSite, launchers: bool = True) -> dict[str, bytes]:
        """Every other file the kernel's result depends on (its helpers' modules, the files that
        launch it): path -> text, for the cache key. `launchers=False` leaves out what the
        file's own launchers' host code reads (the second level's key: the binding holds it)."""
        own: dict[str, bytes] = {}
        for node in self.launcher_nodes(site.name) if launchers else []:
            own.update(self._launcher_texts(node, site.name))
        if self.project is None:
            return own
        return {**own, **self.kernel_context(site).texts, **self.foreign_launch_sites(site.name)[1]}

    def _launcher_texts(self, node: Node, kernel: str) -> dict[str, bytes]:
        """The texts launcher `node`'s host functions come from besides this file's (and its own
        functions of this file, unparsed): once per view, and from the memo while nothing they
        were gathered from changed (launch_texts.py)."""
        key = (node.start_byte, node.end_byte)
        if key in self._other_texts:
            return self._other_texts[key]
        memo_key = self._memo_key(node)
        found = None
        if memo_key is not None and self.memo is not None:
            found = self.memo.get(memo_key, self, self._home()[1], self.project)
        if found is None:
            if key not in self._launch_functions:
                self.launch_sites(kernel)  # gathers the host functions its launchers call
            held = self._launch_functions.get(key)
            deps = self._deps.get(key)
            found = (
                {}
                if held is None or deps is None
                else {**deps.key_texts(self.path), **held.other_texts(self.path)}
            )
            if memo_key is not None and self.memo is not None and deps is not None:
                self.memo.put(memo_key, deps, found)
        fwd = forward_node(node)  # a backward's results hang on its forward too (binder_ctx.py)
        if fwd is not None:
            # normalized, without its row: blank lines and moves leave the key alone (a finding
            # pointing into the forward moves with it: the pipeline keys it as a piece)
            found = {**found, f"{self.path}{FORWARD_TEXT}": piece_of(self.source, fwd)[0]}
        # a later launch's kernel may write the rest of an output (launch_later.py): what is read
        # of it is its parameters and those it writes through, not its text
        launched = subscripted_names(node) - {kernel}
        for k in self.sites:
            if k.name in launched:
                writes = repr(kernel_writes(k.name, text_of(k.function))).encode()
                found = {**found, f"{self.path}#kernel-writes:{k.name}": writes}
        self._other_texts[key] = found
        return found

    def _memo_key(self, node: Node) -> str | None:
        """A launcher function's memo key: this file and the function's text, normalized as the
        kernel cache's key is (layout.py: trailing blanks and blank lines do not change what it
        reads); None for a script-style launch (the module statements before it are its body)."""
        if node.type not in ("function_definition", "decorated_definition"):
            return None
        return cache_key(self.path.encode(), piece_of(self.source, node)[0])

    def parsed_launchers(
        self, kernel: str
    ) -> Iterator[tuple[Node, ast.Module, SourceMap, ast.FunctionDef | None]]:
        """Each launcher node of `kernel` parsed on its own, with the function it defines (None
        for a script-style launch); one that does not parse is left out."""
        for node in self.launcher_nodes(kernel):
            key = (node.start_byte, node.end_byte)
            if key not in self._parsed:
                try:
                    self._parsed[key] = self._parse_launcher(node)
                except UNPARSABLE:
                    self._parsed[key] = None
            parsed = self._parsed[key]
            if parsed is None:
                continue
            mod, smap = parsed
            yield node, mod, smap, next((n for n in mod.body if isinstance(n, ast.FunctionDef)), None)

    def _parse_launcher(self, node: Node) -> tuple[ast.Module, SourceMap]:
        """A launcher (or autograd `forward`) parsed alone: the tree of the document's last
        check where its bytes and row are the same (snippet_memo.py)."""
        parse = parse_snippet if self.snippets is None else self.snippets.parse
        return parse(self.source, node.start_byte, node.end_byte, self.starts, node.start_point[0])

    def launch_sites(self, kernel: str) -> list[LaunchSite]:
        """Every `kernel[grid](...)` call, with the body of the function that makes it."""
        out = []
        for node, mod, smap, func in self.parsed_launchers(kernel):
            mod, calls = launches_of(mod, kernel, self.kernel_aliases(kernel))
            func = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), None)
            body = func.body if func is not None else mod.body
            if func is None and node.parent is not None and node.parent.type == "module":
                # a script-style launch: the module statements before it set up its arguments
                body = self._module_prefix(node) + body
            forward = self.autograd_forward(node, func)  # model/binder_ctx.py
            seeds = self.heuristic_seeds() + (forward.body if forward is not None else [])
            fns = self.launch_functions(node, body + seeds)
            writes = self.kernel_writes()
            for call in calls:
                out.append(
                    LaunchSite(call, func, body, smap, functions=fns.table, forward=forward, kernel_writes=writes)
                )
        return out

    def kernel_writes(self) -> KernelWrites:
        """Each kernel of the file: its parameters and those it writes through (launch_later.py)."""
        if self._kernel_writes is None:
            self._kernel_writes = module_kernel_writes([(k.name, text_of(k.function)) for k in self.sites])
        return self._kernel_writes

    def autograd_forward(self, node: Node, func: ast.FunctionDef | None) -> ast.FunctionDef | None:
        """The `forward` beside a `backward(ctx, ...)` launcher, parsed; None for any other."""
        if func is None or func.name != "backward" or ctx_param(func) is None:
            return None
        fwd = forward_node(node)
        if fwd is None:
            return None
        key = (fwd.start_byte, fwd.end_byte)
        if key not in self._forwards:
            self._forwards[key] = self._parsed_forward(fwd)
        return self._forwards[key]

    def _parsed_forward(self, fwd: Node) -> ast.FunctionDef | None:
        try:
            mod, _smap = self._parse_launcher(fwd)
        except UNPARSABLE:
            return None
        found = next((n for n in mod.body if isinstance(n, ast.FunctionDef)), None)
        return found if ctx_param(found) is not None else None

    def heuristic_seeds(self) -> list[ast.stmt]:
        """Calls of the functions this module's heuristics tables name, for the launchers'
        function gathering (model/binder_heuristic_names.py), once per view."""
        if self._heuristic_seeds is None:
            texts = [text_of(d) for s in self.sites for d in s.decorators if b"heuristics" in d.text]
            self._heuristic_seeds = heuristic_seeds(texts)
        return self._heuristic_seeds

    def launch_functions(self, node: Node, body: list[ast.stmt]) -> LaunchFunctions:
        """The plain functions (of this file, or through its imports of the package) and the
        module constants the launcher `node` reads (model/host_functions.py), once per text,
        noting what they were gathered from (launch_texts.py: the cache key and memo read it)."""
        key = (node.start_byte, node.end_byte)
        if key not in self._launch_functions:
            shown, imports, project = self._home()
            deps = self._deps[key] = LaunchDeps()
            src = RecordingFunctions(deps, self, self.path, shown, imports, project)
            with recording_reads(project, deps):
                self._launch_functions[key] = gather_functions(body, src)
        return self._launch_functions[key]

    def _home(self) -> tuple[str, dict[str, ImportRef], SourceSet | None]:
        """How this file's own functions are seen by its launchers: the name shown for it, its
        imports and the project they resolve in (package-relative ones resolved with one)."""
        if self.project is not None:
            module = self.project.module_of(self.path)
            loaded = self.project.load(module, self.source, self) if module is not None else None
            if loaded is not None:
                return loaded.shown, loaded.imports, self.project
        return self.path, self.imports(), None

    def _module_prefix(self, upto: Node) -> list[ast.stmt]:
        """Top-level assignments, asserts and ifs before `upto`, each parsed on its own (one that
        does not parse is skipped); definitions and imports are left out."""
        out: list[ast.stmt] = []
        for child in self.tree.root_node.children:
            if child.start_byte >= upto.start_byte:
                break
            if child.type not in ("expression_statement", "assert_statement", "if_statement"):
                continue
            try:
                mod = ast.parse(self.source[child.start_byte : child.end_byte].decode("utf-8"))
            except UNPARSABLE:
                continue
            out.extend(mod.body)
        return out


#: the suffix of the key text of an autograd launcher's `forward` (`ModuleView.foreign_texts`)
FORWARD_TEXT = "#forward"


def build_module_view(
    source: bytes, tree: Tree, project: SourceSet | None = None, path: str = "<string>"
) -> ModuleView:
    """Read the module-level constants and config-returning functions, and find the kernels.
    `project` (with this file's `path`) lets kernels reach helpers and launches in other modules."""
    consts, const_nodes, parts = read_module_constants(source, tree.root_node)
    remember_split(source, top_level_spans(tree))  # (module_ast.py: whole-module readers, per statement)
    return ModuleView(
        source,
        line_starts(source),
        tree,
        find_kernels(tree.root_node),
        consts,
        const_nodes,
        b"\n".join(parts),
        project=project,
        path=path,
    )


def _all_launchers(tree: Tree) -> dict[str, list[Node]]:
    """One query over the module: kernel name -> the functions (or statements) that launch it."""
    out: dict[str, list[Node]] = {}
    for name, call in launch_calls(tree.root_node):
        owner = call
        while (
            owner.parent is not None and owner.type != "function_definition" and owner.parent.type != "module"
        ):
            owner = owner.parent
        nodes = out.setdefault(name, [])
        if owner not in nodes:
            nodes.append(owner)
    return out

