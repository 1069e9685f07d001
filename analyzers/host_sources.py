"""A module's plain functions and constants as a launcher's calls see them (the
`model/host_functions.FunctionSource` of one module): its top-level functions that are not
kernels, its module constants (evaluated by the host evaluator, from the module's other
constants), and, with a project (`project.SourceSet`), what its imports name in the other
modules of the package. Nothing is imported or run: definitions are parsed from the text.
"""

from __future__ import annotations

import ast
import textwrap
from typing import TYPE_CHECKING, Any

from argus.analyzers.errors import HOST_ERRORS, UNPARSABLE
from argus.analyzers.frontend.parse import first_error, text_of
from argus.analyzers.imports import ImportRef
from argus.analyzers.model.host import HostEval
from argus.analyzers.model.host_functions import read_names
from argus.analyzers.model.host_invoke import UnknownResult
from argus.analyzers.model.host_values import DimClasses
from tree_sitter import Node

if TYPE_CHECKING:  # both hold a ModuleFunctions: imported only for the annotations
    from argus.analyzers.module_view import ModuleView
    from argus.analyzers.project import SourceSet

MAX_REEXPORT_DEPTH = 4  # a constant re-exported through modules, as project.py follows functions


class ModuleFunctions:
    """One module as the launcher's calls see it (model/host_functions.FunctionSource): its
    top-level plain functions (kernels left out), its literal constants, and, with a project,
    the functions its imports name in other modules of the package."""

    def __init__(
        self,
        view: ModuleView,
        key: str,
        shown: str,
        imports: dict[str, ImportRef],
        project: SourceSet | None,
    ) -> None:
        self.view = view
        self.key = key
        self.text = view.source
        self.shown = shown
        self.imports = imports
        self.project = project
        self._parsed: dict[str, ast.FunctionDef | None] = {}
        self._values: dict[str, tuple[bool, Any]] = {}

    def constants(self) -> dict[str, Any]:
        """Constants every launcher of the module sees: none up front, each name read is looked
        up (`constant`) when the launcher's functions are gathered."""
        return {}

    def constant(self, name: str, depth: int = 0) -> tuple[bool, Any]:
        head, _, tail = name.partition(".")
        if depth > MAX_REEXPORT_DEPTH:
            return False, None
        if not tail:
            if head in self._values:
                return self._values[head]
            node = self.view.const_nodes.get(head)
            if isinstance(node, ast.expr):
                self._values[head] = (False, None)  # a constant defined through itself: unknown
                self._values[head] = self._evaluate(node, depth)
                return self._values[head]
            imp = self.imports.get(head)
            if self.project is None or imp is None or imp.attr is None:
                return False, None
            other = self.project.functions_of(imp.module)
            return (False, None) if other is None else other.constant(imp.attr, depth + 1)
        imp = self.imports.get(head)
        if self.project is None or imp is None or "." in tail:
            return False, None
        other = self.project.functions_of(imp.dotted)
        return (False, None) if other is None else other.constant(tail, depth + 1)

    def _evaluate(self, node: ast.expr, depth: int) -> tuple[bool, Any]:
        """A module constant's value by the host evaluator (no call is followed), from the
        module's other constants it reads; unknown when any part is opaque or too large."""
        if sum(1 for _ in ast.walk(node)) > MAX_CONSTANT_NODES:
            return False, None
        ev = HostEval(DimClasses(), {}, recording=False)
        ev.call_depth = 1  # strict: an undecided `x if c else y` is unknown, not its first side
        for ref in sorted(read_names([node])):
            known, value = self.constant(ref, depth + 1)
            if known:
                ev.env[ref] = value
        try:
            value = ev.expr(node)
        except (*HOST_ERRORS, RecursionError, UnknownResult):
            return False, None
        return (True, value) if _plain(value) else (False, None)

    def local(self, name: str) -> tuple[ast.FunctionDef, ModuleFunctions, str] | None:
        node = plain_definitions(self.view).get(name)
        if node is None:
            return None
        if name not in self._parsed:
            memo = self.view.snippets  # (kept by text between checks of a document: snippet_memo.py)
            if memo is None:
                self._parsed[name] = _parse_def(self.view.source, node)
            else:
                self._parsed[name] = memo.function(node.text or b"", lambda: _parse_def(self.view.source, node))
        fn = self._parsed[name]
        return None if fn is None else (fn, self, f"{self.shown}:{node.start_point[0] + 1}")

    def find(self, name: str) -> tuple[ast.FunctionDef, ModuleFunctions, str] | None:
        head, _, tail = name.partition(".")
        if not tail:
            found = self.local(head)
            if found is not None or self.project is None:
                return found
            imp = self.imports.get(head)
            return None if imp is None or imp.attr is None else self.project.host_function(imp.module, imp.attr)
        imp = self.imports.get(head)
        if self.project is None or imp is None or "." in tail:
            return None
        return self.project.host_function(imp.dotted, tail)


MAX_HOST_FUNCTION_BYTES = 20000  # a longer function is no launcher helper: left unfollowed


def _parse_def(source: bytes, node: Node) -> ast.FunctionDef | None:
    if node.end_byte - node.start_byte > MAX_HOST_FUNCTION_BYTES or first_error(node) is not None:
        return None
    try:
        mod = ast.parse(textwrap.dedent(source[node.start_byte : node.end_byte].decode("utf-8")))
    except (*UNPARSABLE, MemoryError):
        return None
    fn = mod.body[0] if mod.body else None
    return fn if isinstance(fn, ast.FunctionDef) else None


MAX_CONSTANT_NODES = 400  # a module constant larger than this is no launch setting


def _plain(v: Any, depth: int = 0) -> bool:
    """A value a launcher may take from a module constant: numbers, strings, None, dtypes, and
    small tuples, lists and dicts of them (never a tensor or an opaque value)."""
    if depth > 4:
        return False
    if v is None or isinstance(v, int | float | bool):
        return True
    if isinstance(v, str):
        return len(v) <= 256
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "dtype":
        return True
    if isinstance(v, tuple | list):
        return len(v) <= 64 and all(_plain(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return len(v) <= 64 and all(_plain(k, depth + 1) and _plain(x, depth + 1) for k, x in v.items())
    return False


def plain_definitions(view: ModuleView) -> dict[str, Node]:
    """The file's top-level functions that are not kernels, by name (the first of a name), shared by
    `ModuleFunctions.local` and the launcher-text memo (launch_texts.py); once per view."""
    if view.plain_defs is None:
        kernels = {s.name for s in view.sites}
        defs: dict[str, Node] = {}
        for child in view.tree.root_node.children:
            node = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
            if node is None or node.type != "function_definition":
                continue
            ident = node.child_by_field_name("name")
            name = text_of(ident) if ident is not None else ""
            if name and name not in kernels:
                defs.setdefault(name, node)
        view.plain_defs = defs
    return view.plain_defs
